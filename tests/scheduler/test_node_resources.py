"""kube-scheduler's NodeResourcesFit beyond the pod count (issue 37): what a pod asks of cpu, memory,
ephemeral-storage and every other resource (containers summed, the largest init container with the sidecars
before it, pod-level requests, overhead) must fit in what the node's `status.allocatable` offers beyond the pods
already bound to it; a node listing no memory takes no pod asking for memory ("Insufficient memory")."""

from __future__ import annotations

from typing import Any

from draconform.kube.kinds import with_pod_room
from draconform.reference.cluster import ReferenceCluster
from draconform.reference.scheduler.resourcefit import insufficient, offered, pod_requests
from draconform.sut import Obj

NS = "default"


def _pod(name: str, *containers: dict[str, Any], **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"containers": list(containers), **spec}}


def _container(requests: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    return {"name": "main", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": requests or {}}, **fields}


def _node(allocatable: dict[str, str] | None = None) -> Obj:
    node: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}
    if allocatable is not None:
        node["status"] = {"allocatable": allocatable, "capacity": allocatable}
    return node


def _message(made: ReferenceCluster, name: str) -> str | None:
    pod = made.store.get("Pod", name, NS)
    assert pod is not None
    if pod["spec"].get("nodeName"):
        return None
    (scheduled,) = [c for c in pod["status"].get("conditions", []) if c["type"] == "PodScheduled"]
    return str(scheduled["message"])


def test_a_pod_asks_its_containers_sum_or_its_largest_init_step_plus_overhead() -> None:
    pod = _pod("p", _container({"cpu": "250m", "memory": "1Gi"}), _container({"cpu": "250m"}),
               initContainers=[_container({"cpu": "100m"}, restartPolicy="Always"),  # a sidecar: runs throughout
                               _container({"cpu": "2", "memory": "100Mi"})],
               overhead={"cpu": "10m"})
    # long-lived: 250m + 250m + the sidecar's 100m = 600m; the init step: 2 + the sidecar before it = 2100m
    assert pod_requests(pod) == {"cpu": 2110, "memory": 1024 ** 3}
    assert pod_requests(_pod("q", _container({"cpu": "1"}), resources={"requests": {"cpu": "3"}})) == {"cpu": 3000}
    assert pod_requests(_pod("r", _container({"memory": "1.5"}))) == {"memory": 2}  # whole units, rounded up


def test_every_resource_that_does_not_fit_is_a_reason_in_upstreams_order() -> None:
    asked = {"example.com/gpu": 1, "memory": 2, "cpu": 1000}
    assert insufficient(asked, offered({"pods": "1", "cpu": "1"}), {"cpu": 1}, 1) == [
        "Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient example.com/gpu"]
    assert insufficient(asked, offered({"pods": "2", "cpu": "2", "memory": "2", "example.com/gpu": "1"}), {}, 1) == []
    assert insufficient({"example.com/gpu": 1}, offered({"pods": "1"}), {}, 0, frozenset({"example.com/gpu"})) == []


def test_a_node_listing_no_memory_takes_no_pod_asking_for_memory() -> None:
    made = ReferenceCluster({})
    made.store.create(_node({"pods": "110"}))
    made.store.create(_pod("small", _container({"memory": "64Mi"})))
    made.store.create(_pod("both", _container({"memory": "64Mi", "cpu": "100m"})))
    made.store.create(_pod("nothing", _container()))
    made.settle()
    assert _message(made, "small") == "0/1 nodes are available: 1 Insufficient memory."
    # each reason counted on its own, as upstream's FitError counts the reasons of every node
    assert _message(made, "both") == "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory."
    assert _message(made, "nothing") is None  # a pod asking for nothing fits anywhere there is room


def test_a_node_fits_pods_while_its_cpu_lasts_and_takes_the_next_when_one_finishes() -> None:
    made = ReferenceCluster({})
    made.store.create(with_pod_room(_node()))  # a kubelet-registered node: 8 cpus
    for name in ("a", "b"):
        made.store.create(_pod(name, _container({"cpu": "5"})))
    made.settle()
    waiting = [name for name in ("a", "b") if _message(made, name) is not None]
    assert len(waiting) == 1 and _message(made, waiting[0]) == "0/1 nodes are available: 1 Insufficient cpu."
    made.finish_pod(next(name for name in ("a", "b") if name not in waiting), NS, "Succeeded")
    made.settle()
    assert _message(made, waiting[0]) is None
