"""Points where the cores once answered otherwise than upstream's structured allocator (issue 40), each on its
minimised input and on both cores: slices the gates leave out still count towards completeness and counter
consumers are refused after their selectors (D-4381-17); the stable allocator gathers every slice with shared
counters (D-4381-19); a counter set held devices over-commit blocks the pool's counter consumers (D-4381-14);
device names are unique among the slices gathered for the node only (D-4381-18); distinctAttribute without
DRAListTypeAttributes (D-4381-15); a held share without consumedCapacity takes the counters once, as the KEP
says and upstream since #140437 does (D-4381-16)."""

from __future__ import annotations

from typing import Any

import pytest

from draconform.reference.allocator.interface import AllocationError, AllocatorFactory, NodeAllocation

from .helpers import (
    DRIVER,
    GPU_CLASS,
    STABLE,
    allocated,
    claim,
    dev,
    exactly,
    gates,
    node,
    picked,
    resource_slice,
    store_with,
)

NO_PARTITIONS = {"DRAPartitionableDevices": False}
ALL = exactly("req", allocationMode="All")


def run(core: AllocatorFactory, objects: list[dict[str, Any]], claims: list[dict[str, Any]],
        **gate_values: bool) -> NodeAllocation:
    return core(store_with(*objects), gates(**gate_values)).allocate(node("node-1"), claims)


def devices_of(answer: NodeAllocation) -> list[str]:
    assert answer.allocations is not None, answer.reasons
    return [r[3] for a in answer.allocations for r in picked(a)]


def counter_slice(name: str, pool: str, count: int, node_name: str, **sets: str) -> dict[str, Any]:
    return resource_slice(name, [], pool=pool, count=count, nodeName=node_name,
                          sharedCounters=[{"name": s, "counters": {"mem": {"value": v}}} for s, v in sets.items()])


def consuming(name: str, counter_set: str, amount: str, **fields: Any) -> dict[str, Any]:
    return dev(name, consumesCounters=[{"counterSet": counter_set, "counters": {"mem": {"value": amount}}}], **fields)


# --- D-4381-17: DRAPartitionableDevices off ------------------------------------------------------------------

def test_without_the_gate_a_counter_slice_still_makes_its_pool_complete(core: AllocatorFactory) -> None:
    """The counter slice is not gathered, but counted when the pool's slices are: the pool is complete, so an
    All request takes its plain device (a core leaving the slice out of the count calls the pool incomplete)."""
    objects = [GPU_CLASS, counter_slice("counters", "gpu", 2, "node-1", cs="8"),
               resource_slice("devices", [dev("gpu-0")], pool="gpu", count=2)]
    assert devices_of(run(core, objects, [claim("c", ALL)], **NO_PARTITIONS)) == ["gpu-0"]


def test_without_the_gate_a_counter_consumer_has_its_selectors_evaluated_first(core: AllocatorFactory) -> None:
    """Refused only when allocating, after its selectors ran: a selector failing on it is an error."""
    objects = [GPU_CLASS, resource_slice("devices", [consuming("gpu-0", "cs", "4")], pool="gpu")]
    failing = claim("c", exactly("req", selectors=[{"cel": {"expression":
                                                             f'device.attributes["{DRIVER}"].model == "x"'}}]))
    with pytest.raises(AllocationError):
        run(core, objects, [failing], **NO_PARTITIONS)
    assert not run(core, objects, [claim("c", exactly("req"))], **NO_PARTITIONS).fits
    assert not run(core, objects, [claim("c", ALL)], **NO_PARTITIONS).fits  # listed by All, then refused


# --- D-4381-19: the stable allocator and counter slices of other nodes ----------------------------------------

def test_the_stable_allocator_gathers_another_nodes_counter_slice(core: AllocatorFactory) -> None:
    """node-2's pool is incomplete (one of two slices) and only its counter slice exists: the stable allocator
    gathers that slice on node-1 too, so an All request there meets an incomplete pool."""
    objects = [GPU_CLASS, resource_slice("node-1", [dev("gpu-0")]), counter_slice("other", "other", 2, "node-2",
                                                                                    cs="8")]
    with pytest.raises(AllocationError):
        run(core, objects, [claim("c", ALL)], **STABLE)
    assert devices_of(run(core, objects, [claim("c", ALL)])) == ["gpu-0"]  # the newer allocators do not


# --- D-4381-14: an over-committed counter set blocks its pool's consumers ------------------------------------

def overcommitted() -> list[dict[str, Any]]:
    """Set a (4) is over-committed by two held devices of 4 each; set b (4) is untouched."""
    devices = resource_slice("devices", [consuming("x", "a", "4"), consuming("y", "a", "4"),
                                         consuming("z", "b", "2"), dev("plain")], pool="gpu", count=2)
    held = [claim(f"holder-{n}", exactly("req"), allocation=allocated((DRIVER, "gpu", n))) for n in ("x", "y")]
    return [GPU_CLASS, counter_slice("counters", "gpu", 2, "node-1", a="4", b="4"), devices, *held]


def test_an_overcommitted_counter_set_blocks_every_counter_consumer_of_its_pool(core: AllocatorFactory) -> None:
    """z consumes only from set b, which has room, but set a is below zero: upstream's counter check compares
    every set of the pool, so z does not fit; the plain device of the pool still does."""
    gpu_z = exactly("req", selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].id == "z"'}}])
    objects = overcommitted()
    objects[2]["spec"]["devices"][2]["attributes"] = {"id": {"string": "z"}}
    for device in objects[2]["spec"]["devices"][:2] + objects[2]["spec"]["devices"][3:]:
        device["attributes"] = {"id": {"string": device["name"]}}
    assert not run(core, objects, [claim("c", gpu_z)]).fits
    assert devices_of(run(core, objects, [claim("c", exactly("req"))])) == ["plain"]


# --- D-4381-18: names unique among the slices gathered for the node ------------------------------------------

def test_a_device_name_repeated_on_another_node_leaves_the_pool_valid_here(core: AllocatorFactory) -> None:
    per_device = [resource_slice(f"part-{n}", [dev("gpu-0", nodeName=f"node-{n}")], pool="shared", count=2,
                                 perDeviceNodeSelection=True) for n in (1, 2)]
    assert devices_of(run(core, [GPU_CLASS, *per_device], [claim("c", exactly("req"))])) == ["gpu-0"]
    by_node = [resource_slice(f"node-{n}", [dev("gpu-0")], pool="shared", count=2, nodeName=f"node-{n}")
               for n in (1, 2)]
    assert devices_of(run(core, [GPU_CLASS, *by_node], [claim("c", exactly("req"))])) == ["gpu-0"]
    twice_here = [resource_slice("node-1", [dev("gpu-0"), dev("gpu-0")], pool="shared")]
    assert not run(core, [GPU_CLASS, *twice_here], [claim("c", exactly("req"))]).fits


# --- D-4381-15: distinctAttribute without DRAListTypeAttributes ---------------------------------------------

def test_without_the_gate_distinct_takes_the_first_list_and_refuses_further_ones(core: AllocatorFactory) -> None:
    numas = [dev("gpu-0", attributes={"numas": {"ints": [0]}}), dev("gpu-1", attributes={"numas": {"ints": [1]}})]
    distinct = [{"distinctAttribute": f"{DRIVER}/numas"}]
    two = [claim("c", exactly("req", count=2), constraints=distinct)]
    objects = [GPU_CLASS, resource_slice("node-1", numas)]
    assert not run(core, objects, two, DRAListTypeAttributes=False).fits
    assert devices_of(run(core, objects, two, DRAListTypeAttributes=True)) == ["gpu-0", "gpu-1"]
    # a scalar after a list is compared with the scalars only: taken, where the gate's sets overlap
    mixed = [GPU_CLASS, resource_slice("node-1", [numas[0], dev("gpu-1", attributes={"numas": {"int": 0}})])]
    assert devices_of(run(core, mixed, two, DRAListTypeAttributes=False)) == ["gpu-0", "gpu-1"]
    assert not run(core, mixed, two, DRAListTypeAttributes=True).fits


# --- D-4381-16: a held share without consumedCapacity --------------------------------------------------------

def shared_nic(consumed: dict[str, str] | None) -> list[dict[str, Any]]:
    """A multi-allocatable NIC taking 6 of its pool's 8, with one share allocated."""
    nic = consuming("nic", "cs", "6", allowMultipleAllocations=True, capacity={
        "bw": {"value": "10G", "requestPolicy": {"default": "1G", "validRange": {"min": "1G"}}}})
    result = {"request": "req", "driver": DRIVER, "pool": "net", "device": "nic",
              "shareID": "00000000-0000-4000-8000-000000000001"}
    if consumed is not None:
        result["consumedCapacity"] = consumed
    holder = claim("holder", exactly("req"), allocation={"devices": {"results": [result]}})
    return [GPU_CLASS, counter_slice("counters", "net", 2, "node-1", cs="8"),
            resource_slice("devices", [nic], pool="net", count=2), holder]


def test_a_held_share_without_consumed_capacity_took_the_counters_once(core: AllocatorFactory) -> None:
    """KEP-5075 and upstream since #140437: any allocated share took the device's counters (6 of 8), so the
    next share takes none and fits; a core counting only shares with consumedCapacity charges 6 again."""
    assert devices_of(run(core, shared_nic(None), [claim("c", exactly("req"))])) == ["nic"]
    assert devices_of(run(core, shared_nic({"bw": "1G"}), [claim("c", exactly("req"))])) == ["nic"]
