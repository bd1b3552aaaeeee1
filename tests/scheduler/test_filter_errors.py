"""An allocation error on a node Filter visits aborts the scheduling cycle, as in kube-scheduler (issue 29): the
pod fails with the error (SchedulerError) even when another node fits, but a node the walk never reaches (beyond
the feasible nodes percentageOfNodesToScore asks for) cannot stop it."""

from __future__ import annotations

import pytest

from draconform.bench.dra import CLASS, DRIVER, NAMESPACE, Shape, Workbench
from draconform.reference.allocator.columnar import ColumnarAllocator
from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.allocator.oracle import OracleAllocator
from draconform.reference.scheduler.scheduler import feasible_nodes_to_find

MODEL = f'device.attributes["{DRIVER}"].model == "A100"'


def _cluster(core: AllocatorFactory, nodes: int, broken: str) -> Workbench:
    """Every node has one A100; on `broken` the device lacks the model attribute, so the selector errs there."""
    bench = Workbench(Shape(nodes, 1), core)
    slice_ = bench.store.get("ResourceSlice", f"{broken}-{DRIVER}")
    assert slice_ is not None
    del slice_["spec"]["devices"][0]["attributes"]["model"]
    bench.store.update(slice_)
    bench.store.create({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "a100", "namespace": NAMESPACE},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": CLASS, "selectors": [{"cel": {"expression": MODEL}}]}}]}},
    })
    bench.store.create({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": NAMESPACE},
        "spec": {"containers": [{"name": "main", "image": "pause"}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": "a100"}]},
    })
    bench.cluster.settle()
    return bench


def _scheduled(bench: Workbench) -> tuple[str | None, list[str]]:
    pod = bench.store.get("Pod", "trainer", NAMESPACE)
    assert pod is not None
    reasons = [c.get("reason") for c in (pod.get("status") or {}).get("conditions") or []
               if c.get("type") == "PodScheduled"]
    return pod["spec"].get("nodeName"), reasons


@pytest.mark.parametrize("core", [ColumnarAllocator, OracleAllocator])
@pytest.mark.parametrize("broken", ["node-0", "node-2"])
def test_an_error_on_any_node_of_a_small_cluster_fails_the_pod(core: AllocatorFactory, broken: str) -> None:
    bench = _cluster(core, 3, broken)
    bound, reasons = _scheduled(bench)
    assert bound is None
    assert reasons == ["SchedulerError"]
    events = [e.message for e in bench.cluster.events.events() if e.reason == "FailedScheduling"]
    assert any("model" in message for message in events)


def test_a_node_past_the_feasible_nodes_wanted_is_never_filtered() -> None:
    """120 nodes: filtering stops after 100 feasible ones; the nodes by name after them are never asked."""
    nodes = 120
    names = sorted(f"node-{i}" for i in range(nodes))
    wanted = feasible_nodes_to_find(nodes)
    assert wanted == 100
    bound, _ = _scheduled(_cluster(ColumnarAllocator, nodes, names[wanted]))  # the first node not asked
    assert bound == names[0]
    bound, reasons = _scheduled(_cluster(ColumnarAllocator, nodes, names[wanted - 1]))  # the last node asked
    assert bound is None and reasons == ["SchedulerError"]
