"""The scheduling queue: activeQ (ready to schedule), backoffQ (failed recently, waiting out an
exponential backoff on the injectable clock) and the unschedulable pool (waiting for a cluster change
that may help). Mirrors kube-scheduler's defaults: 1 s initial backoff doubling to 10 s, unschedulable
pods flushed back after 5 minutes even without a relevant event, and (SchedulerPopFromBackoffQ, on
since 1.33) a pod that a cluster event moved to backoffQ may be popped early while activeQ is empty."""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime, timedelta

from draconform.reference.clock import Clock

INITIAL_BACKOFF = timedelta(seconds=1)
MAX_BACKOFF = timedelta(seconds=10)
UNSCHEDULABLE_FLUSH = timedelta(minutes=5)

PodKey = tuple[str, str]  # namespace, name


class SchedulingQueue:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._active: OrderedDict[PodKey, None] = OrderedDict()
        self._backoff: dict[PodKey, datetime] = {}
        self._unschedulable: dict[PodKey, datetime] = {}
        self._attempts: dict[PodKey, int] = {}
        self._early: set[PodKey] = set()  # in backoffQ because an event moved them: may pop early

    # --- entering the queue --------------------------------------------------------------------
    def add(self, pod: PodKey) -> None:
        """A new pod, or one whose scheduling must start over at once."""
        self._backoff.pop(pod, None)
        self._unschedulable.pop(pod, None)
        self._active[pod] = None

    def add_unschedulable(self, pod: PodKey) -> None:
        """The attempt failed: wait for a cluster event (or the periodic flush)."""
        self._attempts[pod] = self._attempts.get(pod, 0) + 1
        now = self._clock.now()
        self._unschedulable[pod] = now
        self._clock.call_at(now + UNSCHEDULABLE_FLUSH, lambda: self._flush_unschedulable(pod, now))

    def add_backoff(self, pod: PodKey) -> None:
        """The attempt errored: retry once the backoff has passed."""
        self._attempts[pod] = self._attempts.get(pod, 0) + 1
        self._early.discard(pod)
        self._to_backoff(pod)

    def remove(self, pod: PodKey) -> None:
        self._active.pop(pod, None)
        self._backoff.pop(pod, None)
        self._unschedulable.pop(pod, None)
        self._attempts.pop(pod, None)
        self._early.discard(pod)

    # --- moving ---------------------------------------------------------------------------------
    def move_all_to_active_or_backoff(self) -> None:
        """A cluster change may help every unschedulable pod (DRA objects change rarely)."""
        for pod in list(self._unschedulable):
            self.move_to_active_or_backoff(pod)

    def move_to_active_or_backoff(self, pod: PodKey) -> None:
        """A change to the pod itself may let an unschedulable pod fit."""
        if pod in self._unschedulable:
            del self._unschedulable[pod]
            self._to_backoff(pod)
            self._early.add(pod)

    def pop(self) -> PodKey | None:
        if self._active:
            pod, _ = self._active.popitem(last=False)
        else:
            early = [pod for pod in self._backoff if pod in self._early]
            if not early:
                return None
            pod = min(early, key=lambda candidate: (self._backoff[candidate], candidate))
            del self._backoff[pod]
        self._early.discard(pod)
        return pod

    def __contains__(self, pod: object) -> bool:
        return pod in self._active or pod in self._backoff or pod in self._unschedulable

    def has_ready(self) -> bool:
        return bool(self._active) or any(pod in self._early for pod in self._backoff)

    # --- internals ------------------------------------------------------------------------------
    def _backoff_duration(self, pod: PodKey) -> timedelta:
        attempts = max(self._attempts.get(pod, 1), 1)
        return min(INITIAL_BACKOFF * (1 << (attempts - 1)), MAX_BACKOFF)

    def _to_backoff(self, pod: PodKey) -> None:
        until = self._clock.now() + self._backoff_duration(pod)
        self._backoff[pod] = until
        self._clock.call_at(until, lambda: self._expire_backoff(pod, until))

    def _expire_backoff(self, pod: PodKey, until: datetime) -> None:
        if self._backoff.get(pod) == until:
            del self._backoff[pod]
            self._early.discard(pod)
            self._active[pod] = None

    def _flush_unschedulable(self, pod: PodKey, since: datetime) -> None:
        if self._unschedulable.get(pod) == since:
            del self._unschedulable[pod]
            self._active[pod] = None
