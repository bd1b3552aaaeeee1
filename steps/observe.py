"""Steps that observe what a user of a real cluster could observe: claims' status, whether objects
exist, published slices, and events."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import yaml
from pytest_bdd import parsers, then

from draconform.steps.cluster import (
    assert_same,
    device_named,
    generated_claims,
    must_get,
    resolve_claim,
    seam_method,
    slice_devices,
)
from draconform.steps.manifests import NAMESPACE
from draconform.steps.scenario import ScenarioContext, observes, tolerance
from draconform.steps.words import CLAIM, DURATION, split_names, to_seconds
from draconform.sut import Obj, SystemUnderTest, Unsupported

BINDING_FIELDS = ("bindsToNode", "bindingConditions", "bindingFailureConditions")


@then(parsers.re(CLAIM + r' is allocated devices? "(?P<devices>[^"]+)"'))
@observes("claim")
def claim_allocated(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, devices: str
) -> None:
    obj = resolve_claim(sut, ctx, claim, pod)
    allocation = (obj.get("status") or {}).get("allocation")
    assert allocation, f"claim {obj['metadata']['name']!r} is not allocated"
    got = sorted(result["device"] for result in allocation["devices"]["results"])
    expected = sorted(device_named(ctx, name) for name in split_names(devices))
    assert got == expected, f"claim {obj['metadata']['name']!r} got devices {got}, expected {expected}"


@then(parsers.re(CLAIM + r' is allocated devices "(?P<devices>[^"]+)" for requests "(?P<requests>[^"]+)"'))
@observes("claim")
def claim_allocated_for_requests(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None,
                                 devices: str, requests: str) -> None:
    """The devices of the named requests together, in any order and whichever request got which: where a rule
    fixes the set a group of requests gets (a constraint over them) and nothing else, such as which device an
    unconstrained request of the claim takes."""
    obj = resolve_claim(sut, ctx, claim, pod)
    allocation = (obj.get("status") or {}).get("allocation")
    assert allocation, f"claim {obj['metadata']['name']!r} is not allocated"
    named = set(split_names(requests))
    got = sorted(result["device"] for result in allocation["devices"]["results"] if result.get("request") in named)
    expected = sorted(device_named(ctx, name) for name in split_names(devices))
    assert got == expected, (
        f"claim {obj['metadata']['name']!r} got devices {got} for requests {sorted(named)}, expected {expected}")


@then(parsers.re(CLAIM + r' is allocated one of devices "(?P<devices>[^"]+)"'))
@observes("claim")
def claim_allocated_one_of(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, devices: str
) -> None:
    """Where a rule lets the allocator prefer either of several devices (KEP-5007's per-device order and
    upstream's per-pool order), a single device among those allowed passes."""
    obj = resolve_claim(sut, ctx, claim, pod)
    allocation = (obj.get("status") or {}).get("allocation")
    assert allocation, f"claim {obj['metadata']['name']!r} is not allocated"
    got = [result["device"] for result in allocation["devices"]["results"]]
    allowed = split_names(devices)
    assert len(got) == 1 and got[0] in allowed, (
        f"claim {obj['metadata']['name']!r} got devices {got}, expected one of {', '.join(allowed)}")


@then(parsers.re(CLAIM + r' is allocated one device for request "(?P<request>[^"]+)"'))
@observes("claim")
def claim_allocated_for_request(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None,
                                request: str) -> None:
    """One device, for this request (a firstAvailable alternative named "main/sub"), whichever device the
    allocator chose: a driver under test may publish more devices than the scenario names, in an order of its
    own, and no rule says which of them a scheduler takes (issue 42: Intel's GPU driver publishes 8 and lists
    them anew in another order, and "one of gpu-0, gpu-1, gpu-2" failed a correct allocation)."""
    obj = resolve_claim(sut, ctx, claim, pod)
    allocation = (obj.get("status") or {}).get("allocation")
    assert allocation, f"claim {obj['metadata']['name']!r} is not allocated"
    got = [(result.get("request"), result["device"]) for result in allocation["devices"]["results"]]
    assert len(got) == 1 and got[0][0] == request, (
        f"claim {obj['metadata']['name']!r} got {got} (request, device), expected one device for request {request!r}")


@then(parsers.re(CLAIM + r' is allocated device "(?P<device>[^"]+)", after at most the tolerated re-picks of the '
                 r'failed device "(?P<failed>[^"]+)", each failing within ' + DURATION))
@observes("claim", eventually=False)  # it moves the clock itself, by the tolerance's measure
def allocated_after_repicks(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None,
                            device: str, failed: str, amount: str, unit: str) -> None:
    """A device reported failed is withdrawn by its driver or controller, but the withdrawal reaches the scheduler
    a little later, so the rule's catalogue may tolerate that many re-picks of the failed device: each one waits
    out its own failure (within the given time) before the claim must hold the device expected."""
    allowed, period = tolerance(ctx).repicks, to_seconds(amount, unit)
    repicks, waited, on_failed = 0, 0.0, False
    while True:
        obj = resolve_claim(sut, ctx, claim, pod)
        allocation = (obj.get("status") or {}).get("allocation") or {}
        got = [result["device"] for result in (allocation.get("devices") or {}).get("results") or []]
        if got == [device]:
            return
        if got == [failed] and not on_failed:
            repicks += 1
        on_failed = got == [failed]
        assert repicks <= allowed and waited < period * max(repicks, 1), (
            f"claim {obj['metadata']['name']!r} got devices {got} after {waited:g} seconds and {repicks} re-picks "
            f"of {failed!r}; expected {device!r}, with at most {allowed} re-picks of {failed!r} tolerated "
            f"(rule {ctx.rule})")
        sut.advance_clock(1)
        waited += 1


@then(parsers.re(CLAIM + r" is not allocated"))
@observes("claim")
def claim_not_allocated(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    obj = resolve_claim(sut, ctx, claim, pod)
    allocation = (obj.get("status") or {}).get("allocation")
    assert not allocation, f"claim {obj['metadata']['name']!r} is allocated: {allocation}"


@then(parsers.re(CLAIM + r" was (?P<what>cleared|unreserved)(?P<devices> with its per-device status)?"))
@observes("claim")
def claim_was_cleared(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, what: str,
                      devices: str | None) -> None:
    """At some moment after the claim was allocated and reserved it was reserved for nobody ("unreserved") and,
    "cleared", allocated to nothing (with "with its per-device status", its `status.devices` empty too): judged
    from what happened, not from the moment the step looks. After a binding failure or timeout upstream's
    scheduler clears the claim and tries the pod again within seconds, so the claim may already be allocated and
    reserved anew; its stored versions (`object_writes`: a live cluster replays them from the API server's watch
    cache) show the cleared one. Without that record only a claim cleared right now can be judged; one allocated
    again is reported as unsupported."""
    obj = resolve_claim(sut, ctx, claim, pod)
    name, uid = obj["metadata"]["name"], obj["metadata"]["uid"]

    def cleared(version: Obj) -> bool:
        status = version.get("status") or {}
        return not status.get("reservedFor") and not (what == "cleared" and status.get("allocation")) and not (
            devices and status.get("devices"))

    try:
        versions = seam_method(sut, "object_writes", "see a claim's earlier versions")("ResourceClaim", name,
                                                                                         NAMESPACE)
    except Unsupported:
        if cleared(obj):
            return
        raise Unsupported(f"claim {name!r} is allocated or reserved now, and without its earlier versions it cannot "
                          f"be told whether it was {what} in between") from None
    ours = [version for version in versions if version["metadata"].get("uid") == uid]
    held = False
    for version in ours:
        if held and cleared(version):
            return
        status = version.get("status") or {}
        held = held or bool(status.get("reservedFor") if what == "unreserved" else status.get("allocation"))
    shown = [{k: v for k, v in (version.get("status") or {}).items() if k in ("allocation", "reservedFor", "devices")}
             for version in ours]
    raise AssertionError(f"claim {name!r} was never {what}{devices or ''} after being "
                         f"{'reserved' if what == 'unreserved' else 'allocated'}; its stored statuses, oldest first: "
                         f"{shown}")


@then(parsers.re(CLAIM + r' is reserved for pods? "(?P<pods>[^"]+)"'))
@observes("claim")
def claim_reserved_for(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, pods: str
) -> None:
    obj = resolve_claim(sut, ctx, claim, pod)
    reserved = (obj.get("status") or {}).get("reservedFor") or []
    # structured reservedFor names pods by resource; the classic API by kind (an OwnerReference)
    got = sorted(entry["name"] for entry in reserved if entry.get("resource") == "pods" or entry.get("kind") == "Pod")
    assert got == sorted(split_names(pods)), f"claim {obj['metadata']['name']!r} is reserved for {got}"
    for entry in reserved:
        if entry["name"] in ctx.pod_uids:
            assert entry["uid"] == ctx.pod_uids[entry["name"]], f"reservedFor names a stale pod UID: {entry}"


@then(parsers.re(CLAIM + r" is reserved for nobody"))
@observes("claim")
def claim_not_reserved(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    obj = resolve_claim(sut, ctx, claim, pod)
    reserved = (obj.get("status") or {}).get("reservedFor") or []
    assert not reserved, f"claim {obj['metadata']['name']!r} is still reserved for {reserved}"


@then(parsers.re(CLAIM + r' is usable only on (?:node "(?P<node>[^"]+)"|one of nodes "(?P<nodes>[^"]+)")'))
@observes("claim")
def claim_pinned(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, node: str | None,
                 nodes: str | None) -> None:
    """Pinned to one node: that node, or any one of several where the scheduler may choose among equals. Either
    form that names one node pins it: the node's name (`matchFields` on `metadata.name`, as upstream's allocator
    writes for a node-local slice) or its `kubernetes.io/hostname` label (`matchExpressions`)."""
    obj = resolve_claim(sut, ctx, claim, pod)
    selector = ((obj.get("status") or {}).get("allocation") or {}).get("nodeSelector")
    allowed = [node] if node else split_names(nodes or "")
    pinned = [{"nodeSelectorTerms": [{field: [{"key": key, "operator": "In", "values": [name]}]}]}
              for name in allowed
              for field, key in (("matchFields", "metadata.name"), ("matchExpressions", "kubernetes.io/hostname"))]
    assert selector in pinned, f"allocation nodeSelector is {selector}, expected it to name one of {allowed}"


@then(parsers.parse('pod "{pod}" has one generated claim owned by the pod'))
@observes("claim")
def pod_has_generated_claim(sut: SystemUnderTest, ctx: ScenarioContext, pod: str) -> None:
    claims = generated_claims(sut, ctx, pod)
    assert len(claims) == 1, f"pod {pod!r} owns {len(claims)} claims"
    owner = claims[0]["metadata"]["ownerReferences"][0]
    assert owner.get("kind") == "Pod" and owner.get("controller") is True, f"unexpected owner {owner}"


@then(parsers.parse('the claims generated for pod "{pod}" are gone'))
@observes("object")
def generated_claims_gone(sut: SystemUnderTest, ctx: ScenarioContext, pod: str) -> None:
    claims = generated_claims(sut, ctx, pod)
    assert not claims, f"claims still exist: {[c['metadata']['name'] for c in claims]}"


@then(parsers.parse('claim "{claim}" still exists'))
@observes("object", eventually=False)
def claim_exists(sut: SystemUnderTest, claim: str) -> None:
    assert sut.get("ResourceClaim", claim, NAMESPACE) is not None, f"claim {claim!r} was deleted"


@then(parsers.re(r'no event "(?P<reason>[^"]+)" is recorded for pod "(?P<pod>[^"]+)"'))
@observes("event", eventually=False)
def no_pod_event(sut: SystemUnderTest, reason: str, pod: str) -> None:
    events = [e for e in sut.events() if e.kind == "Pod" and e.name == pod and e.reason == reason]
    assert not events, f"pod {pod!r} has {reason} events: {[e.message for e in events]}"


@then(parsers.re(r'an? (?P<type>Normal|Warning) event "(?P<reason>[^"]+)"(?: or "(?P<other>[^"]+)")? is recorded '
                 r'for pod "(?P<pod>[^"]+)"'))
@observes("event")
def pod_event(sut: SystemUnderTest, type: str, reason: str, other: str | None, pod: str) -> None:
    """`"A" or "B"`: where the KEP asks only for a suitable event, the reason it names and the one upstream
    Kubernetes records both pass."""
    allowed = [reason, other] if other else [reason]
    events = [e for e in sut.events() if e.kind == "Pod" and e.name == pod]
    assert any(e.type == type and e.reason in allowed for e in events), (
        f"no {type} event {' or '.join(allowed)} for pod {pod!r}; got {[(e.type, e.reason) for e in events]}"
    )


# --- KEP-5007: what an allocation records about binding conditions ----------------------------------
def _allocation(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> Obj:
    obj = resolve_claim(sut, ctx, claim, pod)
    allocation: Obj | None = (obj.get("status") or {}).get("allocation")
    assert allocation, f"claim {obj['metadata']['name']!r} is not allocated"
    return allocation


@then(parsers.re(
    r"the allocation of " + CLAIM
    + r' copies binding conditions "(?P<conditions>[^"]*)" and failure conditions "(?P<failures>[^"]*)"'
))
@observes("claim")
def allocation_copies_conditions(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, conditions: str, failures: str
) -> None:
    for result in _allocation(sut, ctx, claim, pod)["devices"]["results"]:
        assert result.get("bindingConditions") == split_names(conditions), f"result {result}"
        assert result.get("bindingFailureConditions") == split_names(failures), f"result {result}"


@then(parsers.re(r"the allocation of " + CLAIM + r" carries no binding conditions"))
@observes("claim")
def allocation_without_conditions(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None
) -> None:
    for result in _allocation(sut, ctx, claim, pod)["devices"]["results"]:
        assert not result.get("bindingConditions") and not result.get("bindingFailureConditions"), f"result {result}"


@then(parsers.re(CLAIM + r" was allocated less than " + DURATION + r" ago"))
@observes("claim", eventually=False)
def allocated_within(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, amount: str, unit: str
) -> None:
    """KEP-5007: the claim's allocation (allocationTimestamp) is younger than that: it was allocated again since,
    whatever backoff the scheduler used in between."""
    stamp = _allocation(sut, ctx, claim, pod).get("allocationTimestamp")
    assert stamp, "the allocation has no allocationTimestamp"
    age = sut.now() - datetime.fromisoformat(stamp)
    assert age < timedelta(seconds=to_seconds(amount, unit)), f"allocationTimestamp {stamp} is {age} old at {sut.now()}"


@then(parsers.re(CLAIM + r" was allocated " + DURATION + r" ago"))
@observes("claim", eventually=False)
def allocated_ago(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, amount: str, unit: str
) -> None:
    """KEP-5007: status.allocation.allocationTimestamp, read against the cluster's clock; older by at most the
    simulated seconds earlier Then steps waited (`ctx.waited`), which moved the clock on."""
    stamp = _allocation(sut, ctx, claim, pod).get("allocationTimestamp")
    assert stamp, "the allocation has no allocationTimestamp"
    age = sut.now() - datetime.fromisoformat(stamp)
    expected = timedelta(seconds=to_seconds(amount, unit))
    assert expected - timedelta(seconds=1) < age < expected + timedelta(seconds=1 + ctx.waited), (
        f"allocationTimestamp {stamp} is {age} old at {sut.now()}, expected {expected}"
        + (f" (up to {ctx.waited:g} s more: earlier steps waited that long)" if ctx.waited else "")
    )


@then(parsers.re(CLAIM + r" has no allocationTimestamp"))
@observes("claim")
def no_allocation_timestamp(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    assert "allocationTimestamp" not in _allocation(sut, ctx, claim, pod)


@then(parsers.re(CLAIM + r" has no per-device status"))
@observes("claim")
def no_device_status(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    obj = resolve_claim(sut, ctx, claim, pod)
    entries = (obj.get("status") or {}).get("devices")
    assert not entries, f"claim {obj['metadata']['name']!r} still has per-device status {entries}"


@then(parsers.re(r'device "(?P<device>[^"]+)" of ResourceSlice "(?P<name>[^"]+)" (?P<verb>has|has no) binding fields'))
@observes("slice")
def slice_binding_fields(sut: SystemUnderTest, ctx: ScenarioContext, device: str, name: str, verb: str) -> None:
    """KEP-5007: whether the stored device kept bindsToNode, bindingConditions, bindingFailureConditions."""
    devices = [d for d in slice_devices(sut, ctx, name) or [] if d.get("name") == device]
    assert devices, f"ResourceSlice {name!r} has no device {device!r}"
    present = [field for field in BINDING_FIELDS if field in devices[0]]
    if verb == "has":
        assert present == list(BINDING_FIELDS), f"device {device!r} has only {present}"
    else:
        assert not present, f"device {device!r} still has {present}"


@then(parsers.re(r'ResourceSlice "(?P<name>[^"]+)" publishes devices? "(?P<devices>[^"]*)"'))
@observes("slice")
def slice_publishes(sut: SystemUnderTest, ctx: ScenarioContext, name: str, devices: str) -> None:
    got = sorted(d["name"] for d in slice_devices(sut, ctx, name) or [])
    assert got == sorted(split_names(devices)), f"ResourceSlice {name!r} publishes {got}"


@then(parsers.re(CLAIM + r" is usable on every node"))
@observes("claim")
def claim_unpinned(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    selector = _allocation(sut, ctx, claim, pod).get("nodeSelector")
    assert selector is None, f"allocation nodeSelector is {selector}"


@then(parsers.re(
    CLAIM + r' reports condition "(?P<type>[^"]+)" as "(?P<status>[^"]*)" for device "(?P<device>[^"]+)"'
))
@observes("claim")
def device_condition_reported(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, type: str, status: str,
    device: str,
) -> None:
    """A condition in the device's `status.devices[]` entry, with every standard condition field set."""
    obj = resolve_claim(sut, ctx, claim, pod)
    entries = [e for e in (obj.get("status") or {}).get("devices") or [] if e.get("device") == device]
    assert entries, f"claim {obj['metadata']['name']!r} has no status entry for device {device!r}"
    found = [c for c in entries[0].get("conditions") or [] if c.get("type") == type]
    assert found, f"device {device!r} reports no condition {type!r}: {entries[0].get('conditions')}"
    assert found[0].get("status") == status, f"condition {type!r} is {found[0].get('status')!r}"
    missing = [f for f in ("type", "status", "reason", "message", "lastTransitionTime") if not found[0].get(f)]
    assert not missing, f"condition {type!r} lacks the standard fields {missing}"


@then("every allocated device is published and allocated to one claim only")
@observes("claim")
def allocations_consistent(sut: SystemUnderTest) -> None:
    """No claim holds a device that no ResourceSlice publishes, and no device is held twice."""
    published = {
        (s["spec"].get("driver"), (s["spec"].get("pool") or {}).get("name"), d.get("name"))
        for s in sut.list("ResourceSlice")
        for d in s["spec"].get("devices") or []
    }
    holders: dict[tuple[str, str, str], str] = {}
    for claim in sut.list("ResourceClaim"):
        allocation = (claim.get("status") or {}).get("allocation") or {}
        for result in (allocation.get("devices") or {}).get("results") or []:
            device = (result.get("driver"), result.get("pool"), result.get("device"))
            name = claim["metadata"]["name"]
            assert device in published, f"claim {name!r} holds {device}, which no ResourceSlice publishes"
            assert device not in holders, f"{device} is allocated to {holders[device]!r} and {name!r}"
            holders[device] = name


# --- extended resources backed by DRA (KEP-5004) ----------------------------------------------------
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


@then(parsers.parse('the claim of pod "{pod}" was written by the scheduler for its extended resources'))
@observes("claim")
def extended_claim_written(sut: SystemUnderTest, ctx: ScenarioContext, pod: str) -> None:
    """The special claim: a generated `<pod>-extended-resources-` name, the annotation, the pod as controller."""
    claim = resolve_claim(sut, ctx, None, pod)
    meta = claim["metadata"]
    assert meta["name"].startswith(f"{pod}-extended-resources-"), f"claim name {meta['name']!r}"
    assert (meta.get("annotations") or {}).get(EXTENDED_CLAIM_ANNOTATION) == "true", meta.get("annotations")
    owners = [ref for ref in meta.get("ownerReferences") or [] if ref.get("controller") is True]
    assert [(ref.get("kind"), ref.get("name"), ref.get("uid")) for ref in owners] == [
        ("Pod", pod, ctx.pod_uids[pod])], f"controller owners {owners}"


@then(parsers.parse('the claim of pod "{pod}" has requests:'))
@observes("claim")
def claim_requests(sut: SystemUnderTest, ctx: ScenarioContext, pod: str, docstring: str) -> None:
    claim = resolve_claim(sut, ctx, None, pod)
    expected = yaml.load(docstring, Loader=yaml.CSafeLoader)
    assert_same(claim["spec"]["devices"].get("requests"), expected, "spec.devices.requests")


@then(parsers.parse('pod "{pod}" maps its extended resources to its claim:'))
@observes("pod")
def pod_request_mappings(sut: SystemUnderTest, ctx: ScenarioContext, pod: str, docstring: str) -> None:
    """`status.extendedResourceClaimStatus`: the mappings as given, and the name of the claim the pod owns."""
    status = (must_get(sut, "Pod", pod).get("status") or {}).get("extendedResourceClaimStatus")
    assert status, f"pod {pod!r} has no status.extendedResourceClaimStatus"
    assert status.get("resourceClaimName") == resolve_claim(sut, ctx, None, pod)["metadata"]["name"], status
    # No rule orders the mappings (KEP-5004 names what each says, not their order): compared as a multiset.
    got = sorted(status.get("requestMappings") or [], key=_mapping_key)
    expected = sorted(yaml.load(docstring, Loader=yaml.CSafeLoader) or [], key=_mapping_key)
    assert_same(got, expected, "requestMappings (in any order)")


def _mapping_key(mapping: Any) -> str:
    return yaml.safe_dump(mapping, sort_keys=True)


@then(parsers.parse('pod "{pod}" is bound to node "{node}" with no extended resource claim'))
@observes("pod")
def bound_without_extended_claim(sut: SystemUnderTest, ctx: ScenarioContext, pod: str, node: str) -> None:
    """The device plugin's way (KEP-5004): the pod is placed on the node and no claim stands for its extended
    resources. The absence of a claim alone would pass a scheduler that never places the pod."""
    obj = must_get(sut, "Pod", pod)
    assert obj["spec"].get("nodeName") == node, (
        f"pod {pod!r} is bound to {obj['spec'].get('nodeName')!r}, expected {node!r}; "
        f"conditions: {(obj.get('status') or {}).get('conditions')}")
    status = (obj.get("status") or {}).get("extendedResourceClaimStatus")
    assert status is None, f"pod {pod!r} has extendedResourceClaimStatus {status}"
    claims = generated_claims(sut, ctx, pod)
    assert not claims, f"pod {pod!r} has claims {[c['metadata']['name'] for c in claims]}"


@then(parsers.parse('pod "{pod}" has no extended resource claim'))
@observes("pod", eventually=False)
def no_extended_claim(sut: SystemUnderTest, ctx: ScenarioContext, pod: str) -> None:
    status = (must_get(sut, "Pod", pod).get("status") or {}).get("extendedResourceClaimStatus")
    assert status is None, f"pod {pod!r} has extendedResourceClaimStatus {status}"
    generated_claims_gone(sut=sut, ctx=ctx, pod=pod)  # a patient step: called by keyword
