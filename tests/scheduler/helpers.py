"""A reference cluster with a fabric pool of devices that have binding conditions, and pods that each
use one claim: the shape the KEP-5007 unit tests and the bench share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from draconform.kube.kinds import with_pod_room
from draconform.reference.cluster import ReferenceCluster
from draconform.sut import ComponentConfig, Obj

DRIVER = "gpu.example.com"
CLASS = "fabric-gpu"
ATTACHED = "dra.example.com/attached"
FAILED = "dra.example.com/attach-failed"
NAMESPACE = "default"


def fabric_device(name: str, **extra: Any) -> Obj:
    return {"name": name, "bindsToNode": True, "bindingConditions": [ATTACHED],
            "bindingFailureConditions": [FAILED], **extra}


def cluster_with_fabric(
    devices: int, nodes: int = 1, scheduler_args: Mapping[str, Any] | None = None,
    scheduler: ComponentConfig | None = None,
) -> ReferenceCluster:
    configs = {"kube-scheduler": scheduler or ComponentConfig(args=dict(scheduler_args or {}))}
    cluster = ReferenceCluster(configs)
    store = cluster.store
    for index in range(nodes):
        store.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"worker-{index + 1}"}}))
    store.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS},
                  "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    store.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "fabric"},
                  "spec": {"driver": DRIVER, "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                           "allNodes": True, "devices": [fabric_device(f"gpu-{i}") for i in range(devices)]}})
    return cluster


def add_pod(cluster: ReferenceCluster, name: str, *claims: str) -> Obj:
    """A pod using standalone claims, each created here unless it exists, for one fabric device."""
    for claim in claims:
        if cluster.store.get("ResourceClaim", claim, NAMESPACE) is None:
            cluster.store.create({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": claim, "namespace": NAMESPACE},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": CLASS}}]}},
            })
    return cluster.store.create({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"containers": [{"name": "main", "image": "registry.example/app:1"}],
                 "resourceClaims": [{"name": f"c{i}", "resourceClaimName": c} for i, c in enumerate(claims)]},
    })


def set_condition(cluster: ReferenceCluster, claim: str, condition: str, status: str = "True") -> None:
    """Write one condition on every allocated device of a claim, as a driver would."""
    obj = cluster.store.get("ResourceClaim", claim, NAMESPACE)
    assert obj is not None
    entries = []
    for result in obj["status"]["allocation"]["devices"]["results"]:
        entries.append({"driver": result["driver"], "pool": result["pool"], "device": result["device"],
                        "conditions": [{"type": condition, "status": status, "reason": "Test", "message": "",
                                        "lastTransitionTime": "2026-01-01T00:00:00Z"}]})
    obj["status"]["devices"] = entries
    cluster.store.update_status(obj)


def node_of(cluster: ReferenceCluster, pod: str) -> str | None:
    obj = cluster.store.get("Pod", pod, NAMESPACE)
    assert obj is not None
    node: str | None = obj["spec"].get("nodeName")
    return node
