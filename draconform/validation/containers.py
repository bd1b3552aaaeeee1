"""What kube-apiserver checks of every container of a pod spec outside DRA that the suite's pods meet
(pkg/apis/core/validation: validateContainerCommon and validateResourceRequirements): an image is required,
and a container's requests and limits name container resources with valid quantities, where a resource that
cannot be overcommitted (an extended resource such as example.com/gpu, or hugepages) asked for in `requests`
needs a limit of the same amount and an extended resource is a whole number. Upstream reports these at the
container's field (`image`), at the map (`resources.requests`, `resources.limits`) or at the entry
(`resources.requests[example.com/gpu]`), as here. They belong to no DRA rule (no catalogue ID), yet a scenario
whose pod breaks one fails on a real cluster, so the reference and `serve` refuse them too."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from draconform.kube.values import parse_quantity
from draconform.validation.problems import MapKey, Path, Problem

# Resources a container may name without a domain (IsStandardContainerResourceName), hugepages-<size> besides
CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
HUGEPAGES = "hugepages-"
# Names of the core API's resource list without a domain (IsStandardResourceName): the container ones, quota's
STANDARD_RESOURCES = CONTAINER_RESOURCES | {
    "requests.cpu", "requests.memory", "requests.ephemeral-storage", "limits.cpu", "limits.memory",
    "limits.ephemeral-storage", "pods", "resourcequotas", "services", "replicationcontrollers", "secrets",
    "configmaps", "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
    "services.loadbalancers"}
_QUALIFIED_NAME = re.compile(r"^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                             r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


def is_native(name: str) -> bool:
    """A resource of Kubernetes itself: no domain, or one in kubernetes.io (IsNativeResource)."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended(name: str) -> bool:
    """An extended resource name (IsExtendedResourceName): not native, not "requests.", and "requests." + name
    a qualified name."""
    if is_native(name) or name.startswith("requests."):
        return False
    quota = "requests." + name
    return len(quota.partition("/")[0]) <= 253 and bool(_QUALIFIED_NAME.match(quota))


def overcommit_allowed(name: str) -> bool:
    """Whether a request may be below its limit (IsOvercommitAllowed): native resources but hugepages."""
    return is_native(name) and not name.startswith(HUGEPAGES)


def container_rules(container: dict[str, Any], where: Path) -> Iterator[Problem]:
    """The image and the resources of the container at `where`."""
    if not container.get("image"):
        yield Problem((*where, "image"), "Required value")
    resources = container.get("resources")
    if isinstance(resources, dict):
        yield from resource_rules(resources, (*where, "resources"))


def resource_rules(resources: dict[str, Any], where: Path) -> Iterator[Problem]:
    """A container's `resources.requests` and `resources.limits` (validateResourceRequirements)."""
    limits, requests = _map(resources.get("limits")), _map(resources.get("requests"))
    for name, value in limits.items():
        yield from _entry(str(name), value, (*where, "limits", MapKey(str(name))))
    for name, value in requests.items():
        name = str(name)
        yield from _entry(name, value, (*where, "requests", MapKey(name)))
        asked = _amount(value)
        if name not in limits:
            if not overcommit_allowed(name):
                yield Problem((*where, "limits"), "Required value: Limit must be set for non overcommitable "
                                                  "resources")
            continue
        limit = _amount(limits[name])
        if asked is None or limit is None:
            continue
        if asked != limit and not overcommit_allowed(name):
            yield Problem((*where, "requests"), f"Invalid value: {json.dumps(str(value))}: must be equal to {name} "
                                                f"limit of {limits[name]}")
        elif asked > limit:
            yield Problem((*where, "requests"), f"Invalid value: {json.dumps(str(value))}: must be less than or "
                                                f"equal to {name} limit of {limits[name]}")
    named = set(limits) | set(requests)
    if any(str(n).startswith(HUGEPAGES) for n in named) and not named & {"cpu", "memory"}:
        yield Problem(where, "Forbidden: HugePages require cpu or memory")


def _entry(name: str, value: Any, path: Path) -> Iterator[Problem]:
    """One resource name and its quantity (validateContainerResourceName, ValidateResourceQuantityValue)."""
    shown = json.dumps(name)
    if len(name.partition("/")[0] if "/" in name else "") > 253 or not _QUALIFIED_NAME.match(name):
        yield Problem(path, f"Invalid value: {shown}: must be a qualified name")
    elif "/" not in name:
        if name not in STANDARD_RESOURCES and not name.startswith(HUGEPAGES):
            yield Problem(path, f"Invalid value: {shown}: must be a standard resource type or fully qualified")
        if name not in CONTAINER_RESOURCES and not name.startswith(HUGEPAGES):
            yield Problem(path, f"Invalid value: {shown}: must be a standard resource for containers")
    elif not is_native(name) and not is_extended(name):
        yield Problem(path, f"Invalid value: {shown}: doesn't follow extended resource name standard")
    amount = _amount(value)
    if amount is None:
        return  # not a quantity: the API server's decoder refuses the body before validation
    if amount < 0:
        yield Problem(path, f"Invalid value: {json.dumps(str(value))}: must be greater than or equal to 0")
    if is_extended(name) and amount.denominator != 1:
        yield Problem(path, f"Invalid value: {json.dumps(str(value))}: must be an integer")


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}  # the schema reports another type


def _amount(value: Any) -> Fraction | None:
    try:
        return parse_quantity(value)
    except (ValueError, TypeError):
        return None
