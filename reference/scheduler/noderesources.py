"""kube-scheduler's NodeResourcesFit, for the pod count and extended resources (the reference models no CPU or
memory): a node fits a pod when it has room for one more pod (`status.allocatable.pods`, none when absent, as
upstream reads it: "Too many pods") and advertises, in `status.allocatable`, at least what the pod asks of
each extended resource, counting the pods already bound to it. With DRAExtendedResource (KEP-5004) a
resource some DeviceClass stands for is left to the DRA plugin on a node that does not advertise it."""

from __future__ import annotations

from collections import Counter

from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.scheduler.extendedresources import class_for, parse_count, pod_requests
from draconform.reference.scheduler.framework import SUCCESS, Code, CycleState, Status, node_name
from draconform.sut import Obj

NAME = "NodeResourcesFit"
REQUESTS = NAME + "/requests"
TOO_MANY_PODS = "Too many pods"  # upstream's reason, in the pod's unschedulable message


class NodeResourcesFit:
    name = NAME

    def __init__(self, store: ApiStore, gates: FeatureGates) -> None:
        self._store = store
        self._dra_backed = gates.enabled("DRAExtendedResource")

    def pre_filter(self, state: CycleState, pod: Obj) -> Status:
        """Never skipped: every pod needs room for one more pod on its node, whatever else it asks."""
        requests = pod_requests(pod)
        classes = self._store.list("DeviceClass") if self._dra_backed and requests else []
        state.data[REQUESTS] = (requests, {name for name in requests if class_for(name, classes) is not None})
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: Obj, nodes: list[Obj]) -> list[Status]:
        placed = Counter((other.get("spec") or {}).get("nodeName") for other in self._active_pods())
        return [self._fits(state, node, placed[node_name(node)]) for node in nodes]

    def filter(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        return self._fits(state, node, len(self._bound_to(node_name(node))))

    def _fits(self, state: CycleState, node: Obj, placed: int) -> Status:
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        if placed + 1 > parse_count(allocatable.get("pods", 0)):
            return Status(Code.UNSCHEDULABLE, TOO_MANY_PODS)
        found: tuple[dict[str, int], set[str]] | None = state.data.get(REQUESTS)
        if not found or not found[0]:  # the pod asks for no extended resource
            return SUCCESS
        requests, backed = found
        for name, count in sorted(requests.items()):
            have = parse_count(allocatable.get(name, 0))
            if name in backed and not have:
                continue  # served through DRA on this node (the DRA plugin decides whether it fits)
            used = sum(pod_requests(other).get(name, 0) for other in self._bound_to(node_name(node)))
            if have - used < count:
                return Status(Code.UNSCHEDULABLE, f"Insufficient {name}")
        return SUCCESS

    def _bound_to(self, node: str) -> list[Obj]:
        return [pod for pod in self._active_pods() if (pod.get("spec") or {}).get("nodeName") == node]

    def _active_pods(self) -> list[Obj]:
        """The pods kube-scheduler counts on nodes: bound and not finished (its informer leaves out Succeeded
        and Failed pods)."""
        return [pod for pod in self._store.list("Pod")
                if (pod.get("spec") or {}).get("nodeName") and (pod.get("status") or {}).get("phase") not in
                ("Succeeded", "Failed")]
