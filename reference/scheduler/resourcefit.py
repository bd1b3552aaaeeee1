"""kube-scheduler's resource arithmetic of NodeResourcesFit as pure functions (pkg/scheduler/framework/plugins/
noderesources/fit.go, fitsRequest; component-helpers resource.PodRequests): what a pod asks of each resource
and which of a node's resources it does not fit in, given what the pods already there ask.

A pod asks the sum of its containers' requests (a sidecar, an init container with restartPolicy Always, counts
as a container), or what its largest init container needs together with the sidecars started before it if
that is more, resource by resource; pod-level `spec.resources.requests` replace cpu, memory and hugepages when
set; `spec.overhead` is added. Amounts are counted as upstream's Resource counts them: cpu in millicores,
everything else in whole units, each rounded up. A node offers `status.allocatable` (a resource it does not list
is 0). Reasons come in upstream's order: pods, cpu, memory, ephemeral-storage, then the other resources."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from draconform.kube.values import parse_quantity
from draconform.sut import Obj

CPU, MEMORY, EPHEMERAL_STORAGE, PODS = "cpu", "memory", "ephemeral-storage", "pods"
TOO_MANY_PODS = "Too many pods"  # upstream's reason, in the pod's unschedulable message
INSUFFICIENT = "Insufficient "  # upstream's reason for any other resource: "Insufficient cpu"
_POD_LEVEL = (CPU, MEMORY)  # and hugepages-*: what pod-level requests may set (IsSupportedPodLevelResource)
_FIRST = (CPU, MEMORY, EPHEMERAL_STORAGE)


def amount(name: str, value: Any) -> int:
    """A quantity as upstream's scheduler counts it: millicores for cpu, whole units (rounded up) otherwise;
    0 for what does not parse."""
    try:
        quantity = parse_quantity(value)
    except (ValueError, TypeError):
        return 0
    return math.ceil(quantity * 1000) if name == CPU else math.ceil(quantity)


def _requests(container: Any) -> dict[str, int]:
    """A container's requests, its limits standing in for those it leaves out (as the API defaults a pod's)."""
    resources = container.get("resources") if isinstance(container, dict) else None
    if not isinstance(resources, dict):
        return {}
    found: dict[str, int] = {}
    for source in (resources.get("limits"), resources.get("requests")):
        for name, value in source.items() if isinstance(source, dict) else ():
            found[str(name)] = amount(str(name), value)
    return found


def _add(total: dict[str, int], more: Mapping[str, int]) -> None:
    for name, value in more.items():
        total[name] = total.get(name, 0) + value


def pod_requests(pod: Obj) -> dict[str, int]:
    """What `pod` asks of each resource it names (resource.PodRequests with pod-level resources and overhead)."""
    spec = pod.get("spec") or {}
    total: dict[str, int] = {}
    for container in spec.get("containers") or ():
        _add(total, _requests(container))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in spec.get("initContainers") or ():
        asked = _requests(container)
        if isinstance(container, dict) and container.get("restartPolicy") == "Always":
            _add(total, asked)
            _add(sidecars, asked)
            during = dict(sidecars)
        else:
            during = dict(asked)
            _add(during, sidecars)
        for name, value in during.items():
            init_peak[name] = max(init_peak.get(name, 0), value)
    for name, value in init_peak.items():
        total[name] = max(total.get(name, 0), value)
    pod_level = (spec.get("resources") or {}).get("requests") if isinstance(spec.get("resources"), dict) else None
    for name, value in (pod_level or {}).items() if isinstance(pod_level, dict) else ():
        if name in _POD_LEVEL or str(name).startswith("hugepages-"):
            total[str(name)] = amount(str(name), value)
    overhead = spec.get("overhead")
    if isinstance(overhead, dict):
        _add(total, {str(name): amount(str(name), value) for name, value in overhead.items()})
    return total


def offered(allocatable: Mapping[str, Any]) -> dict[str, int]:
    """A node's `status.allocatable` in the amounts `insufficient` compares (parsed once per Node object)."""
    return {str(name): amount(str(name), value) for name, value in allocatable.items()}


def insufficient(asked: Mapping[str, int], offers: Mapping[str, int], used: Mapping[str, int],
                 pods_placed: int, delegated: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Every reason the pod asking `asked` does not fit a node offering `offers` (its allocatable, see `offered`)
    where `pods_placed` pods asking `used` together already are; resources in `delegated` are left to the DRA
    plugin (KEP-5004)."""
    reasons = []
    if pods_placed + 1 > offers.get(PODS, 0):
        reasons.append(TOO_MANY_PODS)
    others = sorted(name for name in asked if name not in _FIRST and name != PODS)
    for name in (*_FIRST, *others):
        wanted = asked.get(name, 0)
        if wanted <= 0 or name in delegated:
            continue
        if wanted > offers.get(name, 0) - used.get(name, 0):
            reasons.append(INSUFFICIENT + name)
    return reasons
