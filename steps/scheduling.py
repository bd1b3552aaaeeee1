"""Steps that let the control plane work and check where pods went."""

from __future__ import annotations

from pytest_bdd import parsers, then, when

from draconform.steps.common import NAMESPACE, must_get
from draconform.sut import SystemUnderTest


@when("the scheduler runs")
def scheduler_runs(sut: SystemUnderTest) -> None:
    """Controllers and the scheduler work until nothing more happens without time passing."""
    sut.settle()


@then(parsers.parse('pod "{pod}" is bound to node "{node}"'))
def pod_bound(sut: SystemUnderTest, pod: str, node: str) -> None:
    obj = must_get(sut, "Pod", pod)
    assert obj["spec"].get("nodeName") == node, (
        f"pod {pod!r} is bound to {obj['spec'].get('nodeName')!r}, expected {node!r}; "
        f"conditions: {(obj.get('status') or {}).get('conditions')}"
    )


def _scheduled_condition(sut: SystemUnderTest, pod: str) -> dict[str, str]:
    obj = must_get(sut, "Pod", pod)
    assert not obj["spec"].get("nodeName"), f"pod {pod!r} is bound to {obj['spec']['nodeName']!r}"
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled":
            return condition
    return {}


@then(parsers.parse('pod "{pod}" is not scheduled'))
def pod_not_scheduled(sut: SystemUnderTest, pod: str) -> None:
    _scheduled_condition(sut, pod)


@then(parsers.parse('pod "{pod}" is not scheduled because "{reason}"'))
def pod_not_scheduled_because(sut: SystemUnderTest, pod: str, reason: str) -> None:
    condition = _scheduled_condition(sut, pod)
    assert condition.get("status") == "False", f"pod {pod!r} has no failed PodScheduled condition"
    assert reason in condition.get("message", ""), (
        f"pod {pod!r} is unschedulable for another reason: {condition.get('message')!r}"
    )


@then(parsers.parse('pod "{pod}" does not exist'))
def pod_gone(sut: SystemUnderTest, pod: str) -> None:
    assert sut.get("Pod", pod, NAMESPACE) is None, f"pod {pod!r} still exists"
