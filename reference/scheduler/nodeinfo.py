"""kube-scheduler's per-node cache (its NodeInfo): for every node, what it advertises (`status.allocatable`,
parsed once per Node object), the pods bound to it that still count (not Succeeded or Failed, as its informer
leaves them out) and what they request of each resource (cpu, memory, ephemeral-storage, extended resources).
The scheduler keeps it from the watch events it already drains, so a Filter reads one node's entry instead of
listing every pod in the cluster: a pod's cost follows the nodes it visits, not the pods already placed."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from draconform.reference.scheduler.resourcefit import offered, pod_requests
from draconform.sut import Obj

PodKey = tuple[str, str]  # namespace, name


@dataclass
class NodeInfo:
    allocatable: dict[str, int] = field(default_factory=dict)  # each advertised amount (resourcefit.offered)
    pods: dict[PodKey, dict[str, int]] = field(default_factory=dict)  # each counted pod -> its requests
    requested: Counter[str] = field(default_factory=Counter)  # their sum per resource


_EMPTY = NodeInfo()


class NodeInfos:
    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}  # every known node, and any node that counted pods name
        self._placed: dict[PodKey, str] = {}  # each counted pod -> its node
        # The known nodes with room for one more pod: the pod-count Filter of a pod that asks for nothing else is
        # one set look-up per node.
        self.with_room: set[str] = set()

    def get(self, node: str) -> NodeInfo:
        """The node's entry (an empty one, not to be changed, for a node neither seen nor holding pods)."""
        return self._nodes.get(node, _EMPTY)

    def node_changed(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        info = self._nodes.setdefault(name, NodeInfo())
        found = (node.get("status") or {}).get("allocatable") or {}
        info.allocatable = offered(found)
        self._room(name, info)

    def node_deleted(self, name: str) -> None:
        info = self._nodes.get(name)
        if info is not None:
            info.allocatable = {}
            self._room(name, info)

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
            self._room(node, info)

    def _forget(self, key: PodKey, node: str) -> None:
        del self._placed[key]
        info = self._nodes[node]
        info.requested.subtract(info.pods.pop(key))
        self._room(node, info)

    def _room(self, name: str, info: NodeInfo) -> None:
        if len(info.pods) < info.allocatable.get("pods", 0):
            self.with_room.add(name)
        else:
            self.with_room.discard(name)
            if not info.pods and not info.allocatable:
                del self._nodes[name]  # neither seen nor holding pods: nothing to keep
