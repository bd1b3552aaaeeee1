"""The columnar core judges selectors two ways: for every node at once (the scheduler's Filter asks all nodes) or
only on the devices one node's search can reach (`draconform allocate` asks node after node until one fits).
Both must give the same answer on every node: the devices, their order, the reasons and the errors. Hypothesis
builds node-local pools, pools every node reaches (allNodes, a node selector), devices whose attributes make a
selector fail, and claims with class and request selectors."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.columnar import NODES_ONE_BY_ONE, ColumnarAllocator
from draconform.reference.allocator.interface import AllocationError
from draconform.sut import Obj

from .helpers import DRIVER, allocated, claim, dev, device_class, exactly, node, resource_slice, store_with

NODES = [node(f"node-{n}", zone="a" if n % 2 else "b") for n in range(4)]
SELECTORS = [
    f'device.driver == "{DRIVER}"',
    f'device.attributes["{DRIVER}"].model == "A100"',
    f'device.attributes["{DRIVER}"].numa == 1',  # a device without numa: a runtime error, where reached
    f'device.attributes["{DRIVER}"].model.startsWith("H")',
    'device.driver != "other.example.com"',
]
SETTINGS = settings(max_examples=100, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _device(draw: st.DrawFn, name: str) -> Obj:
    attributes: Obj = {"model": {"string": draw(st.sampled_from(["A100", "H100"]))}}
    if draw(st.booleans()):
        attributes["numa"] = {"int": draw(st.integers(0, 1))}
    return dev(name, attributes=attributes)


@st.composite
def cluster(draw: st.DrawFn) -> dict[str, Any]:
    slices, held = [], []
    for n, target in enumerate(NODES):
        devices = [_device(draw, f"d{d}") for d in range(draw(st.integers(0, 4)))]
        slices.append(resource_slice(f"pool-{n}", devices, nodeName=target["metadata"]["name"]))
        held += [claim(f"held-{n}-{d}", exactly("req", "gpu"), allocation=allocated((DRIVER, f"pool-{n}", f"d{d}")))
                 for d in range(len(devices)) if draw(st.booleans())]
    if draw(st.booleans()):
        slices.append(resource_slice("everywhere", [_device(draw, f"e{d}") for d in range(2)], allNodes=True))
    if draw(st.booleans()):
        zone = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}
        slices.append(resource_slice("zone-a", [_device(draw, f"z{d}") for d in range(2)], nodeSelector=zone))
    classes = [device_class("gpu", draw(st.sampled_from(SELECTORS)))]
    pending = []
    for c in range(draw(st.integers(1, 2))):
        request = exactly("req", "gpu", count=draw(st.integers(1, 2)))
        chosen = draw(st.lists(st.sampled_from(SELECTORS), max_size=2))
        if chosen:
            request["exactly"]["selectors"] = [{"cel": {"expression": e}} for e in chosen]
        pending.append(claim(f"pending-{c}", request))
    return {"objects": classes + slices + held, "pending": pending}


def _answer(core: ColumnarAllocator, target: Obj, pending: list[Obj]) -> Any:
    try:
        found = core.allocate(target, pending)
    except AllocationError as error:
        return ("error", str(error))
    return (found.allocations, found.reasons)


@SETTINGS
@given(cluster())
def test_one_node_at_a_time_answers_as_all_nodes_at_once(case: dict[str, Any]) -> None:
    assert len(NODES) <= NODES_ONE_BY_ONE  # every node below is judged on its own by the lazy core
    lazy = ColumnarAllocator(store_with(*case["objects"]), FeatureGates())
    whole = ColumnarAllocator(store_with(*case["objects"]), FeatureGates())
    with contextlib.suppress(AllocationError):
        whole.feasible(NODES[0], case["pending"])  # the columnar pass over every node
    for target in NODES:
        assert _answer(lazy, target, case["pending"]) == _answer(whole, target, case["pending"])


def test_the_lazy_core_turns_to_the_whole_pass_after_enough_nodes() -> None:
    """Asked about more nodes than NODES_ONE_BY_ONE, the core judges all nodes at once, with the same answers."""
    nodes = [node(f"node-{n:02d}") for n in range(NODES_ONE_BY_ONE + 3)]
    objects = [device_class("gpu", f'device.attributes["{DRIVER}"].model == "H100"')] + [
        resource_slice(f"pool-{n}", [dev("d0", attributes={"model": {"string": "H100" if n == 10 else "A100"}})],
                       nodeName=f"node-{n:02d}") for n in range(len(nodes))]
    pending = [claim("wanted", exactly("req", "gpu"))]
    core = ColumnarAllocator(store_with(*objects), FeatureGates())
    answers = [core.allocate(target, pending) for target in nodes]
    assert [a.allocations is not None for a in answers] == [n == 10 for n in range(len(nodes))]
    assert answers[10].allocations is not None
    assert answers[10].allocations[0]["devices"]["results"][0]["pool"] == "pool-10"
    assert answers[0].reasons == answers[9].reasons  # judged alone (node 0) and by the whole pass (node 9)
