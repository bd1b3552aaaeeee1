"""Where admin access to devices may be asked for (gate DRAAdminAccess): only in a namespace labelled
`resource.kubernetes.io/admin-access: "true"`. kube-apiserver's ResourceClaim and ResourceClaimTemplate
strategies check it on create (the spec is immutable after), at the first `exactly` request asking for it, and
the ResourceClaim status strategy checks an allocation result granting it when the stored allocation granted
none. The error is Forbidden at `spec.devices.requests[i].adminAccess` (the path of the claim spec, also for a
template, and without `exactly`, as upstream names it) or `status.allocation.devices.results[i].adminAccess`.
It needs the namespace's labels, which an object alone does not carry: the reference store's admission passes
them in."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from draconform.validation.problems import Path, Problem

RULE = "DRA-API/ADMIN-ACCESS-NAMESPACE"
LABEL = "resource.kubernetes.io/admin-access"
MESSAGE = f"Forbidden: admin access to devices requires the `{LABEL}: true` label on the containing namespace"
_SPECS: dict[str, tuple[str, ...]] = {"ResourceClaim": ("spec",), "ResourceClaimTemplate": ("spec", "spec")}


def admin_access_problems(obj: Mapping[str, Any], old: Mapping[str, Any] | None,
                          namespace_labels: Mapping[str, str]) -> list[Problem]:
    """The admin access `obj` asks for or is granted that its namespace (with `namespace_labels`) does not allow;
    `old` is the stored object on an update. Nothing to check when the namespace allows it."""
    if obj.get("apiVersion") != "resource.k8s.io/v1" or namespace_labels.get(LABEL) == "true":
        return []
    where = _SPECS.get(str(obj.get("kind")))
    if where is None:
        return []
    if old is None:
        spec: Any = obj
        for field in where:
            spec = spec.get(field) if isinstance(spec, dict) else None
        first = next(_asking(spec), None)
        return [] if first is None else [Problem(("spec", "devices", "requests", first, "adminAccess"), MESSAGE, RULE)]
    if obj.get("kind") != "ResourceClaim" or next(_granted(old), None) is not None:
        return []  # an allocation is immutable: one granted before was allowed then
    first = next(_granted(obj), None)
    return [] if first is None else [Problem(_result_path(first), MESSAGE, RULE)]


def _asking(spec: Any) -> Iterator[int]:
    """Indices of the `exactly` requests asking for admin access (a subrequest cannot: validation refuses it)."""
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    for index, request in enumerate(requests if isinstance(requests, list) else []):
        exactly = request.get("exactly") if isinstance(request, dict) else None
        if isinstance(exactly, dict) and exactly.get("adminAccess") is True:
            yield index


def _granted(claim: Mapping[str, Any]) -> Iterator[int]:
    status = claim.get("status")
    allocation = status.get("allocation") if isinstance(status, dict) else None
    devices = allocation.get("devices") if isinstance(allocation, dict) else None
    results = devices.get("results") if isinstance(devices, dict) else None
    for index, result in enumerate(results if isinstance(results, list) else []):
        if isinstance(result, dict) and result.get("adminAccess") is True:
            yield index


def _result_path(index: int) -> Path:
    return ("status", "allocation", "devices", "results", index, "adminAccess")
