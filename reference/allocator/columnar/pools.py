"""The pool view of the columnar core (KEP-4381 "Pools"): the newest generation of each pool, completeness and
validity, decided pool by pool over its few slice rows, and the devices the gates allow in search order, put
into frames once from the slices' columns (a first attempt in a process then pays for no joins or sorts)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import polars as pl

from draconform.reference.allocator.columnar.model import (
    CONSUMPTION_SCHEMA,
    COUNTER_SCHEMA,
    DEVICE_SCHEMA,
    POOL_KEY,
    USABLE_SCHEMA,
    AltCandidates,
    Choice,
    Columns,
    PoolView,
    SliceBlock,
)
from draconform.reference.allocator.compatibility import (
    Mode,
)
from draconform.reference.allocator.gates import Gates


def _row(block: SliceBlock) -> dict[str, Any]:
    return {column: values[0] for column, values in block.slice.items()}


def _joined(blocks: Iterable[SliceBlock], part: str, schema: dict[str, Any]) -> Columns:
    """One column list per schema column, the blocks' rows one after the other."""
    chosen = [getattr(block, part) for block in blocks]
    return {column: list(itertools.chain.from_iterable(b[column] for b in chosen)) for column in schema}


def _without(keep: list[bool], flags: list[bool]) -> list[bool]:
    return [k and not f for k, f in zip(keep, flags, strict=True)]


def by_node(columns: Columns, keep: list[int], failed: dict[int, str]) -> AltCandidates:
    """The kept rows (positions in rank order) as candidates: per node its own, and those not bound to one node
    with the node selector that says where they reach (None for allNodes)."""
    ranks, ids, nodes = columns["rank"], columns["device_id"], columns["node_name"]
    local: dict[str, tuple[list[int], list[int]]] = {}
    shared: list[tuple[int, int, int | None]] = []
    shared_rows = [p for p in keep if nodes[p] is None]
    if shared_rows:
        sel_ids, all_nodes = columns["sel_id"], columns["all_nodes"]
        shared = [(ranks[p], ids[p], None if all_nodes[p] else sel_ids[p]) for p in shared_rows]
    for name, run in itertools.groupby(keep, key=nodes.__getitem__):  # a node's devices come in runs
        if name is not None:
            positions = list(run)
            found = local.get(name)
            if found is None:
                found = local[name] = ([], [])
            found[0].extend(map(ranks.__getitem__, positions))
            found[1].extend(map(ids.__getitem__, positions))
    return AltCandidates(local, shared, {ids[p]: error for p, error in failed.items()})


def _unique(reasons: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(reasons))


def invalid_reason(newest: list[SliceBlock], gates: Gates, here: frozenset[str] | None = None) -> str | None:
    """Why a complete pool is invalid (its newest slices, in name order), or None: duplicate device names (among
    the slices named in `here` where given: those the node gathers, D-4381-18), duplicate counter sets, and (with
    DRAPartitionableDevices) consumption of an unknown counter set or counter."""
    names = [name for block in newest if here is None or block.slice["slice"][0] in here
             for name in block.devices["name"]]
    seen: set[str] = set()
    reasons = []
    for name in names:
        if name in seen:
            reasons.append(f"duplicate device name {name}")
        seen.add(name)
    declared: dict[str, set[tuple[str, int]]] = {}  # counter set name -> the (slice, set index) declaring it
    known: set[tuple[str, str]] = set()  # (counter set, counter)
    for block in newest:
        counters = block.counters
        for set_name, index, counter in zip(counters["counter_set"], counters["set_index"], counters["counter"],
                                            strict=True):
            declared.setdefault(set_name, set()).add((block.slice["slice"][0], index))
            if counter is not None:
                known.add((set_name, counter))
    reasons += [f"duplicate counter set {name}" for name, where in declared.items() if len(where) > 1]
    if gates.partitionable:
        unknown_sets, unknown_counters = [], []
        for block in newest:
            name_of = dict(zip(block.device_ids, block.devices["name"], strict=True))
            rows = block.consumption
            for device_id, set_name, counter in zip(rows["device_id"], rows["counter_set"], rows["counter"],
                                                    strict=True):
                if set_name not in declared:
                    unknown_sets.append(f"device {name_of[device_id]} consumes from unknown counter set {set_name}")
                elif (set_name, counter) not in known:
                    unknown_counters.append(f"device {name_of[device_id]} consumes unknown counter "
                                            f"{set_name}/{counter}")
        reasons += unknown_sets + unknown_counters
    return ", ".join(_unique(reasons)) or None


def _pools(blocks: list[SliceBlock], gates: Gates, choice: Choice,
           ) -> tuple[list[SliceBlock], list[dict[str, Any]], dict[tuple[str, str], list[dict[str, Any]]]]:
    """Pool by pool, in search order: (the newest slices of the complete, valid pools, the newest slices of the
    others with why, the D-5007-8 slices holding a device with binding conditions per usable pool)."""
    picked = {(driver, pool): (generation, own, here) for driver, pool, generation, own, here in choice}
    by_pool: dict[tuple[str, str], list[SliceBlock]] = {}
    for block in blocks:
        by_pool.setdefault((block.slice["driver"][0], block.slice["pool"][0]), []).append(block)
    good: list[SliceBlock] = []
    problem_slices: list[dict[str, Any]] = []
    binding_slices: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for key in sorted(by_pool):  # search order: pools by driver and name, slices by name, devices in order
        slices = by_pool[key]
        # Only the newest generation of a pool counts, or the one the node's choice names.
        generation, own, here = picked.get(key, (max(b.slice["generation"][0] for b in slices), False, None))
        newest = [b for b in slices if b.slice["generation"][0] == generation]
        if not newest:  # the node's choice leaves the pool out: its driver is replacing it
            continue
        newest.sort(key=lambda b: str(b.slice["slice"][0]))
        # Complete: exactly resourceSliceCount slices, all agreeing on the count.
        # Or: the node's own slices of the generation already number it (`own`, from the choice).
        counts = {b.slice["slice_count"][0] for b in newest}
        complete = (len(counts) == 1 and len(newest) == counts.pop()) or own
        # An incomplete pool is never checked for validity (upstream skips it first).
        invalid = invalid_reason(newest, gates, here) if complete else None
        if not complete or invalid:
            problem_slices += [{**_row(b), "own": own, "complete": complete, "invalid": invalid} for b in newest]
            continue
        good += newest
        if not gates.stable_allocator:  # D-5007-8, per pool
            flagged = [{**_row(b), "own": own} for b in newest if any(b.devices["has_binding"])]
            if flagged:
                binding_slices[key] = flagged
    return good, problem_slices, binding_slices


def _usable(newest_devices: Columns, gates: Gates) -> Columns:
    """The devices the gates allow, in search order, with their rank in it. Devices consuming counters stay
    without DRAPartitionableDevices: the search refuses them after their selectors ran (D-4381-17)."""
    keep = [True] * len(newest_devices["device_id"])
    if not gates.binding:
        keep = _without(keep, newest_devices["has_binding"])
    if gates.compatibility is Mode.SKIP:
        keep = _without(keep, newest_devices["has_groups"])
    positions = [i for i, kept in enumerate(keep) if kept]
    usable: Columns = {column: [values[i] for i in positions] for column, values in newest_devices.items()}
    usable["rank"] = list(range(len(positions)))
    return usable


def _per_device(good: list[SliceBlock], usable: Columns) -> dict[str, list[tuple[int, int]]]:
    """D-4381-9: per slice with perDeviceNodeSelection, its usable devices as (rank, device id), in rank order."""
    per_device: dict[str, list[tuple[int, int]]] = {}
    per_device_slices = {b.slice["slice"][0] for b in good if b.slice["per_device"][0]}
    if per_device_slices:
        for name, rank, device_id in zip(usable["slice"], usable["rank"], usable["device_id"], strict=True):
            if name in per_device_slices:
                per_device.setdefault(name, []).append((rank, device_id))
    return per_device


def _counters(good: list[SliceBlock], newest_devices: Columns) -> tuple[Columns, Columns]:
    """The counters of the usable pools (sets without counters left out), and what their devices consume, with
    each device's driver, pool and name."""
    counters = _joined(good, "counters", COUNTER_SCHEMA)
    with_counter = [i for i, counter in enumerate(counters["counter"]) if counter is not None]
    counters = {column: [values[i] for i in with_counter] for column, values in counters.items()}
    consumption = _joined(good, "consumption", CONSUMPTION_SCHEMA)
    device_of = {d: (driver, pool, name) for d, driver, pool, name in zip(
        newest_devices["device_id"], newest_devices["driver"], newest_devices["pool"], newest_devices["name"],
        strict=True)} if consumption["device_id"] else {}
    for column, index in (("driver", 0), ("pool", 1), ("name", 2)):
        consumption[column] = [device_of[d][index] for d in consumption["device_id"]]
    return counters, consumption


def pool_view(blocks: list[SliceBlock], gates: Gates, choice: Choice = ()) -> PoolView:
    """The pools as a node with this generation choice sees them, from every slice's rows: newest generation,
    complete and valid pools, the devices the gates allow in search order, and the counters left to consume."""
    good, problem_slices, binding_slices = _pools(blocks, gates, choice)
    newest_devices = _joined(good, "devices", DEVICE_SCHEMA)
    usable = _usable(newest_devices, gates)
    counters, consumption = _counters(good, newest_devices)
    everything = by_node(usable, usable["rank"], {})
    everything.node_of = {(driver, pool, name): node for driver, pool, name, node in zip(
        usable["driver"], usable["pool"], usable["name"], usable["node_name"], strict=True) if node is not None}
    usable_frame = pl.DataFrame(usable, schema=USABLE_SCHEMA)
    return PoolView(
        usable=usable_frame,  # the same rows as newest_devices where the gates leave every device in
        newest_devices=usable_frame if len(usable["rank"]) == len(newest_devices["device_id"])
        else pl.DataFrame(newest_devices, schema=DEVICE_SCHEMA),
        counters=pl.DataFrame(counters, schema=COUNTER_SCHEMA),
        consumption=pl.DataFrame(consumption, schema={**CONSUMPTION_SCHEMA, **{c: pl.String for c in POOL_KEY},
                                                      "name": pl.String}),
        problem_slices=problem_slices,
        any_consumes=any(usable["consumes"]),
        binding_slices=binding_slices,
        per_device=_per_device(good, usable),
        columns=usable,
        everything=everything,
        drivers=frozenset(usable["driver"]),
    )
