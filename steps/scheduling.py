"""Steps that let the control plane work, restart its components, and check where pods went."""

from __future__ import annotations

from pytest_bdd import parsers, then, when

from draconform.kube.featuregates import parse_gate_settings
from draconform.steps.cluster import configure, must_get, pod_claim_names
from draconform.steps.manifests import NAMESPACE
from draconform.steps.scenario import ScenarioContext, observes
from draconform.steps.words import split_names
from draconform.sut import Event, SystemUnderTest

# Pod events that say where a scheduling attempt ended up, latest last.
SCHEDULING_REASONS = ("Scheduled", "FailedScheduling", "BindingConditionsPending")


@when("the scheduler runs")
def scheduler_runs(sut: SystemUnderTest) -> None:
    """Controllers and the scheduler work until nothing more happens without time passing."""
    sut.settle()


@when(parsers.re(
    r'(?P<component>kube-apiserver|kube-scheduler|kube-controller-manager|kubelet|dra-driver) restarts'
    r'(?: as version "(?P<version>[^"]+)")?(?: with feature gates "(?P<gates>[^"]*)")?'
))
def component_restarts(sut: SystemUnderTest, ctx: ScenarioContext, component: str, version: str | None,
                       gates: str | None) -> None:
    """A restart rebuilds the component from the API objects only, optionally with new gates. With a version
    it is another binary (a downgrade or an upgrade; "current" is the harness's default release) started
    with only the gates named: earlier gate settings do not carry over."""
    if version is not None:
        config = ctx.configs.get(component)
        if config is not None:
            config.feature_gates.clear()
            config.version = None
        configure(sut, ctx, component, version=None if version == "current" else version)
    if gates is not None:
        configure(sut, ctx, component, gates=parse_gate_settings(gates))
    sut.restart(component)
    sut.settle()


@when(parsers.re(r"(?P<component>kube-scheduler|kube-controller-manager|dra-driver) is stopped"))
def component_stopped(sut: SystemUnderTest, component: str) -> None:
    """The component stays down until it restarts, so what the others write alone can be observed."""
    sut.stop(component)


@then(parsers.parse('pod "{pod}" waits in PreBind'))
@observes("pod")
def pod_waits_in_prebind(sut: SystemUnderTest, pod: str) -> None:
    """KEP-5007: unbound, every claim allocated and reserved for it, and its latest scheduling event
    is BindingConditionsPending (not a failure, not Scheduled)."""
    obj = must_get(sut, "Pod", pod)
    assert not obj["spec"].get("nodeName"), f"pod {pod!r} is bound to {obj['spec']['nodeName']!r}"
    reasons = [e.reason for e in sut.events() if e.kind == "Pod" and e.name == pod and e.reason in SCHEDULING_REASONS]
    assert reasons and reasons[-1] == "BindingConditionsPending", f"pod {pod!r} scheduling events: {reasons}"
    for name in pod_claim_names(sut, pod):
        status = must_get(sut, "ResourceClaim", name).get("status") or {}
        assert status.get("allocation"), f"claim {name!r} of waiting pod {pod!r} is not allocated"
        reserved = [entry.get("uid") for entry in status.get("reservedFor") or []]
        assert obj["metadata"]["uid"] in reserved, f"claim {name!r} is not reserved for waiting pod {pod!r}"


@then(parsers.parse('pod "{pod}" is bound to node "{node}"'))
@observes("pod")
def pod_bound(sut: SystemUnderTest, pod: str, node: str) -> None:
    obj = must_get(sut, "Pod", pod)
    assert obj["spec"].get("nodeName") == node, (
        f"pod {pod!r} is bound to {obj['spec'].get('nodeName')!r}, expected {node!r}; "
        f"conditions: {(obj.get('status') or {}).get('conditions')}"
    )


@then(parsers.parse('pod "{pod}" is bound to one of nodes "{nodes}"'))
@observes("pod")
def pod_bound_to_one_of(sut: SystemUnderTest, pod: str, nodes: str) -> None:
    """Where several nodes fit equally well the scheduler may choose any (upstream picks at random among
    the best scores), so each of them passes."""
    obj = must_get(sut, "Pod", pod)
    allowed = split_names(nodes)
    assert obj["spec"].get("nodeName") in allowed, (
        f"pod {pod!r} is bound to {obj['spec'].get('nodeName')!r}, expected any of {', '.join(allowed)}; "
        f"conditions: {(obj.get('status') or {}).get('conditions')}"
    )


@then(parsers.re(r'(?P<count>\d+) of pods "(?P<pods>[^"]+)" (?:is|are) bound to node "(?P<node>[^"]+)" and the others? '
                 r'(?:is|are) not scheduled'))
@observes("pod")
def some_pods_bound(sut: SystemUnderTest, count: str, pods: str, node: str) -> None:
    """Where a rule fixes how many of several pods fit but not which (a real scheduler takes them in whatever
    order their claims become ready), any `count` of them bound to `node`, the others unbound, passes."""
    names = split_names(pods)
    placed = {name: must_get(sut, "Pod", name)["spec"].get("nodeName") for name in names}
    bound = sorted(name for name, where in placed.items() if where == node)
    elsewhere = {name: where for name, where in placed.items() if where and where != node}
    assert not elsewhere and len(bound) == int(count), (
        f"expected {count} of pods {', '.join(names)} bound to {node!r} and the others unbound; bound: {placed}")


@then(parsers.parse('pod "{pod}" is bound to a node'))
@observes("pod")
def pod_bound_somewhere(sut: SystemUnderTest, pod: str) -> None:
    obj = must_get(sut, "Pod", pod)
    assert obj["spec"].get("nodeName"), (
        f"pod {pod!r} is not bound; conditions: {(obj.get('status') or {}).get('conditions')}"
    )


def _scheduled_condition(sut: SystemUnderTest, pod: str) -> dict[str, str]:
    obj = must_get(sut, "Pod", pod)
    assert not obj["spec"].get("nodeName"), f"pod {pod!r} is bound to {obj['spec']['nodeName']!r}"
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled":
            return condition
    return {}


@then(parsers.parse('pod "{pod}" is not scheduled'))
@observes("pod", eventually=False)
def pod_not_scheduled(sut: SystemUnderTest, pod: str) -> None:
    _scheduled_condition(sut, pod)


def _turned_away(sut: SystemUnderTest, pod: str) -> list[Event]:
    """The FailedScheduling events recorded for the pod after its first wait in PreBind began (its first
    BindingConditionsPending event), oldest first. Not whether the pod is unbound now: a scheduler that notices
    the failure seconds later may have bound it again by the time the step looks."""
    events = [e for e in sut.events() if e.kind == "Pod" and e.name == pod and e.reason in SCHEDULING_REASONS]
    waits = [index for index, event in enumerate(events) if event.reason == "BindingConditionsPending"]
    failures = [event for event in events[waits[0] + 1:] if event.reason == "FailedScheduling"] if waits else []
    assert failures, f"pod {pod!r} never gave up a wait in PreBind; its scheduling events: {[e.reason for e in events]}"
    return failures


@then(parsers.parse('pod "{pod}" was sent back from PreBind'))
@observes("event")
def pod_sent_back(sut: SystemUnderTest, pod: str) -> None:
    """KEP-5007: the scheduler gave up a binding the pod waited for (a failure or a timeout) and requeued it: a
    FailedScheduling event after its wait began. Judged from what happened,
    not from the moment the step looks: upstream's PreBind polls every 5 s and tries the pod again within
    seconds, so its latest event may already be the next attempt's BindingConditionsPending."""
    _turned_away(sut, pod)


@then(parsers.re(r'pod "(?P<pod>[^"]+)" was sent back from PreBind because claim "(?P<claim>[^"]+)" '
                 r"(?P<why>failed to bind|timed out binding)"))
@observes("event")
def pod_sent_back_because_claim(sut: SystemUnderTest, pod: str, claim: str, why: str) -> None:
    """KEP-5007: the scheduler gave up the pod's binding and says why and for which claim: a FailedScheduling
    event after the wait began names the claim and a failure ("binding failed") or a timeout ("binding
    timeout"), as upstream's scheduler words them. Upstream's poll deadline reports "device binding timeout"
    without a claim; that form is accepted for a timeout."""
    messages = [event.message for event in _turned_away(sut, pod)]
    if why == "failed to bind":
        assert any(claim in message and "binding failed" in message for message in messages), (
            f"pod {pod!r}: no FailedScheduling event says claim {claim!r} failed to bind: {messages}")
    else:
        assert any((claim in message and "binding timeout" in message) or "device binding timeout" in message
                   for message in messages), (
            f"pod {pod!r}: no FailedScheduling event says claim {claim!r} timed out: {messages}")


@then(parsers.parse('pod "{pod}" is not scheduled with reason "{reason}"'))
@observes("pod")
def pod_not_scheduled_with_reason(sut: SystemUnderTest, pod: str, reason: str) -> None:
    """The PodScheduled condition's reason: Unschedulable (no node fits) or SchedulerError (the attempt
    failed as a whole, e.g. an allocation error)."""
    condition = _scheduled_condition(sut, pod)
    assert condition.get("status") == "False", f"pod {pod!r} has no failed PodScheduled condition"
    assert condition.get("reason") == reason, (
        f"pod {pod!r} is not scheduled with reason {condition.get('reason')!r}: {condition.get('message')!r}"
    )


@then(parsers.parse('pod "{pod}" does not exist'))
@observes("object")
def pod_gone(sut: SystemUnderTest, pod: str) -> None:
    assert sut.get("Pod", pod, NAMESPACE) is None, f"pod {pod!r} still exists"
