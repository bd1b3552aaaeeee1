"""Steps about the kubelet at work: what it does with pods bound to its node (their phase, its events), which
calls the drivers' kubelet plugins received from it (the seam's `kubelet_plugin_calls`, what a recording proxy
in front of a plugin's socket sees), and faults a test driver's plugin is told to show
(`inject_plugin_fault`). The kubelet's gates and version are set with the component steps."""

from __future__ import annotations

import itertools
import re

from pytest_bdd import given, parsers, then, when

from draconform.steps.cluster import configure, device_named, must_get, resolve_claim, seam_method, slice_devices
from draconform.steps.manifests import NAMESPACE, named
from draconform.steps.scenario import ScenarioContext, observes
from draconform.steps.words import split_names
from draconform.sut import Event, PluginCall, PluginFault, SystemUnderTest, Unsupported

PLUGIN = r'the plugin of driver "(?P<driver>[^"]+)" on node "(?P<node>[^"]+)" '
ASKED = r'driver "(?P<driver>[^"]+)" on node "(?P<node>[^"]+)" was asked to (?P<verb>prepare|unprepare) '
COUNT = r"(?P<count>never|once|twice|(?P<bound>at least )?(?:once|(?P<number>\d+) times))"
# Today's DRAPlugin batch calls, and the classic protocol's one-resource calls (KEP-3063-CLASSIC).
METHODS = {"prepare": ("NodePrepareResources", "NodePrepareResource"),
           "unprepare": ("NodeUnprepareResources", "NodeUnprepareResource")}
FAULT = (
    r"(?:fails to (?P<fmethod>prepare|unprepare) (?P<fkind>transiently|permanently)"
    r"|(?P<hang>hangs) on (?P<hmethod>prepare|unprepare)"
    r"|(?P<crash>crashes) during (?P<cmethod>prepare|unprepare))"
    r'(?: (?P<times>\d+) times?)?'
    r'(?: for device "(?P<device>[^"]+)"| for (?P<first>whichever device it is asked to prepare first))?'
)


# --- the kubelet's configuration and life --------------------------------------------------------------
@given(parsers.re(r"the kubelet waits at most (?P<seconds>\d+(?:\.\d+)?) seconds for a plugin call"))
def plugin_call_timeout(sut: SystemUnderTest, ctx: ScenarioContext, seconds: str) -> None:
    """The deadline of each gRPC call to a plugin (real seconds: a deadline is a property of the call)."""
    configure(sut, ctx, "kubelet", args={"pluginCallTimeout": float(seconds)})


@given(parsers.parse('a claim "{claim}" for one "{device_class}" device with configuration driver "{driver}" '
                     'cannot use'))
def claim_with_bad_config(sut: SystemUnderTest, ctx: ScenarioContext, claim: str, device_class: str,
                          driver: str) -> None:
    """Opaque parameters no driver understands: an unknown field and an unknown mode (the reference driver
    accepts only {mode: exclusive|shared}). What a vendor's driver cannot use is its own to say, as plugin-check
    asks it to (`--supports` permanentErrors.config): a driver under test that reads no configuration may
    ignore these parameters, so such a scenario is skipped for it rather than failed."""
    if ctx.own_driver is not None and ctx.own_driver_alias == driver:
        raise Unsupported(f"the driver under test {ctx.own_driver.driver!r} declares no configuration it refuses "
                          "permanently (plugin-check --supports permanentErrors.config judges it)")
    spec = {"devices": {
        "requests": [{"name": "device", "exactly": {"deviceClassName": device_class}}],
        "config": [{"opaque": {"driver": driver, "parameters": {
            "mode": "draconform-no-such-mode", "draconformUnknownField": True}}}],
    }}
    created = sut.create(named("ResourceClaim", claim, spec=spec))
    assert created["metadata"]["name"] == claim


# --- faults of a test driver's plugin -------------------------------------------------------------------
@given(parsers.re(PLUGIN + FAULT))
@when(parsers.re(PLUGIN + FAULT))
def plugin_fault(sut: SystemUnderTest, driver: str, node: str, fmethod: str | None, fkind: str | None,
                 hang: str | None, hmethod: str | None, crash: str | None, cmethod: str | None, times: str | None,
                 device: str | None, first: str | None) -> None:
    if hang:
        kind, method = "hang", hmethod
    elif crash:
        kind, method = "crash", cmethod
    else:
        kind, method = ("transient" if fkind == "transiently" else "permanent"), fmethod
    assert method is not None
    fault = PluginFault(kind, method, int(times) if times else None, device, first_device=bool(first))
    sut.inject_plugin_fault(driver, node, fault)


# --- pods on the node -----------------------------------------------------------------------------------
def _phase(sut: SystemUnderTest, pod: str) -> str:
    """A pod without a phase yet is Pending, as the API server defaults it."""
    return str((must_get(sut, "Pod", pod).get("status") or {}).get("phase") or "Pending")


@then(parsers.re(r'pod "(?P<pod>[^"]+)" is (?P<phase>Pending|Running|Failed|Succeeded)'))
@observes("pod")
def pod_in_phase(sut: SystemUnderTest, pod: str, phase: str) -> None:
    got = _phase(sut, pod)
    assert got == phase, f"pod {pod!r} is {got}, expected {phase}"


@then(parsers.parse('pod "{pod}" still exists'))
@observes("pod", eventually=False)
def pod_still_exists(sut: SystemUnderTest, pod: str) -> None:
    obj = sut.get("Pod", pod, NAMESPACE)
    assert obj is not None, f"pod {pod!r} was deleted"
    assert not obj["metadata"].get("deletionTimestamp"), f"pod {pod!r} is being deleted"


def _pod_events(sut: SystemUnderTest, pod: str, reason: str | None = None) -> list[Event]:
    return [e for e in sut.events() if e.kind == "Pod" and e.name == pod and reason in (None, e.reason)]


@then(parsers.re(r'a Warning event "(?P<reason>[^"]+)" for pod "(?P<pod>[^"]+)" says the error is permanent'))
@observes("event")
def event_says_permanent(sut: SystemUnderTest, reason: str, pod: str) -> None:
    """KEP-5322 "Diagnosing Permanent Errors": the kubelet's event about the failure says it is permanent."""
    events = [e for e in _pod_events(sut, pod, reason) if e.type == "Warning"]
    assert events, f"no Warning {reason} event for pod {pod!r}"
    assert any(calls_permanent(e.message) for e in events), (
        f"no {reason} event for pod {pod!r} says the error is permanent: {[e.message for e in events]}"
    )


# "permanent" said of an error, not denied of it: "not a permanent error", "non-permanent", "no permanent
# failure" tell a human the opposite, and a kubelet may word a transient failure that way (the wording is its own).
_PERMANENT = re.compile(r"permanent", re.IGNORECASE)
_DENIED = re.compile(r"(?:\bnot(?:\s+an?)?|\bnon|\bno)[\s-]*$", re.IGNORECASE)


def calls_permanent(message: str) -> bool:
    """Whether `message` calls an error permanent: the word, with no negation right before it."""
    return any(not _DENIED.search(message[:m.start()]) for m in _PERMANENT.finditer(message))


@then(parsers.re(r'no event for pod "(?P<pod>[^"]+)" calls an error permanent'))
@observes("event", eventually=False)
def no_event_says_permanent(sut: SystemUnderTest, pod: str) -> None:
    said = [e.message for e in _pod_events(sut, pod) if calls_permanent(e.message)]
    assert not said, f"events for pod {pod!r} call an error permanent: {said}"


def _status_writes(sut: SystemUnderTest, pod: str) -> int:
    """How many stored writes changed the status of pod `pod` (the one by that name now) since the scenario began:
    the versions whose status differs from the version before. A write that changes nothing stores nothing on a
    real API server, so it is not counted; the pod's creation is not a status write."""
    record = seam_method(sut, "object_writes", "count a pod's status writes")
    uid = must_get(sut, "Pod", pod)["metadata"]["uid"]
    versions = [v for v in record("Pod", pod, NAMESPACE) if v["metadata"].get("uid") == uid]
    return sum(1 for before, after in itertools.pairwise(versions) if before.get("status") != after.get("status"))


@then(parsers.re(r'pod "(?P<pod>[^"]+)" had its status written at most once more than pod "(?P<other>[^"]+)"'))
@observes("pod", eventually=False)
def status_written_at_most_once_more(sut: SystemUnderTest, pod: str, other: str) -> None:
    """KEP-5322 PRR, Scalability: failing a pod costs at most one extra status write, compared with a pod on the
    same node the kubelet went on retrying (what every pod with this error cost before the feature)."""
    writes, baseline = _status_writes(sut, pod), _status_writes(sut, other)
    assert writes <= baseline + 1, (
        f"pod {pod!r} had its status written {writes} times and pod {other!r} {baseline} times: "
        f"{writes - baseline} extra writes, expected at most 1"
    )


# --- what the plugins received --------------------------------------------------------------------------
def _claim_key(sut: SystemUnderTest, claim: str) -> str:
    return f"{NAMESPACE}/{claim}"


def _calls(sut: SystemUnderTest, driver: str, node: str, verb: str, claim: str) -> list[PluginCall]:
    key = _claim_key(sut, claim)
    return [c for c in sut.kubelet_plugin_calls(driver, node) if c.method in METHODS[verb] and key in c.claims]


@then(parsers.re(ASKED + r'claim "(?P<claim>[^"]+)" ' + COUNT))
@observes("object")
def plugin_asked(sut: SystemUnderTest, driver: str, node: str, verb: str, claim: str, count: str,
                 bound: str | None, number: str | None) -> None:
    _assert_asked(sut, driver, node, verb, claim, count, bound, number)


def _assert_asked(sut: SystemUnderTest, driver: str, node: str, verb: str, claim: str, count: str,
                  bound: str | None, number: str | None) -> None:
    calls = _calls(sut, driver, node, verb, claim)
    expected = {"never": 0, "once": 1, "at least once": 1, "twice": 2}.get(count, int(number or 0))
    what = f"driver {driver!r} on node {node!r} was asked to {verb} claim {claim!r} {len(calls)} times"
    if bound:
        assert len(calls) >= expected, f"{what}, expected at least {expected}"
    else:
        assert len(calls) == expected, f"{what}, expected {expected}"


@then(parsers.re(ASKED + r'the claim of pod "(?P<pod>[^"]+)" ' + COUNT))
@observes("object")
def plugin_asked_for_pod_claim(sut: SystemUnderTest, ctx: ScenarioContext, driver: str, node: str, verb: str,
                               pod: str, count: str, bound: str | None, number: str | None) -> None:
    """The claim the pod uses, found through the pod (a generated name, such as KEP-5004's claim for extended
    resources)."""
    claim = resolve_claim(sut, ctx, None, pod)["metadata"]["name"]
    _assert_asked(sut, driver, node, verb, claim, count, bound, number)


@then(parsers.re(r'the calls to prepare claim "(?P<claim>[^"]+)" on driver "(?P<driver>[^"]+)" on node '
                 r'"(?P<node>[^"]+)" came at growing intervals'))
@observes("object")
def calls_back_off(sut: SystemUnderTest, claim: str, driver: str, node: str) -> None:
    """Exponential backoff seen from the plugin: each wait between two attempts is longer than the one before."""
    times = [c.time for c in _calls(sut, driver, node, "prepare", claim)]
    assert len(times) >= 3, f"claim {claim!r} was asked about {len(times)} times; need 3 to see the intervals"
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    assert all(later > earlier for earlier, later in itertools.pairwise(gaps)), (
        f"the intervals between prepare calls for claim {claim!r} do not grow: {gaps} seconds"
    )


@then(parsers.re(r'device "(?P<device>[^"]+)" of ResourceSlice "(?P<name>[^"]+)" (?P<verb>has a|has no) '
                 r"NoSchedule taint"))
@observes("slice")
def device_tainted(sut: SystemUnderTest, ctx: ScenarioContext, device: str, name: str, verb: str) -> None:
    """The device a scenario calls `device` (see `device_named`) in the slice it calls `name`."""
    found = [d for d in slice_devices(sut, ctx, name) or [] if d.get("name") == device_named(ctx, device)]
    assert found, f"ResourceSlice {name!r} publishes no device {device!r}"
    taints = [t for t in found[0].get("taints") or [] if t.get("effect") == "NoSchedule"]
    if verb == "has a":
        assert taints, f"device {device!r} of ResourceSlice {name!r} has no NoSchedule taint"
    else:
        assert not taints, f"device {device!r} of ResourceSlice {name!r} is tainted: {taints}"


def _untainted(sut: SystemUnderTest, ctx: ScenarioContext, devices: str, name: str) -> tuple[list[str], list[str]]:
    """Of the devices a scenario names in the slice it calls `name`: those with a NoSchedule taint, and those
    without (each by the scenario's name for it)."""
    published = {d.get("name"): d for d in slice_devices(sut, ctx, name) or []}
    tainted: list[str] = []
    clean: list[str] = []
    for device in split_names(devices):
        found = published.get(device_named(ctx, device))
        assert found is not None, f"ResourceSlice {name!r} publishes no device {device!r}"
        noschedule = [t for t in found.get("taints") or [] if t.get("effect") == "NoSchedule"]
        (tainted if noschedule else clean).append(device)
    return tainted, clean


@then(parsers.re(r'exactly one of devices "(?P<devices>[^"]+)" of ResourceSlice "(?P<name>[^"]+)" has a '
                 r"NoSchedule taint"))
@observes("slice")
def one_device_tainted(sut: SystemUnderTest, ctx: ScenarioContext, devices: str, name: str) -> None:
    """Where the scenario does not fix which device broke (the one the allocator chose among equals)."""
    tainted, _ = _untainted(sut, ctx, devices, name)
    assert len(tainted) == 1, f"of devices {devices} of ResourceSlice {name!r}, tainted NoSchedule: {tainted}"


@then(parsers.re(r'claim "(?P<claim>[^"]+)" is allocated the one of devices "(?P<devices>[^"]+)" of ResourceSlice '
                 r'"(?P<name>[^"]+)" without a NoSchedule taint'))
@observes("claim")
def claim_allocated_untainted(sut: SystemUnderTest, ctx: ScenarioContext, claim: str, devices: str,
                              name: str) -> None:
    _, clean = _untainted(sut, ctx, devices, name)
    assert len(clean) == 1, f"of devices {devices} of ResourceSlice {name!r}, without a NoSchedule taint: {clean}"
    allocation = (must_get(sut, "ResourceClaim", claim).get("status") or {}).get("allocation")
    assert allocation, f"claim {claim!r} is not allocated"
    got = sorted(result["device"] for result in allocation["devices"]["results"])
    assert got == [device_named(ctx, clean[0])], f"claim {claim!r} got devices {got}, expected {clean[0]!r}"
