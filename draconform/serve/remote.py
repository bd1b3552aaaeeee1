"""What a reference component needs to run in its own process against a cluster's API: the store's interface
over the Kubernetes client (reads and writes are API calls, watches are API watch streams with an
informer's memory of the last state of each object), an event recorder that writes core/v1 Events, and a
clock that reads real time. The components themselves are the reference's, unchanged."""

from __future__ import annotations

import bisect
import builtins
import heapq
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from draconform.live.kube import KubeClient
from draconform.reference.apiserver.interface import Watch, WatchEvent
from draconform.reference.clock import Clock, FakeClock, format_time
from draconform.reference.events import EventRecorder
from draconform.sut import ApiError, Event, Obj


class WallClock(FakeClock):
    """Real time; timers fire from `fire_due` once their deadline has passed."""

    def __init__(self) -> None:
        super().__init__(datetime.now(UTC))

    def now(self) -> datetime:
        return datetime.now(UTC)

    def fire_due(self) -> None:
        while self._timers and self._timers[0][0] <= self.now():
            _, _, callback = heapq.heappop(self._timers)
            callback()

    def advance(self, delta: timedelta) -> None:
        raise RuntimeError("real time cannot be advanced")

    def seconds_to_next(self) -> float | None:
        deadline = self.next_deadline()
        return None if deadline is None else max((deadline - self.now()).total_seconds(), 0.0)


class RemoteWatch(Watch):
    """A watch of a `RemoteStore`: changes queue up here when the store passes them on (`RemoteStore.catch_up`),
    and `woken` is set whenever a stream has something new, so a component's loop can sleep until there is
    work."""

    def __init__(self, kinds: frozenset[str], woken: threading.Event) -> None:
        super().__init__(kinds)
        self._lock = threading.Lock()
        self._woken = woken

    def push(self, event: WatchEvent) -> None:
        if self.stopped:
            return
        with self._lock:
            super().push(event)
        self._woken.set()

    def drain(self) -> list[WatchEvent]:
        with self._lock:
            return super().drain()


class StaleView(RuntimeError):
    """A watch stream did not reach the API server's current resourceVersion in time: a round that went on
    would act on an old view of the cluster."""


CATCH_UP_SECONDS = 30.0  # the longest a round waits for the watch streams to catch up with the API server


class RemoteStore:
    """The parts of `reference.apiserver.store.Store` the components use, as API calls. Watches share one
    API watch stream per kind, like a shared informer, each on its own thread; a component holds `lock` while
    it works, and begins each round with `catch_up`.

    The streams of different kinds run independently, so one may deliver a change made after an earlier change
    that another has not delivered yet (a pod before the slice written ahead of it). So a stream's changes wait
    in a buffer: `catch_up` reads the server's current resourceVersion, waits until every stream has passed it
    (a change or a BOOKMARK at or beyond it) and only then passes on the buffered changes up to it, across kinds
    in resourceVersion order. A round thus sees the cluster as it was at one resourceVersion, no older than when
    the round began (plus this process's own writes), as the in-memory store's watchers do. A stream learns it
    has passed a resourceVersion without a change of its kind from a BOOKMARK, which the served API server sends
    after every change the stream does not show. kube-apiserver sends one only about once a minute, so against it
    a round could wait longer than CATCH_UP_SECONDS and be refused: never wrong, but the served components are
    built for the served server."""

    def __init__(self, client: KubeClient, woken: threading.Event | None = None) -> None:
        self.client = client
        self.woken = woken or threading.Event()
        self.lock = threading.RLock()
        self._subscribers: dict[str, list[RemoteWatch]] = {}
        self._last: dict[str, dict[tuple[str, str], Obj]] = {}  # per kind: the newest state passed on of each object
        # What the streams have delivered and not yet passed on, how far each has reached, and why one ended;
        # the stream threads touch only these, under `_arrived`.
        self._arrived = threading.Condition()
        self._buffer: list[tuple[int, str, str, Obj]] = []  # (resourceVersion, kind, type, object)
        self._reached: dict[str, int] = {}
        self._ended: dict[str, str] = {}

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return self.client.get(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        items, _ = self.client.list(kind, namespace)
        return sorted(items, key=lambda o: (o["metadata"].get("namespace") or "", o["metadata"]["name"]))

    def view(self, kind: str, namespace: str | None = None) -> builtins.list[Obj]:
        """Read-only objects for an informer's initial list: over the API, a fresh list is already a copy."""
        return self.list(kind, namespace)

    def peek(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """A read-only object (`Store.peek`): over the API, a fresh read is already a copy."""
        return self.get(kind, name, namespace)

    # `copy_result` as the in-memory store takes it; an object read from the API is the caller's own anyway.
    def create(self, obj: Obj, *, copy_result: bool = True) -> Obj:
        return self._written("ADDED", self.client.create(obj))

    def update(self, obj: Obj, *, copy_result: bool = True) -> Obj:
        return self._written("MODIFIED", self.client.update(obj))

    def update_status(self, obj: Obj, *, copy_result: bool = True, copy_status: bool = True) -> Obj:
        return self._written("MODIFIED", self.client.update_status(obj))

    def delete(self, kind: str, name: str, namespace: str | None = None,
               grace_period_seconds: int | None = None) -> None:
        self.client.delete(kind, name, namespace, grace_period_seconds)

    def bind(self, namespace: str, name: str, node: str, *, copy_result: bool = True) -> Obj:
        self.client.bind(namespace, name, node)
        pod = self.client.get("Pod", name, namespace)
        if pod is None:
            raise ApiError("NotFound", f"Pod {namespace}/{name} not found")
        return self._written("MODIFIED", pod)

    def watch(self, *kinds: str) -> Watch:
        """Changes from now on; once it returns every stream has its starting point, so a list that follows
        misses nothing (it may see a change the watch also reports, as with the in-memory store)."""
        stream = RemoteWatch(frozenset(kinds), self.woken)
        with self.lock:
            for kind in kinds:
                if kind not in self._subscribers:
                    items, revision = self.client.list(kind)
                    self._last[kind] = {_key(obj): obj for obj in items}
                    self._subscribers[kind] = []
                    with self._arrived:
                        self._reached[kind] = int(revision) if revision.isdigit() else 0
                    threading.Thread(target=self._follow, args=(kind, revision), daemon=True,
                                     name=f"watch-{kind}").start()
                self._subscribers[kind] = [w for w in self._subscribers[kind] if not w.stopped] + [stream]
        return stream

    def catch_up(self, timeout: float = CATCH_UP_SECONDS) -> None:
        """Wait until every stream has reached the API server's current resourceVersion, then pass on what they
        delivered up to it. Raises `StaleView` naming the streams still behind after `timeout` seconds, or at
        once when one has ended (the round must not go on with an old view)."""
        target = self.client.revision()
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                if self._ended:
                    raise StaleView(f"the watch streams of {sorted(self._ended)} ended: "
                                    + "; ".join(self._ended.values()))
                behind = self.behind(target)
                if not behind:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise StaleView(f"the watch streams of {behind} did not reach resourceVersion {target} within "
                                    f"{timeout:g}s (they reached {[self._reached[kind] for kind in behind]})")
                self._arrived.wait(remaining)
            self._buffer.sort(key=lambda entry: entry[0])
            cut = bisect.bisect_right(self._buffer, target, key=lambda entry: entry[0])
            due, self._buffer = self._buffer[:cut], self._buffer[cut:]
        with self.lock:
            for _, kind, event_type, obj in due:
                self._deliver(kind, event_type, obj)

    def behind(self, revision: int) -> builtins.list[str]:
        """The kinds whose streams have not yet reached `revision`."""
        with self._arrived:
            return sorted(kind for kind, reached in self._reached.items() if reached < revision)

    def _follow(self, kind: str, revision: str) -> None:
        try:
            for event_type, obj in self.client.watch(kind, revision, bookmarks=True):
                version = _revision(obj)
                with self._arrived:
                    if event_type in ("ADDED", "MODIFIED", "DELETED"):
                        self._buffer.append((version, kind, event_type, obj))
                    self._reached[kind] = max(self._reached[kind], version)
                    self._arrived.notify_all()
                if event_type != "BOOKMARK":  # a bookmark is no work: it only lets a waiting catch_up go on
                    self.woken.set()
            reason = "the API server ended it"
        except Exception as error:  # whatever ended it, catch_up names it
            reason = f"{type(error).__name__}: {error}"
        with self._arrived:
            self._ended[kind] = f"{kind}: {reason}"
            self._arrived.notify_all()
        self.woken.set()

    def _written(self, event_type: str, obj: Obj) -> Obj:
        """What this process wrote reaches its own watches at once, as the in-memory store's watchers learn of
        a write before it returns (upstream's scheduler keeps an assume cache for the same reason): otherwise
        a pod scheduled right after another could be given a device the first one's claim already holds."""
        if obj.get("kind") in self._subscribers:
            self._deliver(obj["kind"], event_type, obj)
        return obj

    def _deliver(self, kind: str, event_type: str, obj: Obj) -> None:
        """Pass a change to every watch of `kind` once: a change already delivered (by `_written`, or a stream
        replaying what this process wrote) is dropped by its resourceVersion."""
        with self.lock:
            last = self._last[kind]
            key = _key(obj)
            old = last.get(key)
            if old is not None and _revision(old) >= _revision(obj):
                return
            if event_type == "DELETED":
                last.pop(key, None)
            else:
                last[key] = obj
            for stream in self._subscribers[kind]:
                stream.push(WatchEvent(event_type, obj, old))  # type: ignore[arg-type]


def _revision(obj: Obj) -> int:
    version = str(obj["metadata"].get("resourceVersion", "0"))
    return int(version) if version.isdigit() else 0


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj["metadata"]
    return meta.get("namespace") or "", meta["name"]


# How many recent events a recorder remembers to count repeats into (client-go's event correlator keeps 4096).
REMEMBERED_EVENTS = 4096


class RemoteEventRecorder(EventRecorder):
    """Records each event as a core/v1 Event in the involved object's namespace; an event the same as one this
    recorder wrote before (same object, type, reason and message) raises that Event's count and lastTimestamp
    instead, as client-go's event correlator does, so `kubectl describe` shows "(x4 over 10s)"."""

    def __init__(self, client: KubeClient, clock: Clock, component: str,
                 on_error: Callable[[Exception], None] = lambda error: None) -> None:
        super().__init__(clock)
        self._client = client
        self._component = component
        self._on_error = on_error
        self._recent: OrderedDict[tuple[str | None, ...], Obj] = OrderedDict()

    def record(self, involved: Obj, type_: str, reason: str, message: str) -> None:
        meta = involved.get("metadata", {})
        stamp = format_time(self._clock.now())
        key = (meta.get("namespace"), meta.get("name"), meta.get("uid"), involved.get("kind"), type_, reason, message)
        earlier = self._recent.pop(key, None)
        if earlier is not None:
            repeated = {**earlier, "count": int(earlier.get("count") or 1) + 1, "lastTimestamp": stamp}
            try:
                self._remember(key, self._client.update(repeated))
                return
            except ApiError:  # gone (its namespace was deleted) or changed by someone else: a new Event
                pass
        event = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"generateName": f"{meta.get('name', 'event')}.",
                         "namespace": meta.get("namespace") or "default"},
            "involvedObject": {"apiVersion": involved.get("apiVersion"), "kind": involved["kind"],
                               "name": meta.get("name", ""), "namespace": meta.get("namespace"),
                               "uid": meta.get("uid")},
            "type": type_, "reason": reason, "message": message,
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
            "source": {"component": self._component}, "reportingComponent": self._component,
        }
        try:
            self._remember(key, self._client.create(event))
        except ApiError as error:  # e.g. the namespace is gone: an event is never worth stopping for
            self._on_error(error)

    def _remember(self, key: tuple[str | None, ...], written: Obj) -> None:
        self._recent[key] = written
        while len(self._recent) > REMEMBERED_EVENTS:
            self._recent.popitem(last=False)

    def events(self) -> list[Event]:
        raise NotImplementedError("a remote recorder writes events; read them from the API")
