"""kube-scheduler's NodeResourcesFit, for the pod count and extended resources (the reference models no CPU or
memory): a node fits a pod when it has room for one more pod (`status.allocatable.pods`, none when absent, as
upstream reads it: "Too many pods") and advertises, in `status.allocatable`, at least what the pod asks of
each extended resource, counting the pods already bound to it. With DRAExtendedResource (KEP-5004) a
resource some DeviceClass stands for is left to the DRA plugin on a node that does not advertise it.

A node's allocatable and what is bound to it are read from the scheduler's per-node cache (`nodeinfo.NodeInfos`),
as upstream reads its NodeInfo snapshot: a node's verdict costs the same however many pods the cluster holds."""

from __future__ import annotations

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.interface import node_names
from draconform.reference.apiserver.interface import ApiReader
from draconform.reference.scheduler.extendedresources import class_for, pod_requests
from draconform.reference.scheduler.framework import SUCCESS, Code, CycleState, Status, node_name
from draconform.reference.scheduler.nodeinfo import NodeInfo, NodeInfos
from draconform.sut import Obj

NAME = "NodeResourcesFit"
REQUESTS = NAME + "/requests"
TOO_MANY_PODS = "Too many pods"  # upstream's reason, in the pod's unschedulable message


class NodeResourcesFit:
    name = NAME

    def __init__(self, store: ApiReader, gates: FeatureGates, infos: NodeInfos) -> None:
        self._store = store
        self._infos = infos
        self._dra_backed = gates.enabled("DRAExtendedResource")

    def pre_filter(self, state: CycleState, pod: Obj) -> Status:
        """Never skipped: every pod needs room for one more pod on its node, whatever else it asks."""
        requests = pod_requests(pod)
        classes = self._store.view("DeviceClass") if self._dra_backed and requests else []
        state.data[REQUESTS] = (requests, {name for name in requests if class_for(name, classes) is not None})
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: Obj, nodes: list[Obj]) -> list[Status]:
        found: tuple[dict[str, int], set[str]] | None = state.data.get(REQUESTS)
        names = node_names(nodes)
        if not found or not found[0]:  # the pod asks for no extended resource: only the pod count (every node)
            room = self._infos.with_room
            if room.issuperset(names):  # the usual case: every node asked has room (one pass in C)
                return [SUCCESS] * len(names)
            return [SUCCESS if name in room else _NO_ROOM for name in names]
        return [self._fits(found, self._infos.get(name)) for name in names]

    def filter(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        return self._fits(state.data.get(REQUESTS), self._infos.get(node_name(node)))

    @staticmethod
    def _fits(found: tuple[dict[str, int], set[str]] | None, info: NodeInfo) -> Status:
        allocatable = info.allocatable
        if len(info.pods) + 1 > allocatable.get("pods", 0):
            return _NO_ROOM
        if not found or not found[0]:  # the pod asks for no extended resource
            return SUCCESS
        requests, backed = found
        for name, count in sorted(requests.items()):
            have = allocatable.get(name, 0)
            if name in backed and not have:
                continue  # served through DRA on this node (the DRA plugin decides whether it fits)
            if have - info.requested.get(name, 0) < count:
                return Status(Code.UNSCHEDULABLE, f"Insufficient {name}")
        return SUCCESS


_NO_ROOM = Status(Code.UNSCHEDULABLE, TOO_MANY_PODS)  # one object: the framework names each distinct status once
