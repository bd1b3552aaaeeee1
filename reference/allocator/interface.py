"""The seam between the scheduler's DRA plugin and an allocation core.

The plugin asks one question per (node, pod): can these unallocated claims get devices on this node,
given what is already allocated? A core answers with one `status.allocation` per claim, or says why
not. Cores read DeviceClasses, ResourceSlices and allocated claims from the API store themselves (the
columnar core keeps them in frames updated from watch events)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import is_
from typing import Protocol, TypeVar

from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.interface import ApiReader
from draconform.sut import Obj

_T = TypeVar("_T")


class Nodes(list[Obj]):
    """Nodes with their names alongside (`names[i]` is the name of `self[i]`): the scheduler hands its batches to
    the plugins this way, so that the DRA plugin and the core, which key everything by node name, need not read
    each node's name again for every pod. Any list of nodes will do where a `Nodes` is not at hand."""

    __slots__ = ("names",)

    def __init__(self, nodes: Sequence[Obj], names: list[str]) -> None:
        super().__init__(nodes)
        self.names = names


class Distinct(list[_T]):
    """A list of answers (statuses, verdicts) that carries the distinct objects it holds, by identity, as
    `distinct` (a few: "fits" and one "does not fit", say): a reader that treats each distinct answer once (names
    it, maps it, looks for an error among them) need not pass over every node's answer to find them. `distinct` may
    hold more than the list does, never less."""

    __slots__ = ("distinct",)

    def __init__(self, items: Iterable[_T], distinct: Iterable[_T]) -> None:
        super().__init__(items)
        self.distinct = tuple(distinct)


def distinct_of(items: Sequence[_T]) -> tuple[_T, ...]:
    """The distinct objects (by identity) of `items`: those a `Distinct` carries, else found in one pass."""
    known: tuple[_T, ...] | None = getattr(items, "distinct", None)
    if known is not None:
        return known
    return tuple(dict(zip(map(id, items), items, strict=True)).values())


def only_one(items: Sequence[_T]) -> _T | None:
    """The one object (by identity) every item is, where all are the same and not None; else None. A `Distinct`
    knows it without a pass over the items."""
    known: tuple[_T, ...] | None = getattr(items, "distinct", None)
    if known is not None and len(known) == 1:
        return known[0] if items else None
    first = items[0] if items else None
    return first if first is not None and all(map(is_, items, repeat(first))) else None


def node_names(nodes: Sequence[Obj]) -> list[str]:
    """The names of `nodes`, in order: the ones they carry (`Nodes`), or read from each node."""
    names: list[str] | None = getattr(nodes, "names", None)
    return names if names is not None else [node["metadata"]["name"] for node in nodes]


class AllocationError(Exception):
    """The claims cannot be allocated on any node because of their own or the cluster's configuration
    (missing DeviceClass, CEL error, All over an incomplete pool, an invalid pool with no alternative).
    Unlike "does not fit here", retrying on another node does not help."""


@dataclass
class NodeAllocation:
    """The answer for one node: `allocations[i]` is the `status.allocation` for `claims[i]`, or
    `allocations` is None and `reasons` says, per claim name, why the claims do not fit."""

    allocations: list[Obj] | None
    reasons: dict[str, str] = field(default_factory=dict)

    @property
    def fits(self) -> bool:
        return self.allocations is not None


@dataclass(frozen=True)
class Feasibility:
    """A core's answer for one node without the allocations: whether `allocate` would fit, and if not, why
    (as `NodeAllocation.reasons`). A core that says `fits` gives the same answer from `allocate`, whose
    allocations then need no device with binding conditions."""

    fits: bool
    reasons: dict[str, str] = field(default_factory=dict)


class Allocator(Protocol):
    def feasible(self, node: Obj, claims: Sequence[Obj], assumed: Sequence[Obj] = ()) -> Feasibility | None:
        """Whether `allocate(node, claims, assumed)` would fit, where the core can tell more cheaply than by
        allocating; None where it cannot (then the caller allocates)."""
        ...

    def allocate(self, node: Obj, claims: Sequence[Obj], assumed: Sequence[Obj] = ()) -> NodeAllocation:
        """Allocate every claim in `claims` (none has status.allocation) together on `node`.

        Devices in use are those of every claim in the store with status.allocation, plus those of the
        `assumed` claims: allocations the scheduler has reserved but not written yet."""
        ...

    def close(self) -> None:
        """The scheduler that owns this core stops: release watches and caches."""
        ...

    # Optional, looked up by the DRA plugin: `feasible_nodes(nodes, claims, assumed)` (see `feasible_on`), and
    # `follow()`, which takes in the store's changes now, as an informer does, not at the next question.


def feasible_on(allocator: Allocator, nodes: Sequence[Obj], claims: Sequence[Obj],
                assumed: Sequence[Obj] = ()) -> list[Feasibility | None]:
    """`allocator.feasible` for each node, in one call where the core answers for many nodes at once (a
    `feasible_nodes(nodes, claims, assumed)` method giving the same list); otherwise node by node."""
    batch = getattr(allocator, "feasible_nodes", None)
    if batch is not None:
        answers: list[Feasibility | None] = batch(nodes, claims, assumed)
        return answers
    return [allocator.feasible(node, claims, assumed) for node in nodes]


class AllocatorFactory(Protocol):
    def __call__(self, store: ApiReader, gates: FeatureGates) -> Allocator: ...
