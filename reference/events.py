"""The events recorder: what `kubectl get events` would show, kept in memory in recording order."""

from __future__ import annotations

from draconform.reference.clock import Clock
from draconform.sut import Event, Obj


class EventRecorder:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._events: list[Event] = []

    def record(self, involved: Obj, type_: str, reason: str, message: str) -> None:
        meta = involved.get("metadata", {})
        self._events.append(
            Event(
                kind=involved["kind"],
                namespace=meta.get("namespace"),
                name=meta.get("name", ""),
                type=type_,
                reason=reason,
                message=message,
                timestamp=self._clock.now(),
            )
        )

    def events(self) -> list[Event]:
        return list(self._events)
