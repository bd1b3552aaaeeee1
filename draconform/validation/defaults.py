"""kube-apiserver's defaulting of resource.k8s.io/v1 objects, applied to what the reference stores: an
exact request or a subrequest without an allocation mode is ExactCount, and one that is ExactCount with no
count (or count 0, which Go cannot tell from unset) asks for one device; a device taint (in a ResourceSlice
or a DeviceTaintRule) without timeAdded gets the time of the write, to the second; a Pod's container with a
limit and no request of a resource asks for its limit (core/v1 SetDefaults_Pod; pods only, not the templates
of workloads); a Kubernetes 1.36 device's nodeAllocatableResourceMappings entry without allocationMultiplier
gets 1 (1.36's SetDefaults_Device). A client reading the object back sees these fields, as from a real cluster."""

from __future__ import annotations

from typing import Any

from draconform.sut import Obj

# The catalogued rule the taint defaulting implements (the request defaults are part of
# DRA-API/REQUEST-ALLOCATION-MODE, which validation cites).
TAINT_TIME_ADDED_RULE = "DRA-API/DEVICE-TAINT-TIME-ADDED"

_CLAIM_KINDS = {"ResourceClaim": ("spec",), "ResourceClaimTemplate": ("spec", "spec")}


def apply_request_defaults(obj: Obj) -> None:
    """Default every exact request and subrequest of a v1 ResourceClaim or ResourceClaimTemplate in place."""
    path = _CLAIM_KINDS.get(str(obj.get("kind")))
    if path is None or obj.get("apiVersion") != "resource.k8s.io/v1":
        return
    spec: Any = obj
    for key in path:
        spec = spec.get(key) if isinstance(spec, dict) else None
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    for request in requests if isinstance(requests, list) else []:
        if not isinstance(request, dict):
            continue
        _default_count(request.get("exactly"))
        alternatives = request.get("firstAvailable")
        for sub in alternatives if isinstance(alternatives, list) else []:
            _default_count(sub)


def _default_count(request: Any) -> None:
    if not isinstance(request, dict):
        return
    request.setdefault("allocationMode", "ExactCount")
    if request["allocationMode"] == "ExactCount" and request.get("count") in (None, 0):
        request["count"] = 1


def apply_pod_defaults(obj: Obj) -> None:
    """Default, in place, each container's and init container's requests to its limits where it has none."""
    spec = obj.get("spec") if obj.get("kind") == "Pod" and obj.get("apiVersion") == "v1" else None
    if not isinstance(spec, dict):
        return
    for group in ("initContainers", "containers"):
        containers = spec.get(group)
        for container in containers if isinstance(containers, list) else []:
            resources = container.get("resources") if isinstance(container, dict) else None
            if not isinstance(resources, dict) or not isinstance(resources.get("limits"), dict) \
                    or not resources["limits"]:
                continue
            limits = resources["limits"]
            requests = resources.setdefault("requests", {})
            if isinstance(requests, dict):
                for name, value in limits.items():
                    requests.setdefault(name, value)


# The kinds whose taints `apply_taint_defaults` stamps
TAINTED_KINDS = frozenset({"DeviceTaintRule", "ResourceSlice"})


def apply_taint_defaults(obj: Obj, now: str) -> None:
    """Stamp `now` (RFC 3339, seconds) on every taint of a v1 ResourceSlice or DeviceTaintRule that has no
    timeAdded, in place; a taint that has one keeps it."""
    if obj.get("apiVersion") != "resource.k8s.io/v1":
        return
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if obj.get("kind") == "DeviceTaintRule":
        taints: list[Any] = [spec.get("taint")]
    elif obj.get("kind") == "ResourceSlice":
        devices = spec.get("devices")
        taints = [taint for device in devices if isinstance(device, dict)
                  for taint in device.get("taints") or ()] if isinstance(devices, list) else []
    else:
        return
    for taint in taints:
        if isinstance(taint, dict) and not taint.get("timeAdded"):
            taint["timeAdded"] = now


def apply_device_defaults(obj: Obj) -> None:
    """Give every `nodeAllocatableResourceMappings` entry (Kubernetes 1.36's alpha field, present only where the
    release keeps it) without an allocationMultiplier the multiplier 1, in place."""
    if obj.get("kind") != "ResourceSlice" or obj.get("apiVersion") != "resource.k8s.io/v1":
        return
    spec = obj.get("spec")
    devices = spec.get("devices") if isinstance(spec, dict) else None
    for device in devices if isinstance(devices, list) else []:
        mappings = device.get("nodeAllocatableResourceMappings") if isinstance(device, dict) else None
        for entry in mappings.values() if isinstance(mappings, dict) else ():
            if isinstance(entry, dict) and entry.get("allocationMultiplier") is None:
                entry["allocationMultiplier"] = "1"
