"""The columnar core's records (KEP-4381 structured parameters): the schemas of the frames kept from watch events,
one slice's rows, device facts parsed on first use, the pool view, a request's candidates, one attempt."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import polars as pl

from draconform.reference.allocator.devices import DeviceFacts, parse_device
from draconform.reference.allocator.interface import Feasibility
from draconform.reference.allocator.plans import ClaimPlan
from draconform.sut import Obj

DeviceKey = tuple[str, str, str]
CounterKey = tuple[str, str, str, str]
AMOUNT = pl.Decimal(38, 9)  # quantities are kept to nano precision, as Kubernetes does
SLICE_SCHEMA: dict[str, Any] = {
    "slice": pl.String, "driver": pl.String, "pool": pl.String, "generation": pl.Int64, "slice_count": pl.Int64,
    "node_name": pl.String, "sel_id": pl.Int64, "all_nodes": pl.Boolean, "per_device": pl.Boolean,
}
DEVICE_SCHEMA: dict[str, Any] = {
    "device_id": pl.Int64, "slice": pl.String, "driver": pl.String, "pool": pl.String, "name": pl.String,
    "index": pl.Int64, "node_name": pl.String, "sel_id": pl.Int64, "all_nodes": pl.Boolean,
    "has_binding": pl.Boolean, "consumes": pl.Boolean, "has_groups": pl.Boolean, "has_taints": pl.Boolean,
}
USABLE_SCHEMA: dict[str, Any] = {**DEVICE_SCHEMA, "rank": pl.Int64}  # a usable device's place in search order
COUNTER_SCHEMA: dict[str, Any] = {
    "slice": pl.String, "set_index": pl.Int64, "driver": pl.String, "pool": pl.String, "counter_set": pl.String,
    "counter": pl.String,
    "value": AMOUNT,
}
CONSUMPTION_SCHEMA: dict[str, Any] = {
    "device_id": pl.Int64, "counter_set": pl.String, "counter": pl.String, "amount": AMOUNT,
}
HELD_SCHEMA: dict[str, Any] = {"driver": pl.String, "pool": pl.String, "name": pl.String}
POOL_KEY = ["driver", "pool"]
# Per pool whose generation depends on the node: driver, pool, the generation the node sees (-1: left out, being
# replaced), whether the node's own slices of it already make it complete, and, for a pool with a device name
# in more than one place, the slices the node gathers (device names need to be unique among those only).
Choice = tuple[tuple[str, str, int, bool, frozenset[str] | None], ...]
FITS = Feasibility(True)
NOT_PLAIN = -1  # a node's candidate count where some candidate is not a plain device (only the search can tell)


Columns = dict[str, list[Any]]


@dataclass
class SliceBlock:
    """The rows one ResourceSlice contributes to each frame, as plain columns: the frames are built from every
    block's columns at once when the pool view is rebuilt (one frame per kind, not one per slice)."""

    slice: Columns
    devices: Columns
    counters: Columns
    consumption: Columns
    device_ids: list[int]


class Devices:
    """Device facts by id, parsed from the published entry when first asked for. A search reads only the devices
    of the nodes it tries, so of a 50,000-device cluster most entries are never parsed: the frames need only
    their name and a few flags, which `_put_slice` reads straight from the entry."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[tuple[Obj, str, str, list[Obj]], int]] = {}  # (spec, slice, version), index
        self._facts: dict[int, DeviceFacts] = {}

    def add_slice(self, ids: list[int], spec: Obj, slice_name: str, version: str, entries: list[Obj]) -> None:
        """The devices of one slice (`ids[i]` is `entries[i]`)."""
        where = (spec, slice_name, version, entries)
        self._entries.update(zip(ids, ((where, index) for index in range(len(ids))), strict=True))

    def key_of(self, device_id: int) -> tuple[DeviceKey, bool]:
        """The device's (driver, pool, name) and whether it publishes allowMultipleAllocations, without parsing
        it: what a search needs to skip a device in use."""
        (spec, _, _, entries), index = self._entries[device_id]
        raw = entries[index]
        return ((str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", "")), str(raw.get("name", ""))),
                raw.get("allowMultipleAllocations") is True)

    def published(self, device_id: int) -> tuple[str, Obj]:
        """The device's driver and its entry as published, without parsing it."""
        (spec, _, _, entries), index = self._entries[device_id]
        return str(spec.get("driver", "")), entries[index]

    def drop(self, device_id: int) -> None:
        self._entries.pop(device_id, None)
        self._facts.pop(device_id, None)

    def __getitem__(self, device_id: int) -> DeviceFacts:
        facts = self._facts.get(device_id)
        if facts is None:
            (spec, slice_name, version, entries), index = self._entries[device_id]
            facts = self._facts[device_id] = parse_device(spec, slice_name, version, index, entries[index])
        return facts


@dataclass
class PoolView:
    """Everything that depends only on the published slices (and the gates): recomputed when a slice changes."""

    usable: pl.DataFrame  # devices the gates allow, in complete valid pools, newest generation, with `rank`
    newest_devices: pl.DataFrame  # every device of a pool's newest generation in a complete valid pool
    counters: pl.DataFrame  # counter sets of complete valid pools
    consumption: pl.DataFrame  # consumption of newest_devices, with driver/pool/name
    problem_slices: list[dict[str, Any]]  # newest slices of incomplete or invalid pools, with the reason
    any_consumes: bool  # whether any usable device consumes counters (else counters are never looked at)
    # D-5007-8: per usable pool, its slices holding a device with binding conditions; on a node one
    # of them reaches, the whole pool is tried after the pools without.
    binding_slices: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    verdicts: dict[str, dict[int, int]] = field(default_factory=dict)  # selector -> device id -> 1, 0 or -1
    errors: dict[tuple[str, int], str] = field(default_factory=dict)  # (selector, device id) -> its error
    candidates: dict[tuple[str, ...], AltCandidates] = field(default_factory=dict)  # per selector list
    # the nodes a candidate or a problem pool reaches, per set of selector lists (see `_shortcut`)
    relevant: dict[tuple[tuple[str, ...], ...], frozenset[str]] = field(default_factory=dict)
    # D-4381-9: per slice with perDeviceNodeSelection, its usable devices as (rank, device id), in rank order: on a
    # node the slice reaches, the devices of other nodes have their selectors evaluated too (an error counts)
    per_device: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    columns: Columns = field(default_factory=dict)  # `usable` as the lists it was made of, read without polars
    # every usable device as a candidate, what a request gets whose selectors every device passes (the common
    # class selector naming the driver): grouped by node once per view, not per attempt
    everything: AltCandidates | None = None
    drivers: frozenset[str] = frozenset()  # the usable devices' drivers: one alone settles `device.driver == ...`


@dataclass
class AltCandidates:
    """The devices whose selectors match an alternative, or fail on it (`errors`), in search order. A selector
    error counts only where the search reaches the device (upstream evaluates lazily), so it stays in line."""

    local: dict[str, tuple[list[int], list[int]]]  # node -> (ranks, device ids), in rank order
    shared: list[tuple[int, int, int | None]]  # (rank, device_id, sel_id or None for allNodes), rank order
    errors: dict[int, str]  # device id -> the selector error it gives
    # node -> how many candidates it has when they are all plain devices (counting settles them), else NOT_PLAIN
    plain: dict[str, int] | None = None
    held: HeldCounts | None = None  # per node, how many of its candidates allocated claims hold
    node_of: dict[DeviceKey, str] | None = None  # each local candidate's node, made when first needed
    # the one candidate count every node in `plain` has (-1 where they differ or one is NOT_PLAIN), made when needed
    same: int | None = None


@dataclass
class HeldCounts:
    """How many of one alternative's node-local candidates allocated claims hold, per node: built once per pool
    view, then kept current from the allocator's log of devices becoming held or free, so a pod's verdicts on
    all nodes cost no recount of every node's candidates."""

    node_of: dict[DeviceKey, str]  # each local candidate's node (a device key names one device in a view)
    on_node: dict[str, int]
    seen: int  # how much of the log is counted in
    # Where every node's candidates are plain devices: per node, how many of them no allocated claim holds (its
    # candidate count less `on_node`), kept with `on_node`, so a pod's Filter reads one number per visited node.
    free: dict[str, int] | None = None


@dataclass(frozen=True)
class Held:
    """Devices held by allocated claims (a live view of the per-device counts) or by assumed ones."""

    allocated: dict[DeviceKey, int]
    assumed: frozenset[DeviceKey]

    def __contains__(self, device: object) -> bool:
        return device in self.allocated or device in self.assumed


@dataclass
class Attempt:
    """One scheduling attempt: the same claims against the same cluster state, asked for node after node."""

    plans: list[ClaimPlan]
    held: Held
    candidates: dict[tuple[int, str], AltCandidates]
    view: PoolView  # the pools as the attempt's nodes see them (one generation choice)
    available: dict[CounterKey, Fraction] | None = None
    shared: dict[DeviceKey, dict[str, Fraction]] = field(default_factory=dict)  # KEP-5075 allocated shares
    keep: tuple[Any, ...] = ()  # the claim objects the cache key refers to, kept alive
    # Nodes that can matter: with a candidate, a selector error or a problem pool. When nothing shared reaches
    # other nodes, every other node gets `nothing_here` without a search (the 5000-node lesson).
    relevant_nodes: frozenset[str] | None = None  # None: no shortcut, ask every node
    nothing_here: dict[str, str] = field(default_factory=dict)
    nowhere: Feasibility = FITS  # the verdict for those nodes (`nothing_here` as "does not fit")
    # The columnar verdict (`feasible`): whether these claims are simple enough for counting to settle a node,
    # how many devices they need in all, and the nodes a problem pool reaches (the search decides there).
    countable: bool | None = None
    total: int = 0
    problem_nodes: frozenset[str] = frozenset()
    reasons: dict[tuple[int, ...], Feasibility] = field(default_factory=dict)  # "does not fit", per candidate counts
    # per request, in order: its candidates, how many it asks for, and per node how many of its candidates
    # allocated claims hold, and how many more only assumed claims hold
    counting: list[tuple[AltCandidates, int, dict[str, int], dict[str, int]]] = field(default_factory=list)
    whole: bool = False  # whether `candidates` holds every node's (else allocate judges node by node)
    asked: int = 0  # nodes allocate asked about while not whole

