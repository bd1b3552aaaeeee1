"""KEP-5075 consumable capacity in both cores: shares of multi-allocatable devices until their capacity is used
up, rounding before the check, defaults, refusals, admin access, counters taken once, and the gate off."""

from __future__ import annotations

import re
from typing import Any

from draconform.reference.allocator.interface import AllocatorFactory
from draconform.sut import Obj

from .helpers import DRIVER, claim, dev, device_class, exactly, gates, node, picked, resource_slice, store_with

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
GPU = device_class("gpu", f'device.driver == "{DRIVER}"')
MEMORY_POLICY = {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}


def shared_gpu(name: str = "gpu-0", memory: str = "8Gi", policy: Obj | None = MEMORY_POLICY, **extra: Any) -> Obj:
    capacity: Obj = {"value": memory}
    if policy is not None:
        capacity["requestPolicy"] = policy
    return dev(name, allowMultipleAllocations=True, capacity={"memory": capacity}, **extra)


def memory_request(name: str, amount: str | None, **fields: Any) -> Obj:
    if amount is not None:
        fields["capacity"] = {"requests": {"memory": amount}}
    return exactly(name, "gpu", **fields)


def allocate(core: AllocatorFactory, objects: list[Obj], claims: list[Obj], **gate_values: bool) -> list[Obj] | None:
    answer = core(store_with(GPU, *objects), gates(**gate_values)).allocate(node("node-1"), claims)
    return answer.allocations


def results(allocations: list[Obj]) -> list[Obj]:
    return [r for a in allocations for r in a["devices"]["results"]]


def test_a_request_is_rounded_up_before_the_check_and_recorded_rounded(core: AllocatorFactory) -> None:
    slice_ = resource_slice("s", [shared_gpu(memory="2Gi")])
    got = allocate(core, [slice_], [claim("a", memory_request("req", "1500Mi"))])
    assert got is not None
    (result,) = results(got)
    assert result["consumedCapacity"] == {"memory": "2Gi"}  # up to the step, not down to 1Gi
    assert UUID.match(result["shareID"])
    # a second 1500Mi share would need 2Gi more: rounding up is what makes it not fit
    assert allocate(core, [slice_], [claim("a", memory_request("req", "1500Mi")),
                                     claim("b", memory_request("req", "500Mi"))]) is None


def test_several_claims_share_one_device_until_it_is_used_up(core: AllocatorFactory) -> None:
    slice_ = resource_slice("s", [shared_gpu(memory="4Gi")])
    claims = [claim(f"c{i}", memory_request("req", "1Gi")) for i in range(4)]
    got = allocate(core, [slice_], claims)
    assert got is not None
    shares = results(got)
    assert [r["device"] for r in shares] == ["gpu-0"] * 4
    assert len({r["shareID"] for r in shares}) == 4  # a fresh shareID per allocation
    assert allocate(core, [slice_], [*claims, claim("c4", memory_request("req", "1Gi"))]) is None


def test_one_claim_may_take_two_shares_of_one_device(core: AllocatorFactory) -> None:
    slice_ = resource_slice("s", [shared_gpu(memory="4Gi")])
    got = allocate(core, [slice_], [claim("c", memory_request("a", "1Gi"), memory_request("b", "2Gi"))])
    assert got is not None
    assert [(r["device"], r["consumedCapacity"]["memory"]) for r in results(got)] == [("gpu-0", "1Gi"),
                                                                                      ("gpu-0", "2Gi")]


def test_allocated_shares_count_and_gate_off_makes_them_exclusive(core: AllocatorFactory) -> None:
    allocated = claim("old", memory_request("req", "3Gi"), allocation={"devices": {"results": [
        {"request": "req", "driver": DRIVER, "pool": "s", "device": "gpu-0",
         "shareID": "0b7a3c1e-1111-4222-8333-444455556666", "consumedCapacity": {"memory": "3Gi"}}]}})
    slice_ = resource_slice("s", [shared_gpu(memory="4Gi"), dev("gpu-1")])
    got = allocate(core, [slice_, allocated], [claim("new", memory_request("req", "1Gi"))])
    assert got is not None and picked(got[0])[0][3] == "gpu-0"
    assert allocate(core, [slice_, allocated], [claim("new", memory_request("req", "2Gi"))]) is None or \
        picked(allocate(core, [slice_, allocated], [claim("new", memory_request("req", "2Gi"))])[0])[0][3] != "gpu-0"
    # gate off in the scheduler: the shared device is held whole by the old share; gpu-1 is taken instead
    got = allocate(core, [slice_, allocated], [claim("new", exactly("req", "gpu"))], DRAConsumableCapacity=False)
    assert got is not None and picked(got[0])[0][3] == "gpu-1" and "shareID" not in results(got)[0]


def test_gate_off_allocates_a_multi_allocatable_device_whole(core: AllocatorFactory) -> None:
    slice_ = resource_slice("s", [shared_gpu()])
    got = allocate(core, [slice_], [claim("a", exactly("req", "gpu")), claim("b", exactly("req", "gpu"))],
                   DRAConsumableCapacity=False)
    assert got is None  # one device, allocated whole to the first claim
    got = allocate(core, [slice_], [claim("a", exactly("req", "gpu"))], DRAConsumableCapacity=False)
    assert got is not None and "shareID" not in results(got)[0] and "consumedCapacity" not in results(got)[0]


def test_no_amount_takes_the_default_or_the_whole_capacity(core: AllocatorFactory) -> None:
    with_default = resource_slice("s", [shared_gpu(memory="2Gi")])
    got = allocate(core, [with_default], [claim("a", memory_request("req", None)), claim("b", memory_request(
        "req", None))])
    assert got is not None and [r["consumedCapacity"] for r in results(got)] == [{"memory": "1Gi"}] * 2
    without_policy = resource_slice("s", [shared_gpu(memory="2Gi", policy=None)])
    got = allocate(core, [without_policy], [claim("a", memory_request("req", None))])
    assert got is not None and results(got)[0]["consumedCapacity"] == {"memory": "2Gi"}
    assert allocate(core, [without_policy], [claim("a", memory_request("req", None)),
                                             claim("b", memory_request("req", "1Gi"))]) is None


def test_a_request_naming_a_capacity_the_device_lacks_skips_it(core: AllocatorFactory) -> None:
    slice_ = resource_slice("s", [dev("gpu-0", allowMultipleAllocations=True, capacity={"cores": {"value": "8"}}),
                                  shared_gpu("gpu-1")])
    got = allocate(core, [slice_], [claim("a", memory_request("req", "1Gi"))])
    assert got is not None and picked(got[0])[0][3] == "gpu-1"


def test_capacities_a_request_does_not_name_are_consumed_by_default_or_whole(core: AllocatorFactory) -> None:
    device = dev("gpu-0", allowMultipleAllocations=True, capacity={
        "memory": {"value": "8Gi", "requestPolicy": MEMORY_POLICY}, "cores": {"value": "4"}})
    got = allocate(core, [resource_slice("s", [device])], [claim("a", memory_request("req", "2Gi"))])
    assert got is not None and results(got)[0]["consumedCapacity"] == {"memory": "2Gi", "cores": "4"}
    # cores went whole to the first share, so a second one does not fit
    assert allocate(core, [resource_slice("s", [device])], [claim("a", memory_request("req", "2Gi")),
                                                             claim("b", memory_request("req", "2Gi"))]) is None


def test_a_request_no_valid_value_fits_is_refused(core: AllocatorFactory) -> None:
    policy = {"default": "2Gi", "validValues": ["2Gi", "4Gi"]}
    slice_ = resource_slice("s", [shared_gpu(memory="8Gi", policy=policy)])
    got = allocate(core, [slice_], [claim("a", memory_request("req", "3Gi"))])
    assert got is not None and results(got)[0]["consumedCapacity"] == {"memory": "4Gi"}
    assert allocate(core, [slice_], [claim("a", memory_request("req", "5Gi"))]) is None
    ranged = resource_slice("s", [shared_gpu(memory="8Gi", policy={
        "default": "1Gi", "validRange": {"min": "1Gi", "max": "4Gi", "step": "1Gi"}})])
    assert allocate(core, [ranged], [claim("a", memory_request("req", "4100Mi"))]) is None  # 5Gi > max


def test_capacity_requests_filter_ordinary_devices_too(core: AllocatorFactory) -> None:
    slice_ = resource_slice("s", [dev("small", capacity={"memory": {"value": "4Gi"}}),
                                  dev("large", capacity={"memory": {"value": "16Gi"}})])
    got = allocate(core, [slice_], [claim("a", memory_request("req", "8Gi"))])
    assert got is not None and picked(got[0])[0][3] == "large" and "shareID" not in results(got)[0]


def test_admin_access_asks_for_capacity_too(core: AllocatorFactory) -> None:
    slice_ = resource_slice("s", [shared_gpu(memory="4Gi", policy=None)])
    admin = claim("admin", exactly("req", "gpu", adminAccess=True))
    assert allocate(core, [slice_], [admin]) is not None  # alone: the whole capacity is free
    user = claim("user", memory_request("req", "1Gi"))
    assert allocate(core, [slice_], [user, admin]) is None  # without an amount admin access wants it all
    got = allocate(core, [slice_], [user, claim("admin", memory_request("req", "1Gi", adminAccess=True))])
    assert got is not None
    assert results(got)[1]["adminAccess"] is True and UUID.match(results(got)[1]["shareID"])


def test_a_shared_device_takes_its_counters_once(core: AllocatorFactory) -> None:
    counters = resource_slice("counters", [], pool="p", sharedCounters=[
        {"name": "gpu-mem", "counters": {"memory": {"value": "8Gi"}}}], nodeName="node-1", count=2)
    devices = resource_slice("devices", [
        shared_gpu("shared", memory="4Gi", consumesCounters=[{"counterSet": "gpu-mem",
                                                              "counters": {"memory": {"value": "4Gi"}}}]),
        dev("whole", consumesCounters=[{"counterSet": "gpu-mem", "counters": {"memory": {"value": "4Gi"}}}]),
    ], pool="p", count=2)
    claims = [claim(f"c{i}", memory_request("req", "1Gi")) for i in range(4)]
    got = allocate(core, [counters, devices], [*claims, claim("w", exactly("req", "gpu", selectors=[
        {"cel": {"expression": "!device.allowMultipleAllocations"}}]))])
    assert got is not None  # four shares take the counters once (4Gi), the whole device the other 4Gi
    assert [picked(a)[0][3] for a in got] == ["shared"] * 4 + ["whole"]


def test_distinct_attribute_is_enforced_with_the_gate_off(core: AllocatorFactory) -> None:
    slice_ = resource_slice("s", [dev("gpu-0", attributes={"root": {"string": "a"}}),
                                  dev("gpu-1", attributes={"root": {"string": "a"}}),
                                  dev("gpu-2", attributes={"root": {"string": "b"}})])
    spread = claim("c", exactly("req", "gpu", count=2), constraints=[{"distinctAttribute": f"{DRIVER}/root"}])
    for values in ({}, {"DRAConsumableCapacity": False}):
        got = allocate(core, [slice_], [spread], **values)
        assert got is not None and [p[3] for p in picked(got[0])] == ["gpu-0", "gpu-2"]


def test_cel_reads_allow_multiple_allocations(core: AllocatorFactory) -> None:
    slice_ = resource_slice("s", [dev("gpu-0"), shared_gpu("gpu-1")])
    request = exactly("req", "gpu", selectors=[{"cel": {"expression": "device.allowMultipleAllocations"}}])
    got = allocate(core, [slice_], [claim("a", request)])
    assert got is not None and picked(got[0])[0][3] == "gpu-1"
