"""The columnar verdict (`ColumnarAllocator.feasible`) against the exact search (`allocate`) of the same core:
where counting free candidates settles a node, the verdict must be the search's answer, reasons included.
Hypothesis builds node-local pools (some devices held, tainted by their slice or a DeviceTaintRule, consuming
counters or shared, so that the
verdict has to step aside) and pending claims of plain count requests (now and then All, admin access or a
constraint, which the verdict leaves to the search)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.columnar import ColumnarAllocator
from draconform.reference.allocator.interface import AllocationError, Feasibility
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.sut import Obj

from .helpers import DRIVER, allocated, claim, dev, device_class, exactly, node, resource_slice, store_with

NODES = [node(f"node-{n}") for n in range(4)]
GATES = ("DRADeviceTaints", "DRADeviceTaintRules", "DRAPartitionableDevices", "DRAConsumableCapacity",
         "DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")
SETTINGS = settings(max_examples=300, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def cluster(draw: st.DrawFn) -> dict[str, Any]:
    slices, held = [], []
    for n, target in enumerate(NODES):
        devices = []
        for d in range(draw(st.integers(0, 5))):
            device = dev(f"d{d}", attributes={"numa": {"int": d % 2}})
            twist = draw(st.sampled_from(["plain"] * 6 + ["taint", "counters", "shared", "binding"]))
            if twist == "taint":
                device["taints"] = [{"key": "k", "effect": "NoSchedule"}]
            elif twist == "counters":
                device["consumesCounters"] = [{"counterSet": "cs", "counters": {"mem": {"value": "4"}}}]
            elif twist == "shared":
                device["allowMultipleAllocations"] = True
                device["capacity"] = {"mem": {"value": "8Gi"}}
            elif twist == "binding":
                device["bindingConditions"] = ["x.example.com/ready"]
                device["bindingFailureConditions"] = ["x.example.com/failed"]
            devices.append(device)
            if draw(st.booleans()):
                held.append(claim(f"held-{n}-{d}", exactly("req", "gpu"),
                                  allocation=allocated((DRIVER, f"pool-{n}", f"d{d}"))))
        name = target["metadata"]["name"]
        slices.append(resource_slice(f"pool-{n}", devices, nodeName=name))
        if any("consumesCounters" in d for d in devices):
            slices[-1]["spec"]["sharedCounters"] = [{"name": "cs", "counters": {"mem": {"value": "8"}}}]
    if draw(st.sampled_from(range(4))) == 3:  # node-1 sees a newer generation of pool-0: nodes choose apart
        slices.append(resource_slice("pool-0-next", [dev("d0"), dev("d1")], pool="pool-0", generation=1,
                                     nodeName="node-1"))
    if draw(st.sampled_from(range(4))) == 3:  # a DeviceTaintRule tainting one device the slices do not taint
        slices.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "rule"},
                       "spec": {"deviceSelector": {"driver": DRIVER, "pool": f"pool-{draw(st.integers(0, 3))}",
                                                   "device": "d0"},
                                "taint": {"key": "rule", "effect": "NoSchedule"}}})
    pending = []
    for c in range(draw(st.integers(1, 2))):
        requests = []
        for r in range(draw(st.integers(1, 2))):
            spec: Obj = {"count": draw(st.sampled_from([1, 1, 2, 3]))}
            twist = draw(st.sampled_from(["plain"] * 8 + ["numa", "all", "admin"]))
            if twist == "numa":
                spec["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].numa == 0'}}]
            elif twist == "all":
                spec = {"allocationMode": "All"}
            elif twist == "admin":
                spec["adminAccess"] = True
            requests.append(exactly(f"r{r}", "gpu", **spec))
        constraints = [{"matchAttribute": f"{DRIVER}/numa"}] if draw(st.sampled_from(range(6))) == 5 else None
        pending.append(claim(f"pending-{c}", *requests, constraints=constraints))
    return {"slices": slices, "held": held, "pending": pending,
            "gates": {gate: draw(st.booleans()) for gate in GATES} | {"DRAAdminAccess": True}}


def search(core: ColumnarAllocator, target: Obj, pending: list[Obj]) -> Feasibility | str:
    try:
        answer = core.allocate(target, pending)
    except AllocationError:
        return "AllocationError"
    return Feasibility(answer.fits, {} if answer.fits else answer.reasons)


def check_verdicts(core: ColumnarAllocator, nodes: list[Obj], pending: list[Obj]) -> None:
    """Every verdict the core gives, for many nodes at once or for one, is the exact search's answer, and the
    batch gives, node by node, what `feasible` gives for that node alone."""
    batch = core.feasible_nodes(nodes, pending)
    assert len(batch) == len(nodes)
    for target, verdict in zip(nodes, batch, strict=True):
        if verdict is not None:
            assert verdict == search(core, target, pending), target["metadata"]["name"]
        assert verdict == core.feasible(target, pending), target["metadata"]["name"]


@SETTINGS
@given(cluster())
def test_the_columnar_verdict_is_the_search_answer_wherever_it_gives_one(case: dict[str, Any]) -> None:
    store = store_with(device_class("gpu", f'device.driver == "{DRIVER}"'), *case["slices"], *case["held"])
    core = ColumnarAllocator(store, FeatureGates(case["gates"]))
    check_verdicts(core, NODES, case["pending"])
    check_verdicts(core, NODES[::-1], case["pending"])  # the batch's answers do not depend on the nodes' order


class Flipped(ColumnarAllocator):
    """A batch that answers one node wrongly: "fits" where counting said too few, or the reverse."""

    def feasible_nodes(self, nodes: Any, claims: Any, assumed: Any = ()) -> list[Feasibility | None]:
        answers = super().feasible_nodes(nodes, claims, assumed)
        return [Feasibility(not answer.fits) if answer is not None and i == 1 else answer
                for i, answer in enumerate(answers)]


def test_a_batch_verdict_the_search_contradicts_fails_the_check() -> None:
    store = store_with(device_class("gpu", f'device.driver == "{DRIVER}"'),
                       *(resource_slice(f"pool-{n}", [dev("d0")], nodeName=f"node-{n}") for n in range(4)))
    pending = [claim("one", exactly("req"))]
    check_verdicts(ColumnarAllocator(store, FeatureGates()), NODES, pending)
    with pytest.raises(AssertionError, match="node-1"):
        check_verdicts(Flipped(store, FeatureGates()), NODES, pending)


def test_counting_settles_the_scheduler_perf_shape_on_every_node() -> None:
    """Node-local devices, half of them held, single-device claims: every node is settled without a search,
    and the exact search agrees with each verdict."""
    store = Store(FakeClock())
    store.load(device_class("gpu", f'device.driver == "{DRIVER}"'))
    for n, target in enumerate(NODES):
        store.load(resource_slice(f"pool-{n}", [dev(f"d{d}") for d in range(4)], nodeName=target["metadata"]["name"]))
        for d in range(n):  # node-3 has one device left, node-0 all four
            store.load(claim(f"held-{n}-{d}", exactly("req"), allocation=allocated((DRIVER, f"pool-{n}", f"d{d}"))))
    core = ColumnarAllocator(store, FeatureGates())
    pending = [claim("two", exactly("req", count=2))]
    verdicts = core.feasible_nodes(NODES, pending)
    assert [v.fits if v is not None else None for v in verdicts] == [True, True, True, False]
    check_verdicts(core, NODES, pending)


def test_the_verdict_steps_aside_for_what_only_the_search_can_judge() -> None:
    """A constraint, a tainted candidate and a candidate consuming counters each leave the node to the search."""
    tainted = dev("d1", taints=[{"key": "k", "effect": "NoSchedule"}])
    store = store_with(device_class("gpu", f'device.driver == "{DRIVER}"'),
                       resource_slice("pool", [dev("d0", attributes={"numa": {"int": 0}}), tainted]))
    core = ColumnarAllocator(store, FeatureGates({"DRADeviceTaints": True}))
    target = node("node-1")
    assert core.feasible(target, [claim("one", exactly("req"))]) is None  # the tainted device counts only if tolerated
    untainted = ColumnarAllocator(store, FeatureGates({"DRADeviceTaints": False}))
    assert untainted.feasible(target, [claim("one", exactly("req"))]) == Feasibility(True)
    matched = claim("m", exactly("a"), exactly("b"), constraints=[{"matchAttribute": f"{DRIVER}/numa"}])
    assert untainted.feasible(target, [matched]) is None


def test_a_device_tainted_by_a_rule_is_left_to_the_search() -> None:
    """A DeviceTaintRule taints a device its slice does not: counting it as free would say "fits" where the
    search, which sees the rule's taint, finds nothing."""
    rule = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "rule"},
            "spec": {"deviceSelector": {"driver": DRIVER, "pool": "pool-0", "device": "d0"},
                     "taint": {"key": "rule", "effect": "NoSchedule"}}}
    store = store_with(device_class("gpu", f'device.driver == "{DRIVER}"'),
                       resource_slice("pool-0", [dev("d0")], nodeName="node-0"), rule)
    core = ColumnarAllocator(store, FeatureGates({"DRADeviceTaints": True, "DRADeviceTaintRules": True}))
    pending = [claim("c", exactly("r"))]
    assert not core.allocate(node("node-0"), pending).fits
    assert core.feasible(node("node-0"), pending) is None


@pytest.mark.parametrize("seed", range(6))
def test_verdicts_follow_claims_allocated_and_released_over_time(seed: int) -> None:
    """The core keeps, per node, how many candidates allocated claims hold, from the changes it sees (not a
    recount per pod): after every allocation, release, reallocation and assumed claim the verdicts are still
    the search's answers."""
    rng = random.Random(seed)
    store = store_with(device_class("gpu", f'device.driver == "{DRIVER}"'),
                       *(resource_slice(f"pool-{n}", [dev(f"d{d}") for d in range(3)], nodeName=f"node-{n}")
                         for n in range(4)))
    core = ColumnarAllocator(store, FeatureGates())
    pending = [claim("p1", exactly("req")), claim("p2", exactly("req", count=2))]
    devices = [(DRIVER, f"pool-{n}", f"d{d}") for n in range(4) for d in range(3)]
    settled = {True: 0, False: 0}
    for step in range(30):
        name = f"held-{rng.randrange(8)}"
        existing = store.get("ResourceClaim", name, "default")
        if existing is not None and rng.random() < 0.4:
            store.delete("ResourceClaim", name, "default")
        elif existing is not None:  # moved to another device, or to two devices
            existing["status"] = {"allocation": allocated(*rng.sample(devices, rng.choice([1, 2])))}
            store.update_status(existing)
        else:
            store.load(claim(name, exactly("req"), allocation=allocated(rng.choice(devices))))
        assumed = [claim("assumed", exactly("req"), allocation=allocated(rng.choice(devices)))] if step % 3 else []
        batch = core.feasible_nodes(NODES, pending, assumed)
        for target, verdict in zip(NODES, batch, strict=True):
            answer = core.allocate(target, pending, assumed)
            if verdict is not None:
                settled[verdict.fits] += 1
                assert verdict == Feasibility(answer.fits, {} if answer.fits else answer.reasons), (step, target)
    assert settled[True] and settled[False]  # both verdicts were given, and held to the search
