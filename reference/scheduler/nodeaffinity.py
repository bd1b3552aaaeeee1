"""kube-scheduler's NodeAffinity filter: a node fits a pod only when its labels match the pod's
`spec.nodeSelector` (every pair) and its required node affinity (`requiredDuringSchedulingIgnoredDuringExecution`,
a core/v1 NodeSelector). Upstream rejects the others as UnschedulableAndUnresolvable with the reason below.
As upstream's PreFilter, a pod asking for neither is answered Skip, so Filter is not run for each node it visits."""

from __future__ import annotations

from draconform.reference.nodeselector import selector_matches
from draconform.reference.scheduler.framework import SUCCESS, Code, CycleState, Status
from draconform.sut import Obj

NAME = "NodeAffinity"
MISMATCH = "node(s) didn't match Pod's node affinity/selector"  # upstream's reason
SKIP = Status(Code.SKIP)


class NodeAffinity:
    name = NAME

    def pre_filter(self, state: CycleState, pod: Obj) -> Status:
        spec = pod.get("spec") or {}
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution")
        return SKIP if not spec.get("nodeSelector") and required is None else SUCCESS

    def filter(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        spec = pod.get("spec") or {}
        labels = (node.get("metadata") or {}).get("labels") or {}
        wanted = spec.get("nodeSelector") or {}
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution")
        if any(labels.get(key) != value for key, value in wanted.items()) or not selector_matches(required, node):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MISMATCH)
        return SUCCESS
