"""kube-scheduler's NodeResourcesFit, for extended resources only (the reference models no CPU or memory):
a node fits a pod when it advertises, in `status.allocatable`, at least what the pod asks of each extended
resource, counting the pods already bound to it. With DRAExtendedResource (KEP-5004) a resource some
DeviceClass stands for is left to the DRA plugin on a node that does not advertise it."""

from __future__ import annotations

from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.scheduler.extendedresources import class_for, parse_count, pod_requests
from draconform.reference.scheduler.framework import SUCCESS, Code, CycleState, Status, node_name
from draconform.sut import Obj

NAME = "NodeResourcesFit"
REQUESTS = NAME + "/requests"


class NodeResourcesFit:
    name = NAME

    def __init__(self, store: ApiStore, gates: FeatureGates) -> None:
        self._store = store
        self._dra_backed = gates.enabled("DRAExtendedResource")

    def pre_filter(self, state: CycleState, pod: Obj) -> Status:
        requests = pod_requests(pod)
        if not requests:
            return Status(Code.SKIP)
        classes = self._store.list("DeviceClass") if self._dra_backed else []
        state.data[REQUESTS] = (requests, {name for name in requests if class_for(name, classes) is not None})
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: Obj, nodes: list[Obj]) -> list[Status]:
        if REQUESTS not in state.data:  # the pod asks for no extended resource: every node fits
            return [SUCCESS] * len(nodes)
        return [self.filter(state, pod, node) for node in nodes]

    def filter(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        found: tuple[dict[str, int], set[str]] | None = state.data.get(REQUESTS)
        if found is None:
            return SUCCESS
        requests, backed = found
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        for name, count in sorted(requests.items()):
            have = parse_count(allocatable.get(name, 0))
            if name in backed and not have:
                continue  # served through DRA on this node (the DRA plugin decides whether it fits)
            used = sum(pod_requests(other).get(name, 0) for other in self._bound_to(node_name(node)))
            if have - used < count:
                return Status(Code.UNSCHEDULABLE, f"Insufficient {name}")
        return SUCCESS

    def _bound_to(self, node: str) -> list[Obj]:
        return [pod for pod in self._store.list("Pod")
                if pod["spec"].get("nodeName") == node and (pod.get("status") or {}).get("phase") not in
                ("Succeeded", "Failed")]
