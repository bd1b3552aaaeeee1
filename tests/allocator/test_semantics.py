"""The allocation rules of issue 4, each on both cores: firstAvailable, All, admin access, taints, counters,
constraints, invalid and incomplete pools, the 32-device limit, binding conditions and configuration."""

from __future__ import annotations

from typing import Any

import pytest

from draconform.reference.allocator.interface import AllocationError, AllocatorFactory, NodeAllocation

from .helpers import (
    DRIVER,
    GPU_CLASS,
    allocated,
    claim,
    dev,
    device_class,
    exactly,
    first_available,
    gates,
    node,
    picked,
    resource_slice,
    store_with,
)

NODE = node("node-1")


def run(core: AllocatorFactory, objects: list[dict[str, Any]], claims: list[dict[str, Any]],
        assumed: list[dict[str, Any]] | None = None, **gate_values: bool) -> NodeAllocation:
    return core(store_with(*objects), gates(**gate_values)).allocate(NODE, claims, assumed or [])


def devices_of(answer: NodeAllocation) -> list[list[str]]:
    assert answer.allocations is not None, answer.reasons
    return [[f"{r[0]}={r[3]}" for r in picked(a)] for a in answer.allocations]


def sel(expression: str) -> list[dict[str, Any]]:
    return [{"cel": {"expression": expression}}]


def mem(n: int) -> dict[str, Any]:
    return {"mem": {"int": n}}


# --- firstAvailable ---------------------------------------------------------------------------------------

def test_first_available_takes_the_first_subrequest_that_fits(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("small", attributes=mem(16)), dev("big", attributes=mem(80))])]
    large = sel(f'device.attributes["{DRIVER}"].mem >= 80')
    request = first_available("gpu", exactly("large", selectors=large, count=2),
                              exactly("one", selectors=sel(f'device.attributes["{DRIVER}"].mem >= 40')))
    assert devices_of(run(core, objects, [claim("c", request)])) == [["gpu/one=big"]]


def test_first_available_backtracks_when_a_later_request_fails(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a", attributes=mem(80)), dev("b", attributes=mem(16))])]
    requests = [first_available("first", exactly("two", count=2), exactly("small", selectors=sel(
                    f'device.attributes["{DRIVER}"].mem < 40'))),
                exactly("second", selectors=sel(f'device.attributes["{DRIVER}"].mem >= 80'))]
    assert devices_of(run(core, objects, [claim("c", *requests)])) == [["first/small=b", "second=a"]]


def test_first_available_needs_its_gate(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a")])]
    with pytest.raises(AllocationError, match="DRAPrioritizedList"):
        run(core, objects, [claim("c", first_available("r", exactly("x")))], DRAPrioritizedList=False)


# --- All ----------------------------------------------------------------------------------------------------

def test_all_takes_every_matching_device(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a"), dev("b"), dev("c")])]
    answer = run(core, objects, [claim("c", exactly("req", allocationMode="All"))])
    assert devices_of(answer) == [["req=a", "req=b", "req=c"]]


def test_all_does_not_fit_when_a_matching_device_is_in_use(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a"), dev("b")]),
               claim("other", exactly("req"), allocation=allocated((DRIVER, "node-1", "b")))]
    assert not run(core, objects, [claim("c", exactly("req", allocationMode="All"))]).fits


def test_all_over_an_incomplete_pool_is_an_error(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("s-0", [dev("a")], pool="p", count=2)]
    with pytest.raises(AllocationError, match="incomplete"):
        run(core, objects, [claim("c", exactly("req", allocationMode="All"))])


def test_all_with_no_matching_device_does_not_fit(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a")])]
    request = exactly("req", allocationMode="All", selectors=sel('device.driver == "other.example.com"'))
    assert not run(core, objects, [claim("c", request)]).fits


# --- incomplete and invalid pools ------------------------------------------------------------------------

def test_an_incomplete_pool_is_never_allocated_from(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("s-0", [dev("a")], pool="p", count=2)]
    assert not run(core, objects, [claim("c", exactly("req"))]).fits


def test_a_pool_completed_by_its_second_slice_is_used(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("s-0", [dev("a")], pool="p", count=2),
               resource_slice("s-1", [dev("b")], pool="p", count=2, allNodes=True)]
    assert devices_of(run(core, objects, [claim("c", exactly("req", count=2))])) == [["req=a", "req=b"]]


def test_an_invalid_pool_is_skipped_when_another_pool_satisfies_the_claim(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS,
               resource_slice("a-0", [dev("x")], pool="a", count=2),
               resource_slice("a-1", [dev("x")], pool="a", count=2),
               resource_slice("b", [dev("y")])]
    assert devices_of(run(core, objects, [claim("c", exactly("req"))])) == [["req=y"]]


def test_an_invalid_pool_only_fails_the_node_with_the_reason(core: AllocatorFactory) -> None:
    """Upstream's ErrFailedAllocationOnNode: "does not fit here", other nodes are still tried."""
    objects = [GPU_CLASS,
               resource_slice("a-0", [dev("x")], pool="a", count=2),
               resource_slice("a-1", [dev("x")], pool="a", count=2)]
    answer = run(core, objects, [claim("c", exactly("req"))])
    assert not answer.fits
    assert "invalid resource pools" in answer.reasons["c"]


def test_consuming_an_unknown_counter_makes_a_pool_invalid(core: AllocatorFactory) -> None:
    counters = resource_slice("p-counters", [], pool="p", count=2,
                              sharedCounters=[{"name": "mem", "counters": {"gb": {"value": "80"}}}], nodeName="node-1")
    devices = resource_slice("p-devices", [dev("part", consumesCounters=[
        {"counterSet": "mem", "counters": {"nope": {"value": "10"}}}])], pool="p", count=2)
    answer = run(core, [GPU_CLASS, counters, devices], [claim("c", exactly("req"))])
    assert not answer.fits
    assert "unknown counter" in answer.reasons["c"]


def test_an_incomplete_pool_is_not_checked_for_validity(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS,
               resource_slice("a-0", [dev("x")], pool="a", count=3),
               resource_slice("a-1", [dev("x")], pool="a", count=3)]
    answer = run(core, objects, [claim("c", exactly("req"))])
    assert not answer.fits
    assert "invalid" not in answer.reasons["c"]
    with pytest.raises(AllocationError, match="incomplete"):
        run(core, objects, [claim("c", exactly("req", allocationMode="All"))])


# --- in use and admin access ---------------------------------------------------------------------------------

def test_admin_access_may_take_a_device_in_use_and_says_so(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a")]),
               claim("other", exactly("req"), allocation=allocated((DRIVER, "node-1", "a")))]
    answer = run(core, objects, [claim("c", exactly("req", adminAccess=True))])
    assert answer.allocations is not None
    assert answer.allocations[0]["devices"]["results"][0]["adminAccess"] is True


def test_admin_access_allocations_do_not_hold_the_device(core: AllocatorFactory) -> None:
    admin = allocated((DRIVER, "node-1", "a"))
    admin["devices"]["results"][0]["adminAccess"] = True
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a")]), claim("monitor", exactly("req"), allocation=admin)]
    assert devices_of(run(core, objects, [claim("c", exactly("req"))])) == [["req=a"]]


def test_admin_access_needs_its_gate(core: AllocatorFactory) -> None:
    with pytest.raises(AllocationError, match="DRAAdminAccess"):
        run(core, [GPU_CLASS, resource_slice("node-1", [dev("a")])],
            [claim("c", exactly("req", adminAccess=True))], DRAAdminAccess=False)


def test_one_claim_never_gets_a_device_twice(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a")])]
    request = [exactly("x", adminAccess=True), exactly("y", adminAccess=True)]
    assert not run(core, objects, [claim("c", *request)]).fits


# --- taints ----------------------------------------------------------------------------------------------

TAINTED = [dev("bad", taints=[{"key": "health", "value": "degraded", "effect": "NoSchedule"}]), dev("good")]


def test_a_no_schedule_taint_keeps_the_device_out(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", TAINTED)]
    assert devices_of(run(core, objects, [claim("c", exactly("req"))])) == [["req=good"]]


def test_a_tolerated_taint_admits_the_device_and_the_toleration_is_copied(core: AllocatorFactory) -> None:
    toleration = {"key": "health", "operator": "Exists", "effect": "NoSchedule"}
    objects = [GPU_CLASS, resource_slice("node-1", TAINTED)]
    answer = run(core, objects, [claim("c", exactly("req", tolerations=[toleration]))])
    assert answer.allocations is not None
    result = answer.allocations[0]["devices"]["results"][0]
    assert (result["device"], result["tolerations"]) == ("bad", [toleration])


def test_a_none_taint_does_not_block(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a", taints=[{"key": "k", "effect": "None"}])])]
    assert devices_of(run(core, objects, [claim("c", exactly("req"))])) == [["req=a"]]


def test_taints_are_ignored_with_the_gate_off(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", TAINTED)]
    assert devices_of(run(core, objects, [claim("c", exactly("req"))], DRADeviceTaints=False)) == [["req=bad"]]


# --- counters ---------------------------------------------------------------------------------------------

def partitioned(*parts: tuple[str, int], total: int = 80) -> list[dict[str, Any]]:
    counters = resource_slice("gpu-counters", [], pool="gpu", count=2, nodeName="node-1",
                              sharedCounters=[{"name": "gpu-0", "counters": {"memory": {"value": f"{total}Gi"}}}])
    devices = resource_slice("gpu-devices", [
        dev(name, consumesCounters=[{"counterSet": "gpu-0", "counters": {"memory": {"value": f"{gi}Gi"}}}])
        for name, gi in parts], pool="gpu", count=2)
    return [GPU_CLASS, counters, devices]


def test_counters_limit_what_partitions_fit_together(core: AllocatorFactory) -> None:
    objects = partitioned(("whole", 80), ("half-0", 40), ("half-1", 40))
    assert devices_of(run(core, objects, [claim("c", exactly("req", count=2))])) == [["req=half-0", "req=half-1"]]


def test_counters_consumed_by_allocated_devices_are_not_available(core: AllocatorFactory) -> None:
    objects = partitioned(("whole", 80), ("half-0", 40), ("half-1", 40))
    objects.append(claim("other", exactly("req"), allocation=allocated((DRIVER, "gpu", "half-0"))))
    assert devices_of(run(core, objects, [claim("c", exactly("req"))])) == [["req=half-1"]]


def test_counters_across_claims_of_one_attempt(core: AllocatorFactory) -> None:
    two_claims = [claim("a", exactly("req")), claim("b", exactly("req"))]
    assert not run(core, partitioned(("whole", 80), ("half-0", 40)), two_claims).fits
    assert devices_of(run(core, partitioned(("whole", 80), ("half-0", 40), total=120), two_claims)) == \
        [["req=whole"], ["req=half-0"]]


def test_devices_consuming_counters_need_the_partitionable_gate(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("part", consumesCounters=[
        {"counterSet": "s", "counters": {"c": {"value": "1"}}}]), dev("plain")])]
    answer = run(core, objects, [claim("c", exactly("req"))], DRAPartitionableDevices=False)
    assert devices_of(answer) == [["req=plain"]]


# --- constraints ------------------------------------------------------------------------------------------

def numa(name: str, value: int) -> dict[str, Any]:
    return dev(name, attributes={"numa": {"int": value}})


def test_match_attribute_backtracks_to_devices_that_agree(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [numa("a", 0), numa("b", 1), numa("c", 1)])]
    constraint = [{"matchAttribute": f"{DRIVER}/numa"}]
    answer = run(core, objects, [claim("c", exactly("x"), exactly("y"), constraints=constraint)])
    assert devices_of(answer) == [["x=b", "y=c"]]


def test_distinct_attribute_needs_different_values(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [numa("a", 0), numa("b", 0), numa("c", 1)])]
    distinct = [{"distinctAttribute": f"{DRIVER}/numa"}]
    answer = run(core, objects, [claim("c", exactly("x", count=2), constraints=distinct)])
    assert devices_of(answer) == [["x=a", "x=c"]]


def test_a_device_without_the_constrained_attribute_is_skipped(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("plain"), numa("a", 0)])]
    answer = run(core, objects, [claim("c", exactly("x"), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])])
    assert devices_of(answer) == [["x=a"]]


def test_a_constraint_only_binds_the_requests_it_names(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [numa("a", 0), numa("b", 1), dev("plain")])]
    constraint = [{"matchAttribute": f"{DRIVER}/numa", "requests": ["x", "y"]}]
    answer = run(core, objects, [claim("c", exactly("z"), exactly("x"), exactly("y"), constraints=constraint)])
    assert not answer.fits or devices_of(answer)[0][0] == "z=a"
    objects[1]["spec"]["devices"].append(numa("d", 1))
    answer = run(core, objects, [claim("c", exactly("z"), exactly("x"), exactly("y"), constraints=constraint)])
    assert devices_of(answer) == [["z=a", "x=b", "y=d"]]


# --- limits -------------------------------------------------------------------------------------------------

def test_more_than_32_devices_in_one_claim_is_an_error(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev(f"d-{i}") for i in range(40)])]
    with pytest.raises(AllocationError, match="claim limit"):
        run(core, objects, [claim("c", exactly("x", count=20), exactly("y", count=13))])
    assert devices_of(run(core, objects, [claim("c", exactly("x", count=20), exactly("y", count=12))]))


# --- binding conditions (KEP-5007) -------------------------------------------------------------------------

ATTACH = {"bindingConditions": ["example.com/attached"], "bindingFailureConditions": ["example.com/failed"]}


def test_devices_with_binding_conditions_are_never_picked_with_the_gates_off(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("fabric", **ATTACH)])]
    assert not run(core, objects, [claim("c", exactly("req"))], DRADeviceBindingConditions=False).fits


def test_pools_with_binding_conditions_come_last_and_conditions_are_copied(core: AllocatorFactory) -> None:
    """D-5007-8 as upstream: the whole pool holding a device with conditions goes after the other
    pools, and inside it the device order stands."""
    objects = [GPU_CLASS, resource_slice("a-pool", [dev("fabric", **ATTACH), dev("plain")], allNodes=True),
               resource_slice("b-pool", [dev("other")], allNodes=True)]
    answer = run(core, objects, [claim("c", exactly("req", count=2))])
    assert devices_of(answer) == [["req=other", "req=fabric"]]
    assert answer.allocations is not None
    results = answer.allocations[0]["devices"]["results"]
    assert results[1]["bindingConditions"] == ["example.com/attached"]
    assert results[1]["bindingFailureConditions"] == ["example.com/failed"]
    assert "bindingConditions" not in results[0]


def test_a_plain_device_of_a_pool_with_conditions_waits_for_the_other_pools(core: AllocatorFactory) -> None:
    """D-5007-8: every allocator upstream picks orders such a pool last, whatever the binding gates say (and
    then refuses its devices with conditions when they are off); only the stable allocator, picked when
    DRAConsumableCapacity is off as well, keeps name order."""
    objects = [GPU_CLASS, resource_slice("a-pool", [dev("plain-a"), dev("fabric", **ATTACH)], allNodes=True),
               resource_slice("b-pool", [dev("plain-b")], allNodes=True)]
    assert devices_of(run(core, objects, [claim("c", exactly("req"))])) == [["req=plain-b"]]
    off = run(core, objects, [claim("c", exactly("req"))], DRADeviceBindingConditions=False)
    assert devices_of(off) == [["req=plain-b"]]
    stable = run(core, objects, [claim("c", exactly("req"))], DRADeviceBindingConditions=False,
                 DRAConsumableCapacity=False)
    assert devices_of(stable) == [["req=plain-a"]]


def test_binds_to_node_pins_a_network_device_to_the_node(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("fabric", [dev("a", bindsToNode=True, **ATTACH)], allNodes=True)]
    answer = run(core, objects, [claim("c", exactly("req"))])
    assert answer.allocations is not None
    assert answer.allocations[0]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["node-1"]


# --- configuration -----------------------------------------------------------------------------------------

def test_class_and_claim_config_are_copied_into_the_allocation(core: AllocatorFactory) -> None:
    class_config = {"opaque": {"driver": DRIVER, "parameters": {"mode": "fast"}}}
    claim_config = {"requests": ["x"], "opaque": {"driver": DRIVER, "parameters": {"sharing": "none"}}}
    objects = [device_class("gpu", f'device.driver == "{DRIVER}"', config=[class_config]),
               resource_slice("node-1", [dev("a")])]
    answer = run(core, objects, [claim("c", exactly("x"), config=[claim_config])])
    assert answer.allocations is not None
    # Both reach the claim's only request, so (as upstream 1.37) neither names it.
    body = {k: v for k, v in claim_config.items() if k != "requests"}
    assert answer.allocations[0]["devices"]["config"] == [
        {"source": "FromClass", **class_config},
        {"source": "FromClaim", **body},
    ]


def test_a_config_keeps_its_requests_unless_it_reaches_every_request(core: AllocatorFactory) -> None:
    class_config = {"opaque": {"driver": DRIVER, "parameters": {"mode": "fast"}}}
    scoped = {"requests": ["x"], "opaque": {"driver": DRIVER, "parameters": {"n": 1}}}
    # Two entries in a claim of two requests, yet only request y is reached: a count would clear it.
    subrequests = {"requests": ["y/big", "y/small"], "opaque": {"driver": DRIVER, "parameters": {"n": 2}}}
    objects = [device_class("gpu", f'device.driver == "{DRIVER}"', config=[class_config]),
               resource_slice("node-1", [dev("a"), dev("b")])]
    y = {"name": "y", "firstAvailable": [{"name": "big", "deviceClassName": "gpu", "count": 5},
                                         {"name": "small", "deviceClassName": "gpu"}]}
    answer = run(core, objects, [claim("c", exactly("x"), y, config=[scoped, subrequests])])
    assert answer.allocations is not None
    assert answer.allocations[0]["devices"]["config"] == [
        {"source": "FromClass", **class_config},  # used by x and y/small: every request
        {"source": "FromClaim", **scoped},
        {"source": "FromClaim", **subrequests},
    ]


# --- CEL ----------------------------------------------------------------------------------------------------

def test_a_missing_attribute_is_a_cel_runtime_error(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a")])]
    with pytest.raises(AllocationError, match="CEL runtime error"):
        run(core, objects, [claim("c", exactly("req", selectors=sel(f'device.attributes["{DRIVER}"].mem > 1')))])


def test_an_unknown_domain_reads_as_an_empty_map(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a")])]
    request = exactly("req", selectors=sel('!has(device.attributes["other.example.com"].mem)'))
    assert devices_of(run(core, objects, [claim("c", request)])) == [["req=a"]]


def test_quantity_and_semver_functions(core: AllocatorFactory) -> None:
    device = dev("a", attributes={"driverVersion": {"version": "1.2.3"}}, capacity={"memory": {"value": "40Gi"}})
    objects = [GPU_CLASS, resource_slice("node-1", [device])]
    expression = (f'device.capacity["{DRIVER}"].memory.isGreaterThan(quantity("32Gi")) && '
                  f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40960Mi")) == 0 && '
                  f'device.attributes["{DRIVER}"].driverVersion.major() == 1 && '
                  f'device.attributes["{DRIVER}"].driverVersion.isLessThan(semver("1.10.0"))')
    assert devices_of(run(core, objects, [claim("c", exactly("req", selectors=sel(expression)))])) == [["req=a"]]


def test_an_expression_over_10_kib_is_refused(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a")])]
    long = " || ".join(['device.driver == "x"'] * 600)
    with pytest.raises(AllocationError, match="at most 10240"):
        run(core, objects, [claim("c", exactly("req", selectors=sel(long)))])


def test_a_runaway_expression_is_stopped_with_a_clear_error(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a")])]
    big = "[" + ",".join(["1"] * 200) + "]"
    runaway = f"{big}.all(x, {big}.all(y, {big}.all(z, true)))"
    with pytest.raises(AllocationError, match="iteration budget"):
        run(core, objects, [claim("c", exactly("req", selectors=sel(runaway)))])


def test_a_selector_that_is_not_boolean_is_an_error(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a")])]
    with pytest.raises(AllocationError, match="bool"):
        run(core, objects, [claim("c", exactly("req", selectors=sel("1 + 1")))])


def test_a_selector_whose_values_grow_without_bound_is_stopped(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a")])]
    doubling = '"ab"'
    for level in range(12):  # 16^12 copies of "ab": far beyond any memory
        copies = ", ".join([f"v{level}"] * 16)
        doubling = f'cel.bind(v{level}, {doubling}, [{copies}].join(""))'
    with pytest.raises(AllocationError, match="runaway expression"):
        run(core, objects, [claim("c", exactly("req", selectors=sel(f"size({doubling}) > 0")))])


def test_a_selector_that_does_not_compile_is_an_error(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a")])]
    with pytest.raises(AllocationError, match="compile"):
        run(core, objects, [claim("c", exactly("req", selectors=sel("device.driver ==")))])


# --- upstream's answers where the KEPs are silent (the project's structured-allocation decisions) -----------

ERRS_WITHOUT_MEM = sel(f'device.attributes["{DRIVER}"].mem > 1')  # a CEL runtime error on devices without mem


def test_a_node_fails_at_the_first_request_without_a_candidate_before_a_later_selector_errs(
        core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a"), dev("b")])]
    first = exactly("first", selectors=sel('device.driver == "other.example.com"'))
    answer = run(core, objects, [claim("c", first, exactly("second", selectors=ERRS_WITHOUT_MEM))])
    assert not answer.fits
    with pytest.raises(AllocationError, match="CEL runtime error"):
        run(core, objects, [claim("c", exactly("first"), exactly("second", selectors=ERRS_WITHOUT_MEM))])


def test_selectors_are_not_evaluated_on_devices_in_use_or_after_the_search_is_done(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a"), dev("b", attributes=mem(2)), dev("c")]),
               claim("other", exactly("req"), allocation=allocated((DRIVER, "node-1", "a")))]
    answer = run(core, objects, [claim("c", exactly("req", selectors=ERRS_WITHOUT_MEM))])
    assert devices_of(answer) == [["req=b"]]
    with pytest.raises(AllocationError, match="CEL runtime error"):
        run(core, objects, [claim("c", exactly("req", count=2, selectors=ERRS_WITHOUT_MEM))])


def test_all_includes_a_tainted_matching_device_so_it_does_not_fit(core: AllocatorFactory) -> None:
    taint = {"key": "broken", "effect": "NoSchedule"}
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a"), dev("b", taints=[taint])])]
    assert not run(core, objects, [claim("c", exactly("req", allocationMode="All"))]).fits
    tolerated = exactly("req", allocationMode="All", tolerations=[{"key": "broken", "operator": "Exists"}])
    assert devices_of(run(core, objects, [claim("c", tolerated)])) == [["req=a", "req=b"]]


def test_all_with_a_device_that_breaks_a_constraint_is_an_error(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a", attributes=mem(1)), dev("b", attributes=mem(2))])]
    constraint = [{"matchAttribute": f"{DRIVER}/mem"}]
    with pytest.raises(AllocationError, match="constraint"):
        run(core, objects, [claim("c", exactly("req", allocationMode="All"), constraints=constraint)])


def test_counters_of_a_device_rejected_for_its_taint_stay_free(core: AllocatorFactory) -> None:
    counters = resource_slice("p-counters", [], pool="p", count=2,
                              sharedCounters=[{"name": "gpu", "counters": {"mem": {"value": "8"}}}], nodeName="node-1")
    whole = {"counterSet": "gpu", "counters": {"mem": {"value": "8"}}}
    devices = resource_slice("p-devices", [dev("tainted", consumesCounters=[whole],
                                               taints=[{"key": "k", "effect": "NoSchedule"}]),
                                           dev("clean", consumesCounters=[whole])], pool="p", count=2)
    answer = run(core, [GPU_CLASS, counters, devices], [claim("c", exactly("req"))])
    assert devices_of(answer) == [["req=clean"]]


def test_the_drivers_own_domain_reads_as_an_empty_map_when_computed(core: AllocatorFactory) -> None:
    objects = [GPU_CLASS, resource_slice("node-1", [dev("a", attributes={"other.example.com/x": {"int": 1}})])]
    request = exactly("req", selectors=sel('!("mem" in device.attributes[device.driver])'))
    assert devices_of(run(core, objects, [claim("c", request)])) == [["req=a"]]
