"""Differential property tests: hypothesis builds clusters (pools over nodes, generations, incomplete and
invalid pools, counters, taints, binding conditions, multi-allocatable devices with request policies, list-type
attributes, allocated claims and shares) and claims (counts, All, firstAvailable, selectors, admin access,
tolerations, capacity requests, match and distinct constraints), and the polars core must agree with the oracle
on every node: the same error, or the same verdict and exactly the same allocations (shareIDs aside, which are
fresh random UUIDs in each core); where the polars core settles a node by counting (`feasible`), that verdict
too."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.columnar import ColumnarAllocator
from draconform.reference.allocator.interface import AllocationError, Allocator
from draconform.reference.allocator.oracle import OracleAllocator
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.sut import Obj

from .helpers import claim, device_class, node

DRIVERS = ("a.example.com", "b.example.com")
NODES = [node("node-0", rack="r0"), node("node-1", rack="r0"), node("node-2", rack="r1")]
DEVICE_NAMES = ("d0", "d1", "d2", "d3", "d4", "d5")
SELECTORS = (
    'device.attributes["a.example.com"].numa == 0',  # a runtime error on devices without numa
    'has(device.attributes["a.example.com"].numa) && device.attributes["a.example.com"].numa == 1',
    'device.capacity["a.example.com"].mem.isGreaterThan(quantity("8Gi"))',
    '!has(device.attributes["b.example.com"].model) || device.attributes["b.example.com"].model != "x"',
    'device.driver.startsWith("b")',
    'device.attributes["b.example.com"].model == "x"',  # read without CEL where model is a string; else an error
    'device.driver == "b.example.com"',  # a column comparison in the polars core
)
GATES = ("DRAPrioritizedList", "DRAAdminAccess", "DRADeviceTaints", "DRAPartitionableDevices",
         "DRADeviceBindingConditions", "DRAConsumableCapacity", "DRADeviceCompatibilityGroups")
POLICIES = (None, {"default": "4Gi", "validRange": {"min": "2Gi", "step": "2Gi"}},
            {"default": "2Gi", "validValues": ["2Gi", "4Gi"]})
SETTINGS = settings(max_examples=300, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def one_in(draw: st.DrawFn, n: int) -> bool:
    """True about once in n draws (hypothesis favours small integers, so not `integers(0, n) == 0`)."""
    return bool(draw(st.sampled_from(range(n))) == n - 1)


@st.composite
def devices(draw: st.DrawFn, driver: str, counter_sets: list[str], prefix: str) -> list[Obj]:
    names = [prefix + name for name in draw(st.lists(st.sampled_from(DEVICE_NAMES), max_size=5, unique=True))]
    if one_in(draw, 20) and names:
        names.append(names[0])  # now and then a duplicate name: an invalid pool
    result = []
    for name in names:
        device: Obj = {"name": name}
        attributes: Obj = {}
        if draw(st.booleans()):
            attributes["numa"] = {"int": draw(st.integers(0, 1))}
        if draw(st.booleans()):
            attributes["model"] = {"string": draw(st.sampled_from(["x", "y"]))}
        if draw(st.booleans()):
            attributes[f"{DRIVERS[0]}/numa"] = {"int": draw(st.integers(0, 1))}
        if one_in(draw, 3):  # a list-type attribute, compared as a set by constraints
            attributes["numas"] = {"ints": draw(st.lists(st.integers(0, 2), min_size=1, max_size=2, unique=True))}
        if attributes:
            device["attributes"] = attributes
        device["capacity"] = {"mem": {"value": draw(st.sampled_from(["4Gi", "16Gi", "16384Mi"]))}}
        if one_in(draw, 3):  # KEP-5075: shared by capacity, sometimes under a request policy
            device["allowMultipleAllocations"] = True
            policy = draw(st.sampled_from(POLICIES))
            if policy is not None:
                device["capacity"]["mem"]["requestPolicy"] = policy
        if one_in(draw, 5):
            device["taints"] = [{"key": draw(st.sampled_from(["k1", "k2"])),
                                 "effect": draw(st.sampled_from(["NoSchedule", "NoExecute", "None"]))}]
        if one_in(draw, 6):
            device["bindingConditions"] = ["x.example.com/ready"]
            device["bindingFailureConditions"] = ["x.example.com/failed"]
            if draw(st.booleans()):
                device["bindsToNode"] = True
        if counter_sets and draw(st.booleans()):
            counter_set = "missing" if one_in(draw, 20) else draw(st.sampled_from(counter_sets))
            device["consumesCounters"] = [{"counterSet": counter_set, "counters": {
                "other" if one_in(draw, 20) else "mem":
                    {"value": draw(st.sampled_from(["2", "4", "8"]))}}}]
            if draw(st.booleans()):  # KEP-5963 groups, [] included (the same as none)
                device["consumesCounters"][0]["compatibilityGroups"] = draw(
                    st.sampled_from([[], ["a"], ["b"], ["a", "b"]]))
        result.append(device)
    return result


@st.composite
def where(draw: st.DrawFn) -> Obj:
    kind = draw(st.sampled_from(["node", "node", "all", "selector"]))
    if kind == "node":
        return {"nodeName": draw(st.sampled_from([n["metadata"]["name"] for n in NODES]))}
    if kind == "all":
        return {"allNodes": True}
    rack = draw(st.sampled_from(["r0", "r1"]))
    return {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "rack", "operator": "In", "values": [rack]}]}]}}


@st.composite
def pools(draw: st.DrawFn) -> list[Obj]:
    """Slices of a few pools; some pools with counters, an older generation, or a wrong slice count."""
    slices: list[Obj] = []
    for index in range(draw(st.integers(1, 4))):
        driver = draw(st.sampled_from(DRIVERS))
        pool = f"pool-{index}"
        generation = draw(st.integers(1, 2))
        with_counters = one_in(draw, 3)
        device_slices = draw(st.integers(1, 2))
        total = device_slices + (1 if with_counters else 0)
        declared = total + 1 if one_in(draw, 10) else total
        common = {"driver": driver, "pool": {"name": pool, "generation": generation, "resourceSliceCount": declared}}
        counter_sets = []
        if with_counters:
            counter_sets = ["cs"]
            slices.append({"metadata": {"name": f"{pool}-counters"}, "spec": {
                **common, **draw(where()),
                "sharedCounters": [{"name": "cs", "counters": {"mem": {"value": draw(st.sampled_from(["8", "12"]))}}}],
            }})
        for part in range(device_slices):
            slices.append({"metadata": {"name": f"{pool}-{part}"}, "spec": {
                **common, **draw(where()), "devices": draw(devices(driver, counter_sets, f"s{part}-"))}})
        if one_in(draw, 5):  # an older generation: complete, or in part (then left out), where it alone reaches
            slices.append({"metadata": {"name": f"{pool}-old"}, "spec": {
                **common, "pool": {**common["pool"], "generation": generation - 1,
                                   "resourceSliceCount": draw(st.sampled_from([1, 1, 2]))},
                **draw(where()), "devices": draw(devices(driver, [], "old-"))}})
    for obj in slices:
        obj.update({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice"})
        if not obj["spec"].get("devices"):
            obj["spec"].pop("devices", None)
    return slices


@st.composite
def request_spec(draw: st.DrawFn, admin: bool) -> Obj:
    spec: Obj = {"deviceClassName": draw(st.sampled_from(["any", "any", "a-only"]))}
    if one_in(draw, 6):
        spec["allocationMode"] = "All"
    else:
        spec["count"] = draw(st.sampled_from([1, 1, 1, 2, 3]))
    if one_in(draw, 3):
        spec["selectors"] = [{"cel": {"expression": draw(st.sampled_from(SELECTORS))}}]
    if admin and one_in(draw, 6):
        spec["adminAccess"] = True
    if one_in(draw, 4):
        spec["capacity"] = {"requests": draw(st.sampled_from([
            {"mem": "1Gi"}, {"mem": "1500Mi"}, {"a.example.com/mem": "3Gi"}, {"mem": "8Gi"}, {"cores": "1"}]))}
    if one_in(draw, 4):
        spec["tolerations"] = [draw(st.sampled_from([
            {"key": "k1", "operator": "Exists"}, {"operator": "Exists", "effect": "NoSchedule"},
            {"key": "k2", "operator": "Equal", "value": ""}]))]
    return spec


@st.composite
def claims(draw: st.DrawFn, prefix: str, max_claims: int) -> list[Obj]:
    result = []
    for index in range(draw(st.integers(1, max_claims))):
        requests = []
        for r in range(draw(st.integers(1, 2))):
            if one_in(draw, 4):
                subs = [{"name": f"s{s}", **draw(request_spec(admin=False))} for s in range(draw(st.integers(1, 3)))]
                requests.append({"name": f"r{r}", "firstAvailable": subs})
            else:
                requests.append({"name": f"r{r}", "exactly": draw(request_spec(admin=True))})
        constraints = []
        if one_in(draw, 3):
            kind = draw(st.sampled_from(["matchAttribute", "distinctAttribute"]))
            constraint: Obj = {kind: f"{DRIVERS[0]}/{draw(st.sampled_from(['numa', 'numas']))}"}
            if draw(st.booleans()):
                constraint["requests"] = [requests[0]["name"]]
            constraints.append(constraint)
        result.append(claim(f"{prefix}-{index}", *requests, constraints=constraints))
    return result


def allocate(allocator: Allocator, target: Obj, pending: list[Obj], assumed: list[Obj]) -> list[Obj] | str:
    """The allocations, or what went wrong: the cores may word their reasons differently."""
    try:
        answer = allocator.allocate(target, pending, assumed)
    except AllocationError:
        return "AllocationError"
    if answer.allocations is None:
        return "does not fit"
    for allocation in answer.allocations:
        for result in allocation["devices"]["results"]:
            if "shareID" in result:
                result["shareID"] = "00000000-0000-4000-8000-000000000000"  # each core draws its own
    return answer.allocations


def verdict(columnar: ColumnarAllocator, target: Obj, pending: list[Obj]) -> str | None:
    """The polars core's columnar verdict, where it gives one: fits, does not fit, or the error."""
    try:
        found = columnar.feasible(target, pending)
    except AllocationError:
        return "AllocationError"
    return None if found is None else "fits" if found.fits else "does not fit"


@st.composite
def clusters(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "slices": draw(pools()),
        "pending": draw(claims("claim", 2)),
        "gates": {gate: not one_in(draw, 10) for gate in GATES},
        "held_fraction": draw(st.integers(0, 3)),
        "build_first": draw(st.booleans()),
    }


def classes() -> list[Obj]:
    return [device_class("any", 'device.driver.endsWith(".example.com")'),
            device_class("a-only", f'device.driver == "{DRIVERS[0]}"')]


def in_use(slices: list[Obj], fraction: int) -> list[Obj]:
    """Allocated claims holding every `fraction`-th device (some with admin access)."""
    if not fraction:
        return []
    held = []
    for slice_index, slice_ in enumerate(slices):
        for device_index, device in enumerate(slice_["spec"].get("devices") or []):
            if (slice_index + device_index) % (fraction + 1) == 0:
                result = {"request": "r", "driver": slice_["spec"]["driver"], "pool": slice_["spec"]["pool"]["name"],
                          "device": device["name"]}
                if (slice_index + device_index) % 5 == 4:
                    result["adminAccess"] = True
                elif device.get("allowMultipleAllocations") and (slice_index + device_index) % 2:
                    result["shareID"] = f"00000000-0000-4000-8000-{slice_index:06d}{device_index:06d}"
                    result["consumedCapacity"] = {"mem": "2Gi"}
                declared = {c["counterSet"]: c.get("compatibilityGroups") or []
                            for c in device.get("consumesCounters") or []}
                if any(declared.values()) and (slice_index + device_index) % 3:  # else: as an older scheduler left it
                    result["compatibilityGroups"] = declared
                request = {"name": "r", "exactly": {"deviceClassName": "any"}}
                held.append(claim(f"held-{slice_index}-{device_index}", request,
                                  allocation={"devices": {"results": [result]}}))
    return held


@SETTINGS
@given(clusters())
def test_the_polars_core_agrees_with_the_oracle(cluster: dict[str, Any]) -> None:
    gates = FeatureGates(cluster["gates"])
    store = Store(FakeClock())
    columnar = ColumnarAllocator(store, gates) if cluster["build_first"] else None
    objects = classes() + cluster["slices"] + in_use(cluster["slices"], cluster["held_fraction"])
    for obj in objects:
        store.load(obj)
    if columnar is None:
        columnar = ColumnarAllocator(store, gates)
    oracle = OracleAllocator(store, gates)
    for target in NODES:
        expected = allocate(oracle, target, cluster["pending"], [])
        assert verdict(columnar, target, cluster["pending"]) in (None, "fits" if isinstance(expected, list) else
                                                                  expected), target["metadata"]["name"]
        assert allocate(columnar, target, cluster["pending"], []) == expected, target["metadata"]["name"]


@SETTINGS
@given(clusters(), st.integers(0, 2))
def test_they_agree_as_claims_are_allocated_one_after_another(cluster: dict[str, Any], node_index: int) -> None:
    """Allocate claims one at a time, keeping earlier ones as `assumed` or writing them to the store, so the
    columnar frames follow claim updates through the watch."""
    gates = FeatureGates(cluster["gates"])
    store = Store(FakeClock())
    for obj in classes() + cluster["slices"]:
        store.load(obj)
    columnar, oracle = ColumnarAllocator(store, gates), OracleAllocator(store, gates)
    target = NODES[node_index]
    assumed: list[Obj] = []
    for index, pending in enumerate(cluster["pending"] * 3):
        pending = {**pending, "metadata": {**pending["metadata"], "name": f"c-{index}"}}
        expected = allocate(oracle, target, [pending], assumed)
        assert allocate(columnar, target, [pending], assumed) == expected
        if isinstance(expected, list):
            done = {**pending, "status": {"allocation": expected[0]}}
            if index % 2:
                assumed.append(done)
            else:
                store.load(done)
