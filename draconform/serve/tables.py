"""Server-side Tables (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), what `kubectl get` prints:
the columns of upstream's printers for the kinds serve stores (pods, nodes, namespaces, config maps, events
and the DRA kinds), with the wide ones at priority 1."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from draconform.sut import Obj

Column = tuple[str, str, int, Callable[[Obj], Any]]  # name, type, priority, cell


def wanted(accept: str) -> bool:
    return "as=Table" in accept.replace(" ", "")


def _age(obj: Obj) -> str:
    return human_duration((obj.get("metadata") or {}).get("creationTimestamp"))


def human_duration(timestamp: str | None) -> str:
    """Go's duration.HumanDuration of the time since `timestamp`, as kubectl's AGE column."""
    if not timestamp:
        return "<unknown>"
    try:
        then = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return "<invalid>"
    seconds = int((datetime.now(UTC) - then).total_seconds())
    if seconds < 0:
        return "<invalid>"
    if seconds < 120:
        return f"{seconds}s"
    minutes, hours = seconds // 60, seconds // 3600
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    return f"{hours // 24 // 365}y"


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _pod_ready(pod: Obj) -> str:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    total = len((pod.get("spec") or {}).get("containers") or [])
    return f"{sum(1 for s in statuses if s.get('ready'))}/{total}"


def _pod_status(pod: Obj) -> str:
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    status = pod.get("status") or {}
    if status.get("reason"):
        return str(status["reason"])
    gates = (pod.get("spec") or {}).get("schedulingGates")
    if gates and status.get("phase", "Pending") == "Pending":
        return "SchedulingGated"
    for container in status.get("containerStatuses") or []:
        waiting = (container.get("state") or {}).get("waiting") or {}
        if waiting.get("reason"):
            return str(waiting["reason"])
    return str(status.get("phase") or "Pending")


def _restarts(pod: Obj) -> int:
    return sum(int(s.get("restartCount") or 0) for s in (pod.get("status") or {}).get("containerStatuses") or [])


def _node_status(node: Obj) -> str:
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = next((c for c in conditions if c.get("type") == "Ready"), None)
    text = "Ready" if ready and ready.get("status") == "True" else "NotReady" if ready else "Unknown"
    if (node.get("spec") or {}).get("unschedulable"):
        text += ",SchedulingDisabled"
    return text


def _roles(node: Obj) -> str:
    prefix = "node-role.kubernetes.io/"
    roles = sorted(key[len(prefix):] for key in ((node.get("metadata") or {}).get("labels") or {})
                   if key.startswith(prefix))
    return ",".join(roles) or "<none>"


def _address(node: Obj, kind: str) -> str:
    addresses = (node.get("status") or {}).get("addresses") or []
    return next((a.get("address", "") for a in addresses if a.get("type") == kind), "<none>")


def _claim_state(claim: Obj) -> str:
    states = []
    if (claim.get("metadata") or {}).get("deletionTimestamp"):
        states.append("deleted")
    status = claim.get("status") or {}
    states.append("allocated" if status.get("allocation") else "pending")
    if status.get("reservedFor"):
        states.append("reserved")
    return ",".join(states)


def _info(node: Obj, key: str) -> str:
    return str(((node.get("status") or {}).get("nodeInfo") or {}).get(key, ""))


COLUMNS: dict[str, list[Column]] = {
    "Pod": [("Name", "string", 0, _name), ("Ready", "string", 0, _pod_ready), ("Status", "string", 0, _pod_status),
            ("Restarts", "string", 0, _restarts), ("Age", "string", 0, _age),
            ("IP", "string", 1, lambda p: (p.get("status") or {}).get("podIP") or "<none>"),
            ("Node", "string", 1, lambda p: (p.get("spec") or {}).get("nodeName") or "<none>"),
            ("Nominated Node", "string", 1, lambda p: (p.get("status") or {}).get("nominatedNodeName") or "<none>"),
            ("Readiness Gates", "string", 1, lambda p: "<none>")],
    "Node": [("Name", "string", 0, _name), ("Status", "string", 0, _node_status), ("Roles", "string", 0, _roles),
             ("Age", "string", 0, _age), ("Version", "string", 0, lambda n: _info(n, "kubeletVersion")),
             ("Internal-IP", "string", 1, lambda n: _address(n, "InternalIP")),
             ("External-IP", "string", 1, lambda n: _address(n, "ExternalIP")),
             ("OS-Image", "string", 1, lambda n: _info(n, "osImage")),
             ("Kernel-Version", "string", 1, lambda n: _info(n, "kernelVersion")),
             ("Container-Runtime", "string", 1, lambda n: _info(n, "containerRuntimeVersion"))],
    "Namespace": [("Name", "string", 0, _name),
                  ("Status", "string", 0, lambda n: (n.get("status") or {}).get("phase", "")),
                  ("Age", "string", 0, _age)],
    "ConfigMap": [("Name", "string", 0, _name),
                  ("Data", "integer", 0, lambda c: len(c.get("data") or {}) + len(c.get("binaryData") or {})),
                  ("Age", "string", 0, _age)],
    "Event": [("Last Seen", "string", 0, lambda e: human_duration(e.get("lastTimestamp") or e.get("eventTime"))),
              ("Type", "string", 0, lambda e: e.get("type", "")),
              ("Reason", "string", 0, lambda e: e.get("reason", "")),
              ("Object", "string", 0, lambda e: f"{(e.get('involvedObject') or {}).get('kind', '').lower()}/"
                                                f"{(e.get('involvedObject') or {}).get('name', '')}"),
              ("Message", "string", 0, lambda e: e.get("message", ""))],
    "ResourceClaim": [("Name", "string", 0, _name), ("State", "string", 0, _claim_state), ("Age", "string", 0, _age)],
    "ResourceSlice": [("Name", "string", 0, _name),
                      ("Node", "string", 0, lambda s: (s.get("spec") or {}).get("nodeName") or "<none>"),
                      ("Driver", "string", 0, lambda s: (s.get("spec") or {}).get("driver", "")),
                      ("Pool", "string", 0, lambda s: ((s.get("spec") or {}).get("pool") or {}).get("name", "")),
                      ("Age", "string", 0, _age)],
}
DEFAULT_COLUMNS: list[Column] = [("Name", "string", 0, _name), ("Age", "string", 0, _age)]


def table(kind: str, items: list[Obj], meta: Obj, include: str = "Metadata") -> Obj:
    """A meta.k8s.io/v1 Table of `items`; each row carries its object as `include` asks (None, Metadata,
    Object)."""
    columns = COLUMNS.get(kind, DEFAULT_COLUMNS)
    definitions = [{"name": name, "type": kind_, "format": "name" if name == "Name" else "", "description": "",
                    "priority": priority} for name, kind_, priority, _ in columns]
    rows = []
    for obj in items:
        row: Obj = {"cells": [cell(obj) for _, _, _, cell in columns]}
        if include == "Object":
            row["object"] = obj
        elif include != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": obj.get("metadata") or {}}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": definitions,
            "rows": rows}
