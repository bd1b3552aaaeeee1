"""Unit tests of the reference kubelet's plumbing that the conformance scenarios do not isolate: graceful
deletion of bound pods in the store, pods of nodes without a kubelet, the plugin registry's refusals, and the
status of a pod whose claims are not prepared yet (what `kubectl get pods` and `kubectl wait` read)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from draconform.kube.featuregates import FeatureGates
from draconform.kube.kinds import with_pod_room
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.reference.cluster import ReferenceCluster
from draconform.reference.events import EventRecorder
from draconform.reference.kubelet.checkpoint import KubeletCheckpoint
from draconform.reference.kubelet.kubelet import Kubelet
from draconform.reference.kubelet.plugins import PluginRegistry, PluginUnavailable
from draconform.sut import Obj


def pod(name: str, node: str | None = None) -> Obj:
    spec: Obj = {"containers": [{"name": "main", "image": "pause"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def test_a_bound_pod_is_deleted_gracefully_and_removed_with_grace_period_zero() -> None:
    store = Store(FakeClock())
    store.create(pod("bound", node="node-1"))
    store.create(pod("unbound"))
    store.delete("Pod", "unbound", "default")
    assert store.get("Pod", "unbound", "default") is None
    store.delete("Pod", "bound", "default")
    marked = store.get("Pod", "bound", "default")
    assert marked is not None and marked["metadata"]["deletionTimestamp"]
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 30
    store.delete("Pod", "bound", "default", grace_period_seconds=0)
    assert store.get("Pod", "bound", "default") is None


def test_the_kubelet_finishes_a_deletion_and_a_pod_of_a_missing_node_is_collected() -> None:
    cluster = ReferenceCluster()
    try:
        cluster.store.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}))
        cluster.store.create(pod("on-node", node="node-1"))
        cluster.store.create(pod("nowhere", node="node-9"))
        cluster.settle()
        running = cluster.store.get("Pod", "on-node", "default")
        assert running is not None and running["status"]["phase"] == "Running"
        # taken up as waiting first, then started: the waiting conditions and container states are replaced
        assert {c["type"]: (c["status"], c.get("reason")) for c in running["status"]["conditions"]
                if c["type"] != "PodScheduled"} == {kind: ("True", None) for kind in (
                    "PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready")}
        assert [(s["ready"], list(s["state"])) for s in running["status"]["containerStatuses"]] == [(True, ["running"])]
        for name in ("on-node", "nowhere"):
            cluster.store.delete("Pod", name, "default")
        cluster.settle()
        assert cluster.store.list("Pod") == []
    finally:
        cluster.close()


def test_the_registry_refuses_a_driver_without_a_registration_socket() -> None:
    registry = PluginRegistry(lambda driver: None)
    with pytest.raises(PluginUnavailable, match="not registered"):
        registry.client("gpu.example.com")


def _waiting_on_unregistered_driver(init: bool) -> tuple[Store, FakeClock, Kubelet, EventRecorder]:
    """A pod bound to node-1 with an allocated, reserved claim of a driver that never registers there, so every
    prepare fails (transiently) and the kubelet keeps retrying; its kubelet has taken it up once."""
    clock = FakeClock()
    store = Store(clock)
    bound = pod("trainer", node="node-1")
    bound["spec"]["containers"].append({"name": "side", "image": "helper:2"})
    bound["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    bound["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "model"}]
    if init:
        bound["spec"]["initContainers"] = [{"name": "fetch", "image": "fetch:1"},
                                           {"name": "proxy", "image": "proxy:1", "restartPolicy": "Always"}]
    uid = store.create(bound)["metadata"]["uid"]
    claim = store.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                          "metadata": {"name": "model", "namespace": "default"},
                          "spec": {"devices": {"requests": [{"name": "gpu",
                                                             "exactly": {"deviceClassName": "gpu"}}]}}})
    claim["status"] = {"allocation": {"devices": {"results": [
                           {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]}},
                       "reservedFor": [{"resource": "pods", "name": "trainer", "uid": uid}]}
    store.update_status(claim)
    events = EventRecorder(clock)
    kubelet = Kubelet("node-1", store, clock, events, FeatureGates(), KubeletCheckpoint(),
                      PluginRegistry(lambda driver: None))
    kubelet.notice(("default", "trainer"))
    kubelet.sync()
    return store, clock, kubelet, events


def _conditions(obj: Obj) -> dict[str, Obj]:
    return {c["type"]: c for c in obj["status"]["conditions"]}


def test_a_pod_whose_claims_are_not_prepared_is_written_once_as_waiting_for_its_containers() -> None:
    store, clock, kubelet, events = _waiting_on_unregistered_driver(init=False)
    taken_up = store.get("Pod", "trainer", "default")
    assert taken_up is not None
    status = taken_up["status"]
    assert status["phase"] == "Pending"
    conditions = _conditions(taken_up)
    assert {kind: c["status"] for kind, c in conditions.items()} == {
        "PodReadyToStartContainers": "False", "Initialized": "True", "ContainersReady": "False", "Ready": "False"}
    for kind in ("Ready", "ContainersReady"):
        assert conditions[kind]["reason"] == "ContainersNotReady"
        assert conditions[kind]["message"] == "containers with unready status: [main side]"
    assert status["containerStatuses"] == [
        {"name": name, "image": image, "imageID": "", "ready": False, "started": False, "restartCount": 0,
         "state": {"waiting": {"reason": "ContainerCreating"}}}
        for name, image in (("main", "pause"), ("side", "helper:2"))]
    # the kubelet goes on retrying the prepare (past the five-minute backoff cap) without writing the status again
    for _ in range(12):
        clock.advance(timedelta(minutes=1))
        clock.fire_due()
        kubelet.sync()
    retried = store.get("Pod", "trainer", "default")
    assert retried is not None and retried["metadata"]["resourceVersion"] == taken_up["metadata"]["resourceVersion"]
    assert len([e for e in events.events() if e.reason == "FailedPrepareDynamicResources"]) > 3


def test_a_pod_with_init_containers_waits_uninitialized_with_every_container_initializing() -> None:
    store, _, _, _ = _waiting_on_unregistered_driver(init=True)
    taken_up = store.get("Pod", "trainer", "default")
    assert taken_up is not None
    conditions = _conditions(taken_up)
    assert conditions["Initialized"]["status"] == "False"
    assert conditions["Initialized"]["reason"] == "ContainersNotInitialized"
    assert conditions["Initialized"]["message"] == "containers with incomplete status: [fetch proxy]"
    # a sidecar (restartable init container) counts towards readiness before the main containers
    assert conditions["Ready"]["message"] == "containers with unready status: [proxy main side]"
    status = taken_up["status"]
    assert [(s["name"], s["state"]) for s in status["initContainerStatuses"]] == [
        ("fetch", {"waiting": {"reason": "PodInitializing"}}), ("proxy", {"waiting": {"reason": "PodInitializing"}})]
    assert {s["state"]["waiting"]["reason"] for s in status["containerStatuses"]} == {"PodInitializing"}
