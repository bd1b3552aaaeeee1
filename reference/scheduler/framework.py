"""The scheduling framework: plugin statuses, per-cycle state and the extension points of
kube-scheduler (PreFilter, Filter, PostFilter, PreScore, Score, Reserve, Unreserve, Permit, PreBind,
Bind) that the DRA plugin of KEP-3063 ("kube-scheduler" section) hooks into."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from itertools import compress, repeat
from operator import add, attrgetter
from typing import Any, Protocol

from draconform.reference.allocator.interface import Distinct, distinct_of, only_one
from draconform.sut import Obj


class Code(Enum):
    SUCCESS = "Success"
    SKIP = "Skip"  # the plugin has nothing to do for this pod
    UNSCHEDULABLE = "Unschedulable"  # may fit after a cluster change
    UNSCHEDULABLE_AND_UNRESOLVABLE = "UnschedulableAndUnresolvable"  # PostFilter cannot help
    ERROR = "Error"  # something broke; the pod backs off and is retried
    PENDING = "Pending"  # PreBind is waiting for something outside the scheduler


@dataclass(frozen=True)
class Status:
    code: Code = Code.SUCCESS
    message: str = ""
    plugin: str = ""
    # Success or Skip; a field, not a property, because the scheduler reads it for every node it filters
    ok: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ok", self.code in (Code.SUCCESS, Code.SKIP))

    @property
    def rejects(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR)


SUCCESS = Status()


@dataclass
class CycleState:
    """What plugins remember between extension points of one pod's scheduling attempt."""

    data: dict[str, Any] = field(default_factory=dict)
    skip_filter: set[str] = field(default_factory=set)  # plugins whose PreFilter returned Skip


class Plugin(Protocol):
    """A plugin implements any subset of the extension points as methods named after them:
    pre_filter(state, pod) -> Status, filter(state, pod, node) -> Status,
    filter_nodes(state, pod, nodes) -> list[Status] (Filter for many nodes at once: one verdict per node,
    each what `filter` would answer; a plugin without it is asked node by node), score_nodes(state, pod, nodes)
    -> list[int] (likewise for `score`),
    post_filter(state, pod, statuses) -> Status, pre_score(state, pod, nodes) -> Status,
    score(state, pod, node) -> int, reserve(state, pod, node) -> Status,
    unreserve(state, pod, node) -> None, permit(state, pod, node) -> Status,
    pre_bind(state, pod, node) -> Status, bind(state, pod, node) -> Status."""

    name: str


class DraPlugin(Plugin, Protocol):
    """The DRA plugin the scheduler keeps a handle on: besides its extension points, it says what a pod
    parked in PreBind waits for (KEP-5007) and stops with the scheduler."""

    def stop(self) -> None: ...

    def follow(self) -> None:
        """Take in what changed in the store now, as an informer does when events arrive, rather than when
        the next pod is scheduled."""
        ...

    def pre_enqueue(self, pod: Obj) -> str | None:
        """Why the pod is held back before any scheduling attempt (upstream's PreEnqueue), None to try it."""
        ...

    def waiting_on(self, state: CycleState) -> frozenset[str]: ...

    def wait_deadline(self, state: CycleState) -> datetime | None: ...

    def recheck(self, state: CycleState, pod: Obj, node: Obj) -> Status: ...


def call_point(plugins: list[Plugin], point: str, *args: Any) -> Status:
    """Run one extension point across the plugins that implement it; the first rejection wins."""
    for plugin in plugins:
        method = getattr(plugin, point, None)
        if method is None:
            continue
        status: Status = method(*args)
        if not status.ok:
            return Status(status.code, status.message, plugin.name)
    return SUCCESS


def pre_filter(plugins: list[Plugin], state: CycleState, pod: Obj) -> Status:
    """PreFilter across the plugins, the first rejection wins; as kube-scheduler, a plugin whose PreFilter
    answers Skip is not asked to Filter this pod (`state.skip_filter`)."""
    for plugin in plugins:
        method = getattr(plugin, "pre_filter", None)
        if method is None:
            continue
        status: Status = method(state, pod)
        if status.code == Code.SKIP:
            state.skip_filter.add(plugin.name)
        elif not status.ok:
            return Status(status.code, status.message, plugin.name)
    return SUCCESS


def filter_nodes(plugins: list[Plugin], state: CycleState, pod: Obj, nodes: list[Obj]) -> Distinct[Status]:
    """Filter for many nodes in one call per plugin, each node's verdict what `call_point(plugins, "filter",
    ...)` gives for it: a node a plugin rejects is not shown to the plugins after it, the first rejection wins.
    The verdicts carry their few distinct statuses (`Distinct`), so the walk looks for an error among those."""
    verdicts = [SUCCESS] * len(nodes)
    kinds: list[Status] = [SUCCESS]  # the distinct statuses among `verdicts`
    pending = list(range(len(nodes)))
    asked = [plugin for plugin in plugins if plugin.name not in state.skip_filter
             and (hasattr(plugin, "filter_nodes") or hasattr(plugin, "filter"))]
    for position, plugin in enumerate(asked):
        if not pending:
            break
        answers: list[Status] = _ask(plugin, "filter", state, pod,
                                     nodes if len(pending) == len(nodes) else [nodes[i] for i in pending])
        # A plugin gives many nodes the same few statuses: each rejection is named once, and the verdicts are
        # put in place by map and compress rather than a Python loop (this runs for every node a pod visits).
        first = only_one(answers)
        if first is not None:  # one status for all: fewer passes
            if not first.ok:
                named_one = first if first.plugin == plugin.name else Status(first.code, first.message, plugin.name)
                kinds.append(named_one)
                if len(pending) == len(nodes):
                    verdicts = [named_one] * len(nodes)
                else:
                    for i in pending:
                        verdicts[i] = named_one
                pending = []
            continue
        distinct = distinct_of(answers)
        rejections = [status for status in distinct if not status.ok]
        if not rejections:
            continue
        # (a plugin may name its statuses itself: those are taken as they are)
        named = {id(status): status if status.plugin == plugin.name else Status(status.code, status.message,
                                                                                  plugin.name)
                 for status in rejections}
        kinds.extend(named.values())
        as_named = all(status is SUCCESS if status.ok else named[id(status)] is status for status in distinct)
        if len(pending) == len(nodes) and as_named:
            verdicts = answers  # every status already what the framework makes of it: no pass to rename
        elif len(pending) == len(nodes):
            verdicts = list(map(named.get, map(id, answers), repeat(SUCCESS, len(answers))))
        else:
            for i, key in zip(pending, map(id, answers), strict=True):
                if key in named:
                    verdicts[i] = named[key]
        if position < len(asked) - 1:  # the nodes left for the next plugin (none after the last)
            pending = list(compress(pending, map(_OK, answers)))
    return Distinct(verdicts, kinds)


_OK = attrgetter("ok")


def score_nodes(plugins: list[Plugin], state: CycleState, pod: Obj, nodes: list[Obj]) -> list[int]:
    """Each node's score summed over the plugins, one call per plugin that scores many nodes at once
    (`score_nodes(state, pod, nodes) -> list[int]`), node by node for one that has only `score`."""
    totals = [0] * len(nodes)
    for plugin in plugins:
        scores: list[int] | None = _ask(plugin, "score", state, pod, nodes)
        if scores is not None:
            if len(scores) != len(nodes):
                raise ValueError(f"plugin {plugin.name} scored {len(scores)} of {len(nodes)} nodes")
            totals = list(map(add, totals, map(int, scores)))
    return totals


def _ask(plugin: Plugin, point: str, state: CycleState, pod: Obj, nodes: list[Obj]) -> Any:
    """One extension point's answers for many nodes: through the plugin's `<point>_nodes` where it has one, else
    node by node; None when the plugin does not implement the point."""
    batch = getattr(plugin, point + "_nodes", None)
    if batch is not None:
        return batch(state, pod, nodes)
    single = getattr(plugin, point, None)
    return None if single is None else [single(state, pod, node) for node in nodes]


def node_name(node: Obj) -> str:
    name: str = node["metadata"]["name"]
    return name
