"""The table of API kinds the harness knows: their apiVersion, whether they are namespaced and whether
status is a separate subresource. The reference API server serves these, `draconform allocate` reads
them, and the steps name them; the classic KEP-3063 API (cdi.k8s.io/v1alpha1) is a second table, since a
cluster serves one API or the other."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RESOURCE_API = "resource.k8s.io/v1"
CLASSIC_API = "cdi.k8s.io/v1alpha1"
# The finalizer kube-scheduler puts on a claim it allocates, so the claim is not deleted while allocated;
# the kubelet and the resourceclaim controller take it off once the allocation is gone.
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"


@dataclass(frozen=True)
class KindInfo:
    api_version: str
    namespaced: bool
    has_status: bool  # whether status is a separate subresource


KINDS: dict[str, KindInfo] = {
    "DeviceClass": KindInfo(RESOURCE_API, namespaced=False, has_status=False),
    "ResourceSlice": KindInfo(RESOURCE_API, namespaced=False, has_status=False),
    "ResourceClaim": KindInfo(RESOURCE_API, namespaced=True, has_status=True),
    "ResourceClaimTemplate": KindInfo(RESOURCE_API, namespaced=True, has_status=False),
    "DeviceTaintRule": KindInfo(RESOURCE_API, namespaced=False, has_status=True),
    "Pod": KindInfo("v1", namespaced=True, has_status=True),
    "Node": KindInfo("v1", namespaced=False, has_status=True),
}

# What a cluster's API serves to a client beyond the DRA kinds and the objects they name: a namespace per
# scenario of a live run and the events components record. The live client and the reference store behind
# `draconform serve` use this table; in process, and for `draconform allocate`, they are not objects.
SERVED_KINDS: dict[str, KindInfo] = {
    **KINDS,
    "Namespace": KindInfo("v1", namespaced=False, has_status=False),
    "Event": KindInfo("v1", namespaced=True, has_status=False),
    # How a live run programs `draconform serve`'s reference driver and external controllers.
    "ConfigMap": KindInfo("v1", namespaced=True, has_status=False),
}

CLASSIC_KINDS: dict[str, KindInfo] = {
    "ResourceClass": KindInfo(CLASSIC_API, namespaced=False, has_status=False),
    "ResourceClaim": KindInfo(CLASSIC_API, namespaced=True, has_status=True),
    "Pod": KINDS["Pod"],
    "Node": KINDS["Node"],
}

# Kinds whose objects live in a namespace, in either API.
NAMESPACED = frozenset(kind for table in (KINDS, CLASSIC_KINDS) for kind, info in table.items() if info.namespaced)


# What a kubelet registers its Node with: its maxPods by default, and the machine's cpu, memory and local storage
# (here a modest worker's). kube-scheduler's NodeResourcesFit refuses every pod on a node whose
# `status.allocatable.pods` is absent ("Too many pods"), and a pod asking for cpu or memory on a node that lists
# none ("Insufficient memory").
KUBELET_MAX_PODS = "110"
KUBELET_RESOURCES = {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "100Gi", "pods": KUBELET_MAX_PODS}


def with_pod_room(node: dict[str, Any]) -> dict[str, Any]:
    """`node` with `status.capacity` and `status.allocatable` of cpu, memory, ephemeral-storage and pods as a
    kubelet registers them, each kept where `node` already sets it (room for pods, and for what they ask)."""
    if not node.get("status"):
        node["status"] = {}
    for field in ("capacity", "allocatable"):
        if not node["status"].get(field):
            node["status"][field] = {}
        for name, value in KUBELET_RESOURCES.items():
            node["status"][field].setdefault(name, value)
    return node
