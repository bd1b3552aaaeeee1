"""kube-scheduler: watches pods and the objects scheduling depends on, runs one scheduling cycle per
pod through the framework's extension points, and binds. A pod whose PreBind answers Pending (KEP-5007
binding conditions) is parked with its cycle state until a watched claim changes or its deadline
passes. Its only state besides the queue and the parked pods is what it can rebuild from the API
store, so a restart is "build a new Scheduler": a parked pod is found again as an unbound pod."""

from __future__ import annotations

import itertools
import sys
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from operator import add, attrgetter, sub
from typing import Any

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.interface import AllocatorFactory, Nodes, distinct_of
from draconform.reference.apiserver.interface import ApiStore, WatchEvent
from draconform.reference.clock import Clock, format_time
from draconform.reference.events import EventRecorder
from draconform.reference.metrics import MetricsRegistry
from draconform.reference.scheduler.dynamicresources import DynamicResources
from draconform.reference.scheduler.framework import (
    Code,
    CycleState,
    DraPlugin,
    Plugin,
    Status,
    call_point,
    filter_nodes,
    node_name,
    pre_filter,
    score_nodes,
)
from draconform.reference.scheduler.nodeaffinity import NodeAffinity
from draconform.reference.scheduler.nodeinfo import NodeInfos
from draconform.reference.scheduler.noderesources import NodeResourcesFit
from draconform.reference.scheduler.queue import PodKey, SchedulingQueue
from draconform.reference.scheduler.releaseview import as_seen_by
from draconform.reference.scheduler.resourcefit import INSUFFICIENT, TOO_MANY_PODS
from draconform.reference.scheduler.waiting import WaitingPod, WaitingPods
from draconform.sut import ApiError, Obj

SCHEDULER_NAME = "default-scheduler"
# DeviceTaintRules too: upstream sees a rule change as a change of the slices it taints, which may let a pod fit.
WATCHED_KINDS = ("Pod", "Node", "ResourceClaim", "ResourceSlice", "DeviceClass", "DeviceTaintRule")


@dataclass
class SchedulerConfig:
    gates: FeatureGates = field(default_factory=FeatureGates)
    args: dict[str, Any] = field(default_factory=dict)  # DRA plugin arguments, e.g. bindingTimeout


_OK = attrgetter("ok")


class Scheduler:
    def __init__(
        self,
        store: ApiStore,
        clock: Clock,
        events: EventRecorder,
        metrics: MetricsRegistry,
        config: SchedulerConfig,
        allocator_factory: AllocatorFactory,
        dra: DraPlugin | None = None,
    ) -> None:
        """`dra` replaces the structured-allocation DRA plugin (the classic protocol's plugin)."""
        self._store = store
        self._clock = clock
        self._events = events
        self.config = config
        self.queue = SchedulingQueue(clock)
        self.waiting = WaitingPods()
        # Pods NodeResourcesFit last refused for want of room or resources on every node: a bound pod that finishes
        # or goes moves them (upstream's queueing hint for an assigned pod's deletion, as its informer sees a pod end)
        self._waiting_for_room: set[PodKey] = set()
        self._stopped = False
        # Work counted where it is done, for the cost checks (tests/test_costs.py): scheduling cycles, nodes
        # filtered and nodes scored.
        self.work: Counter[str] = Counter()
        if dra is None:
            allocator = allocator_factory(as_seen_by(store, config.gates), config.gates)
            dra = DynamicResources(store, allocator, clock, events, config.gates, config.args, metrics)
        self.dra: DraPlugin = dra
        # kube-scheduler's cache: each node's counted pods and what they request, kept from the pod events
        self.node_infos = NodeInfos()
        self.plugins: list[Plugin] = [NodeAffinity(), NodeResourcesFit(store, config.gates, self.node_infos), self.dra]
        self._watch = store.watch(*WATCHED_KINDS)
        # An informer-style node cache: scheduling a pod must not copy every Node from the store (nor any object
        # it only reads: the store's own objects are handed out, never changed in place).
        self._nodes: dict[str, Obj] = {node_name(node): node for node in store.view("Node")}
        for node in self._nodes.values():
            self.node_infos.node_changed(node)
        self._sorted_nodes: list[Obj] | None = None
        self._sorted_names: list[str] = []  # their names, in the same order
        self._next_start_node = 0
        # A fresh scheduler finds every pending pod through an initial list, as an informer would.
        for pod in store.view("Pod"):
            self.node_infos.pod_changed(pod)
            if self._wants(pod):
                self.queue.add(_key(pod))

    def stop(self) -> None:
        """The process ends: parked pods are forgotten, their claims stay as the store holds them."""
        self._stopped = True
        self._watch.stop()
        self.dra.stop()

    # --- driving ---------------------------------------------------------------------------------
    def sync(self) -> bool:
        """Handle watch events, then recheck the parked pods they (or a timer) woke; True when any."""
        events = self._watch.drain()
        for event in events:
            self._handle(event)
        self.dra.follow()
        due = self.waiting.take_due()
        for waiting in due:
            self._recheck(waiting)
        return bool(events) or bool(due)

    def schedule_pending(self) -> bool:
        """Run scheduling cycles until no pod is ready; True when any ran."""
        ran = False
        while self.queue.has_ready():
            self.sync()
            key = self.queue.pop()
            if key is None:
                break
            pod = self._store.peek("Pod", key[1], key[0])  # the scheduler never changes the pod it is given
            if pod is not None and self._wants(pod) and key not in self.waiting:
                self.schedule_one(pod)
                ran = True
        return ran

    def _handle(self, event: WatchEvent) -> None:
        obj = event.object
        if obj["kind"] == "Pod":
            self._pod_changed(event)
            return
        if obj["kind"] == "Node":
            if event.type == "DELETED":
                self._nodes.pop(node_name(obj), None)
                self.node_infos.node_deleted(node_name(obj))
            else:
                self._nodes[node_name(obj)] = obj
                self.node_infos.node_changed(obj)
            self._sorted_nodes = None
        if obj["kind"] == "ResourceClaim":
            self.waiting.object_changed(obj["metadata"]["uid"])
            if event.type == "MODIFIED" and _only_device_status_changed(event.old, obj):
                return  # a queueing hint: conditions reported by a driver free no device for anyone
        # A change to nodes or DRA objects may make unschedulable pods fit.
        self.queue.move_all_to_active_or_backoff()

    def _pod_changed(self, event: WatchEvent) -> None:
        """A pod event: a pod parked in PreBind abandoned when it goes; pods refused for want of room retried
        when a pod frees some; the queue kept to the pods this scheduler still has to place."""
        obj = event.object
        key = _key(obj)
        self.node_infos.pod_changed(obj, deleted=event.type == "DELETED")
        if key in self.waiting:
            if event.type == "DELETED" or obj["metadata"].get("deletionTimestamp"):
                self._abandon(key)
            return
        if self._waiting_for_room and _frees_room(event):
            for waiter in list(self._waiting_for_room):
                self.queue.move_to_active_or_backoff(waiter)
        if event.type == "DELETED" or (obj.get("spec") or {}).get("nodeName"):
            self.queue.remove(key)
            self._waiting_for_room.discard(key)
        elif key not in self.queue and self._wants(obj):
            self.queue.add(key)
        elif event.type == "MODIFIED" and self._wants(obj) and _claim_statuses(event.old) != _claim_statuses(obj):
            # As upstream's pod-update check: the names of a pod's generated claims arriving in its status
            # (the resourceclaim controller wrote them after this pod's last attempt) may let it fit.
            self.queue.move_to_active_or_backoff(key)

    @staticmethod
    def _wants(pod: Obj) -> bool:
        if not pod.get("spec"):  # a pod kube-apiserver would never store; nothing to schedule
            return False
        return (
            not pod["spec"].get("nodeName")
            and pod["spec"].get("schedulerName", SCHEDULER_NAME) == SCHEDULER_NAME
            and not pod["metadata"].get("deletionTimestamp")
            and (pod.get("status") or {}).get("phase", "Pending") == "Pending"
        )

    # --- one scheduling cycle --------------------------------------------------------------------
    def schedule_one(self, pod: Obj) -> None:
        self.work["cycles"] += 1
        if self.dra.pre_enqueue(pod) is not None:  # held back before a cycle: no event, no condition
            self.queue.add_unschedulable(_key(pod))
            return
        state = CycleState()
        status = pre_filter(self.plugins, state, pod)
        if not status.ok:
            self._fail(pod, status)
            return
        if self._sorted_nodes is None:
            self._sorted_nodes = sorted(self._nodes.values(), key=node_name)
            self._sorted_names = [sys.intern(node_name(node)) for node in self._sorted_nodes]
        nodes, names = self._sorted_nodes, self._sorted_names
        start = self._next_start_node % len(nodes) if nodes else 0

        def judge(low: int, high: int) -> list[Status]:
            # The walk goes through the sorted nodes from `start`, wrapping around; each batch is cut from them
            # where it lies, so a pod's cost follows the nodes it visits, not the cluster's size.
            batch = Nodes(_rotated(nodes, start, low, high), _rotated(names, start, low, high))
            self.work["nodes filtered"] += len(batch)
            return filter_nodes(self.plugins, state, pod, batch)

        walk = filter_walk(len(nodes), judge)
        if walk.error is not None:
            self._fail(pod, walk.error)
            return
        # The next pod starts where this one stopped, so a large cluster is searched evenly.
        wanted = feasible_nodes_to_find(len(nodes))
        self._next_start_node = (start + walk.checked) % len(nodes) if nodes and wanted < len(nodes) else 0
        if not walk.passed:
            rejections = dict(zip(_rotated(names, start, 0, walk.checked), walk.verdicts, strict=True))
            call_point(self.plugins, "post_filter", state, pod, rejections)
            self._fail(pod, _summarise(len(nodes), rejections))
            return
        # By name: the walk went through the sorted nodes from `start`, so those found after the wrap come first.
        # (walk.passed ascends, so one bisection splits it; the positions are mapped by C-level maps, not a loop)
        wrapped = len(nodes) - start  # walk positions from here on are the nodes before `start`
        cut = bisect_left(walk.passed, wrapped)
        order = [*map(sub, walk.passed[cut:], itertools.repeat(wrapped)),
                 *map(add, walk.passed[:cut], itertools.repeat(start))]
        feasible = Nodes(list(map(nodes.__getitem__, order)), list(map(names.__getitem__, order)))
        call_point(self.plugins, "pre_score", state, pod, feasible)
        self.work["nodes scored"] += len(feasible)
        scores = score_nodes(self.plugins, state, pod, feasible)
        chosen = feasible[scores.index(max(scores))]  # ties go to the first node by name
        self._run_binding_cycle(state, pod, chosen)

    def _run_binding_cycle(self, state: CycleState, pod: Obj, node: Obj) -> None:
        for point in ("reserve", "permit", "pre_bind"):
            status = call_point(self.plugins, point, state, pod, node)
            if point == "pre_bind" and status.code == Code.PENDING:
                self._park(WaitingPod(_key(pod), pod, node, state, self.dra.waiting_on(state)))
                return
            if not status.ok:
                self._abort(state, pod, node, status)
                return
        self._bind(state, pod, node)

    def _bind(self, state: CycleState, pod: Obj, node: Obj) -> None:
        status = call_point(self.plugins, "bind", state, pod, node)
        if not status.ok:
            self._abort(state, pod, node, status)
            return
        if not any(hasattr(plugin, "bind") for plugin in self.plugins):
            try:
                self._store.bind(pod["metadata"]["namespace"], pod["metadata"]["name"], node_name(node),
                                 copy_result=False)
            except ApiError as error:
                self._abort(state, pod, node, Status(Code.ERROR, str(error), "DefaultBinder"))
                return
        self._events.record(
            pod, "Normal", "Scheduled",
            f"Successfully assigned {pod['metadata']['namespace']}/{pod['metadata']['name']} to {node_name(node)}",
        )
        self.queue.remove(_key(pod))

    def _abort(self, state: CycleState, pod: Obj, node: Obj, status: Status) -> None:
        self._unreserve(state, pod, node)
        self._fail(pod, status)

    def _unreserve(self, state: CycleState, pod: Obj, node: Obj) -> None:
        for plugin in reversed(self.plugins):
            unreserve = getattr(plugin, "unreserve", None)
            if unreserve is not None:
                unreserve(state, pod, node)

    # --- pods parked in PreBind ------------------------------------------------------------------
    def _park(self, waiting: WaitingPod) -> None:
        self.waiting.park(waiting)
        self._arm(waiting)

    def _arm(self, waiting: WaitingPod) -> None:
        """One timer per parking at its current deadline; an earlier timer that finds a later deadline
        arms the next one, so a pod never has more than one timer of its own pending."""
        deadline = self.dra.wait_deadline(waiting.state)
        if deadline is None or deadline == waiting.timer_at:
            return
        waiting.timer_at = deadline
        self._clock.call_at(deadline, lambda: self._deadline_passed(waiting, deadline))

    def _deadline_passed(self, waiting: WaitingPod, deadline: datetime) -> None:
        if not self._stopped and self.waiting.get(waiting.key) is waiting and waiting.timer_at == deadline:
            waiting.timer_at = None
            self.waiting.mark(waiting.key)

    def _recheck(self, waiting: WaitingPod) -> None:
        if self.waiting.get(waiting.key) is not waiting:
            return
        status = self.dra.recheck(waiting.state, waiting.pod, waiting.node)
        if status.code == Code.PENDING:
            self._arm(waiting)
            return
        self.waiting.remove(waiting.key)
        if status.ok:
            self._bind(waiting.state, waiting.pod, waiting.node)
        else:
            self._abort(waiting.state, waiting.pod, waiting.node, Status(status.code, status.message, self.dra.name))

    def _abandon(self, key: PodKey) -> None:
        """The pod went away while it waited: give its reservations back, nothing to requeue."""
        waiting = self.waiting.remove(key)
        if waiting is not None:
            self._unreserve(waiting.state, waiting.pod, waiting.node)
        self.queue.remove(key)

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
            self._store.update_status(latest, copy_result=False)
        if TOO_MANY_PODS in message or INSUFFICIENT in message:
            self._waiting_for_room.add(_key(pod))
        else:
            self._waiting_for_room.discard(_key(pod))
        if status.code == Code.ERROR:
            self.queue.add_backoff(_key(pod))
        else:
            self.queue.add_unschedulable(_key(pod))


MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE = 5


def feasible_nodes_to_find(node_count: int) -> int:
    """kube-scheduler's adaptive percentageOfNodesToScore: small clusters are searched in full; in
    large ones filtering stops after max(100, n * p%) feasible nodes, p = max(5, 50 - n/125)."""
    if node_count <= MIN_FEASIBLE_NODES_TO_FIND:
        return node_count
    percentage = max(MIN_FEASIBLE_NODES_PERCENTAGE, 50 - node_count // 125)
    return max(MIN_FEASIBLE_NODES_TO_FIND, node_count * percentage // 100)


@dataclass
class Walk:
    """What kube-scheduler's Filter walk over the nodes found (`filter_walk`); positions are in walk order."""

    passed: list[int] = field(default_factory=list)  # the positions of the feasible nodes
    verdicts: list[Status] = field(default_factory=list)  # every node's verdict, up to the last batch judged whole
    error: Status | None = None  # the first verdict that broke the walk (Code.ERROR)
    checked: int = 0  # how many nodes were judged, before an error


def filter_walk(count: int, judge: Callable[[int, int], Sequence[Status]]) -> Walk:
    """kube-scheduler's Filter walk over `count` nodes, the one body of the scheduler's cycles and of the one-shot
    attempt `draconform allocate` makes (oneshot.py): `judge(low, high)` gives the verdicts of the nodes at walk
    positions low to high - 1 (it may stop after an error). The nodes are asked in batches no larger than the
    number of feasible nodes still wanted (percentageOfNodesToScore's share, `feasible_nodes_to_find`), so no node
    is judged that the node-by-node walk would not have reached; the walk stops at the first node whose Filter
    broke (an error), even when some node fits."""
    walk = Walk()
    wanted = feasible_nodes_to_find(count)
    while walk.checked < count and len(walk.passed) < wanted:
        end = min(count, walk.checked + wanted - len(walk.passed))
        verdicts = judge(walk.checked, end)
        kinds = distinct_of(verdicts)  # a few statuses for the whole batch: looked at instead of every verdict
        if all(map(_OK, kinds)):
            walk.passed.extend(range(walk.checked, end))
        else:
            # (the distinct statuses may name more than the batch holds: the error is looked for in the batch)
            if any(kind.code is Code.ERROR for kind in kinds):
                walk.error = next((verdict for verdict in verdicts if verdict.code is Code.ERROR), None)
                if walk.error is not None:
                    return walk
            walk.passed.extend(itertools.compress(range(walk.checked, end), map(_OK, verdicts)))
        walk.verdicts.extend(verdicts)
        walk.checked = end
    return walk


def _rotated(items: list[Any], start: int, low: int, high: int) -> list[Any]:
    """Positions `low` to `high` of `items` rotated to begin at `start` (items[start:] + items[:start]), without
    building the whole rotation."""
    first, last = start + low, start + high
    size = len(items)
    if last <= size:
        return items[first:last]
    if first >= size:
        return items[first - size:last - size]
    return items[first:] + items[:last - size]


def _frees_room(event: WatchEvent) -> bool:
    """Whether a pod event leaves room on a node: a bound pod deleted, or finished (Succeeded or Failed)."""
    before = event.old if event.type != "DELETED" else None
    pod = event.object
    if not (pod.get("spec") or {}).get("nodeName"):
        return False
    if event.type == "DELETED":
        return True
    return _finished(pod) and (before is None or not _finished(before))


def _finished(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _summarise(node_count: int, rejections: dict[str, Status]) -> Status:
    """kube-scheduler's "0/N nodes are available: ..." message, reasons counted and sorted."""
    counts: dict[str, int] = {}
    for status in rejections.values():
        # a status holds several reasons where NodeResourcesFit finds several resources short (its message joins
        # them with ", ", as upstream's Status.Message() does); upstream counts each reason on its own
        for reason in status.message.split(", ") if status.plugin == NodeResourcesFit.name else [status.message]:
            counts[reason] = counts.get(reason, 0) + 1
    reasons = ", ".join(f"{count} {message}" for message, count in sorted(counts.items()))
    code = (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        if rejections and all(s.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE for s in rejections.values())
        else Code.UNSCHEDULABLE
    )
    return Status(code, f"0/{node_count} nodes are available: {reasons or 'no nodes'}.")


def _only_device_status_changed(old: Obj | None, new: Obj) -> bool:
    """Whether a claim update touched nothing but `status.devices` (and the resourceVersion)."""
    if old is None:
        return False

    def rest(claim: Obj) -> Obj:
        status = {k: v for k, v in (claim.get("status") or {}).items() if k != "devices"}
        metadata = {k: v for k, v in claim["metadata"].items() if k != "resourceVersion"}
        return {**claim, "metadata": metadata, "status": status}

    return rest(old) == rest(new)


def _key(pod: Obj) -> PodKey:
    return pod["metadata"]["namespace"], pod["metadata"]["name"]


def _claim_statuses(pod: Obj | None) -> object:
    return ((pod or {}).get("status") or {}).get("resourceClaimStatuses")
