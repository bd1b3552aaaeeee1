"""Unit tests of the reference kubelet's plumbing that the conformance scenarios do not isolate: graceful
deletion of bound pods in the store, pods of nodes without a kubelet, and the plugin registry's refusals."""

from __future__ import annotations

import pytest

from draconform.kube.kinds import with_pod_room
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.reference.cluster import ReferenceCluster
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
