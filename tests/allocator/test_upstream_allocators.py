"""Points where the cores once answered otherwise than upstream's allocators (issue 29), each on both cores:
an admin-access pick holds its device for the rest of the attempt (D-4381-7); with DRAConsumableCapacity and
DRADeviceBindingConditions off upstream runs its stable allocator, which ignores capacity requests and shows
CEL allowMultipleAllocations as false (D-4381-8); a device of another node in a per-device slice has its
selectors evaluated before its node is checked (D-4381-9); an admin-access pick takes shared counters for the
rest of the attempt like any pick (D-4381-13). List-type attributes with their gate off are in
test_list_attributes.py, the binding-condition pool order in test_semantics.py."""

from __future__ import annotations

from typing import Any

import pytest

from draconform.reference.allocator.columnar import ColumnarAllocator
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


def run(core: AllocatorFactory, objects: list[dict[str, Any]], claims: list[dict[str, Any]],
        **gate_values: bool) -> NodeAllocation:
    return core(store_with(*objects), gates(**gate_values)).allocate(node("node-1"), claims)


def devices_of(answer: NodeAllocation) -> list[list[str]]:
    assert answer.allocations is not None, answer.reasons
    return [[f"{r[0]}={r[3]}" for r in picked(a)] for a in answer.allocations]


# --- D-4381-7: an admin-access pick is in use for the rest of the attempt -----------------------------------

TWO_GPUS = [GPU_CLASS, resource_slice("node-1", [dev("gpu-0"), dev("gpu-1")])]


def test_a_later_claim_skips_a_device_an_earlier_claim_took_with_admin_access(core: AllocatorFactory) -> None:
    claims = [claim("monitor", exactly("req", adminAccess=True)), claim("work", exactly("req"))]
    assert devices_of(run(core, TWO_GPUS, claims)) == [["req=gpu-0"], ["req=gpu-1"]]
    one_gpu = [GPU_CLASS, resource_slice("node-1", [dev("gpu-0")])]
    assert not run(core, one_gpu, claims).fits


def test_admin_access_still_shares_a_device_with_other_claims_of_the_attempt(core: AllocatorFactory) -> None:
    """Admin access only avoids a device its own claim took: after a plain pick, and after another claim's
    admin pick, it takes the same device again."""
    claims = [claim("work", exactly("req")), claim("monitor", exactly("req", adminAccess=True)),
              claim("audit", exactly("req", adminAccess=True))]
    assert devices_of(run(core, TWO_GPUS, claims)) == [["req=gpu-0"], ["req=gpu-0"], ["req=gpu-0"]]


def test_one_claim_never_takes_a_device_twice_even_with_admin_access(core: AllocatorFactory) -> None:
    claims = [claim("monitor", exactly("a", adminAccess=True), exactly("b", adminAccess=True))]
    assert devices_of(run(core, TWO_GPUS, claims)) == [["a=gpu-0", "b=gpu-1"]]


# --- D-4381-13: an admin-access pick takes shared counters within the attempt --------------------------------

def partitioned(*held: str) -> list[dict[str, Any]]:
    """One GPU's counter set of 80Gi, a whole partition and two halves; `held` are allocated to another claim."""
    counters = resource_slice("gpu-counters", [], pool="gpu", count=2, nodeName="node-1",
                              sharedCounters=[{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}])
    devices = resource_slice("gpu-devices", [
        dev(name, consumesCounters=[{"counterSet": "gpu-0", "counters": {"memory": {"value": f"{gi}Gi"}}}])
        for name, gi in (("whole", 80), ("half-0", 40), ("half-1", 40))], pool="gpu", count=2)
    holders = [claim(f"holder-{name}", exactly("req"), allocation=allocated((DRIVER, "gpu", name))) for name in held]
    return [GPU_CLASS, counters, devices, *holders]


def test_an_admin_access_pick_takes_counters_for_the_rest_of_the_attempt(core: AllocatorFactory) -> None:
    """Taking the whole GPU with admin access would leave the later claim nothing, so the search backtracks to
    a half each; a core whose admin picks skip the counters answers whole + half."""
    claims = [claim("monitor", exactly("req", adminAccess=True)), claim("work", exactly("req"))]
    assert devices_of(run(core, partitioned(), claims)) == [["req=half-0"], ["req=half-1"]]


def test_an_admin_access_pick_fits_only_while_the_counters_last(core: AllocatorFactory) -> None:
    """Upstream checks an admin-access pick against the counters left, which already count the device another
    claim holds: on a counter set its holder exhausts, nothing fits, not even the held device itself; with a
    half held, the first device whose amount fits in what is left is that held half (first in order)."""
    monitor = [claim("monitor", exactly("req", adminAccess=True))]
    assert not run(core, partitioned("whole"), monitor).fits
    assert devices_of(run(core, partitioned("half-0"), monitor)) == [["req=half-0"]]


def test_an_allocated_admin_access_result_consumes_no_counters(core: AllocatorFactory) -> None:
    monitor = claim("monitor", exactly("req", adminAccess=True),
                    allocation=allocated((DRIVER, "gpu", "whole")))
    monitor["status"]["allocation"]["devices"]["results"][0]["adminAccess"] = True
    assert devices_of(run(core, [*partitioned(), monitor], [claim("work", exactly("req"))])) == [["req=whole"]]


# --- D-4381-8: the stable allocator ------------------------------------------------------------------------

def test_the_stable_allocator_ignores_capacity_requests(core: AllocatorFactory) -> None:
    request = exactly("req", capacity={"requests": {"memory": "10Gi"}})
    objects = [GPU_CLASS, resource_slice("node-1", [dev("gpu-0", capacity={"memory": {"value": "1Gi"}})])]
    assert devices_of(run(core, objects, [claim("c", request)], **STABLE)) == [["req=gpu-0"]]
    with pytest.raises(AllocationError, match="DRAConsumableCapacity"):  # the incubating allocator refuses them
        run(core, objects, [claim("c", request)], DRAConsumableCapacity=False)


def test_the_stable_allocator_shows_allow_multiple_allocations_as_false_to_cel(core: AllocatorFactory) -> None:
    selector = [{"cel": {"expression": "device.allowMultipleAllocations"}}]
    objects = [GPU_CLASS, resource_slice("node-1", [dev("gpu-0", allowMultipleAllocations=True)])]
    claims = [claim("c", exactly("req", selectors=selector))]
    assert not run(core, objects, claims, **STABLE).fits
    assert devices_of(run(core, objects, claims, DRAConsumableCapacity=False)) == [["req=gpu-0"]]
    assert devices_of(run(core, objects, claims)) == [["req=gpu-0"]]


# --- D-4381-9: per-device node selection: selectors before the device's node -------------------------------

MODEL = f'device.attributes["{DRIVER}"].model == "a100"'
PER_DEVICE = resource_slice("shared", [
    dev("far", nodeName="node-2"),  # no model attribute: the selector errs on it
    dev("near", nodeName="node-1", attributes={"model": {"string": "a100"}}),
], perDeviceNodeSelection=True)


def test_a_device_of_another_node_in_a_per_device_slice_is_evaluated_first(core: AllocatorFactory) -> None:
    claims = [claim("c", exactly("req", selectors=[{"cel": {"expression": MODEL}}]))]
    with pytest.raises(AllocationError, match="far"):
        run(core, [GPU_CLASS, PER_DEVICE], claims)


def test_such_a_device_after_the_one_chosen_is_never_reached(core: AllocatorFactory) -> None:
    reordered = resource_slice("shared", list(reversed(PER_DEVICE["spec"]["devices"])), perDeviceNodeSelection=True)
    claims = [claim("c", exactly("req", selectors=[{"cel": {"expression": MODEL}}]))]
    assert devices_of(run(core, [GPU_CLASS, reordered], claims)) == [["req=near"]]


def test_all_mode_lists_every_device_of_a_reaching_per_device_slice(core: AllocatorFactory) -> None:
    reordered = resource_slice("shared", list(reversed(PER_DEVICE["spec"]["devices"])), perDeviceNodeSelection=True)
    claims = [claim("c", exactly("req", allocationMode="All", selectors=[{"cel": {"expression": MODEL}}]))]
    with pytest.raises(AllocationError, match="far"):
        run(core, [GPU_CLASS, reordered], claims)


def test_the_columnar_pass_over_all_nodes_answers_the_same() -> None:
    """The DRA plugin's path: verdicts for every node first (the whole-cluster candidates), then the search."""
    core = ColumnarAllocator(store_with(GPU_CLASS, PER_DEVICE), gates())
    claims = [claim("c", exactly("req", selectors=[{"cel": {"expression": MODEL}}]))]
    nodes = [node("node-1"), node("node-3")]
    verdicts = core.feasible_nodes(nodes, claims)
    assert verdicts[0] is None  # only the search can tell
    with pytest.raises(AllocationError, match="far"):
        core.allocate(nodes[0], claims)
    assert not core.allocate(nodes[1], claims).fits  # the slice does not reach node-3
