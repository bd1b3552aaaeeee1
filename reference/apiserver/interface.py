"""What a reference component needs of an API server: `ApiStore`, the reads, writes and watches the scheduler,
controllers, kubelets and drivers make, and the watch streams they drain. The in-memory store (`store.py`) and
`draconform serve`'s client-backed `RemoteStore` both satisfy it, so each component is typed against this and
runs in-process or as a process of its own unchanged; an allocation core needs only the reads, `ApiReader`."""

from __future__ import annotations

import builtins
from collections import deque
from dataclasses import dataclass, field
from typing import Literal, Protocol

from draconform.sut import Obj

EventType = Literal["ADDED", "MODIFIED", "DELETED"]


@dataclass(frozen=True)
class WatchEvent:
    """One change, carrying the stored objects themselves: a watcher reads them and never modifies them."""

    type: EventType
    object: Obj  # the object after the change (for DELETED: its last state)
    old: Obj | None = None  # the object before the change, for MODIFIED and DELETED


@dataclass
class Watch:
    """A watch stream: events queue up until the consumer drains them."""

    kinds: frozenset[str] | None
    _events: deque[WatchEvent] = field(default_factory=deque)
    stopped: bool = False

    def wants(self, kind: str) -> bool:
        return not self.stopped and (self.kinds is None or kind in self.kinds)

    def push(self, event: WatchEvent) -> None:
        self._events.append(event)

    def drain(self) -> builtins.list[WatchEvent]:
        events = builtins.list(self._events)
        self._events.clear()
        return events

    def pending(self) -> bool:
        return bool(self._events)

    def stop(self) -> None:
        self.stopped = True
        self._events.clear()


class ApiReader(Protocol):
    """The reads and watches of the API, all an allocation core makes (the scheduler may hand it a view of an
    older release). `get`/`list` return the caller's own copies; `peek`/`view` and watch events may hand out
    stored objects, which the caller never modifies."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None: ...

    def peek(self, kind: str, name: str, namespace: str | None = None) -> Obj | None: ...

    def list(self, kind: str, namespace: str | None = None) -> builtins.list[Obj]: ...

    def view(self, kind: str, namespace: str | None = None) -> builtins.list[Obj]: ...

    def watch(self, *kinds: str) -> Watch:
        """Changes of these kinds from now on (every kind without arguments)."""
        ...


class ApiStore(ApiReader, Protocol):
    """The API as a component sees it: the reads and the writes. `copy_result=False` says the caller never
    modifies what a write returns; `copy_status=False` (a status write) that the caller built the status it writes
    for this write alone and hands it over: it neither keeps nor changes it afterwards. A write that the API server
    refuses raises `draconform.sut.ApiError`."""

    def create(self, obj: Obj, *, copy_result: bool = True) -> Obj: ...

    def update(self, obj: Obj, *, copy_result: bool = True) -> Obj: ...

    def update_status(self, obj: Obj, *, copy_result: bool = True, copy_status: bool = True) -> Obj: ...

    def bind(self, namespace: str, name: str, node: str, *, copy_result: bool = True) -> Obj:
        """The pods/binding subresource: set a pod's spec.nodeName."""
        ...

    def delete(self, kind: str, name: str, namespace: str | None = None,
               grace_period_seconds: int | None = None) -> None: ...
