"""Steps for a DRA driver under test: giving it devices to publish (the seam's `run_driver`) and acting as
the kubelet towards its kubelet plugin, over the real gRPC protocols on the unix sockets the SUT names: the
DRAPlugin service (`kubelet_plugin_endpoint`) and the plugin-registration service the kubelet's plugin
watcher reads (`kubelet_plugin_registration_endpoint`), the way csi-sanity drives a CSI plugin. The driver's
gates are set with the component steps, as component "dra-driver".

`When` steps make the calls and record the answers in the `kubelet` fixture; `Then` steps judge them, each rule
through draconform.kubeletplugin.judge, the code plugin-check's checks judge it with. A
call that fails as a whole (no socket, a crashed or hung plugin, a gRPC error status) fails its `When`
step with the endpoint, method and gRPC status, because the kubelet would discard everything in it; except
that a prepare the plugin refuses with an error status of its own is recorded as a refusal of each of its
claims, as upstream's helper refuses a call with a claim it cannot read (docs/decisions.md D-3063-8)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import pytest
from pytest_bdd import given, parsers, then, when

from draconform.kube.cel import CelError, SelectorEngine, device_input
from draconform.kube.kinds import with_pod_room
from draconform.kube.values import parse_attribute, parse_quantity
from draconform.kubeletplugin import judge
from draconform.kubeletplugin.client import (
    KubeletPluginClient,
    PluginCallError,
    notify_registration,
    prepare_at_once,
    registration_info,
)
from draconform.kubeletplugin.judge import missing_entries, signature_text, unasked_entries
from draconform.kubeletplugin.types import API_VERSIONS, ClaimRef, PluginInfo, PreparedDevice, PrepareResult
from draconform.steps.cluster import device_named, generated_claims, must_get, seam_method
from draconform.steps.manifests import NAMESPACE, load_docstring, manifest, named
from draconform.steps.scenario import ScenarioContext, observes
from draconform.steps.words import CLAIM, split_names
from draconform.sut import Obj, SystemUnderTest, Unsupported

KUBELET = r'the kubelet on node "(?P<node>[^"]+)" '
KUBELET_ASKS = KUBELET + r'asks driver "(?P<driver>[^"]+)" to '
# The DRAPlugin version of a call; without it the kubelet speaks v1, as current kubelets do.
OVER_VERSION = r"(?: over DRAPlugin (?P<version>" + "|".join(API_VERSIONS) + r"))?"
CLAIM_NAMES = r'claims "(?P<claims>[^"]+(?:", "[^"]+)*)"'
QUOTED_NAMES = r'"(?P<names>[^"]+(?:", "[^"]+)*)"'



@dataclass(frozen=True)
class PrepareAnswer:
    """What a plugin answered for one claim in one NodePrepareResources call; `result` is None when the
    plugin left the claim out of its answer."""

    driver: str
    api_version: str
    ref: ClaimRef
    result: PrepareResult | None
    real: str | None = None  # the cluster's own driver under test the scenario's `driver` stands for

    @property
    def shown(self) -> str:
        """The driver as a failure names it: a report judging a vendor's driver names that driver, not only the
        scenario's name for it (issue 42: Intel's plugin was reported as 'gpu.example.com')."""
        if self.real in (None, self.driver):
            return repr(self.driver)
        return f"{self.driver!r} (the cluster's {self.real!r})"


@dataclass(frozen=True)
class Call:
    """One call as a whole: which claims the kubelet asked about and the UIDs the answer had entries for."""

    method: str
    asked: tuple[ClaimRef, ...]
    answered: tuple[str, ...]
    refused: str | None = None  # the plugin's error status, when it refused the whole call


@dataclass
class KubeletRecord:
    """The kubelet's side of a scenario's conversation with kubelet plugins. Like a real kubelet it
    remembers the claims it asked about (by name, and the claim of each pod), so it can still unprepare
    a claim the API server no longer has."""

    claims: dict[str, ClaimRef] = field(default_factory=dict)
    pod_claims: dict[str, str] = field(default_factory=dict)
    prepared: dict[str, list[PrepareAnswer]] = field(default_factory=dict)
    unprepared: dict[str, list[str | None]] = field(default_factory=dict)  # what failed (judge), None = success
    last_call: Call | None = None
    registration: tuple[str, str, PluginInfo] | None = None  # driver, node, what the plugin said
    notifications: list[tuple[str, PluginCallError | None]] = field(default_factory=list)
    # What the harness prepared and has not unprepared: (node, driver, claim as sent), by claim UID.
    held: dict[str, tuple[str, str, ClaimRef]] = field(default_factory=dict)
    # The latest calls made all at once: per call its claim, the claim's answer when asked alone before, and
    # the call's answer or how it failed as a whole.
    at_once: list[tuple[ClaimRef, PrepareResult, dict[str, PrepareResult] | PluginCallError]] = field(
        default_factory=list)
    spec_notes: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)  # (node, label) -> file names


@pytest.fixture
def kubelet(sut: SystemUnderTest, ctx: ScenarioContext) -> Iterator[KubeletRecord]:
    """The harness's kubelet. A cluster's own driver outlives the scenario, so what the harness prepared on it is
    unprepared at the end, as a kubelet does once its pods are gone; else the driver would hold those devices for
    claims that no longer exist, and refuse them to the next scenario."""
    record = KubeletRecord()
    yield record
    if ctx.own_driver is None:
        return
    for node, driver, ref in record.held.values():
        try:
            with KubeletPluginClient(sut.kubelet_plugin_endpoint(driver, node)) as client:
                client.unprepare([ref])
        except (PluginCallError, Unsupported):
            pass  # the scenario's verdict stands; a plugin that cannot unprepare is judged by its own rules


# --- the driver's devices -----------------------------------------------------------------------------
@given(parsers.parse('driver "{driver}" runs with the devices:'))
@when(parsers.parse('driver "{driver}" is given the devices:'))
def driver_runs(sut: SystemUnderTest, ctx: ScenarioContext, driver: str, docstring: str) -> None:
    """The docstring holds the ResourceSlices the driver would publish with every feature on; what it
    really publishes (and under which names) is up to the driver, and is checked by reading the stored slices."""
    _hand_over(sut, ctx, driver, load_docstring(docstring, kind="ResourceSlice"))


def _hand_over(sut: SystemUnderTest, ctx: ScenarioContext, driver: str, slices: list[Obj]) -> None:
    for obj in slices:  # remembered by the scenario's name for them (see `slice_devices`)
        ctx.driver_slices[obj["metadata"]["name"]] = (driver, str(obj["spec"]["pool"]["name"]))
    sut.run_driver(driver, slices)
    sut.settle()


@given(parsers.re(r'driver "(?P<driver>[^"]+)" under test publishes devices ' + QUOTED_NAMES
                  + r' of class "(?P<device_class>[^"]+)" on node "(?P<node>[^"]+)"'))
def driver_under_test_publishes(sut: SystemUnderTest, ctx: ScenarioContext, driver: str, names: str,
                                device_class: str, node: str) -> None:
    """The driver the scenario judges, with at least as many devices on the node as the scenario names, claimed
    through the class. A cluster running a driver of its own (the seam's `driver_under_test`) gives its driver,
    node and class for the scenario's names, and the names given to devices stand for devices it publishes there
    that the class selects (by pool, then in the order its slice lists them); a driver with fewer skips the
    scenario. Otherwise the node and the class (selecting the driver) are created and the driver is handed one
    slice "<node>-<class>s" of pool <node> with plain devices of those names. Either way the scenario then uses
    the devices the driver publishes."""
    wanted = split_names(names)
    own = seam_method(sut, "driver_under_test", "say whether it runs a driver of its own")(driver, node, device_class)
    if own is None:
        sut.create(with_pod_room(named("Node", node, metadata={"name": node,
                                                                "labels": {"kubernetes.io/hostname": node}})))
        sut.create(named("DeviceClass", device_class,
                         spec={"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}))
        _hand_over(sut, ctx, driver, [named("ResourceSlice", f"{node}-{device_class}s", spec={
            "driver": driver, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "nodeName": node,
            "devices": [{"name": name} for name in wanted]})])
    ctx.own_driver, ctx.own_driver_alias = own, driver
    published = published_devices(sut, driver, node, device_class, own.driver if own else driver)
    if len(published) < len(wanted):
        raise Unsupported(f"driver {own.driver if own else driver!r} publishes {len(published)} devices of class "
                          f"{own.device_class if own else device_class!r} on node {own.node if own else node!r}; "
                          f"the scenario needs {len(wanted)}")
    ctx.devices.update(zip(wanted, published, strict=False))
    pools = {pool for pool, _ in published[:len(wanted)]}
    if own is not None and len(pools) == 1:  # the slice the scenario would have handed the driver is its pool's
        ctx.driver_slices[f"{node}-{device_class}s"] = (driver, pools.pop())


def published_devices(sut: SystemUnderTest, driver: str, node: str, device_class: str,
                      driver_name: str) -> list[tuple[str, str]]:
    """(pool, device) of every device `driver` publishes in the slices of `node` (the latest generation of each
    pool) that every CEL selector of `device_class` selects, by pool and slice name, then in the slice's order;
    `driver_name` is the driver's own name, which its class's selectors compare `device.driver` with."""
    slices = [obj for obj in sut.list("ResourceSlice")
              if obj["spec"].get("driver") == driver and obj["spec"].get("nodeName") == node]
    latest: dict[str, int] = {}
    for obj in slices:
        pool = obj["spec"]["pool"]
        latest[pool["name"]] = max(latest.get(pool["name"], 0), int(pool.get("generation") or 0))
    found = must_get(sut, "DeviceClass", device_class)
    expressions = [selector["cel"]["expression"] for selector in found["spec"].get("selectors") or []
                   if "cel" in selector]
    engine = SelectorEngine()
    devices = []
    # Within a slice in the order it lists them, as an allocator tries them (a driver need not sort its devices
    # by name), so the scenario's first device is the one a scheduler picks first.
    for obj in sorted(slices, key=lambda obj: (obj["spec"]["pool"]["name"], obj["metadata"]["name"])):
        pool = obj["spec"]["pool"]
        if int(pool.get("generation") or 0) != latest[pool["name"]]:
            continue
        for device in obj["spec"].get("devices") or []:
            key = (pool["name"], device["name"])
            if all(_selects(engine, expression, key, driver_name, device) for expression in expressions):
                devices.append(key)
    return devices


def _selects(engine: SelectorEngine, expression: str, key: tuple[str, str], driver: str, device: Obj) -> bool:
    """Whether the class's selector selects the device; one it cannot evaluate does not (as for the allocator)."""
    def build() -> dict[str, object]:
        attributes = {name: parsed for name, raw in (device.get("attributes") or {}).items()
                      if (parsed := parse_attribute(raw)) is not None}
        capacity = {name: parse_quantity(entry.get("value")) for name, entry in (device.get("capacity") or {}).items()}
        return device_input(driver, attributes, capacity, bool(device.get("allowMultipleAllocations")))

    try:
        return engine.matches(expression, key, build)
    except CelError:
        return False


@given(parsers.re(r'driver "(?P<driver>[^"]+)" runs with the devices of manifests? "(?P<names>[^"]+)"'))
def driver_runs_with_manifests(sut: SystemUnderTest, ctx: ScenarioContext, driver: str, names: str) -> None:
    """As above, with the slices written once in the feature folder's manifests/ (comma-separated files)."""
    slices = [obj for name in split_names(names) for obj in manifest(ctx, name, kind="ResourceSlice")]
    _hand_over(sut, ctx, driver, slices)


@given(parsers.parse('driver "{driver}" takes over the devices of node "{node}"'))
def driver_takes_over(sut: SystemUnderTest, driver: str, node: str) -> None:
    """The driver under test, with its kubelet plugin on the node, publishes the node's slices of its devices
    that a step wrote earlier, so pods using them start (and can end) on that node."""
    slices = [obj for obj in sut.list("ResourceSlice")
              if obj["spec"].get("driver") == driver and obj["spec"].get("nodeName") == node]
    for obj in slices:
        sut.delete("ResourceSlice", obj["metadata"]["name"])
    sut.run_driver(driver, [{"apiVersion": obj["apiVersion"], "kind": "ResourceSlice",
                             "metadata": {"name": obj["metadata"]["name"]}, "spec": obj["spec"]} for obj in slices])
    sut.settle()


# --- the kubelet calls the plugin -----------------------------------------------------------------------
def _claim_ref(sut: SystemUnderTest, ctx: ScenarioContext, kubelet: KubeletRecord, claim: str | None,
               pod: str | None) -> ClaimRef:
    """The claim as the API server has it now, or as the kubelet remembers it once the API server has
    forgotten it (deleted with its pod, say)."""
    if claim:
        obj = sut.get("ResourceClaim", claim, NAMESPACE)
    else:
        assert pod is not None
        found = generated_claims(sut, ctx, pod)
        assert len(found) <= 1, f"pod {pod!r} has {len(found)} generated claims, expected one"
        obj = found[0] if found else None
    if obj is None:
        name = claim or kubelet.pod_claims.get(pod or "")
        remembered = kubelet.claims.get(name) if name else None
        what = f"claim {claim!r}" if claim else f"the claim of pod {pod!r}"
        assert remembered is not None, f"{what} does not exist, and the kubelet never asked about it before"
        return remembered
    meta = obj["metadata"]
    ref = ClaimRef(namespace=meta["namespace"], name=meta["name"], uid=meta["uid"])
    kubelet.claims[ref.name] = ref
    if pod:
        kubelet.pod_claims[pod] = ref.name
    return ref


def _await_binding(sut: SystemUnderTest, claims: Sequence[str], pod: str | None) -> None:
    """A kubelet prepares a pod's claims only once the pod is bound to its node. On a live cluster the scheduler
    may still be at work when a prepare step comes, so the harness, playing the kubelet, first waits (within its
    patience for pods) until the pods of the scenario that use these claims, or the pod named, are bound. A
    claim no pod uses is asked about at once; on the reference, settle() has already bound what it can."""
    patience = sut.patience("pod")
    if not patience.timeout:
        return
    deadline = time.monotonic() + patience.timeout
    while _unbound_users(sut, claims, pod) and time.monotonic() + patience.interval <= deadline:
        time.sleep(patience.interval)


def _unbound_users(sut: SystemUnderTest, claims: Sequence[str], pod: str | None) -> list[str]:
    unbound = []
    for obj in sut.list("Pod", NAMESPACE):
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        used = {entry.get("resourceClaimName") for entry in spec.get("resourceClaims") or []}
        used |= {entry.get("resourceClaimName") for entry in status.get("resourceClaimStatuses") or []}
        if (obj["metadata"]["name"] == pod or used & set(claims)) and not spec.get("nodeName"):
            unbound.append(obj["metadata"]["name"])
    return unbound


def _call_plugin(sut: SystemUnderTest, ctx: ScenarioContext, kubelet: KubeletRecord, node: str, driver: str,
                 verb: str, refs: list[ClaimRef], api_version: str) -> None:
    """One NodePrepareResources or NodeUnprepareResources call for `refs`, every claim's answer recorded. A
    cluster's own driver is sent the claims in the namespace the cluster keeps them in, where its plugin reads them."""
    method = "NodePrepareResources" if verb == "prepare" else "NodeUnprepareResources"
    wire = _on_the_wire(ctx, refs)
    with KubeletPluginClient(sut.kubelet_plugin_endpoint(driver, node), api_version=api_version) as client:
        if verb == "prepare":
            try:
                results = client.prepare(wire)
            except PluginCallError as err:
                if not err.refusal:
                    raise
                refused = f"the plugin refused the whole call with {err.code}: {err.details}"
                for ref in refs:
                    answer = PrepareAnswer(driver, api_version, ref, PrepareResult(error=refused), _real(ctx, driver))
                    kubelet.prepared.setdefault(ref.name, []).append(answer)
                kubelet.last_call = Call(method, tuple(refs), (), refused)
                return
            answered = tuple(results)
            for ref, sent in zip(refs, wire, strict=True):
                result = results.get(ref.uid)
                if result is not None and not result.failed:
                    kubelet.held[ref.uid] = (node, driver, sent)
                kubelet.prepared.setdefault(ref.name, []).append(
                    PrepareAnswer(driver, api_version, ref, result, _real(ctx, driver)))
        else:
            errors = client.unprepare(wire)
            answered = tuple(errors)
            for ref in refs:
                failure = judge.unprepare_failure(errors, ref.uid)
                kubelet.unprepared.setdefault(ref.name, []).append(failure)
                if failure is None:
                    kubelet.held.pop(ref.uid, None)
    kubelet.last_call = Call(method, tuple(refs), answered)


def _real(ctx: ScenarioContext, driver: str) -> str | None:
    """The cluster's own driver that the scenario's `driver` stands for, if it stands for one."""
    own = ctx.own_driver
    return own.driver if own is not None and ctx.own_driver_alias == driver else None


def _on_the_wire(ctx: ScenarioContext, refs: Sequence[ClaimRef]) -> list[ClaimRef]:
    """The claims as the kubelet sends them: a cluster's own driver gets them in the namespace the cluster keeps
    them in, where its plugin reads them."""
    own = ctx.own_driver
    return [ClaimRef(own.namespace, ref.name, ref.uid) if own and ref.namespace == NAMESPACE else ref for ref in refs]


@when(parsers.re(KUBELET_ASKS + r"(?P<verb>prepare|unprepare) " + CLAIM + OVER_VERSION))
def kubelet_asks_plugin(sut: SystemUnderTest, ctx: ScenarioContext, kubelet: KubeletRecord, node: str, driver: str,
                        verb: str, claim: str | None, pod: str | None, version: str | None) -> None:
    """One NodePrepareResources or NodeUnprepareResources call for one claim, in DRAPlugin v1 unless the
    step names another version."""
    if verb == "prepare":
        _await_binding(sut, [claim] if claim else [], pod)
    ref = _claim_ref(sut, ctx, kubelet, claim, pod)
    _call_plugin(sut, ctx, kubelet, node, driver, verb, [ref], version or "v1")


@when(parsers.re(KUBELET_ASKS + r"(?P<verb>prepare|unprepare) " + CLAIM_NAMES + r" in one call"))
def kubelet_asks_plugin_about_claims(sut: SystemUnderTest, ctx: ScenarioContext, kubelet: KubeletRecord, node: str,
                                     driver: str, verb: str, claims: str) -> None:
    """Several claims in one call, in the order given, as the kubelet asks for all claims of a pod that
    one driver serves."""
    if verb == "prepare":
        _await_binding(sut, split_names(claims), None)
    refs = [_claim_ref(sut, ctx, kubelet, name, None) for name in split_names(claims)]
    _call_plugin(sut, ctx, kubelet, node, driver, verb, refs, "v1")


@when(parsers.re(KUBELET_ASKS + r'(?P<verb>prepare|unprepare) claim "(?P<claim>[^"]+)" with UID "(?P<uid>[^"]+)"'))
def kubelet_asks_plugin_with_uid(sut: SystemUnderTest, ctx: ScenarioContext, kubelet: KubeletRecord, node: str,
                                 driver: str, verb: str, claim: str, uid: str) -> None:
    """A call naming a claim by a UID the API server may not know: a claim deleted and created again under
    the same name, or one that never existed. The kubelet does not remember this UID for later steps."""
    ref = ClaimRef(namespace=NAMESPACE, name=claim, uid=uid)
    _call_plugin(sut, ctx, kubelet, node, driver, verb, [ref], "v1")


@when(parsers.re(KUBELET_ASKS + r'prepare claim "(?P<claim>[^"]+)" on its own if it refused that call as a whole'))
def kubelet_asks_again_alone(sut: SystemUnderTest, ctx: ScenarioContext, kubelet: KubeletRecord, node: str,
                             driver: str, claim: str) -> None:
    """After a prepare the plugin refused as a whole (upstream's helper does that for a claim it cannot read),
    the kubelet asks for the claim it can prepare on its own; after an answer per claim, nothing happens."""
    last = kubelet.last_call
    assert last is not None, "the kubelet has not called a plugin yet"
    if last.refused is not None:
        _call_plugin(sut, ctx, kubelet, node, driver, "prepare", [_claim_ref(sut, ctx, kubelet, claim, None)], "v1")


@when(parsers.re(KUBELET_ASKS + r'unprepare claim "(?P<claim>[^"]+)" under the UID it was first prepared with'))
def kubelet_unprepares_first_uid(sut: SystemUnderTest, ctx: ScenarioContext, kubelet: KubeletRecord, node: str,
                                 driver: str, claim: str) -> None:
    """Unprepare the claim the kubelet first prepared under this name, by the UID it had then: a claim deleted and
    created again since, whose first incarnation the kubelet unprepares only now."""
    first = _prepare_answers(kubelet, claim, None)[0].ref
    _call_plugin(sut, ctx, kubelet, node, driver, "unprepare", [first], "v1")


@when(parsers.re(KUBELET_ASKS + r"prepare " + CLAIM_NAMES + r" each in its own call, all at once"))
def kubelet_prepares_at_once(sut: SystemUnderTest, ctx: ScenarioContext, kubelet: KubeletRecord, node: str,
                             driver: str, claims: str) -> None:
    """One NodePrepareResources call per claim, over connections opened first, all sent at once, as the kubelet's
    pod workers prepare the claims of several pods (draconform.kubeletplugin.client.prepare_at_once, as
    plugin-check's check does). Each claim must have been prepared alone before: what it got then is what it must
    get now. Every answer is recorded; a call failing as a whole is judged by the Then step."""
    refs = [_claim_ref(sut, ctx, kubelet, name, None) for name in split_names(claims)]
    alone = []
    for ref in refs:
        earlier = [a.result for a in kubelet.prepared.get(ref.name, []) if a.ref.uid == ref.uid and a.result]
        assert earlier and judge.prepared(earlier[-1]), f"the kubelet has not had claim {ref.name!r} prepared alone"
        alone.append(earlier[-1])
    answers = prepare_at_once(sut.kubelet_plugin_endpoint(driver, node), [[sent] for sent in _on_the_wire(ctx, refs)])
    kubelet.at_once = []
    for ref, before, answer in zip(refs, alone, answers, strict=True):
        kubelet.at_once.append((ref, before, answer))
        if isinstance(answer, dict):
            result = answer.get(ref.uid)
            kubelet.prepared.setdefault(ref.name, []).append(
                PrepareAnswer(driver, "v1", ref, result, _real(ctx, driver)))
            if judge.prepared(result):
                kubelet.held[ref.uid] = (node, driver, _on_the_wire(ctx, [ref])[0])


@then("the driver prepared each claim of the calls made at once as when it was asked alone")
def prepared_at_once_as_alone(kubelet: KubeletRecord) -> None:
    """DRA-PLUGIN/CONCURRENT-CALLS: every call was answered, its claim prepared with the same devices, requests
    and CDI device IDs as when asked alone."""
    assert kubelet.at_once, "the kubelet has made no calls at once"
    for ref, alone, answer in kubelet.at_once:
        assert not isinstance(answer, PluginCallError), f"the call for claim {ref.name!r} failed as a whole: {answer}"
        result = answer.get(ref.uid)
        verdict = judge.concurrent_answer(result, alone)
        assert verdict != "refused", (
            f"claim {ref.name!r} was not prepared in a call beside others: "
            + (f"refused with {result.error!r}" if result is not None else
               f"left out of the answer, whose entries are keyed {sorted(answer)}")
        )
        assert result is not None
        assert verdict is None, (f"claim {ref.name!r}: alone {signature_text(alone)}; beside others "
                                 f"{signature_text(result)}")


def _advertised_versions(info: PluginInfo) -> list[str]:
    """The DRAPlugin versions a registration names that the harness speaks, in the plugin's order."""
    return [name.removesuffix(".DRAPlugin") for name in judge.known_versions(info.supported_versions)]


@when(parsers.re(KUBELET_ASKS + r"prepare " + CLAIM + r" over every DRAPlugin version it advertises"))
def kubelet_asks_plugin_in_every_version(sut: SystemUnderTest, ctx: ScenarioContext, kubelet: KubeletRecord,
                                         node: str, driver: str, claim: str | None, pod: str | None) -> None:
    """Read the plugin's registration, then prepare the claim once in each DRAPlugin version it names."""
    info = registration_info(sut.kubelet_plugin_registration_endpoint(driver, node))
    versions = _advertised_versions(info)
    assert versions, (
        f"driver {driver!r} advertises no DRAPlugin version the harness speaks ({', '.join(API_VERSIONS)}): "
        f"{list(info.supported_versions)}"
    )
    _await_binding(sut, [claim] if claim else [], pod)
    ref = _claim_ref(sut, ctx, kubelet, claim, pod)
    for version in versions:
        _call_plugin(sut, ctx, kubelet, node, driver, "prepare", [ref], version)


# --- what the plugin answered ---------------------------------------------------------------------------
def _claim_name(kubelet: KubeletRecord, claim: str | None, pod: str | None) -> str:
    if claim:
        return claim
    name = kubelet.pod_claims.get(pod or "")
    assert name is not None, f"the kubelet never asked about the claim of pod {pod!r}"
    return name


def _prepare_answers(kubelet: KubeletRecord, claim: str | None, pod: str | None) -> list[PrepareAnswer]:
    name = _claim_name(kubelet, claim, pod)
    answers = kubelet.prepared.get(name)
    assert answers, f"the kubelet never asked to prepare claim {name!r}"
    return answers


def _prepared(kubelet: KubeletRecord, claim: str | None, pod: str | None) -> PrepareAnswer:
    """The plugin's latest answer for the claim, which must be a success."""
    answer = _prepare_answers(kubelet, claim, pod)[-1]
    result = answer.result
    assert result is not None, (
        f"driver {answer.shown} left claim {answer.ref.name!r} (UID {answer.ref.uid}) out of its "
        f"NodePrepareResources answer"
    )
    assert not result.failed, f"driver {answer.shown} refused to prepare claim {answer.ref.name!r}: {result.error}"
    return answer


def _device_names(devices: tuple[PreparedDevice, ...]) -> list[str]:
    return sorted(f"{d.pool}/{d.device}" for d in devices)


@then(parsers.re(r'the driver prepared ' + CLAIM + r' with devices? "(?P<devices>[^"]+(?:", "[^"]+)*)"'))
def driver_prepared(ctx: ScenarioContext, kubelet: KubeletRecord, claim: str | None, pod: str | None,
                    devices: str) -> None:
    """Prepared without error, exactly the named devices (CDI device IDs are judged by their own steps)."""
    result = _prepared(kubelet, claim, pod).result
    assert result is not None
    expected = sorted(device_named(ctx, name) for name in split_names(devices))
    got = sorted(d.device for d in result.devices)
    assert got == expected, f"the driver prepared {got}, expected {expected}"


@then(parsers.re(r'the driver refused to prepare ' + CLAIM
                 + r'(?P<permanently> permanently(?P<each> each time it was asked)?)?'))
def driver_refused(kubelet: KubeletRecord, claim: str | None, pod: str | None, permanently: str | None,
                   each: str | None) -> None:
    """A per-claim error in the answer, or the whole prepare refused with the plugin's own error status (as
    upstream's helper refuses a claim it cannot read; not a hang or a crash, which fail the `When` step); with
    "permanently", an error in the claim's entry marked permanent_error (KEP-5322)."""
    answers = _prepare_answers(kubelet, claim, pod)
    if each:
        assert len(answers) >= 2, f"the kubelet asked to prepare claim {answers[0].ref.name!r} only once"
    for answer in answers if each else answers[-1:]:
        assert answer.result is not None, (
            f"driver {answer.shown} left claim {answer.ref.name!r} (UID {answer.ref.uid}) out of its "
            f"NodePrepareResources answer instead of refusing it"
        )
        assert judge.refused(answer.result), (
            f"driver {answer.shown} prepared claim {answer.ref.name!r} (UID {answer.ref.uid}) with devices "
            f"{_device_names(answer.result.devices)}"
        )
        if permanently:
            assert judge.refused_permanently(answer.result), (
                f"driver {answer.shown} refused claim {answer.ref.name!r} over DRAPlugin {answer.api_version} "
                f"without marking the error permanent: {answer.result.error}"
            )


@then("the driver marked only failed answers permanent")
def permanent_only_with_error(kubelet: KubeletRecord) -> None:
    """KEP-5322: permanent_error counts only next to a non-empty error."""
    answers = [answer for answers in kubelet.prepared.values() for answer in answers if answer.result is not None]
    assert answers, "the kubelet has no answer from a plugin to judge"
    bad = {id(result) for result in judge.permanent_without_error(a.result for a in answers if a.result is not None)}
    named = [a.ref.name for a in answers if id(a.result) in bad]
    assert not named, f"successful answers marked permanent for claims {named}"


@then(parsers.re(r"the driver prepared " + CLAIM + r" with the same devices each time it was asked"))
def driver_prepared_alike(kubelet: KubeletRecord, claim: str | None, pod: str | None) -> None:
    """Every answer for the claim a success, listing the same devices, requests and CDI device IDs (a single
    answer only has to be a success)."""
    answers = _prepare_answers(kubelet, claim, pod)
    results = []
    for number, answer in enumerate(answers, 1):
        where = f"call {number} of {len(answers)} (DRAPlugin {answer.api_version})"
        assert answer.result is not None, f"{where}: driver {answer.shown} left claim {answer.ref.name!r} out"
        assert judge.prepared(answer.result), (
            f"{where}: driver {answer.shown} refused claim {answer.ref.name!r}: {answer.result.error}"
        )
        results.append(answer.result)
    for number, result in enumerate(results[1:], 2):
        assert judge.answered_alike(result, results[0]), (
            f"call {number} prepared claim {answers[0].ref.name!r} differently from call 1:\n"
            f"  call 1: {signature_text(results[0])}\n  call {number}: {signature_text(result)}"
        )


def _allocation_results(sut: SystemUnderTest, answer: PrepareAnswer) -> list[Obj]:
    obj = must_get(sut, "ResourceClaim", answer.ref.name)
    assert obj["metadata"]["uid"] == answer.ref.uid, f"claim {answer.ref.name!r} is no longer the one prepared"
    allocation = (obj.get("status") or {}).get("allocation")
    assert allocation, f"claim {answer.ref.name!r} is not allocated"
    results: list[Obj] = (allocation.get("devices") or {}).get("results") or []
    return [result for result in results if result.get("driver") == answer.driver]


@then(parsers.re(r"the devices the driver prepared for " + CLAIM + r" are those of its allocation"))
@observes("claim")
def driver_prepared_the_allocation(sut: SystemUnderTest, kubelet: KubeletRecord, claim: str | None,
                                   pod: str | None) -> None:
    """Each allocation result of this driver appears once as a prepared device with the result's pool and
    device (and, over v1, the result's shareID as share_id), nothing else does, and a device that names
    requests names the request of its result (a subrequest "main/small" may be named as "main"); or the answer
    lists no device at all (D-3063-8). Judged by draconform.kubeletplugin.judge, as plugin-check judges it."""
    answer = _prepared(kubelet, claim, pod)
    assert answer.result is not None
    problems = judge.allocation_problems(answer.ref.name, answer.driver, _allocation_results(sut, answer),
                                         answer.result, answer.api_version,
                                         lambda pool: sut.pool_name(answer.driver, pool))
    assert not problems, (f"driver {answer.shown} prepared claim {answer.ref.name!r} with "
                          f"{_device_names(answer.result.devices)}: " + "; ".join(problems))


@then(parsers.re(r"every CDI device ID the driver returned for " + CLAIM + r" is fully qualified"))
def cdi_ids_qualified(kubelet: KubeletRecord, claim: str | None, pod: str | None) -> None:
    """vendor/class=name in CDI's syntax, so the container runtime can resolve it."""
    result = _prepared(kubelet, claim, pod).result
    assert result is not None
    ids = judge.cdi_ids(result)
    if not ids:
        # Nothing to judge: a driver whose devices need no CDI device ID is reported skipped, not passed.
        pytest.skip("the driver returned no CDI device ID to check")
    bad = judge.unqualified_cdi_ids(ids)
    assert not bad, f"CDI device IDs that are not fully qualified vendor/class=name: {bad}"


@then(parsers.re(r"every CDI device ID the driver returned for " + CLAIM +
                 r' is defined in a CDI spec file on node "(?P<node>[^"]+)"'))
@observes("object")
def cdi_ids_defined(sut: SystemUnderTest, kubelet: KubeletRecord, claim: str | None, pod: str | None,
                    node: str) -> None:
    """The container runtime resolves an ID only through a spec file on the node; a file it would refuse
    defines nothing."""
    result = _prepared(kubelet, claim, pod).result
    assert result is not None
    ids = judge.cdi_ids(result)
    assert ids, "the driver returned no CDI device ID"
    missing, refused = judge.undefined_cdi_ids(ids, _spec_files(sut, node))
    problems = "; ".join(refused)
    assert not missing, (f"CDI device IDs no spec file on node {node!r} defines: {missing}"
                         + (f" (spec files a runtime would refuse: {problems})" if problems else ""))


def _spec_files(sut: SystemUnderTest, node: str) -> dict[str, str]:
    return seam_method(sut, "node_cdi_spec_files", "read a node's CDI spec files")(node)


@then(parsers.re(r"every CDI device ID the driver returned for " + CLAIM +
                 r' is defined by one CDI spec file on node "(?P<node>[^"]+)"'))
@observes("object")
def cdi_ids_defined_once(sut: SystemUnderTest, kubelet: KubeletRecord, claim: str | None, pod: str | None,
                         node: str) -> None:
    """DRA-PLUGIN/CDI-ID-DEFINED-ONCE: no two spec files of one directory on the node define the same ID."""
    result = _prepared(kubelet, claim, pod).result
    assert result is not None
    ids = judge.cdi_ids(result)
    if not ids:
        pytest.skip("the driver returned no CDI device ID to check")
    twice = judge.defined_twice(ids, _spec_files(sut, node))
    assert not twice, f"defined by two spec files of one directory, which a runtime refuses as a conflict: {twice}"


@when(parsers.parse('the CDI spec files on node "{node}" are noted as "{label}"'))
def note_spec_files(sut: SystemUnderTest, kubelet: KubeletRecord, node: str, label: str) -> None:
    kubelet.spec_notes[(node, label)] = frozenset(_spec_files(sut, node))


def _noted(kubelet: KubeletRecord, node: str, label: str) -> frozenset[str]:
    assert (node, label) in kubelet.spec_notes, f"no step noted the CDI spec files on node {node!r} as {label!r}"
    return kubelet.spec_notes[(node, label)]


def _left(kubelet: KubeletRecord, node: str, before: str, after: str, now: frozenset[str]) -> list[str]:
    return judge.spec_files_left(judge.new_spec_files(_noted(kubelet, node, before), _noted(kubelet, node, after)),
                                 now)


SPEC_WINDOW = (r'the CDI spec files that appeared on node "(?P<node>[^"]+)" between "(?P<before>[^"]+)" and '
               r'"(?P<after>[^"]+)"')


@then(parsers.re(SPEC_WINDOW + r' are gone(?:, if those between "(?P<probe_before>[^"]+)" and "(?P<probe_after>[^"]+)" '
                 r'were gone at "(?P<probe_end>[^"]+)")?$'))
@observes("object")
def spec_files_gone(sut: SystemUnderTest, kubelet: KubeletRecord, node: str, before: str, after: str,
                    probe_before: str | None, probe_after: str | None, probe_end: str | None) -> None:
    """DRA-PLUGIN/CDI-SPECS-REMOVED: the spec files a prepare wrote (those that appeared between the two notes;
    a file rewritten may be the driver's own) are gone now. With the "if" part (DRA-PLUGIN/SURVIVES-RESTART),
    judged only if the files of an earlier prepare were gone at a later note: whether the driver removes its spec
    files at all is CDI-SPECS-REMOVED's question, not asked twice (as plugin-check's restart check does)."""
    if probe_before and probe_after and probe_end:
        kept = _left(kubelet, node, probe_before, probe_after, _noted(kubelet, node, probe_end))
        if kept:
            pytest.skip(f"without a restart the driver left its spec files too ({', '.join(kept)}): "
                        "DRA-PLUGIN/CDI-SPECS-REMOVED's question, not judged here")
    left = _left(kubelet, node, before, after, frozenset(_spec_files(sut, node)))
    assert not left, f"spec files the prepare wrote are still on node {node!r}: {left}"


@then(parsers.re(r"every device the driver prepared for " + CLAIM + r" has a CDI device ID"))
def cdi_id_per_device(kubelet: KubeletRecord, claim: str | None, pod: str | None) -> None:
    result = _prepared(kubelet, claim, pod).result
    assert result is not None
    assert result.devices, "the driver prepared no device"
    missing = judge.devices_without_cdi_id(result)
    assert not missing, f"prepared devices without a CDI device ID: {missing}"


@then("the driver answered every claim it was asked about, by UID")
def driver_answered_every_claim(kubelet: KubeletRecord) -> None:
    """The answer to the latest call has an entry for every claim in it, keyed by the claim's UID."""
    call = kubelet.last_call
    assert call is not None, "the kubelet has not called a plugin"
    missing = [f"{ref.name} (UID {ref.uid})" for ref in missing_entries(call.asked, call.answered)]
    assert not missing, (
        f"the {call.method} answer has no entry for claims {missing}; its entries are keyed {sorted(call.answered)}"
    )


@then("the driver answered only the claims it was asked about")
def driver_answered_only_asked(kubelet: KubeletRecord) -> None:
    """The answer to the latest call has no entry under a UID the call did not carry (a claim of an earlier
    call, or a made-up UID): the kubelet fails the pod's preparation on such an answer."""
    call = kubelet.last_call
    assert call is not None, "the kubelet has not called a plugin"
    known = {ref.uid: ref.name for ref in kubelet.claims.values()}
    extra = [f"{uid} (claim {known[uid]})" if uid in known else uid
             for uid in unasked_entries(call.asked, call.answered)]
    assert not extra, (
        f"the {call.method} answer for {[ref.name for ref in call.asked]} also has entries under UIDs the call did "
        f"not carry: {extra}"
    )


@then(parsers.re(r"the driver unprepared " + CLAIM + r"(?P<each> each time it was asked)?"))
def driver_unprepared(kubelet: KubeletRecord, claim: str | None, pod: str | None, each: str | None) -> None:
    """The latest NodeUnprepareResources answer for the claim (or every one) has an entry without error."""
    name = _claim_name(kubelet, claim, pod)
    answers = kubelet.unprepared.get(name)
    assert answers, f"the kubelet never asked to unprepare claim {name!r}"
    if each:
        assert len(answers) >= 2, f"the kubelet asked to unprepare claim {name!r} only once"
    for number, failure in enumerate(answers if each else answers[-1:], 1):
        where = f"call {number} of {len(answers)}: " if each else ""
        assert failure is None, f"{where}the plugin failed to unprepare claim {name!r}: {failure}"


# --- plugin registration --------------------------------------------------------------------------------
@when(parsers.re(KUBELET + r'asks driver "(?P<driver>[^"]+)" for its plugin registration'))
def kubelet_reads_registration(sut: SystemUnderTest, kubelet: KubeletRecord, node: str, driver: str) -> None:
    """GetInfo on the registration socket, as the kubelet's plugin watcher calls it on finding the socket."""
    info = registration_info(sut.kubelet_plugin_registration_endpoint(driver, node))
    kubelet.registration = (driver, node, info)


@when(parsers.re(KUBELET + r'tells driver "(?P<driver>[^"]+)" that its registration '
                 r'(?:succeeded|failed with "(?P<error>[^"]+)")'))
def kubelet_notifies_registration(sut: SystemUnderTest, kubelet: KubeletRecord, node: str, driver: str,
                                  error: str | None) -> None:
    """NotifyRegistrationStatus with the kubelet's verdict; whether the plugin accepted it is recorded."""
    verdict = f"refused ({error})" if error else "accepted"
    try:
        notify_registration(sut.kubelet_plugin_registration_endpoint(driver, node), error is None, error or "")
    except PluginCallError as failure:
        kubelet.notifications.append((verdict, failure))
    else:
        kubelet.notifications.append((verdict, None))


def _registration(kubelet: KubeletRecord) -> tuple[str, str, PluginInfo]:
    assert kubelet.registration is not None, "the kubelet has not asked a plugin for its registration"
    return kubelet.registration


@then(parsers.parse('the plugin registers with type "{kind}" and name "{name}"'))
def registration_names(ctx: ScenarioContext, kubelet: KubeletRecord, kind: str, name: str) -> None:
    """`name` is the scenario's name for the driver: a cluster's own driver under test registers with its own."""
    _, _, info = _registration(kubelet)
    if ctx.own_driver is not None and name == ctx.own_driver_alias:
        name = ctx.own_driver.driver
    assert judge.registered_as(info, kind, name), (
        f"the plugin registers with type {info.type!r} and name {info.name!r}"
    )


@then("the plugin registers the path of its DRAPlugin socket as its endpoint")
@observes("object")
def registration_endpoint(sut: SystemUnderTest, kubelet: KubeletRecord) -> None:
    """A plain absolute path (the kubelet dials it as a unix socket path, not as a gRPC target), the same
    socket the SUT names for the plugin."""
    driver, node, info = _registration(kubelet)
    socket = sut.kubelet_plugin_endpoint(driver, node).removeprefix("unix://")
    problem = judge.endpoint_problem(info.endpoint, socket)
    assert problem != "not a path", f"the registered endpoint {info.endpoint!r} is not an absolute path"
    assert problem is None, (
        f"the plugin registers endpoint {info.endpoint!r}; its DRAPlugin socket is {socket!r}"
    )


@then(parsers.re(r"the registration advertises " + QUOTED_NAMES))
def registration_advertises(kubelet: KubeletRecord, names: str) -> None:
    _, _, info = _registration(kubelet)
    missing = judge.not_advertised(info.supported_versions, split_names(names))
    assert not missing, f"the registration advertises {list(info.supported_versions)}, without {missing}"


@then(parsers.parse('the registration prefers "{preferred}" to "{other}"'))
def registration_prefers(kubelet: KubeletRecord, preferred: str, other: str) -> None:
    """The kubelet uses the first service in the plugin's list that it knows, so the plugin's order is its
    preference: `preferred` is listed, and `other`, if listed at all, comes after it."""
    _, _, info = _registration(kubelet)
    versions = list(info.supported_versions)
    assert preferred in versions, f"the registration advertises {versions}, without {preferred!r}"
    assert judge.prefers(versions, preferred, other), f"the registration lists {versions}"


@then("the plugin accepted every registration status it was told")
def registration_status_accepted(kubelet: KubeletRecord) -> None:
    """A success notification is answered without error; a failure notification may be answered with an error
    status, as upstream's helper does (the kubelet only logs it), but not by hanging or crashing."""
    assert kubelet.notifications, "the kubelet has not told a plugin about its registration"
    refused = [f"{verdict}: {failure}" for verdict, failure in kubelet.notifications
               if judge.notification_refused_wrongly(verdict == "accepted", failure)]
    assert not refused, f"NotifyRegistrationStatus failed: {'; '.join(refused)}"
