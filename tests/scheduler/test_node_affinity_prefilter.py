"""NodeAffinity's PreFilter answers Skip, as upstream's does, only for a pod that asks for no node selector and no
required node affinity; a pod that asks for either is still filtered node by node with upstream's reason."""

from __future__ import annotations

from typing import Any

import pytest

from draconform.reference.scheduler.framework import Code, CycleState
from draconform.reference.scheduler.nodeaffinity import MISMATCH, NodeAffinity

NODE = {"metadata": {"name": "node-1", "labels": {"zone": "a"}}}


def _pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}}


def test_a_pod_without_selector_or_affinity_skips_filter() -> None:
    assert NodeAffinity().pre_filter(CycleState(), _pod()).code is Code.SKIP
    assert NodeAffinity().pre_filter(CycleState(), _pod(nodeSelector={})).code is Code.SKIP


@pytest.mark.parametrize("spec", [
    {"nodeSelector": {"zone": "b"}},
    {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}}}},
    # an empty required selector matches no node: it must not be skipped as if it were absent
    {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}},
])
def test_a_pod_asking_for_nodes_is_filtered(spec: dict[str, Any]) -> None:
    plugin, pod = NodeAffinity(), _pod(**spec)
    assert plugin.pre_filter(CycleState(), pod).code is Code.SUCCESS
    status = plugin.filter(CycleState(), pod, NODE)
    assert (status.code, status.message) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MISMATCH)
