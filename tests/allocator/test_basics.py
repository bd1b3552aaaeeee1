"""Both allocation cores on the basic shapes the scheduler needs first: selectors, counts, node-local and
network-attached slices, newest generation, devices in use, node selectors of the result."""

from __future__ import annotations

import pytest

from draconform.reference.allocator.interface import AllocationError, AllocatorFactory

from .helpers import (
    DRIVER,
    GPU_CLASS,
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


def test_class_and_request_selectors_pick_the_first_matching_device(core: AllocatorFactory) -> None:
    store = store_with(GPU_CLASS, resource_slice("node-1", [
        dev("gpu-0", attributes={"mem": {"int": 16}}),
        dev("gpu-1", attributes={"mem": {"int": 40}}),
        dev("gpu-2", attributes={"mem": {"int": 80}}),
    ]))
    request = exactly("req", selectors=[{"cel": {"expression": f'device.attributes["{DRIVER}"].mem >= 40'}}])
    answer = core(store, gates()).allocate(node("node-1"), [claim("c", request)])
    assert answer.allocations is not None
    assert picked(answer.allocations[0]) == [("req", DRIVER, "node-1", "gpu-1")]


def test_exact_count_takes_devices_in_slice_order_and_pins_node_local_allocation(core: AllocatorFactory) -> None:
    store = store_with(GPU_CLASS, resource_slice("node-1", [dev("gpu-0"), dev("gpu-1"), dev("gpu-2")]))
    answer = core(store, gates()).allocate(node("node-1"), [claim("c", exactly("req", count=2))])
    assert answer.allocations is not None
    allocation = answer.allocations[0]
    assert [r[3] for r in picked(allocation)] == ["gpu-0", "gpu-1"]
    assert allocation["nodeSelector"] == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}


def test_devices_of_other_nodes_are_not_candidates(core: AllocatorFactory) -> None:
    store = store_with(GPU_CLASS, resource_slice("node-2", [dev("gpu-0")], nodeName="node-2"))
    answer = core(store, gates()).allocate(node("node-1"), [claim("c", exactly("req"))])
    assert not answer.fits
    assert "c" in answer.reasons


def test_all_nodes_slice_gives_an_allocation_without_node_selector(core: AllocatorFactory) -> None:
    store = store_with(GPU_CLASS, resource_slice("fabric", [dev("gpu-0")], allNodes=True))
    answer = core(store, gates()).allocate(node("node-9"), [claim("c", exactly("req"))])
    assert answer.allocations is not None
    assert "nodeSelector" not in answer.allocations[0]


def test_node_selector_slice_matches_labels_and_is_copied_into_the_result(core: AllocatorFactory) -> None:
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["a"]}]}]}
    store = store_with(GPU_CLASS, resource_slice("rack-a", [dev("gpu-0")], nodeSelector=selector))
    allocator = core(store, gates())
    assert not allocator.allocate(node("node-1", rack="b"), [claim("c", exactly("req"))]).fits
    answer = allocator.allocate(node("node-1", rack="a"), [claim("c", exactly("req"))])
    assert answer.allocations is not None
    assert answer.allocations[0]["nodeSelector"] == selector


def test_only_the_newest_generation_of_a_pool_counts(core: AllocatorFactory) -> None:
    store = store_with(
        GPU_CLASS,
        resource_slice("old", [dev("gpu-old")], pool="p", generation=1),
        resource_slice("new", [dev("gpu-new")], pool="p", generation=2),
    )
    answer = core(store, gates()).allocate(node("node-1"), [claim("c", exactly("req"))])
    assert answer.allocations is not None
    assert picked(answer.allocations[0])[0][3] == "gpu-new"


def test_devices_of_allocated_and_assumed_claims_are_in_use(core: AllocatorFactory) -> None:
    store = store_with(
        GPU_CLASS,
        resource_slice("node-1", [dev("gpu-0"), dev("gpu-1"), dev("gpu-2")]),
        claim("first", exactly("req"), allocation=allocated((DRIVER, "node-1", "gpu-0"))),
    )
    assumed = claim("second", exactly("req"), allocation=allocated((DRIVER, "node-1", "gpu-1")))
    answer = core(store, gates()).allocate(node("node-1"), [claim("c", exactly("req"))], [assumed])
    assert answer.allocations is not None
    assert picked(answer.allocations[0])[0][3] == "gpu-2"


def test_claims_of_one_attempt_do_not_share_devices(core: AllocatorFactory) -> None:
    store = store_with(GPU_CLASS, resource_slice("node-1", [dev("gpu-0"), dev("gpu-1")]))
    answer = core(store, gates()).allocate(
        node("node-1"), [claim("a", exactly("req")), claim("b", exactly("req"))])
    assert answer.allocations is not None
    assert [picked(a)[0][3] for a in answer.allocations] == ["gpu-0", "gpu-1"]


def test_missing_device_class_is_an_allocation_error(core: AllocatorFactory) -> None:
    store = store_with(resource_slice("node-1", [dev("gpu-0")]))
    with pytest.raises(AllocationError, match="device class gpu does not exist"):
        core(store, gates()).allocate(node("node-1"), [claim("c", exactly("req"))])
