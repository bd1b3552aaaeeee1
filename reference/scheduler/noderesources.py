"""kube-scheduler's NodeResourcesFit: a node fits a pod when it has room for one more pod (`status.allocatable.pods`,
none when absent, as upstream reads it: "Too many pods") and offers, in `status.allocatable`, at least what the
pod asks of cpu, memory, ephemeral-storage and every other resource beyond what the pods already bound to it ask
(the arithmetic is resourcefit.py's). With DRAExtendedResource (KEP-5004) an extended resource some DeviceClass
stands for is left to the DRA plugin on a node that does not advertise it.

A node's allocatable and what is bound to it are read from the scheduler's per-node cache (`nodeinfo.NodeInfos`),
as upstream reads its NodeInfo snapshot: a node's verdict costs the same however many pods the cluster holds."""

from __future__ import annotations

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.interface import Distinct, node_names
from draconform.reference.apiserver.interface import ApiReader
from draconform.reference.scheduler.extendedresources import class_for, is_extended_name
from draconform.reference.scheduler.framework import SUCCESS, Code, CycleState, Status, node_name
from draconform.reference.scheduler.nodeinfo import NodeInfo, NodeInfos
from draconform.reference.scheduler.resourcefit import TOO_MANY_PODS, insufficient, pod_requests
from draconform.sut import Obj

NAME = "NodeResourcesFit"
REQUESTS = NAME + "/requests"


class NodeResourcesFit:
    name = NAME

    def __init__(self, store: ApiReader, gates: FeatureGates, infos: NodeInfos) -> None:
        self._store = store
        self._infos = infos
        self._dra_backed = gates.enabled("DRAExtendedResource")

    def pre_filter(self, state: CycleState, pod: Obj) -> Status:
        """Never skipped: every pod needs room for one more pod on its node, whatever else it asks."""
        requests = pod_requests(pod)
        extended = [name for name in requests if is_extended_name(name)]
        classes = self._store.view("DeviceClass") if self._dra_backed and extended else []
        state.data[REQUESTS] = (requests, {name for name in extended if class_for(name, classes) is not None})
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: Obj, nodes: list[Obj]) -> list[Status]:
        found: tuple[dict[str, int], set[str]] | None = state.data.get(REQUESTS)
        names = node_names(nodes)
        if not found or not found[0]:  # the pod asks for nothing but room: only the pod count (every node)
            room = self._infos.with_room
            if room.issuperset(names):  # the usual case: every node asked has room (one pass in C)
                return Distinct([SUCCESS] * len(names), (SUCCESS,))
            return [SUCCESS if name in room else _NO_ROOM for name in names]
        return [self._fits(found, self._infos.get(name)) for name in names]

    def filter(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        return self._fits(state.data.get(REQUESTS), self._infos.get(node_name(node)))

    @staticmethod
    def _fits(found: tuple[dict[str, int], set[str]] | None, info: NodeInfo) -> Status:
        offers = info.allocatable
        if not found or not found[0]:  # the pod asks for nothing but room
            return SUCCESS if len(info.pods) + 1 <= offers.get("pods", 0) else _NO_ROOM
        requests, backed = found
        # served through DRA on this node (the DRA plugin decides whether it fits)
        delegated = {name for name in backed if not offers.get(name, 0)}
        reasons = insufficient(requests, offers, info.requested, len(info.pods), delegated)
        if reasons == [TOO_MANY_PODS]:
            return _NO_ROOM
        return Status(Code.UNSCHEDULABLE, ", ".join(reasons)) if reasons else SUCCESS


_NO_ROOM = Status(Code.UNSCHEDULABLE, TOO_MANY_PODS)  # one object: the framework names each distinct status once
