"""Property tests of both allocation cores with compatibility groups (KEP-5963 "Done when": the allocator never
produces an allocation violating the rule). Hypothesis builds one node with a pool of partitions on two counter
sets, groups spelled every way (unset, null, [], one or two names), allocations already in place (with a
snapshot that may disagree with the slice, or without one), and one or two pending claims (allocated together,
as for one pod). Each answer is judged here,
without the reference's compatibility module, by a straightforward reading of the KEP and docs/decisions.md:

- soundness: on every counter set the new devices touch, all devices there (allocated ones as their snapshot
  says, or group-less where their published entry consumes when they have none; new ones as the slice says)
  are either all without groups or all grouped with a group common to all; counters hold; snapshots have
  D-5963-2's shape;
- completeness: when a core says "does not fit", no choice of devices satisfies the claim (brute force);
- agreement: the polars core answers exactly as the oracle does."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draconform.kube.featuregates import FeatureGates
from draconform.kube.kinds import with_pod_room
from draconform.reference.allocator.columnar import ColumnarAllocator
from draconform.reference.allocator.interface import AllocationError, Allocator, AllocatorFactory
from draconform.reference.allocator.oracle import OracleAllocator
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.reference.scheduler.releaseview import as_seen_by
from draconform.sut import Obj

DRIVER = "gpu.example.com"
POOL = "node-1"
NODE: Obj = with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {}}})
COUNTER_SETS = ("cs0", "cs1")
KINDS = ("k0", "k1")
CORES: dict[str, AllocatorFactory] = {"oracle": OracleAllocator, "columnar": ColumnarAllocator}
GATE = "DRADeviceCompatibilityGroups"
PROPERTY = settings(max_examples=250, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Every way to write a consumesCounters entry's groups; None means the key is left out.
SPELLINGS: tuple[Any, ...] = (None, "null", [], ["a"], ["b"], ["a", "b"], ["b", "c"], ["c"])


# ----- the rule, written independently -----------------------------------------------------------------------

def no_groups(value: Any) -> bool:
    return value in (None, "null") or not value


def normal(value: Any) -> frozenset[str]:
    return frozenset() if no_groups(value) else frozenset(value)


def compatible(members: Sequence[frozenset[str]]) -> bool:
    """All without groups, or all with groups and one name common to all of them."""
    if all(not m for m in members):
        return True
    if any(not m for m in members):
        return False
    return bool(frozenset.intersection(*members))


# ----- building clusters ------------------------------------------------------------------------------------

@st.composite
def devices(draw: st.DrawFn) -> list[Obj]:
    result = []
    for index in range(draw(st.integers(2, 7))):
        sets = draw(st.sampled_from([("cs0",), ("cs1",), ("cs0", "cs1"), ("cs0",)]))
        consumes = []
        for counter_set in sets:
            entry: Obj = {"counterSet": counter_set,
                          "counters": {"units": {"value": str(draw(st.sampled_from([10, 20, 40])))}}}
            spelling = draw(st.sampled_from(SPELLINGS))
            if spelling is not None:
                entry["compatibilityGroups"] = None if spelling == "null" else spelling
            consumes.append(entry)
        result.append({"name": f"d{index}", "attributes": {"kind": {"string": draw(st.sampled_from(KINDS))}},
                       "consumesCounters": consumes})
    return result


@st.composite
def held(draw: st.DrawFn, devs: list[Obj]) -> list[Obj]:
    """Allocated claims: each holds one device, with a snapshot drawn from the slice, made up, or left out."""
    claims = []
    for device in devs:
        if draw(st.integers(0, 3)) != 0:
            continue
        result: Obj = {"request": "r", "driver": DRIVER, "pool": POOL, "device": device["name"]}
        how = draw(st.sampled_from(["slice", "slice", "made-up", "none"]))
        if how == "slice":
            declared = {e["counterSet"]: sorted(normal(e.get("compatibilityGroups")))
                        for e in device["consumesCounters"]}
            if any(declared.values()):
                result["compatibilityGroups"] = declared
        elif how == "made-up":
            result["compatibilityGroups"] = {e["counterSet"]: draw(st.sampled_from([[], ["a"], ["c"], ["a", "c"]]))
                                             for e in device["consumesCounters"]}
        if draw(st.integers(0, 5)) == 0:
            result["adminAccess"] = True
        claims.append(claim(f"held-{device['name']}", [{"name": "r", "exactly": {"deviceClassName": "any"}}],
                            allocation={"devices": {"results": [result]}}))
    return claims


@st.composite
def pending(draw: st.DrawFn) -> list[Obj]:
    claims = []
    for index in range(draw(st.integers(1, 2))):
        requests = [{"name": f"r{i}", "exactly": {"deviceClassName": draw(st.sampled_from(["any", *KINDS])),
                                                  "count": draw(st.integers(1, 2))}}
                    for i in range(draw(st.integers(1, 3 - index)))]
        claims.append(claim(f"pending-{index}", requests))
    return claims


@st.composite
def clusters(draw: st.DrawFn) -> dict[str, Any]:
    devs = draw(devices())
    unpublished = draw(st.booleans())  # now and then an allocated device the driver no longer publishes
    return {
        "devices": devs,
        "published": devs[1:] if unpublished else devs,
        "held": draw(held(devs)),
        "capacity": {s: draw(st.sampled_from([40, 60, 100])) for s in COUNTER_SETS},
        "pending": draw(pending()),
    }


def claim(name: str, requests: list[Obj], allocation: Obj | None = None) -> Obj:
    obj: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default"}, "spec": {"devices": {"requests": requests}}}
    if allocation is not None:
        obj["status"] = {"allocation": allocation}
    return obj


def objects(cluster: dict[str, Any]) -> list[Obj]:
    classes = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "any"},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}]
    classes += [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": kind},
                 "spec": {"selectors": [{"cel": {"expression": f'device.attributes["{DRIVER}"].kind == "{kind}"'}}]}}
                for kind in KINDS]
    common = {"driver": DRIVER, "pool": {"name": POOL, "generation": 1, "resourceSliceCount": 2}, "nodeName": "node-1"}
    slices = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "counters"},
         "spec": {**common, "sharedCounters": [{"name": s, "counters": {"units": {"value": str(v)}}}
                                               for s, v in cluster["capacity"].items()]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "devices"},
         "spec": {**common, "devices": cluster["published"]}},
    ]
    return classes + slices + cluster["held"]


def answer(factory: AllocatorFactory, cluster: dict[str, Any], gates: dict[str, bool],
           release: str = "1.37") -> list[Obj] | str:
    store = Store(FakeClock())
    for obj in objects(cluster):
        store.load(obj)
    scheduler_gates = FeatureGates(gates, release=release)
    allocator: Allocator = factory(as_seen_by(store, scheduler_gates), scheduler_gates)  # as the scheduler does
    try:
        outcome = allocator.allocate(NODE, cluster["pending"])
    except AllocationError as exc:
        return f"error: {exc}"
    return outcome.allocations if outcome.allocations is not None else "does not fit"


# ----- judging an answer ------------------------------------------------------------------------------------

class World:
    """The cluster as the rule sees it, computed without the reference's compatibility code."""

    def __init__(self, cluster: dict[str, Any]) -> None:
        self.published = {d["name"]: d for d in cluster["published"]}
        self.capacity = cluster["capacity"]
        self.held_results = [r for c in cluster["held"] for r in c["status"]["allocation"]["devices"]["results"]
                             if not r.get("adminAccess")]
        self.in_use = {r["device"] for r in self.held_results}

    def existing(self, counter_set: str) -> list[frozenset[str]]:
        """Groups of allocated devices on a counter set: snapshot first, else group-less where published."""
        members = []
        for result in self.held_results:
            snap = result.get("compatibilityGroups")
            if snap:
                if counter_set in snap:
                    members.append(frozenset(snap[counter_set]))
            elif result["device"] in self.published and any(
                    e["counterSet"] == counter_set for e in self.published[result["device"]]["consumesCounters"]):
                members.append(frozenset())
        return members

    def groups(self, name: str) -> dict[str, frozenset[str]]:
        return {e["counterSet"]: normal(e.get("compatibilityGroups"))
                for e in self.published[name]["consumesCounters"]}

    def used(self, counter_set: str, names: Iterable[str]) -> int:
        return sum(int(e["counters"]["units"]["value"]) for name in names if name in self.published
                   for e in self.published[name]["consumesCounters"] if e["counterSet"] == counter_set)

    def fits(self, chosen: Sequence[str], enforce: bool = True) -> bool:
        """Whether adding these devices (distinct, free) keeps counters and compatibility."""
        if len(set(chosen)) != len(chosen) or self.in_use & set(chosen):
            return False
        for counter_set in COUNTER_SETS:
            new = [self.groups(name)[counter_set] for name in chosen if counter_set in self.groups(name)]
            if not new:  # only counter sets the new devices consume are judged
                continue
            if self.used(counter_set, [*self.in_use, *chosen]) > self.capacity[counter_set]:
                return False
            if enforce and not compatible([*self.existing(counter_set), *new]):
                return False
        return True

    def matching(self, class_name: str) -> list[str]:
        if class_name == "any":
            return list(self.published)
        return [n for n, d in self.published.items() if d["attributes"]["kind"]["string"] == class_name]

    def choices(self, pending_claims: Sequence[Obj]) -> Iterable[list[str]]:
        """Every way to give each request of each claim its count of matching devices."""
        options = [itertools.combinations(self.matching(r["exactly"]["deviceClassName"]), r["exactly"]["count"])
                   for c in pending_claims for r in c["spec"]["devices"]["requests"]]
        return ([n for combo in choice for n in combo] for choice in itertools.product(*options))

    def some_choice_fits(self, pending_claims: Sequence[Obj]) -> bool:
        return any(self.fits(chosen) for chosen in self.choices(pending_claims))

    def snapshot(self, name: str) -> dict[str, list[str]] | None:
        declared = {e["counterSet"]: e.get("compatibilityGroups") for e in self.published[name]["consumesCounters"]}
        if all(no_groups(v) for v in declared.values()):
            return None
        return {s: [] if no_groups(v) else list(dict.fromkeys(v)) for s, v in declared.items()}


# ----- the properties ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("core", sorted(CORES))
@PROPERTY
@given(clusters())
def test_no_allocation_breaks_the_rule_and_none_is_missed(core: str, cluster: dict[str, Any]) -> None:
    world = World(cluster)
    got = answer(CORES[core], cluster, {GATE: True})
    assert not isinstance(got, str) or got == "does not fit", got
    if got == "does not fit":
        assert not world.some_choice_fits(cluster["pending"]), "a compatible choice exists, yet the claims did not fit"
        return
    assert isinstance(got, list)
    results = [r for allocation in got for r in allocation["devices"]["results"]]
    chosen = [r["device"] for r in results]
    assert world.fits(chosen), f"{chosen} break counters or compatibility"
    for result in results:
        expected = world.snapshot(result["device"])
        assert result.get("compatibilityGroups") == expected, result


@pytest.mark.parametrize("core", sorted(CORES))
@PROPERTY
@given(clusters())
def test_with_the_gate_off_no_grouped_device_and_no_snapshotted_counter_set_is_used(
        core: str, cluster: dict[str, Any]) -> None:
    world = World(cluster)
    got = answer(CORES[core], cluster, {GATE: False})
    if not isinstance(got, list):
        return
    for result in (r for allocation in got for r in allocation["devices"]["results"]):
        assert "compatibilityGroups" not in result
        groups = world.groups(result["device"])
        assert not any(groups.values()), f"{result['device']} declares groups {groups}"
        for counter_set in groups:
            carriers = [r["device"] for r in world.held_results
                        if (r.get("compatibilityGroups") or {}).get(counter_set)]
            assert not carriers, f"{result['device']} joins {counter_set}, where {carriers} carry snapshotted groups"


@pytest.mark.parametrize("core", sorted(CORES))
@PROPERTY
@given(clusters())
def test_an_older_scheduler_ignores_groups_and_writes_no_snapshot(core: str, cluster: dict[str, Any]) -> None:
    world = World(cluster)
    got = answer(CORES[core], cluster, {}, release="1.36")
    if got == "does not fit":
        assert not any(world.fits(chosen, enforce=False) for chosen in world.choices(cluster["pending"]))
        return
    assert isinstance(got, list), got
    assert all("compatibilityGroups" not in r for allocation in got for r in allocation["devices"]["results"])


@PROPERTY
@given(clusters(), st.sampled_from([("1.37", True), ("1.37", False), ("1.36", False)]))
def test_the_polars_core_agrees_with_the_oracle(cluster: dict[str, Any], setting: tuple[str, bool]) -> None:
    release, gate = setting
    gates = {GATE: gate} if release == "1.37" else {}
    assert answer(ColumnarAllocator, cluster, gates, release) == answer(OracleAllocator, cluster, gates, release)


def test_the_judge_itself() -> None:
    """The independent rule agrees with the KEP's examples, so a wrong judge cannot pass a wrong core."""
    assert compatible([frozenset({"foo", "foobar"}), frozenset({"bar", "foobar"})])
    assert not compatible([frozenset({"foo", "foobar"}), frozenset({"baz"})])
    assert not compatible([frozenset({"x", "y"}), frozenset({"y", "z"}), frozenset({"x", "z"})])
    assert compatible([frozenset(), frozenset()])
    assert not compatible([frozenset(), frozenset({"mig"})])


@pytest.mark.parametrize("core", sorted(CORES))
def test_backtracking_undoes_the_narrowing(core: str) -> None:
    """The first request's first choice (group a) leaves the second request nothing; once the search
    backs out of it, the counter set must be empty again so that both can take group-b devices."""
    def device(name: str, kind: str, groups: list[str]) -> Obj:
        return {"name": name, "attributes": {"kind": {"string": kind}}, "consumesCounters": [
            {"counterSet": "cs0", "compatibilityGroups": groups, "counters": {"units": {"value": "10"}}}]}

    devs = [device("d0", "k0", ["a"]), device("d1", "k1", ["b"]), device("d2", "k1", ["b"])]
    cluster = {"devices": devs, "published": devs, "held": [], "capacity": {"cs0": 100, "cs1": 100},
               "pending": [claim("pending", [{"name": "first", "exactly": {"deviceClassName": "any"}},
                                             {"name": "second", "exactly": {"deviceClassName": "k1"}}])]}
    got = answer(CORES[core], cluster, {GATE: True})
    assert isinstance(got, list), got
    assert [r["device"] for r in got[0]["devices"]["results"]] == ["d1", "d2"]
