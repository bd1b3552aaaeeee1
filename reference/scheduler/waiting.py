"""Pods parked in PreBind (KEP-5007 "PreBind Process"): each keeps its scheduling cycle's state and
node while it waits for something outside the scheduler. Waiting is event-driven: an index from the
objects a pod waits on (claim UIDs) to the pods lets one object change wake only the pods waiting on
that object, so the cost of an update does not grow with the number of waiting pods."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from draconform.reference.scheduler.framework import CycleState
from draconform.reference.scheduler.queue import PodKey
from draconform.sut import Obj


@dataclass(eq=False)  # identity matters: a timer belongs to one parking, not to an equal-looking one
class WaitingPod:
    key: PodKey
    pod: Obj
    node: Obj
    state: CycleState
    waits_on: frozenset[str]  # UIDs of the objects whose changes may end the wait
    timer_at: datetime | None = None  # the one pending timer this parking set, if any


@dataclass
class WaitingPods:
    _pods: dict[PodKey, WaitingPod] = field(default_factory=dict)
    _index: dict[str, set[PodKey]] = field(default_factory=dict)
    _due: dict[PodKey, None] = field(default_factory=dict)  # insertion-ordered set: recheck order

    def park(self, waiting: WaitingPod) -> None:
        self.remove(waiting.key)
        self._pods[waiting.key] = waiting
        for uid in waiting.waits_on:
            self._index.setdefault(uid, set()).add(waiting.key)

    def remove(self, key: PodKey) -> WaitingPod | None:
        waiting = self._pods.pop(key, None)
        self._due.pop(key, None)
        if waiting is not None:
            for uid in waiting.waits_on:
                keys = self._index.get(uid)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._index[uid]
        return waiting

    def get(self, key: PodKey) -> WaitingPod | None:
        return self._pods.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._pods

    def __len__(self) -> int:
        return len(self._pods)

    def object_changed(self, uid: str) -> None:
        """Mark the pods waiting on one object for a recheck (sorted, so the order is reproducible)."""
        for key in sorted(self._index.get(uid, ())):
            self._due[key] = None

    def mark(self, key: PodKey) -> None:
        if key in self._pods:
            self._due[key] = None

    def take_due(self) -> list[WaitingPod]:
        """The pods to recheck now, each once, in the order they were marked."""
        due = [self._pods[key] for key in self._due if key in self._pods]
        self._due.clear()
        return due
