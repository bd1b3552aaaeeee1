"""Filter for many nodes at once (`filter_nodes`) changes nothing a user can observe: the same pods land on the
same nodes, the next pod starts its node walk at the same place (percentageOfNodesToScore), and pods that fit
nowhere get the same FailedScheduling diagnosis as when every plugin is asked node by node."""

from __future__ import annotations

from typing import Any

import pytest

from draconform.bench.dra import CLASS, NAMESPACE, Shape, Workbench
from draconform.reference.allocator.columnar import ColumnarAllocator
from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.allocator.oracle import OracleAllocator
from draconform.reference.scheduler.framework import CycleState, Status, filter_nodes
from draconform.sut import Obj


class NodeByNode:
    """A plugin as seen without its batch form: the scheduler must fall back to `filter`, node by node."""

    def __init__(self, plugin: Any) -> None:
        self._plugin = plugin
        self.name = plugin.name

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "filter_nodes":
            raise AttributeError(attribute)
        return getattr(self._plugin, attribute)


def _two_device_pod(bench: Workbench, name: str) -> None:
    bench.store.create({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"devices": {"requests": [{"name": "two", "exactly": {"deviceClassName": CLASS, "count": 2}}]}},
    })
    bench.store.create({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"containers": [{"name": "main", "image": "pause"}],
                 "resourceClaims": [{"name": "pair", "resourceClaimName": name}]},
    })


def _observed(batch: bool, core: AllocatorFactory, nodes: int, rounds: int) -> dict[str, Any]:
    """Fill a cluster past its capacity (a few nodes pre-filled, pods of one and two devices); what a user sees."""
    bench = Workbench(Shape(nodes, 2), core)
    scheduler = bench.cluster.scheduler
    if not batch:
        scheduler.plugins = [NodeByNode(plugin) for plugin in scheduler.plugins]
    bench.preallocate(10)  # the first five nodes are full
    starts = []
    for step in range(rounds):
        bench.create_pods(2)
        _two_device_pod(bench, f"pair-{step}")
        bench.cluster.settle()
        starts.append(scheduler._next_start_node)
    pods = {pod["metadata"]["name"]: pod["spec"].get("nodeName") for pod in bench.store.list("Pod", NAMESPACE)}
    events = [(e.name, e.reason, e.message) for e in bench.cluster.events.events() if e.kind == "Pod"]
    conditions = {pod["metadata"]["name"]: (pod.get("status") or {}).get("conditions")
                  for pod in bench.store.list("Pod", NAMESPACE)}
    return {"pods": pods, "starts": starts, "events": events, "conditions": conditions}


@pytest.mark.parametrize(("core", "nodes", "rounds"), [(ColumnarAllocator, 110, 55), (OracleAllocator, 8, 5)])
def test_batch_filter_schedules_as_node_by_node(core: AllocatorFactory, nodes: int, rounds: int) -> None:
    batch = _observed(True, core, nodes, rounds)
    single = _observed(False, core, nodes, rounds)
    assert any(node is None for node in batch["pods"].values())  # the cluster ran full: diagnoses were given
    if nodes > 100:  # more nodes than percentageOfNodesToScore keeps: the walk rotated
        assert len(set(batch["starts"])) > 1
    assert batch == single


class Rejects:
    def __init__(self, name: str, verdicts: dict[str, Status]) -> None:
        self.name = name
        self.verdicts = verdicts
        self.asked: list[str] = []

    def filter(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        self.asked.append(node["metadata"]["name"])
        return self.verdicts.get(node["metadata"]["name"], Status())


def test_the_first_rejection_wins_and_later_plugins_see_only_survivors() -> None:
    from draconform.reference.scheduler.framework import Code

    nodes = [{"metadata": {"name": f"n{i}"}} for i in range(4)]
    first = Rejects("first", {"n1": Status(Code.UNSCHEDULABLE, "no")})
    second = Rejects("second", {"n1": Status(Code.ERROR, "broken"), "n2": Status(Code.UNSCHEDULABLE, "full")})
    verdicts = filter_nodes([first, second], CycleState(), {}, nodes)  # type: ignore[list-item]
    assert [(v.code, v.message, v.plugin) for v in verdicts] == [
        (Code.SUCCESS, "", ""), (Code.UNSCHEDULABLE, "no", "first"), (Code.UNSCHEDULABLE, "full", "second"),
        (Code.SUCCESS, "", "")]
    assert second.asked == ["n0", "n2", "n3"]
