"""kube-scheduler's NodeResourcesFit counts pods: a node takes a pod only while the pods bound to it and not
finished number fewer than its `status.allocatable.pods`, none when that is absent ("Too many pods", in the
pod's unschedulable message as upstream words it)."""

from __future__ import annotations

from draconform.kube.kinds import KUBELET_MAX_PODS, KUBELET_RESOURCES, with_pod_room
from draconform.reference.cluster import ReferenceCluster
from draconform.sut import Obj

NS = "default"


def _pod(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"containers": [{"name": "main", "image": "registry.example/app:1"}]}}


def _cluster(node: Obj) -> ReferenceCluster:
    made = ReferenceCluster({})
    made.store.create(node)
    return made


def _node(status: Obj | None = None) -> Obj:
    node: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}
    if status is not None:
        node["status"] = status
    return node


def _scheduled(made: ReferenceCluster, name: str) -> Obj:
    pod = made.store.get("Pod", name, NS)
    assert pod is not None
    return pod


def test_a_node_without_allocatable_pods_takes_no_pod() -> None:
    made = _cluster(_node())
    made.store.create(_pod("web"))
    made.settle()
    pod = _scheduled(made, "web")
    assert not pod["spec"].get("nodeName")
    scheduled = [c for c in pod["status"].get("conditions", []) if c["type"] == "PodScheduled"]
    assert scheduled and scheduled[0]["status"] == "False" and scheduled[0]["reason"] == "Unschedulable"
    assert scheduled[0]["message"] == "0/1 nodes are available: 1 Too many pods."


def test_a_node_takes_pods_up_to_its_allocatable_count_and_room_comes_back_when_one_finishes() -> None:
    made = _cluster(_node({"capacity": {"pods": "2"}, "allocatable": {"pods": "2"}}))
    for name in ("a", "b", "c"):
        made.store.create(_pod(name))
    made.settle()
    placed = {name: _scheduled(made, name)["spec"].get("nodeName") for name in ("a", "b", "c")}
    assert sorted(placed.values(), key=str) == [None, "worker-1", "worker-1"]  # which one waits is not fixed
    finished = next(name for name, node in placed.items() if node)
    made.finish_pod(finished, NS, "Succeeded")
    made.settle()
    assert all(_scheduled(made, name)["spec"].get("nodeName") == "worker-1" for name in ("a", "b", "c"))


def test_a_node_registered_as_a_kubelet_registers_it_has_room_for_the_kubelet_default() -> None:
    node = with_pod_room(_node({"allocatable": {"example.com/gpu": "2"}}))
    assert node["status"]["allocatable"] == {"example.com/gpu": "2", **KUBELET_RESOURCES}
    assert node["status"]["capacity"] == KUBELET_RESOURCES
    assert KUBELET_RESOURCES["pods"] == KUBELET_MAX_PODS
    assert with_pod_room(_node({"allocatable": {"pods": "3"}}))["status"]["allocatable"] == {**KUBELET_RESOURCES,
                                                                                             "pods": "3"}
