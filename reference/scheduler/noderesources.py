"""kube-scheduler's NodeResourcesFit: a node fits a pod when it has room for one more pod (`status.allocatable.pods`,
none when absent, as upstream reads it: "Too many pods") and offers, in `status.allocatable`, at least what the
pod asks of cpu, memory, ephemeral-storage and every other resource beyond what the pods already bound to it ask
(the arithmetic is resourcefit.py's). With DRAExtendedResource (KEP-5004) an extended resource some DeviceClass
stands for is left to the DRA plugin on a node that does not advertise it."""

from __future__ import annotations

from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.scheduler.extendedresources import class_for, is_extended_name
from draconform.reference.scheduler.framework import SUCCESS, Code, CycleState, Status, node_name
from draconform.reference.scheduler.resourcefit import amount, insufficient, pod_requests, requested_on_node
from draconform.sut import Obj

NAME = "NodeResourcesFit"
REQUESTS = NAME + "/requests"


class NodeResourcesFit:
    name = NAME

    def __init__(self, store: ApiStore, gates: FeatureGates) -> None:
        self._store = store
        self._dra_backed = gates.enabled("DRAExtendedResource")

    def pre_filter(self, state: CycleState, pod: Obj) -> Status:
        """Never skipped: every pod needs room for one more pod on its node, whatever else it asks."""
        requests = pod_requests(pod)
        extended = [name for name in requests if is_extended_name(name)]
        classes = self._store.list("DeviceClass") if self._dra_backed and extended else []
        state.data[REQUESTS] = (requests, {name for name in extended if class_for(name, classes) is not None})
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: Obj, nodes: list[Obj]) -> list[Status]:
        placed: dict[str, list[Obj]] = {}
        for other in self._active_pods():
            placed.setdefault((other.get("spec") or {}).get("nodeName") or "", []).append(other)
        return [self._fits(state, node, placed.get(node_name(node), [])) for node in nodes]

    def filter(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        return self._fits(state, node, self._bound_to(node_name(node)))

    def _fits(self, state: CycleState, node: Obj, placed: list[Obj]) -> Status:
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        found: tuple[dict[str, int], set[str]] | None = state.data.get(REQUESTS)
        requests, backed = found or ({}, set())
        # served through DRA on this node (the DRA plugin decides whether it fits)
        delegated = frozenset(name for name in backed if not amount(name, allocatable.get(name, 0)))
        used = requested_on_node(placed) if requests else {}
        reasons = insufficient(requests, allocatable, used, len(placed), delegated)
        return Status(Code.UNSCHEDULABLE, ", ".join(reasons)) if reasons else SUCCESS

    def _bound_to(self, node: str) -> list[Obj]:
        return [pod for pod in self._active_pods() if (pod.get("spec") or {}).get("nodeName") == node]

    def _active_pods(self) -> list[Obj]:
        """The pods kube-scheduler counts on nodes: bound and not finished (its informer leaves out Succeeded
        and Failed pods)."""
        return [pod for pod in self._store.list("Pod")
                if (pod.get("spec") or {}).get("nodeName") and (pod.get("status") or {}).get("phase") not in
                ("Succeeded", "Failed")]
