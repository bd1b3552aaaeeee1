"""kube-scheduler's per-node cache (its NodeInfo): for every node, the pods bound to it that still count (not
Succeeded or Failed, as its informer leaves them out) and what they request of each extended resource. The
scheduler keeps it from the pod watch events it already drains, so a Filter reads one node's entry instead of
listing every pod in the cluster: a pod's cost follows the nodes it visits, not the pods already placed."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from draconform.reference.scheduler.extendedresources import parse_count, pod_requests
from draconform.sut import Obj

PodKey = tuple[str, str]  # namespace, name


@dataclass
class NodeInfo:
    pods: dict[PodKey, dict[str, int]] = field(default_factory=dict)  # each counted pod -> its extended requests
    requested: Counter[str] = field(default_factory=Counter)  # their sum per extended resource


_EMPTY = NodeInfo()


class NodeInfos:
    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._placed: dict[PodKey, str] = {}  # each counted pod -> its node
        # each node's status.allocatable parsed, with the Node object it was read from (a new object is read again)
        self._allocatable: dict[str, tuple[Obj, dict[str, int]]] = {}

    def get(self, node: str) -> NodeInfo:
        """The node's entry (an empty one, not to be changed, for a node without counted pods)."""
        return self._nodes.get(node, _EMPTY)

    def allocatable(self, name: str, node: Obj) -> dict[str, int]:
        """What the node advertises, each amount parsed once per Node object (a count; 0 where unreadable)."""
        cached = self._allocatable.get(name)
        if cached is None or cached[0] is not node:
            found = (node.get("status") or {}).get("allocatable") or {}
            cached = self._allocatable[name] = (node, {key: parse_count(value) for key, value in found.items()})
        return cached[1]

    def node_deleted(self, name: str) -> None:
        self._allocatable.pop(name, None)

    def pod_changed(self, pod: Obj, deleted: bool = False) -> None:
        """Take in a pod's new state (or its deletion): counted on its node while bound and not finished."""
        meta = pod["metadata"]
        key = (meta.get("namespace") or "", meta["name"])
        node = (pod.get("spec") or {}).get("nodeName")
        counts = bool(node) and not deleted and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        before = self._placed.get(key)
        if before is not None and (not counts or before != node):
            self._forget(key, before)
        if counts and node:
            info = self._nodes.setdefault(node, NodeInfo())
            requests = pod_requests(pod)
            old = info.pods.get(key)
            if old is not None:
                info.requested.subtract(old)
            info.pods[key] = requests
            info.requested.update(requests)
            self._placed[key] = node

    def _forget(self, key: PodKey, node: str) -> None:
        del self._placed[key]
        info = self._nodes[node]
        info.requested.subtract(info.pods.pop(key))
        if not info.pods:
            del self._nodes[node]
