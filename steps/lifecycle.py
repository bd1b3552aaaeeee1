"""Steps for the lifecycle paths a pod or claim takes besides the ordinary ones (KEP-3063 "kubelet / Managing
resources", "NodePrepareResource Errors"; KEP-5322 "API"): a pod force-deleted with a grace period of 0, an
ordinary update of a claim that carries status, a claim the pod does not own, plugin answers the KEPs say how
to read, and whether unpreparing took away the CDI devices preparing defined. Everything goes through the seam."""

from __future__ import annotations

import pytest
import yaml
from pytest_bdd import given, parsers, then, when

from draconform.kube.cdi import parse_specs
from draconform.kubeletplugin.client import PluginCallError, registration_info
from draconform.steps.cluster import assert_same, must_get, rewrite, seam_method
from draconform.steps.manifests import NAMESPACE, manifest
from draconform.steps.scenario import ScenarioContext, observes
from draconform.sut import Obj, PluginFault, SystemUnderTest


@when(parsers.parse('pod "{pod}" is force-deleted with a grace period of 0'))
def force_delete_pod(sut: SystemUnderTest, pod: str) -> None:
    """`kubectl delete pod --force --grace-period=0`: the pod object goes at once, whatever its kubelet does."""
    sut.delete("Pod", pod, NAMESPACE, grace_period_seconds=0)
    sut.settle()


@when(parsers.parse('the user updates claim "{claim}" through the main resource, changing its status to:'))
def update_claim_main_resource(sut: SystemUnderTest, claim: str, docstring: str) -> None:
    """An ordinary update (not the status subresource) of the claim, carrying a label change and another
    status. kube-apiserver accepts it, stores the label and keeps the stored status."""
    def change(obj: Obj) -> None:
        obj["metadata"].setdefault("labels", {})["draconform.io/touched"] = "yes"
        obj["status"] = yaml.safe_load(docstring) or {}

    rewrite(sut, "ResourceClaim", claim, change)
    sut.settle()


@then(parsers.parse('claim "{claim}" carries the label the user wrote'))
@observes("claim")
def claim_has_touched_label(sut: SystemUnderTest, claim: str) -> None:
    obj = must_get(sut, "ResourceClaim", claim)
    labels = obj["metadata"].get("labels") or {}
    assert labels.get("draconform.io/touched") == "yes", f"the update of claim {claim!r} was not stored: {labels}"


# --- plugin answers the KEPs say how to read (the seam's PluginFault kinds beyond the usual ones) ---------------
ANSWER = (r'the plugin of driver "(?P<driver>[^"]+)" on node "(?P<node>[^"]+)" answers prepare '
          r"(?P<what>with NOT_FOUND|with permanent_error set and no error|with an error next to its devices)"
          r"(?: (?P<times>\d+) times?)?")
ANSWER_KINDS = {"with NOT_FOUND": "not-found", "with permanent_error set and no error": "permanent-without-error",
                "with an error next to its devices": "error-with-devices"}


@given(parsers.re(ANSWER))
def plugin_answers(sut: SystemUnderTest, driver: str, node: str, what: str, times: str | None) -> None:
    """A test driver's plugin told to answer so: a NOT_FOUND status for the whole call (KEP-3063), or per claim
    permanent_error with an empty error, or an error beside the devices (KEP-5322 API)."""
    sut.inject_plugin_fault(driver, node, PluginFault(ANSWER_KINDS[what], "prepare", int(times) if times else None))


# --- a claim the pod does not own ------------------------------------------------------------------------------
@when(parsers.parse('the status of pod "{pod}" names claim "{claim}" for its entry "{entry}"'))
def pod_status_names_claim(sut: SystemUnderTest, pod: str, claim: str, entry: str) -> None:
    """What kube-controller-manager writes once it created a template's claim, written here for a claim it did
    not create."""
    rewrite(sut, "Pod", pod, lambda obj: obj.setdefault("status", {}).__setitem__(
        "resourceClaimStatuses", [{"name": entry, "resourceClaimName": claim}]), status=True)
    sut.settle()


ALLOCATED = (r'claim "(?P<claim>[^"]+)" is allocated device "(?P<device>[^"]+)" of driver "(?P<driver>[^"]+)" '
             r'(?:from pool "(?P<pool>[^"]+)" )?on node "(?P<node>[^"]+)"(?: and reserved for pod "(?P<pod>[^"]+)")?$')


@given(parsers.re(ALLOCATED))
@when(parsers.re(ALLOCATED))
def claim_allocated_and_reserved(sut: SystemUnderTest, ctx: ScenarioContext, claim: str, device: str, driver: str,
                                 pool: str | None, node: str, pod: str | None) -> None:
    """As a scheduler would have left it: allocated on the node (pool named after the node, or the pool of the
    driver under test's device the scenario's name stands for) and, with a pod, reserved for it by its UID. With
    a pool, as someone else wrote it wrongly: the device's name (as the driver publishes it) in that pool."""
    found_pool, device = ctx.devices.get(device, (node, device))
    pool = pool or found_pool
    uid = must_get(sut, "Pod", pod)["metadata"]["uid"] if pod is not None else None

    def change(obj: Obj) -> None:
        request = obj["spec"]["devices"]["requests"][0]["name"]
        obj["status"] = {
            "allocation": {
                "devices": {"results": [{"request": request, "driver": driver, "pool": pool, "device": device}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
            },
        }
        if uid is not None:
            obj["status"]["reservedFor"] = [{"resource": "pods", "name": pod, "uid": uid}]

    rewrite(sut, "ResourceClaim", claim, change, status=True)
    sut.settle()


# --- what preparing set up on the node, and whether unpreparing took it away ----------------------------------
@pytest.fixture
def cdi_notes() -> dict[tuple[str, str], frozenset[str]]:
    """(node, label) -> the CDI device IDs the node's spec files defined when a step noted them."""
    return {}


def _defined(sut: SystemUnderTest, node: str) -> frozenset[str]:
    return parse_specs(seam_method(sut, "node_cdi_spec_files", "read a node's CDI spec files")(node)).defined


@when(parsers.parse('the CDI devices defined on node "{node}" are noted as "{label}"'))
def note_cdi_devices(sut: SystemUnderTest, cdi_notes: dict[tuple[str, str], frozenset[str]], node: str,
                     label: str) -> None:
    cdi_notes[(node, label)] = _defined(sut, node)


@then(parsers.parse('node "{node}" defines exactly the CDI devices noted as "{label}"'))
@observes("object")
def cdi_devices_as_noted(sut: SystemUnderTest, cdi_notes: dict[tuple[str, str], frozenset[str]], node: str,
                         label: str) -> None:
    """Whatever preparing defined since the note is gone again, and nothing defined then went. A driver whose CDI
    specs define its devices once for all (not per claim) passes: the rule asks that unpreparing undo what
    preparing did, and such a driver's preparation defined nothing."""
    now = _defined(sut, node)
    noted = cdi_notes[(node, label)]
    assert now == noted, (f"node {node!r}: CDI devices defined that were not when noted as {label!r}: "
                          f"{sorted(now - noted)}; noted ones gone: {sorted(noted - now)}")


# --- an object that must stay the same object (not deleted and created again) -----------------------------------
@pytest.fixture
def uid_notes() -> dict[tuple[str, str], str]:
    """(kind, name) -> the UID the object had when a step noted it."""
    return {}


@given(parsers.re(r'the UID of (?P<kind>ResourceClaim|Pod) "(?P<name>[^"]+)" is noted'))
def note_uid(sut: SystemUnderTest, uid_notes: dict[tuple[str, str], str], kind: str, name: str) -> None:
    uid_notes[(kind, name)] = str(must_get(sut, kind, name)["metadata"]["uid"])


@then(parsers.re(r'(?P<kind>ResourceClaim|Pod) "(?P<name>[^"]+)" is still the object whose UID was noted'))
@observes("object")
def same_uid(sut: SystemUnderTest, uid_notes: dict[tuple[str, str], str], kind: str, name: str) -> None:
    """An object deleted and created again under its name has another UID: what a controller that replaces an
    object it may not change does."""
    now = str(must_get(sut, kind, name)["metadata"]["uid"])
    assert now == uid_notes[(kind, name)], (
        f"{kind} {name!r} has UID {now}, not {uid_notes[(kind, name)]} noted before: it was created anew")


# --- objects written in an older served version ---------------------------------------------------------------
@then(parsers.re(r'the stored (?P<kind>DeviceClass|ResourceSlice|ResourceClaim|ResourceClaimTemplate) '
                 r'"(?P<name>[^"]+)" has the spec of (?P=kind) "(?P<expected>[^"]+)" in manifest "(?P<source>[^"]+)"'))
@observes("object")
def stored_spec_as_manifest(sut: SystemUnderTest, ctx: ScenarioContext, kind: str, name: str, expected: str,
                            source: str) -> None:
    """The stored object (read in v1) has exactly the spec of the named object of the manifest."""
    wanted = [obj for obj in manifest(ctx, source) if obj.get("kind") == kind and obj["metadata"]["name"] == expected]
    assert len(wanted) == 1, f"manifest {source!r} has {len(wanted)} {kind} objects named {expected!r}, not one"
    assert_same(must_get(sut, kind, name).get("spec"), wanted[0].get("spec"), f"the spec of the stored {kind} {name!r}")


# --- a node without the driver's kubelet plugin ---------------------------------------------------------------
@given(parsers.parse('driver "{driver}" has no kubelet plugin registered on node "{node}"'))
def no_plugin_registered(sut: SystemUnderTest, driver: str, node: str) -> None:
    """Nothing answers on the driver's registration socket of the node, as the kubelet's plugin watcher would find
    it. A SUT that cannot reach a node's plugin sockets (a cluster's kubelets out of the harness's reach) raises
    Unsupported here, so a scenario about the kubelet waiting for a plugin is skipped rather than misjudged."""
    try:
        endpoint = sut.kubelet_plugin_registration_endpoint(driver, node)
    except ValueError:
        return  # the reference: the driver runs nowhere yet, so it has no socket on any node
    try:
        info = registration_info(endpoint)  # the default deadline: a slow answer on a loaded machine still counts
    except PluginCallError:
        return
    raise AssertionError(f"driver {driver!r} already has a plugin registered on node {node!r}: {info}")
