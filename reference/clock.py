"""An injectable clock. Every component of the reference implementation reads time from one of these,
so a scenario can let ten minutes pass in microseconds and timers fire in a deterministic order."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class Clock(Protocol):
    """What a component reads of time: the fake clock in-process, a real-time one under `draconform serve`."""

    def now(self) -> datetime: ...

    def call_at(self, deadline: datetime, callback: Callable[[], None]) -> None:
        """Run `callback` once, when the clock reaches `deadline`."""
        ...


class FakeClock:
    """A clock that only moves when told to; timers fire in deadline order while it moves."""

    def __init__(self, start: datetime = EPOCH) -> None:
        self._now = start
        self._timers: list[tuple[datetime, int, Callable[[], None]]] = []
        self._sequence = itertools.count()

    def now(self) -> datetime:
        return self._now

    def call_at(self, deadline: datetime, callback: Callable[[], None]) -> None:
        """Run `callback` once the clock reaches `deadline` (at once on the next advance if past)."""
        heapq.heappush(self._timers, (deadline, next(self._sequence), callback))

    def next_deadline(self) -> datetime | None:
        return self._timers[0][0] if self._timers else None

    def advance(self, delta: timedelta) -> None:
        """Move time forward by `delta`, firing each due timer with the clock set to its deadline."""
        target = self._now + delta
        while self._timers and self._timers[0][0] <= target:
            deadline, _, callback = heapq.heappop(self._timers)
            self._now = max(self._now, deadline)
            callback()
        self._now = target

    def fire_due(self) -> None:
        """Fire timers whose deadline has already passed without moving the clock."""
        self.advance(timedelta(0))


def format_time(moment: datetime) -> str:
    """RFC 3339 with second precision and a Z, as the API server writes metav1.Time. The last moment's text is
    kept: many writes in a row stamp the same moment (the fake clock stands still while a cluster settles). One
    tuple, read and replaced whole, so a thread never pairs one moment with another's text."""
    global _last_formatted
    last = _last_formatted
    if last[0] != moment:
        last = _last_formatted = (moment, moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    return last[1]


_last_formatted: tuple[datetime | None, str] = (None, "")  # the last moment formatted and its text


def parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
