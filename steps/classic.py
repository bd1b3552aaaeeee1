"""Steps for KEP-3063's classic protocol (cdi.k8s.io/v1alpha1): a cluster serving that API, resource
classes, claims and template pods in its shapes, a driver's programmable control-plane controller, and
what a user reads of the negotiation in a claim's status (phase, potential, unsuitable and selected
nodes, availableOnNodes, finalizers, userLimit). Everything else (nodes, pods using named claims,
"the scheduler runs", reservedFor, events, metrics) is the shared vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import pytest
import yaml
from pytest_bdd import given, parsers, then, when

from draconform.kube.cdi import parse_specs
from draconform.kubeletplugin.classic import ClassicPluginClient
from draconform.kubeletplugin.client import PluginCallError
from draconform.kubeletplugin.judge import unqualified_cdi_ids
from draconform.steps.cluster import assert_same, must_get, resolve_claim, rewrite, seam_method
from draconform.steps.manifests import NAMESPACE
from draconform.steps.scenario import ScenarioContext, observes
from draconform.steps.words import CLAIM, split_names
from draconform.sut import ApiError, Obj, SystemUnderTest

API_VERSION = "cdi.k8s.io/v1alpha1"


def _create(sut: SystemUnderTest, ctx: ScenarioContext, obj: Obj) -> None:
    created = sut.create(obj)
    if created["kind"] == "Pod":
        ctx.pod_uids[created["metadata"]["name"]] = created["metadata"]["uid"]


# --- set-up -------------------------------------------------------------------------------------
@given("a cluster serving the classic DRA API")
def classic_cluster(sut: SystemUnderTest) -> None:
    seam_method(sut, "serve_api", "serve KEP-3063's classic API")("classic")


@given(parsers.parse('the resource class "{name}" of driver "{driver}"'))
def resource_class(sut: SystemUnderTest, name: str, driver: str) -> None:
    sut.create({"apiVersion": API_VERSION, "kind": "ResourceClass", "metadata": {"name": name}, "driverName": driver})


@given(parsers.parse('the classic driver "{driver}" runs with:'))
@when(parsers.parse('the classic driver "{driver}" is reconfigured with:'))
def classic_driver(sut: SystemUnderTest, driver: str, docstring: str) -> None:
    behaviour: dict[str, Any] = yaml.load(docstring, Loader=yaml.CSafeLoader) or {}
    sut.run_controller("classic-driver", {"driver": driver, **behaviour})


@given(parsers.parse('the classic driver "{driver}" runs with no capacity anywhere'))
def classic_driver_empty(sut: SystemUnderTest, driver: str) -> None:
    sut.run_controller("classic-driver", {"driver": driver})


@given("a driver webhook that refuses claims of classes that do not exist")
def class_webhook(sut: SystemUnderTest) -> None:
    sut.run_controller("resource-class-webhook", {})


def _claim(name: str, resource_class: str, mode: str | None) -> Obj:
    spec: dict[str, Any] = {"resourceClassName": resource_class}
    if mode:
        spec["allocationMode"] = mode
    return {"apiVersion": API_VERSION, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": spec}


@given(parsers.re(r'a classic claim "(?P<claim>[^"]+)" of class "(?P<resource_class>[^"]+)"'
                  r"(?: with (?P<mode>Immediate|Delayed) allocation)?"))
@when(parsers.re(r'a classic claim "(?P<claim>[^"]+)" of class "(?P<resource_class>[^"]+)"'
                 r"(?: with (?P<mode>Immediate|Delayed) allocation)? is created"))
def classic_claim(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str, resource_class: str, mode: str | None
) -> None:
    _create(sut, ctx, _claim(claim, resource_class, mode))


def template_pod(pod: str, entries: list[tuple[str, str]]) -> Obj:
    """A pod whose containers use claims generated from embedded templates, one per (entry, class)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod, "namespace": NAMESPACE},
        "spec": {
            "containers": [{"name": "main", "image": "registry.example/app:1",
                            "resources": {"claims": [entry for entry, _ in entries]}}],
            "resourceClaims": [{"name": entry, "template": {"spec": {"resourceClassName": cls}}}
                               for entry, cls in entries],
        },
    }


@given(parsers.re(r'a pod "(?P<pod>[^"]+)" with template claims? of class(?:es)? "(?P<classes>[^"]+(?:", "[^"]+)*)"'))
def pod_with_template_claims(sut: SystemUnderTest, ctx: ScenarioContext, pod: str, classes: str) -> None:
    entries = [(f"res-{index}" if index else "res", cls) for index, cls in enumerate(split_names(classes))]
    _create(sut, ctx, template_pod(pod, entries))


@when(parsers.re(r'the scheduler sets the phase of ' + CLAIM + r' to "(?P<phase>[^"]+)"'))
def set_phase(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, phase: str) -> None:
    found = resolve_claim(sut, ctx, claim, pod)
    rewrite(sut, "ResourceClaim", found["metadata"]["name"],
            lambda obj: obj.setdefault("status", {}).__setitem__("phase", phase), status=True)


@when(parsers.re(r"two schedulers read " + CLAIM))
def two_schedulers_read(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    ctx.claim_reads = [resolve_claim(sut, ctx, claim, pod) for _ in range(2)]


@when(parsers.re(r'the (?P<which>first|second) scheduler reserves its read of the claim for pod "(?P<pod_name>[^"]+)"'))
def reserve_from_read(sut: SystemUnderTest, ctx: ScenarioContext, which: str, pod_name: str) -> None:
    read = ctx.claim_reads[0 if which == "first" else 1]
    user = must_get(sut, "Pod", pod_name)
    read.setdefault("status", {}).setdefault("reservedFor", []).append(
        {"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": user["metadata"]["uid"]})
    try:
        sut.update_status(read)
        ctx.last_error = None
    except ApiError as error:
        ctx.last_error = error


@given(parsers.parse('another scheduler reserves claim "{claim}" for pod "{pod_name}" just before the scheduler next '
                     'writes it'))
def another_scheduler_races(sut: SystemUnderTest, claim: str, pod_name: str) -> None:
    """A second scheduler wins the race for the claim: its reservation for its own pod lands between this
    scheduler's read of the claim and its write, so that write was made from a stale read (KEP-3063 ReservedFor:
    an atomic update). What the scheduler then does is for the Then steps to judge."""
    user = must_get(sut, "Pod", pod_name)
    entry = {"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": user["metadata"]["uid"]}
    seam_method(sut, "race_next_write", "race a component for an object")(
        "kube-scheduler", "ResourceClaim", claim, {"reservedFor": [entry]})


@then(parsers.parse('the write is refused with reason "{reason}"'))
def write_refused(ctx: ScenarioContext, reason: str) -> None:
    assert isinstance(ctx.last_error, ApiError), "the write was accepted"
    assert ctx.last_error.reason == reason, f"the write was refused with {ctx.last_error.reason}"


# --- observation ------------------------------------------------------------------------------------
def _status(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> Obj:
    return resolve_claim(sut, ctx, claim, pod).get("status") or {}


def _scheduling(status: Obj, side: str) -> Obj:
    return (status.get("scheduling") or {}).get(side) or {}


@then(parsers.re(CLAIM + r' is in phase "(?P<phase>[^"]+)"'))
@observes("claim")
def claim_phase(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, phase: str) -> None:
    got = _status(sut, ctx, claim, pod).get("phase")
    assert got == phase, f"the claim is in phase {got!r}"


@then(parsers.re(r'one of claims "(?P<claims>[^"]+)" is in phase "(?P<phase>[^"]+)" and the others? in phase '
                 r'"(?P<others>[^"]+)"'))
@observes("claim")
def one_claim_in_phase(sut: SystemUnderTest, claims: str, phase: str, others: str) -> None:
    """Where the KEP lets a component pick any of several eligible claims (the scheduler's Post-filter picks
    one to deallocate), whichever it picks passes; exactly one must be picked."""
    phases = {name: (must_get(sut, "ResourceClaim", name).get("status") or {}).get("phase")
              for name in split_names(claims)}
    picked = [name for name, got in phases.items() if got == phase]
    rest_ok = all(got == others for name, got in phases.items() if name not in picked)
    assert len(picked) == 1 and rest_ok, (
        f"expected any one of {', '.join(phases)} in phase {phase!r} and the others in {others!r}; "
        f"the phases are {phases}")


@then(parsers.re(r"the (?P<field>potential|unsuitable) nodes of " + CLAIM + r' are "(?P<nodes>[^"]*)"'))
@observes("claim")
def negotiation_nodes(
    sut: SystemUnderTest, ctx: ScenarioContext, field: str, claim: str | None, pod: str | None, nodes: str
) -> None:
    _assert_negotiation_nodes(sut, ctx, field, claim, pod, nodes)


def _assert_negotiation_nodes(
    sut: SystemUnderTest, ctx: ScenarioContext, field: str, claim: str | None, pod: str | None, nodes: str
) -> None:
    status = _status(sut, ctx, claim, pod)
    got = (_scheduling(status, "scheduler").get("potentialNodes") if field == "potential"
           else _scheduling(status, "driver").get("unsuitableNodes")) or []
    assert sorted(got) == sorted(split_names(nodes)), f"{field} nodes are {got}"


@then(parsers.re(CLAIM + r" has no (?P<field>potential|unsuitable) nodes"))
@observes("claim")
def no_negotiation_nodes(
    sut: SystemUnderTest, ctx: ScenarioContext, field: str, claim: str | None, pod: str | None
) -> None:
    _assert_negotiation_nodes(sut, ctx, field, claim, pod, "")


@then(parsers.re(CLAIM + r' has selected (?:node "(?P<node>[^"]+)"|one of nodes "(?P<nodes>[^"]+)")'))
@observes("claim")
def selected_node(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, node: str | None,
                  nodes: str | None) -> None:
    """That node, or any of several the scheduler may choose among (KEP-3063 leaves the pick to scoring)."""
    got = _scheduling(_status(sut, ctx, claim, pod), "scheduler").get("selectedNode")
    allowed = [node] if node else split_names(nodes or "")
    assert got in allowed, f"the selected node is {got!r}, expected any of {', '.join(allowed)}"


@then(parsers.re(CLAIM + r" has no selected node"))
@observes("claim")
def no_selected_node(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    got = _scheduling(_status(sut, ctx, claim, pod), "scheduler").get("selectedNode")
    assert not got, f"the selected node is {got!r}"


@then(parsers.re(CLAIM + r' is available only on nodes? "(?P<nodes>[^"]+)"'))
@observes("claim")
def available_on(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, nodes: str) -> None:
    selector = _scheduling(_status(sut, ctx, claim, pod), "driver").get("availableOnNodes") or {}
    named_nodes = sorted(
        value
        for term in selector.get("nodeSelectorTerms") or []
        for requirement in term.get("matchFields") or []
        if requirement.get("key") == "metadata.name" and requirement.get("operator") == "In"
        for value in requirement.get("values") or []
    )
    assert named_nodes == sorted(split_names(nodes)), f"availableOnNodes is {selector}"


@then(parsers.re(CLAIM + r' is told that node "(?P<node>[^"]+)" failed'))
@observes("claim")
def told_node_failed(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, node: str) -> None:
    """KEP-3063: a driver that cannot allocate for the selected node says so by unsetting selectedNode or by
    listing the node in unsuitableNodes; either counts (D-3063-4)."""
    status = _status(sut, ctx, claim, pod)
    selected = _scheduling(status, "scheduler").get("selectedNode")
    unsuitable = _scheduling(status, "driver").get("unsuitableNodes") or []
    assert not selected or node in unsuitable, (
        f"expected selectedNode unset or {node!r} among the unsuitable nodes; selectedNode is {selected!r}, "
        f"unsuitable nodes {unsuitable}")


@then(parsers.re(CLAIM + r" has no allocation"))
@observes("claim")
def no_allocation(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    status = _status(sut, ctx, claim, pod)
    assert status.get("phase") == "Pending", f"the claim is in phase {status.get('phase')!r}"
    assert not status.get("attributes"), f"the claim still has attributes {status.get('attributes')}"
    assert not _scheduling(status, "driver").get("availableOnNodes"), "the claim still has availableOnNodes"


@then(parsers.re(CLAIM + r' (?P<verb>carries|carries no) finalizer of driver "(?P<driver>[^"]+)"'))
@observes("claim")
def driver_finalizer(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, verb: str, driver: str
) -> None:
    finalizers = resolve_claim(sut, ctx, claim, pod)["metadata"].get("finalizers") or []
    mine = [name for name in finalizers if name.startswith(f"{driver}/")]
    assert bool(mine) == (verb == "carries"), f"the claim's finalizers are {finalizers}"


@then(parsers.re(CLAIM + r' records driver "(?P<driver>[^"]+)"'))
@observes("claim")
def records_driver(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, driver: str) -> None:
    got = _status(sut, ctx, claim, pod).get("driverName")
    assert got == driver, f"status.driverName is {got!r}"


@then(parsers.re(CLAIM + r" allows (?P<limit>-?\d+) users?"))
@observes("claim")
def user_limit(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, limit: str) -> None:
    got = _status(sut, ctx, claim, pod).get("userLimit")
    assert got == int(limit), f"status.userLimit is {got!r}"


@then(parsers.re(r'claim "(?P<claim>[^"]+)" (?P<verb>does not exist|is being deleted)'))
@observes("object")
def claim_gone(sut: SystemUnderTest, claim: str, verb: str) -> None:
    obj = sut.get("ResourceClaim", claim, NAMESPACE)
    if verb == "does not exist":
        assert obj is None, f"claim {claim!r} still exists"
    else:
        assert obj is not None and obj["metadata"].get("deletionTimestamp"), f"claim {claim!r} is not being deleted"


# --- more set-up and changes -------------------------------------------------------------------------
@when(parsers.parse('the resource class "{name}" of driver "{driver}" is created'))
def resource_class_created(sut: SystemUnderTest, name: str, driver: str) -> None:
    resource_class(sut, name, driver)


@given(parsers.parse('the ResourceClaim "{name}" owned by pod "{pod}":'))
def claim_owned_by_pod(sut: SystemUnderTest, name: str, pod: str, docstring: str) -> None:
    """A claim made by hand for an existing pod, with the owner reference that adopts it."""
    owner = must_get(sut, "Pod", pod)
    obj: Obj = yaml.load(docstring, Loader=yaml.CSafeLoader)
    obj.setdefault("kind", "ResourceClaim")
    obj["metadata"] = {"name": name, "namespace": NAMESPACE, "ownerReferences": [
        {"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": owner["metadata"]["uid"], "controller": True}]}
    sut.create(obj)


@when(parsers.parse('pod "{pod}" is relabelled with "{label}"'))
def relabel_pod(sut: SystemUnderTest, pod: str, label: str) -> None:
    key, _, value = label.partition("=")
    rewrite(sut, "Pod", pod, lambda obj: obj["metadata"].setdefault("labels", {}).__setitem__(key, value))


@then(parsers.parse('the ResourceClaim "{name}" has:'))
@observes("claim")
def claim_has(sut: SystemUnderTest, name: str, docstring: str) -> None:
    """The stored claim agrees with every field the docstring gives (fields it leaves out are not compared)."""
    expected: Obj = yaml.load(docstring, Loader=yaml.CSafeLoader)
    assert_same(_project(must_get(sut, "ResourceClaim", name), expected), expected, f"claim {name!r}")


def _project(value: Any, shape: Any) -> Any:
    """`value` cut down to the keys `shape` has, at every level of nested mappings."""
    if isinstance(value, dict) and isinstance(shape, dict):
        return {key: _project(value[key], shape[key]) for key in shape if key in value}
    return value


@when(parsers.re(CLAIM + r" is watched for updates"))
def watch_claim(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    ctx.claim_reads = [resolve_claim(sut, ctx, claim, pod)]


@then(parsers.re(CLAIM + r" was not updated"))
@observes("claim", eventually=False)
def claim_not_updated(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    (before,) = ctx.claim_reads
    after = resolve_claim(sut, ctx, claim, pod)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"], (
        f"the claim was written meanwhile: {before.get('status')} became {after.get('status')}"
    )


# --- the kubelet and a classic plugin (the seed's one-resource protocol) -----------------------------
UNKNOWN_UID = "00000000-0000-0000-0000-00000000dead"


@dataclass
class ClassicAnswer:
    verb: str  # prepare or unprepare
    devices: tuple[str, ...] = ()
    error: str | None = None  # the gRPC status name of a refusal


@dataclass
class ClassicKubelet:
    """What classic plugins answered, per claim name ("" for the resource no driver knows)."""

    answers: dict[str, list[ClassicAnswer]] = dataclass_field(default_factory=dict)

    def of(self, claim: str, verb: str) -> list[ClassicAnswer]:
        found = [answer for answer in self.answers.get(claim, []) if answer.verb == verb]
        assert found, f"the kubelet never asked to {verb} {claim or 'the unknown resource'!r}"
        return found


@pytest.fixture
def classic_kubelet() -> ClassicKubelet:
    return ClassicKubelet()


@when(parsers.re(r'the kubelet on node "(?P<node>[^"]+)" asks driver "(?P<driver>[^"]+)" '
                 r'to (?P<verb>prepare|unprepare) '
                 r'(?:claim "(?P<claim>[^"]+)"|a resource it never knew) over the classic protocol'))
def classic_call(sut: SystemUnderTest, classic_kubelet: ClassicKubelet, node: str, driver: str, verb: str,
                 claim: str | None) -> None:
    uid = must_get(sut, "ResourceClaim", claim)["metadata"]["uid"] if claim else UNKNOWN_UID
    name = claim or ""
    client = ClassicPluginClient(sut.kubelet_plugin_endpoint(driver, node))
    answers = classic_kubelet.answers.setdefault(name, [])
    try:
        if verb == "prepare":
            answers.append(ClassicAnswer(verb, devices=client.prepare(uid)))
        else:
            prepared = [a.devices for a in answers if a.verb == "prepare" and a.error is None]
            client.unprepare(uid, prepared[-1] if prepared else ())
            answers.append(ClassicAnswer(verb))
    except PluginCallError as failure:
        answers.append(ClassicAnswer(verb, error=failure.code))
    finally:
        client.close()


@then(parsers.parse('the classic plugin prepared claim "{claim}" with fully qualified CDI device names'))
def classic_prepared(classic_kubelet: ClassicKubelet, claim: str) -> None:
    for answer in classic_kubelet.of(claim, "prepare"):
        assert answer.error is None, f"the plugin refused to prepare claim {claim!r} with {answer.error}"
        assert answer.devices, f"the plugin prepared claim {claim!r} without naming a device"
        bad = unqualified_cdi_ids(answer.devices)
        assert not bad, f"not fully qualified CDI device names: {bad}"


@then(parsers.parse('every CDI device name the classic plugin returned for claim "{claim}" is defined in a CDI '
                    'spec file on node "{node}"'))
@observes("object")
def classic_cdi_defined(sut: SystemUnderTest, classic_kubelet: ClassicKubelet, claim: str, node: str) -> None:
    names = [name for answer in classic_kubelet.of(claim, "prepare") if answer.error is None for name in answer.devices]
    assert names, f"the plugin prepared claim {claim!r} without naming a device"
    specs = parse_specs(seam_method(sut, "node_cdi_spec_files", "read a node's CDI spec files")(node))
    missing = specs.undefined(names)
    assert not missing, f"CDI device names no spec file on node {node!r} defines: {missing} {list(specs.problems)}"


@then(parsers.parse('the classic plugin answered claim "{claim}" with the same devices each time'))
def classic_same_answer(classic_kubelet: ClassicKubelet, claim: str) -> None:
    answers = classic_kubelet.of(claim, "prepare")
    assert len(answers) > 1, "the kubelet asked only once"
    assert len({(a.devices, a.error) for a in answers}) == 1, f"the answers differ: {answers}"
    assert answers[0].error is None, f"the plugin refused with {answers[0].error}"


@then(parsers.re(r'the classic plugin (?P<verb>unprepared) claim "(?P<claim>[^"]+)" each time it was asked'))
def classic_unprepared(classic_kubelet: ClassicKubelet, verb: str, claim: str) -> None:
    errors = [a.error for a in classic_kubelet.of(claim, "unprepare") if a.error is not None]
    assert not errors, f"the plugin refused to unprepare claim {claim!r}: {errors}"


@then(parsers.re(r'the classic plugin refused to (?P<verb>prepare|unprepare) '
                 r'(?:claim "(?P<claim>[^"]+)"|the resource it never knew) with "(?P<code>[A-Z_]+)"'))
def classic_refused(classic_kubelet: ClassicKubelet, verb: str, claim: str | None, code: str) -> None:
    last = classic_kubelet.of(claim or "", verb)[-1]
    assert last.error == code, f"the plugin answered {last.error or 'OK'}, not {code}"


@then(parsers.re(CLAIM + r' is reserved only for (?P<kind>[A-Z]\w*) "(?P<name>[^"]+)"'))
@observes("claim")
def reserved_only_for(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, kind: str, name: str
) -> None:
    reserved = _status(sut, ctx, claim, pod).get("reservedFor") or []
    got = [(entry.get("kind"), entry.get("name")) for entry in reserved]
    assert got == [(kind, name)], f"reservedFor is {reserved}"
