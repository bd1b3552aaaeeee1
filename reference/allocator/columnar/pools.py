"""The pool view of the columnar core (KEP-4381 "Pools"): the newest generation of each pool, completeness and
validity, the devices the gates allow in search order, and the counter sets, all as joins over the slices' frames."""

from __future__ import annotations

import itertools
from typing import Any

import polars as pl

from draconform.reference.allocator.columnar.model import (
    CONSUMPTION_SCHEMA,
    COUNTER_SCHEMA,
    DEVICE_SCHEMA,
    POOL_KEY,
    SLICE_SCHEMA,
    Choice,
    Columns,
    PoolView,
    SliceBlock,
)
from draconform.reference.allocator.common import (
    Gates,
)
from draconform.reference.allocator.compatibility import (
    Mode,
)


def _frame(blocks: list[Columns], schema: dict[str, Any]) -> pl.DataFrame:
    return pl.DataFrame({column: list(itertools.chain.from_iterable(b[column] for b in blocks)) for column in schema},
                        schema=schema)


def pool_view(blocks: list[SliceBlock], gates: Gates, choice: Choice = ()) -> PoolView:
    """The pools as a node with this generation choice sees them, from every slice's rows: newest generation,
    complete and valid pools, the devices the gates allow in search order, and the counters left to consume."""
    slices = _frame([b.slice for b in blocks], SLICE_SCHEMA)
    devices = _frame([b.devices for b in blocks], DEVICE_SCHEMA)
    counters = _frame([b.counters for b in blocks], COUNTER_SCHEMA)
    consumption = _frame([b.consumption for b in blocks], CONSUMPTION_SCHEMA)

    # Only the newest generation of a pool counts, or the one the node's choice names.
    picked = pl.DataFrame([(d, p, g, own) for d, p, g, own in choice], orient="row",
                          schema={"driver": pl.String, "pool": pl.String, "chosen": pl.Int64, "own": pl.Boolean})
    newest = slices.join(slices.group_by(POOL_KEY).agg(pl.col("generation").max().alias("newest")), on=POOL_KEY)
    newest = newest.join(picked, on=POOL_KEY, how="left").with_columns(pl.col("own").fill_null(False))
    newest = newest.filter(pl.col("generation") == pl.coalesce("chosen", "newest"))
    newest = newest.drop("newest", "chosen")
    new_slices = newest.select("slice")
    devices = devices.join(new_slices, on="slice", how="semi")
    counters = counters.join(new_slices, on="slice", how="semi")
    consumption = consumption.join(devices.select("device_id", *POOL_KEY, "name"), on="device_id")

    # Complete: exactly resourceSliceCount slices, all agreeing on the count.
    # Or: the node's own slices of the generation already number it (`own`, from the choice).
    complete = newest.group_by(POOL_KEY).agg(
        ((pl.col("slice_count").n_unique() == 1) & (pl.len() == pl.col("slice_count").first()))
        | pl.col("own").first()
    ).rename({"slice_count": "complete"})

    # Invalid: duplicate device names, duplicate counter sets, consumption of unknown sets or counters.
    problems = [
        devices.group_by(*POOL_KEY, "name").len().filter(pl.col("len") > 1)
        .select(*POOL_KEY, pl.format("duplicate device name {}", "name").alias("reason")),
        counters.select(*POOL_KEY, "slice", "set_index", "counter_set").unique()
        .group_by(*POOL_KEY, "counter_set").len().filter(pl.col("len") > 1)
        .select(*POOL_KEY, pl.format("duplicate counter set {}", "counter_set").alias("reason")),
    ]
    if gates.partitionable:
        known_sets = counters.select(*POOL_KEY, "counter_set").unique()
        problems.append(
            consumption.join(known_sets, on=[*POOL_KEY, "counter_set"], how="anti")
            .select(*POOL_KEY, pl.format("device {} consumes from unknown counter set {}", "name", "counter_set")
                    .alias("reason")))
        problems.append(
            consumption.join(known_sets, on=[*POOL_KEY, "counter_set"], how="semi")
            .join(counters.drop_nulls("counter").select(*POOL_KEY, "counter_set", "counter").unique(),
                  on=[*POOL_KEY, "counter_set", "counter"], how="anti")
            .select(*POOL_KEY, pl.format("device {} consumes unknown counter {}/{}", "name", "counter_set",
                                         "counter").alias("reason")))
    invalid = pl.concat(problems).unique(maintain_order=True).group_by(POOL_KEY, maintain_order=True).agg(
        pl.col("reason").str.join(", ").alias("invalid"))
    # An incomplete pool is never checked for validity (upstream skips it first).
    pools = complete.join(invalid, on=POOL_KEY, how="left").with_columns(
        pl.when(pl.col("complete")).then(pl.col("invalid")).otherwise(None).alias("invalid"))
    good = pools.filter(pl.col("complete") & pl.col("invalid").is_null()).select(POOL_KEY)
    problem_slices = newest.join(pools.filter(~pl.col("complete") | pl.col("invalid").is_not_null()),
                                 on=POOL_KEY).to_dicts()

    newest_devices = devices.join(good, on=POOL_KEY, how="semi")
    usable = newest_devices
    if not gates.binding:
        usable = usable.filter(~pl.col("has_binding"))
    if not gates.partitionable:
        usable = usable.filter(~pl.col("consumes"))
    if gates.compatibility is Mode.SKIP:
        usable = usable.filter(~pl.col("has_groups"))
    usable = usable.sort("driver", "pool", "slice", "index")
    usable = usable.with_row_index("rank").with_columns(pl.col("rank").cast(pl.Int64))
    binding_slices: dict[tuple[str, str], list[dict[str, Any]]] = {}
    if not gates.stable_allocator:  # D-5007-8, per pool
        flagged = newest_devices.filter(pl.col("has_binding")).select("slice").unique()
        for row in newest.join(flagged, on="slice", how="semi").to_dicts():
            binding_slices.setdefault((row["driver"], row["pool"]), []).append(row)

    per_device: dict[str, list[tuple[int, int]]] = {}
    per_device_slices = newest.filter(pl.col("per_device")).get_column("slice").to_list()
    if per_device_slices:
        for name, rank, device_id in usable.filter(pl.col("slice").is_in(per_device_slices)).select(
                "slice", "rank", "device_id").iter_rows():
            per_device.setdefault(name, []).append((rank, device_id))
    view = PoolView(
        usable=usable,
        newest_devices=newest_devices,
        counters=counters.join(good, on=POOL_KEY, how="semi").drop_nulls("counter"),
        consumption=consumption.join(good, on=POOL_KEY, how="semi"),
        problem_slices=problem_slices,
        any_consumes=bool(usable.get_column("consumes").any()),
        binding_slices=binding_slices,
        per_device=per_device,
    )
    return view
