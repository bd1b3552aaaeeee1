"""kube-scheduler: watches pods and the objects scheduling depends on, runs one scheduling cycle per
pod through the framework's extension points, and binds. Its only state besides the queue is what
it can rebuild from the API store, so a restart is "build a new Scheduler"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.apiserver.store import Store, WatchEvent
from draconform.reference.clock import FakeClock, format_time
from draconform.reference.events import EventRecorder
from draconform.reference.featuregates import FeatureGates
from draconform.reference.metrics import MetricsRegistry
from draconform.reference.scheduler.dynamicresources import DynamicResources
from draconform.reference.scheduler.framework import (
    Code,
    CycleState,
    Plugin,
    Status,
    call_point,
    node_name,
)
from draconform.reference.scheduler.queue import PodKey, SchedulingQueue
from draconform.sut import ApiError, Obj

SCHEDULER_NAME = "default-scheduler"
WATCHED_KINDS = ("Pod", "Node", "ResourceClaim", "ResourceSlice", "DeviceClass")


@dataclass
class SchedulerConfig:
    gates: FeatureGates = field(default_factory=FeatureGates)
    args: dict[str, Any] = field(default_factory=dict)  # DRA plugin arguments, e.g. bindingTimeout


class Scheduler:
    def __init__(
        self,
        store: Store,
        clock: FakeClock,
        events: EventRecorder,
        metrics: MetricsRegistry,
        config: SchedulerConfig,
        allocator_factory: AllocatorFactory,
    ) -> None:
        self._store = store
        self._clock = clock
        self._events = events
        self.config = config
        self.queue = SchedulingQueue(clock)
        self.dra = DynamicResources(store, allocator_factory(store, config.gates))
        self.plugins: list[Plugin] = [self.dra]
        self._watch = store.watch(*WATCHED_KINDS)
        # A fresh scheduler finds every pending pod through an initial list, as an informer would.
        for pod in store.list("Pod"):
            if self._wants(pod):
                self.queue.add(_key(pod))

    def stop(self) -> None:
        self._watch.stop()

    # --- driving ---------------------------------------------------------------------------------
    def sync(self) -> bool:
        """Handle watch events; True when any arrived."""
        events = self._watch.drain()
        for event in events:
            self._handle(event)
        return bool(events)

    def schedule_pending(self) -> bool:
        """Run scheduling cycles until no pod is ready; True when any ran."""
        ran = False
        while self.queue.has_ready():
            self.sync()
            key = self.queue.pop()
            if key is None:
                break
            pod = self._store.get("Pod", key[1], key[0])
            if pod is not None and self._wants(pod):
                self.schedule_one(pod)
                ran = True
        return ran

    def _handle(self, event: WatchEvent) -> None:
        obj = event.object
        if obj["kind"] == "Pod":
            key = _key(obj)
            if event.type == "DELETED" or obj["spec"].get("nodeName"):
                self.queue.remove(key)
            elif key not in self.queue and self._wants(obj):
                self.queue.add(key)
            return
        # A change to nodes or DRA objects may make unschedulable pods fit.
        self.queue.move_all_to_active_or_backoff()

    @staticmethod
    def _wants(pod: Obj) -> bool:
        return (
            not pod["spec"].get("nodeName")
            and pod["spec"].get("schedulerName", SCHEDULER_NAME) == SCHEDULER_NAME
            and not pod["metadata"].get("deletionTimestamp")
            and (pod.get("status") or {}).get("phase", "Pending") == "Pending"
        )

    # --- one scheduling cycle --------------------------------------------------------------------
    def schedule_one(self, pod: Obj) -> None:
        state = CycleState()
        status = call_point(self.plugins, "pre_filter", state, pod)
        if not status.ok:
            self._fail(pod, status)
            return
        nodes = sorted(self._store.list("Node"), key=node_name)
        feasible: list[Obj] = []
        rejections: dict[str, Status] = {}
        for node in nodes:
            verdict = call_point(self.plugins, "filter", state, pod, node)
            if verdict.code == Code.ERROR:
                self._fail(pod, verdict)
                return
            if verdict.ok:
                feasible.append(node)
            else:
                rejections[node_name(node)] = verdict
        if not feasible:
            call_point(self.plugins, "post_filter", state, pod, rejections)
            self._fail(pod, _summarise(len(nodes), rejections))
            return
        call_point(self.plugins, "pre_score", state, pod, feasible)
        scores = [self._score(state, pod, node) for node in feasible]
        chosen = feasible[scores.index(max(scores))]  # ties go to the first node by name
        self._run_binding_cycle(state, pod, chosen)

    def _score(self, state: CycleState, pod: Obj, node: Obj) -> int:
        return sum(plugin.score(state, pod, node) for plugin in self.plugins if hasattr(plugin, "score"))  # type: ignore[attr-defined]

    def _run_binding_cycle(self, state: CycleState, pod: Obj, node: Obj) -> None:
        for point in ("reserve", "permit", "pre_bind", "bind"):
            status = call_point(self.plugins, point, state, pod, node)
            if not status.ok:
                self._unreserve(state, pod, node)
                self._fail(pod, status)
                return
        if not any(hasattr(plugin, "bind") for plugin in self.plugins):
            try:
                self._store.bind(pod["metadata"]["namespace"], pod["metadata"]["name"], node_name(node))
            except ApiError as error:
                self._unreserve(state, pod, node)
                self._fail(pod, Status(Code.ERROR, str(error), "DefaultBinder"))
                return
        self._events.record(
            pod, "Normal", "Scheduled",
            f"Successfully assigned {pod['metadata']['namespace']}/{pod['metadata']['name']} to {node_name(node)}",
        )
        self.queue.remove(_key(pod))

    def _unreserve(self, state: CycleState, pod: Obj, node: Obj) -> None:
        for plugin in reversed(self.plugins):
            unreserve = getattr(plugin, "unreserve", None)
            if unreserve is not None:
                unreserve(state, pod, node)

    def _fail(self, pod: Obj, status: Status) -> None:
        """Record why the pod did not schedule (condition + event) and requeue it."""
        message = status.message or status.code.value
        self._events.record(pod, "Warning", "FailedScheduling", message)
        latest = self._store.get("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
        if latest is not None:
            conditions = [
                c for c in (latest.get("status") or {}).get("conditions", []) if c.get("type") != "PodScheduled"
            ]
            conditions.append(
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "SchedulerError" if status.code == Code.ERROR else "Unschedulable",
                    "message": message,
                    "lastTransitionTime": format_time(self._clock.now()),
                }
            )
            latest.setdefault("status", {})["conditions"] = conditions
            self._store.update_status(latest)
        if status.code == Code.ERROR:
            self.queue.add_backoff(_key(pod))
        else:
            self.queue.add_unschedulable(_key(pod))


def _summarise(node_count: int, rejections: dict[str, Status]) -> Status:
    """kube-scheduler's "0/N nodes are available: ..." message, reasons counted and sorted."""
    counts: dict[str, int] = {}
    for status in rejections.values():
        counts[status.message] = counts.get(status.message, 0) + 1
    reasons = ", ".join(f"{count} {message}" for message, count in sorted(counts.items()))
    code = (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        if rejections and all(s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE for s in rejections.values())
        else Code.UNSCHEDULABLE
    )
    return Status(code, f"0/{node_count} nodes are available: {reasons or 'no nodes'}.")


def _key(pod: Obj) -> PodKey:
    return pod["metadata"]["namespace"], pod["metadata"]["name"]
