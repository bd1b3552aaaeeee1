"""A random differential aimed at the inputs where the cores once answered otherwise than upstream (issue 40):
counter slices with DRAPartitionableDevices off, the stable allocator with other nodes' counter slices (some
of them incomplete), counter sets over-committed by held devices, per-device node selection and node slices
repeating a device name across nodes, list-type attributes under distinctAttribute and matchAttribute with
DRAListTypeAttributes off, and multi-allocatable devices with held shares lacking consumedCapacity. The
generator covers every combination of the gates that choose upstream's allocator variant and its behaviour
here, and builds each example around one input kind (its gates set, its ingredients made likely); the oracle
and the polars core must agree on every node. Deterministic (derandomized) and bounded. Its power was checked
by reverting each of the six fixes in the polars core alone: the random test catches every one of them."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.columnar import ColumnarAllocator
from draconform.reference.allocator.oracle import OracleAllocator
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.sut import Obj

from .helpers import claim, device_class, node
from .test_differential import allocate, one_in, verdict

DRIVER = "a.example.com"
NODES = [node("node-0", rack="r0"), node("node-1", rack="r0"), node("node-2", rack="r1")]
# The gates that pick upstream's allocator variant or change what these inputs mean, in every combination.
VARIANT_GATES = ("DRAPartitionableDevices", "DRAConsumableCapacity", "DRADeviceBindingConditions",
                 "DRAListTypeAttributes", "DRADeviceCompatibilityGroups")
COMBINATIONS = [dict(zip(VARIANT_GATES, values, strict=True))
                for values in itertools.product((False, True), repeat=len(VARIANT_GATES))]
SELECTORS = ('device.attributes["a.example.com"].numa == 0',  # an error on devices without numa
             'has(device.attributes["a.example.com"].numa)', 'device.driver == "a.example.com"')
SETTINGS = settings(max_examples=300, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def slice_obj(name: str, pool: str, count: int, where: Obj, **spec: Any) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": DRIVER, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count},
                     **where, **spec}}


# Each example is built around one input kind (its gates and ingredients made likely), the rest drawn freely.
FOCUS = ("partitionable-off", "stable-counters", "overcommit", "names", "distinct-lists", "share")


@st.composite
def device(draw: st.DrawFn, name: str, counter_sets: list[str], per_device: bool, focus: str) -> Obj:
    found: Obj = {"name": name}
    attributes: Obj = {}
    if draw(st.booleans()):
        attributes["numa"] = {"int": draw(st.integers(0, 1))}
    if focus == "distinct-lists" or draw(st.booleans()):
        lists = (focus == "distinct-lists" and not one_in(draw, 4)) or draw(st.booleans())
        attributes["numas"] = ({"ints": draw(st.lists(st.integers(0, 2), min_size=1, max_size=2, unique=True))}
                               if lists else {"int": draw(st.integers(0, 2))})
    if attributes:
        found["attributes"] = attributes
    if counter_sets and (focus in ("overcommit", "share", "partitionable-off") or draw(st.booleans())):
        found["consumesCounters"] = [{"counterSet": draw(st.sampled_from(counter_sets)),
                                      "counters": {"mem": {"value": "4" if focus == "share" else
                                                           draw(st.sampled_from(["2", "4"]))}}}]
    if (focus == "share" and draw(st.booleans())) or one_in(draw, 3):
        found["allowMultipleAllocations"] = True
        found["capacity"] = {"bw": {"value": "10G", "requestPolicy": {"default": "2G", "validRange": {"min": "1G"}}}}
    if per_device:
        found["nodeName"] = draw(st.sampled_from([n["metadata"]["name"] for n in NODES]))
    return found


@st.composite
def pools(draw: st.DrawFn, focus: str) -> list[Obj]:
    """Node pools with a counter slice (on its node or another), per-device pools and pools spread over nodes
    by name, with device names repeating across slices, and now and then a slice count that is off."""
    slices: list[Obj] = []
    names = ("d0", "d1", "d2")
    for index in range(draw(st.integers(1, 3))):
        pool = f"pool-{index}"
        kinds = ["per-device", "by-node"] if focus == "names" else ["counters", "counters", "per-device", "by-node"]
        kind = draw(st.sampled_from(kinds))
        parts = draw(st.integers(1, 2))
        counted = 1 if kind == "counters" else 0
        count = parts + counted + (1 if one_in(draw, 3 if focus == "stable-counters" else 6) else 0)
        home = draw(st.sampled_from([n["metadata"]["name"] for n in NODES]))
        sets = ["a", "b"] if kind == "counters" else []
        if kind == "counters":
            values = {"overcommit": ["2", "4"], "share": ["4", "6"]}.get(focus, ["4", "6", "8"])
            slices.append(slice_obj(f"{pool}-counters", pool, count, {"nodeName": home}, sharedCounters=[
                {"name": s, "counters": {"mem": {"value": draw(st.sampled_from(values))}}} for s in sets]))
            if focus == "stable-counters" and draw(st.booleans()):
                continue  # only the counter slice of this pool exists: incomplete, on its node
        for part in range(parts):
            chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
            per_device = kind == "per-device"
            where: Obj = {"perDeviceNodeSelection": True} if per_device else {
                "nodeName": home if kind == "counters" else draw(st.sampled_from([n["metadata"]["name"]
                                                                                for n in NODES]))}
            slices.append(slice_obj(f"{pool}-{part}", pool, count, where,
                                    devices=[draw(device(n, sets, per_device, focus)) for n in chosen]))
    return slices


def held(slices: list[Obj], pick: list[int], shares_without: bool, shares_only: bool = False) -> list[Obj]:
    """Allocated claims holding the devices at the drawn positions: whole, or one share of a multi-allocatable
    device, with or without consumedCapacity (`shares_only`: one share of every multi-allocatable device and
    nothing else). Held devices may over-commit their counter sets."""
    every = [(s["spec"]["pool"]["name"], d) for s in slices for d in s["spec"].get("devices") or []]
    if shares_only:
        pick = [i for i, (_, found) in enumerate(every) if found.get("allowMultipleAllocations")]
    claims = []
    for position in sorted(set(pick)):
        if position >= len(every):
            continue
        pool, found = every[position]
        result: Obj = {"request": "r", "driver": DRIVER, "pool": pool, "device": found["name"]}
        if found.get("allowMultipleAllocations"):
            result["shareID"] = f"00000000-0000-4000-8000-{position:012d}"
            if not shares_without:
                result["consumedCapacity"] = {"bw": "2G"}
        claims.append(claim(f"held-{position}", {"name": "r", "exactly": {"deviceClassName": "any"}},
                            allocation={"devices": {"results": [result]}}))
    return claims


@st.composite
def pending(draw: st.DrawFn, focus: str) -> list[Obj]:
    result = []
    for index in range(draw(st.integers(1, 2))):
        spec: Obj = {"deviceClassName": "any"}
        if one_in(draw, 2 if focus == "stable-counters" else 5):
            spec["allocationMode"] = "All"
        else:
            spec["count"] = draw(st.sampled_from([2, 2, 1] if focus == "distinct-lists" else [1, 1, 2]))
        if focus == "partitionable-off" and draw(st.booleans()):
            spec["selectors"] = [{"cel": {"expression": SELECTORS[0]}}]
        elif one_in(draw, 3):
            spec["selectors"] = [{"cel": {"expression": draw(st.sampled_from(SELECTORS))}}]
        constraints = []
        if focus == "distinct-lists" or one_in(draw, 2):
            kind = "distinctAttribute" if focus == "distinct-lists" else draw(st.sampled_from(
                ["distinctAttribute", "matchAttribute"]))
            constraints.append({kind: f"{DRIVER}/{draw(st.sampled_from(['numas', 'numas', 'numa']))}"})
        result.append(claim(f"claim-{index}", {"name": "r", "exactly": spec}, constraints=constraints))
    return result


def gates_for(focus: str, drawn: dict[str, bool]) -> dict[str, bool]:
    """The drawn combination, with the gates the focus needs set: the stable allocator (every newer-variant gate
    off), partitionable devices off, list attributes off under a newer variant, consumable capacity on."""
    fixed: dict[str, bool] = {
        "partitionable-off": {"DRAPartitionableDevices": False},
        "stable-counters": {"DRAPartitionableDevices": True, "DRAConsumableCapacity": False,
                            "DRADeviceBindingConditions": False, "DRAListTypeAttributes": False,
                            "DRADeviceCompatibilityGroups": False},
        "overcommit": {"DRAPartitionableDevices": True},
        "distinct-lists": {"DRAListTypeAttributes": False, "DRAConsumableCapacity": True},
        "share": {"DRAPartitionableDevices": True, "DRAConsumableCapacity": True},
    }.get(focus, {})
    return {**drawn, **fixed}


@st.composite
def clusters(draw: st.DrawFn) -> dict[str, Any]:
    focus = draw(st.sampled_from(FOCUS))
    slices = draw(pools(focus))
    picks = draw(st.lists(st.integers(0, 8), max_size=4 if focus in ("overcommit", "share") else 2))
    return {"slices": slices, "pending": draw(pending(focus)),
            "gates": gates_for(focus, draw(st.sampled_from(COMBINATIONS))),
            "held": held(slices, picks, focus == "share" or draw(st.booleans()), shares_only=focus == "share")}


def agree(cluster: dict[str, Any]) -> None:
    gates = FeatureGates(cluster["gates"])
    store = Store(FakeClock())
    for obj in [device_class("any", 'device.driver == "a.example.com"'), *cluster["slices"], *cluster["held"]]:
        store.load(obj)
    columnar, oracle = ColumnarAllocator(store, gates), OracleAllocator(store, gates)
    for target in NODES:
        expected = allocate(oracle, target, cluster["pending"], [])
        assert verdict(columnar, target, cluster["pending"]) in (
            None, "fits" if isinstance(expected, list) else expected), target["metadata"]["name"]
        assert allocate(columnar, target, cluster["pending"], []) == expected, target["metadata"]["name"]


@SETTINGS
@given(clusters())
def test_the_cores_agree_on_the_inputs_upstream_decides_differently(cluster: dict[str, Any]) -> None:
    agree(cluster)


def fixed_cluster() -> dict[str, Any]:
    """One cluster holding every input kind at once, for every gate combination (the random test draws them)."""
    def dev(name: str, **fields: Any) -> Obj:
        return {"name": name, **fields}

    def consuming(counter_set: str, amount: str) -> list[Obj]:
        return [{"counterSet": counter_set, "counters": {"mem": {"value": amount}}}]

    multi = {"allowMultipleAllocations": True, "capacity": {"bw": {"value": "10G", "requestPolicy": {
        "default": "2G", "validRange": {"min": "1G"}}}}}
    slices = [
        slice_obj("p0-counters", "p0", 2, {"nodeName": "node-0"}, sharedCounters=[
            {"name": "a", "counters": {"mem": {"value": "4"}}}, {"name": "b", "counters": {"mem": {"value": "8"}}}]),
        slice_obj("p0-devices", "p0", 2, {"nodeName": "node-0"}, devices=[
            dev("x", consumesCounters=consuming("a", "4")), dev("y", consumesCounters=consuming("a", "4")),
            dev("z", consumesCounters=consuming("b", "2"), attributes={"numas": {"ints": [0]}}),
            dev("nic", consumesCounters=consuming("b", "6"), **multi),
            dev("plain", attributes={"numas": {"ints": [1]}, "numa": {"int": 0}})]),
        slice_obj("p1-counters", "p1", 3, {"nodeName": "node-1"}, sharedCounters=[
            {"name": "a", "counters": {"mem": {"value": "4"}}}]),  # incomplete: one of three slices
        slice_obj("p2-a", "p2", 2, {"perDeviceNodeSelection": True}, devices=[dev("g", nodeName="node-0")]),
        slice_obj("p2-b", "p2", 2, {"perDeviceNodeSelection": True}, devices=[dev("g", nodeName="node-1")]),
        slice_obj("p3-n0", "p3", 2, {"nodeName": "node-0"}, devices=[dev("h", attributes={"numas": {"int": 0}})]),
        slice_obj("p3-n1", "p3", 2, {"nodeName": "node-1"}, devices=[dev("h")]),
    ]
    holders = held(slices, [1, 2, 4], shares_without=True)  # x and y over-commit set a; nic shared, no capacity
    distinct = [{"distinctAttribute": f"{DRIVER}/numas"}]
    pending_claims = [claim("spread", {"name": "r", "exactly": {"deviceClassName": "any", "count": 2}},
                            constraints=distinct),
                      claim("everything", {"name": "r", "exactly": {"deviceClassName": "any",
                                                                    "allocationMode": "All"}})]
    return {"slices": slices, "held": holders, "pending": pending_claims}


@pytest.mark.parametrize("gates", COMBINATIONS, ids=lambda g: ",".join(k for k, v in g.items() if v) or "none")
@pytest.mark.parametrize("claims", ["both", "spread", "everything"])
def test_every_gate_combination_on_one_cluster_of_every_input_kind(gates: dict[str, bool], claims: str) -> None:
    cluster = fixed_cluster()
    if claims != "both":
        cluster["pending"] = [c for c in cluster["pending"] if c["metadata"]["name"] == claims]
    agree({**cluster, "gates": gates})
