"""The scheduler's per-node cache (kube-scheduler's NodeInfo): what NodeResourcesFit reads instead of listing pods."""

from __future__ import annotations

from draconform.reference.scheduler.nodeinfo import NodeInfos
from draconform.sut import Obj


def _node(name: str, pods: str = "2", **extended: str) -> Obj:
    return {"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": {"pods": pods, **extended}}}


def _pod(name: str, node: str | None, phase: str = "Running", gpus: int = 0) -> Obj:
    container: Obj = {"name": "main"}
    if gpus:
        container["resources"] = {"requests": {"example.com/gpu": str(gpus)}, "limits": {"example.com/gpu": str(gpus)}}
    spec: Obj = {"containers": [container]}
    if node:
        spec["nodeName"] = node
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec,
            "status": {"phase": phase}}


def test_bound_pods_count_until_they_finish_move_or_go() -> None:
    infos = NodeInfos()
    infos.node_changed(_node("a", pods="2", **{"example.com/gpu": "4"}))
    assert infos.with_room == {"a"}
    infos.pod_changed(_pod("p", None))  # not bound: not counted
    infos.pod_changed(_pod("p", "a", gpus=1))
    infos.pod_changed(_pod("q", "a", gpus=2))
    assert len(infos.get("a").pods) == 2 and infos.get("a").requested["example.com/gpu"] == 3
    assert infos.with_room == set()  # two of two pods
    infos.pod_changed(_pod("q", "a", phase="Succeeded", gpus=2))  # finished: left out, as upstream's informer
    assert infos.with_room == {"a"} and infos.get("a").requested["example.com/gpu"] == 1
    infos.pod_changed(_pod("p", "a", gpus=1), deleted=True)
    assert not infos.get("a").pods and infos.get("a").requested["example.com/gpu"] == 0


def test_a_node_without_allocatable_pods_or_gone_has_no_room() -> None:
    infos = NodeInfos()
    infos.node_changed({"kind": "Node", "metadata": {"name": "bare"}})
    infos.node_changed(_node("b"))
    assert infos.with_room == {"b"}
    infos.node_deleted("b")
    assert infos.with_room == set()
    assert infos.get("unknown").allocatable == {}
