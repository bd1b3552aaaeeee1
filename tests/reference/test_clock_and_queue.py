"""The fake clock fires timers in deadline order; the scheduling queue backs off on the clock."""

from __future__ import annotations

from datetime import timedelta

import pytest

from draconform.reference.clock import FakeClock
from draconform.reference.scheduler.queue import SchedulingQueue


def test_timers_fire_in_deadline_order_with_the_clock_at_their_deadline() -> None:
    clock = FakeClock()
    start = clock.now()
    fired: list[tuple[str, timedelta]] = []
    clock.call_at(start + timedelta(seconds=5), lambda: fired.append(("late", clock.now() - start)))
    clock.call_at(start + timedelta(seconds=1), lambda: fired.append(("early", clock.now() - start)))
    clock.advance(timedelta(seconds=3))
    assert fired == [("early", timedelta(seconds=1))]
    clock.advance(timedelta(seconds=3))
    assert fired[-1] == ("late", timedelta(seconds=5))
    assert clock.now() - start == timedelta(seconds=6)


def test_errored_pod_waits_out_its_backoff() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "p"))
    assert queue.pop() == ("ns", "p")
    queue.add_backoff(("ns", "p"))
    assert queue.pop() is None, "an errored pod is not popped early"
    clock.advance(timedelta(seconds=1))
    assert queue.pop() == ("ns", "p")


def test_unschedulable_pod_returns_on_event_and_may_pop_early() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add(("ns", "p"))
    queue.pop()
    queue.add_unschedulable(("ns", "p"))
    assert queue.pop() is None, "nothing changed yet"
    queue.move_all_to_active_or_backoff()
    assert queue.has_ready()
    assert queue.pop() == ("ns", "p")


def test_unschedulable_pods_are_flushed_after_five_minutes() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    queue.add_unschedulable(("ns", "p"))
    clock.advance(timedelta(minutes=4, seconds=59))
    assert queue.pop() is None
    clock.advance(timedelta(seconds=1))
    assert queue.pop() == ("ns", "p")


def test_backoff_doubles_up_to_ten_seconds() -> None:
    clock = FakeClock()
    queue = SchedulingQueue(clock)
    for _ in range(5):
        queue.add_backoff(("ns", "p"))
        queue.pop()
    queue.add_backoff(("ns", "p"))  # sixth failure: 1,2,4,8,16 -> capped at 10 s
    clock.advance(timedelta(seconds=9))
    assert queue.pop() is None
    clock.advance(timedelta(seconds=1))
    assert queue.pop() == ("ns", "p")


def test_a_timer_re_armed_while_due_ends_in_an_error_not_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    """A component that, at each sync, arms a timer again for a moment already past (a deadline it never acts
    on) would keep the cluster's clock from moving for ever; letting time pass says so instead."""
    from draconform.reference.cluster import ReferenceCluster

    cluster = ReferenceCluster()
    due = cluster.clock.now() + timedelta(seconds=1)
    settle = cluster.settle

    def settle_and_rearm() -> None:  # what the component does in its sync
        settle()
        if cluster.clock.now() >= due:
            cluster.clock.call_at(due, lambda: None)

    monkeypatch.setattr(cluster, "settle", settle_and_rearm)
    cluster.clock.call_at(due, lambda: None)
    try:
        with pytest.raises(RuntimeError, match="timers kept coming due at 2026-01-01T00:00:01"):
            cluster.advance(5)
    finally:
        cluster.close()
