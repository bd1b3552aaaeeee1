"""Pods parked in PreBind are woken by their own claims only, and by one timer each: the cost of a
claim update does not depend on how many pods wait (counted in operations, not measured in time)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from draconform.reference.scheduler.framework import CycleState
from draconform.reference.scheduler.waiting import WaitingPod, WaitingPods
from draconform.sut import ComponentConfig
from tests.scheduler.helpers import ATTACHED, FAILED, NAMESPACE, add_pod, cluster_with_fabric, node_of, set_condition


def parked(name: str, *uids: str) -> WaitingPod:
    return WaitingPod(("default", name), {}, {}, CycleState(), frozenset(uids))


def test_an_object_change_wakes_only_the_pods_waiting_on_it() -> None:
    waiting = WaitingPods()
    waiting.park(parked("a", "claim-1"))
    waiting.park(parked("b", "claim-1", "claim-2"))
    waiting.park(parked("c", "claim-3"))
    waiting.object_changed("claim-2")
    assert [w.key[1] for w in waiting.take_due()] == ["b"]
    waiting.object_changed("claim-1")
    assert [w.key[1] for w in waiting.take_due()] == ["a", "b"]
    assert waiting.take_due() == []


def test_removing_a_pod_drops_it_from_the_index() -> None:
    waiting = WaitingPods()
    waiting.park(parked("a", "claim-1"))
    waiting.object_changed("claim-1")
    waiting.remove(("default", "a"))
    assert waiting.take_due() == [] and len(waiting) == 0
    waiting.object_changed("claim-1")
    assert waiting.take_due() == []


def _count(monkeypatch: pytest.MonkeyPatch, owner: object, method: str) -> list[int]:
    calls = [0]
    original: Callable[..., Any] = getattr(owner, method)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, method, counting)
    return calls


def _cost_of_one_update(monkeypatch: pytest.MonkeyPatch, waiting_pods: int) -> tuple[int, int]:
    """Rechecks and store reads caused by one condition update, with `waiting_pods` pods waiting."""
    cluster = cluster_with_fabric(devices=waiting_pods)
    for index in range(waiting_pods):
        add_pod(cluster, f"p{index}", f"c{index}")
    cluster.settle()
    assert len(cluster.scheduler.waiting) == waiting_pods
    with monkeypatch.context() as patch:
        rechecks = _count(patch, cluster.scheduler.dra, "recheck")
        reads = _count(patch, cluster.store, "get")
        set_condition(cluster, "c3", ATTACHED)
        cluster.settle()
    assert node_of(cluster, "p3") == "worker-1"
    return rechecks[0], reads[0]


def test_one_claim_update_costs_the_same_whatever_the_number_of_waiting_pods(monkeypatch: pytest.MonkeyPatch) -> None:
    few = _cost_of_one_update(monkeypatch, 5)
    many = _cost_of_one_update(monkeypatch, 60)
    assert few[0] == 1
    assert few == many


def test_updates_that_change_nothing_arm_no_further_timers(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = cluster_with_fabric(devices=1)
    add_pod(cluster, "p", "c")
    cluster.settle()
    timers = _count(monkeypatch, cluster.clock, "call_at")
    for _ in range(5):
        set_condition(cluster, "c", ATTACHED, "False")
        cluster.settle()
    assert timers[0] == 0
    cluster.advance(600)
    assert node_of(cluster, "p") is None
    assert (cluster.store.get("ResourceClaim", "c", NAMESPACE) or {}).get("status", {}).get("allocation") is None


def test_a_pod_deleted_while_waiting_gives_its_claim_back() -> None:
    cluster = cluster_with_fabric(devices=1)
    add_pod(cluster, "p", "c")
    cluster.settle()
    cluster.store.delete("Pod", "p", NAMESPACE)
    cluster.settle()
    assert len(cluster.scheduler.waiting) == 0
    status = (cluster.store.get("ResourceClaim", "c", NAMESPACE) or {}).get("status") or {}
    assert not status.get("allocation") and not status.get("reservedFor")
    cluster.advance(600)  # its old deadline passes harmlessly


def test_a_restart_forgets_parked_pods_and_their_timers_but_not_the_deadline() -> None:
    cluster = cluster_with_fabric(devices=1)
    add_pod(cluster, "p", "c")
    cluster.settle()
    old = cluster.scheduler
    cluster.advance(300)
    cluster.restart("kube-scheduler")
    cluster.settle()
    assert cluster.scheduler is not old and len(old.waiting) == 1 and len(cluster.scheduler.waiting) == 1
    cluster.advance(299)
    assert node_of(cluster, "p") is None and len(cluster.scheduler.waiting) == 1
    cluster.advance(1)
    assert len(cluster.scheduler.waiting) == 0
    assert "timeout" in cluster.metrics.text()


def test_a_failure_during_the_wait_requeues_with_backoff_and_the_retry_waits_again() -> None:
    cluster = cluster_with_fabric(devices=2)
    add_pod(cluster, "p", "c")
    cluster.settle()
    set_condition(cluster, "c", FAILED)
    cluster.settle()
    assert len(cluster.scheduler.waiting) == 0 and ("default", "p") in cluster.scheduler.queue
    cluster.advance(1)
    assert len(cluster.scheduler.waiting) == 1


def test_with_the_gate_off_nothing_waits_and_no_metric_is_registered() -> None:
    cluster = cluster_with_fabric(
        devices=1, scheduler=ComponentConfig(feature_gates={"DRADeviceBindingConditions": False})
    )
    add_pod(cluster, "p", "c")
    cluster.settle()
    assert len(cluster.scheduler.waiting) == 0 and node_of(cluster, "p") is None
    assert "bindingconditions" not in cluster.metrics.text()


def test_restarting_twice_registers_the_metrics_once() -> None:
    cluster = cluster_with_fabric(devices=1)
    cluster.restart("kube-scheduler")
    cluster.restart("kube-scheduler")
    assert cluster.metrics.text().count("# TYPE scheduler_dra_bindingconditions_allocations_total counter") == 1


def test_the_binding_timeout_argument_is_read_at_start() -> None:
    cluster = cluster_with_fabric(devices=1, scheduler_args={"bindingTimeout": "90s"})
    assert cluster.scheduler.dra.binding_timeout == timedelta(seconds=90)


def test_a_condition_update_leaves_unschedulable_pods_where_they_are() -> None:
    cluster = cluster_with_fabric(devices=1)
    add_pod(cluster, "p", "c")
    add_pod(cluster, "q", "d")  # no device left for it
    cluster.settle()
    assert ("default", "q") in cluster.scheduler.queue and not cluster.scheduler.queue.has_ready()
    set_condition(cluster, "c", ATTACHED, "False")
    cluster.scheduler.sync()
    assert not cluster.scheduler.queue.has_ready(), "a per-device status update moved an unschedulable pod"
    set_condition(cluster, "c", ATTACHED)
    cluster.settle()  # p binds; its claim's reservation is unchanged, so q still has nothing to try
    assert node_of(cluster, "p") == "worker-1"
