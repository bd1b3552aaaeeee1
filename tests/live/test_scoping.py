"""A live scenario's names, clean-up and turns on a cluster it shares with other scenarios, without a cluster:
pools renamed both ways, pods kept to the scenario's nodes, what clean-up removes (a fake API with the real
server's deletion rules), the error naming what is left, and which scenarios run alone."""

from __future__ import annotations

import builtins
import copy
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from draconform.live import cleanup
from draconform.live.config import ClusterConfig, LiveOptions
from draconform.live.isolation import ALONE_TAG, alone_reasons, manifest_names, turn
from draconform.live.names import RUN_LABEL, SCENARIO_LABEL
from draconform.live.sut import LiveSystem
from draconform.sut import ApiError, Obj, Unsupported
from tests.live.helpers import FakeTime, wait_until


def _system(tmp_path: Path) -> LiveSystem:
    return LiveSystem(LiveOptions(str(tmp_path / "kubeconfig"), run_id="run1"))


# --- names ---------------------------------------------------------------------------------------------
def test_pools_are_the_scenarios_own_in_slices_results_statuses_and_taint_rules(tmp_path: Path) -> None:
    live = _system(tmp_path)
    prefix = f"{live.scenario}-"
    written: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                    "spec": {"driver": "gpu.example.com", "nodeName": "worker-1",
                             "pool": {"name": "worker-1", "generation": 1, "resourceSliceCount": 1}}}
    slice_ = live.names.to_cluster(written)
    assert slice_["spec"]["pool"]["name"] == prefix + "worker-1"
    assert slice_["metadata"]["labels"] == {SCENARIO_LABEL: live.scenario, RUN_LABEL: "run1"}
    assert live.names.from_cluster(slice_) == written

    result = {"request": "r", "driver": "gpu.example.com", "pool": "worker-1", "device": "gpu-0"}
    claim: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                  "metadata": {"name": "c", "namespace": "default"},
                  "status": {"allocation": {"devices": {"results": [result]}},
                             "devices": [{"driver": "gpu.example.com", "pool": "worker-1", "device": "gpu-0"}],
                             "conditions": [{"type": "X", "message": f"device {prefix}worker-1/gpu-0 gone"}]}}
    stored = live.names.to_cluster(claim)
    assert stored["status"]["allocation"]["devices"]["results"][0]["pool"] == prefix + "worker-1"
    assert stored["status"]["devices"][0]["pool"] == prefix + "worker-1"
    back = live.names.from_cluster(stored)
    assert back["status"]["allocation"] == claim["status"]["allocation"]
    assert back["status"]["conditions"][0]["message"] == "device worker-1/gpu-0 gone"  # messages read back too

    rule: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "t"},
                 "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "worker-1"},
                          "taint": {"key": "k", "effect": "NoSchedule"}}}
    stored_rule = live.names.to_cluster(rule)
    assert stored_rule["metadata"]["name"] == prefix + "t"
    assert stored_rule["spec"]["deviceSelector"]["pool"] == prefix + "worker-1"
    assert live.names.from_cluster(stored_rule) == rule


def test_the_pools_of_the_clusters_own_driver_keep_their_names(tmp_path: Path) -> None:
    live = _system(tmp_path)
    live.names.driver_aliases["gpu.example.com"] = "real.vendor.com"
    live.names.aliases["worker-1"] = "node-a"
    result = {"request": "r", "driver": "gpu.example.com", "pool": "node-a", "device": "dev-0"}
    claim: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                  "metadata": {"name": "c", "namespace": "default"},
                  "status": {"allocation": {"devices": {"results": [result]}}}}
    stored = live.names.to_cluster(claim)
    assert stored["status"]["allocation"]["devices"]["results"][0] == {**result, "driver": "real.vendor.com"}
    assert live.names.from_cluster(stored)["status"] == claim["status"]


def test_a_driver_under_tests_devices_may_have_attributes_named_driver_and_pool(tmp_path: Path) -> None:
    # Intel's GPU driver publishes its devices' kernel driver as an attribute "driver": reading its slice
    # failed with "unhashable type: 'dict'" and every scenario taking its devices errored.
    live = _system(tmp_path)
    live.names.driver_aliases["gpu.example.com"] = "gpu.vendor.com"
    attributes = {"driver": {"string": "i915"}, "pool": {"string": "p"}, "nodeName": {"string": "n"}}
    published: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                      "spec": {"driver": "gpu.vendor.com", "nodeName": "node-a",
                               "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
                               "devices": [{"name": "card0", "attributes": copy.deepcopy(attributes)}]}}
    read = live.names.from_cluster(copy.deepcopy(published))
    assert read["spec"]["pool"]["name"] == "node-a"
    assert read["spec"]["devices"][0]["attributes"] == attributes


def test_a_driver_under_test_without_a_recording_proxy_has_its_calls_unsupported(tmp_path: Path) -> None:
    # A vendor's plugin run on serve's layout (sockets linked, no recording proxy) was judged "asked to prepare
    # 0 times" by the kubelet scenarios; with no log there is nothing to judge.
    live = _system(tmp_path)
    live._cluster = ClusterConfig(kubelet_plugin_dir=str(tmp_path))
    live.names.driver_aliases["gpu.example.com"] = "gpu.vendor.com"
    live.names.aliases["node-1"] = "node-a"
    with pytest.raises(Unsupported, match="no recording proxy"):
        live.kubelet_plugin_calls("gpu.example.com", "node-1")
    (tmp_path / "node-a").mkdir()
    (tmp_path / "node-a" / "gpu.vendor.com.calls.jsonl").write_text("")
    assert live.kubelet_plugin_calls("gpu.example.com", "node-1") == []


def test_pods_are_scheduled_onto_the_scenarios_nodes_only(tmp_path: Path) -> None:
    live = _system(tmp_path)
    pod: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": {"nodeSelector": {"zone": "a"}, "containers": [{"name": "c", "image": "i"}]}}
    stored = live.names.to_cluster(pod)
    assert stored["spec"]["nodeSelector"] == {"zone": "a", SCENARIO_LABEL: live.scenario}
    assert live.names.from_cluster(stored) == pod
    bare = live.names.to_cluster({**pod, "spec": {"containers": []}})
    assert live.names.from_cluster(bare)["spec"] == {"containers": []}
    node = live.names.to_cluster({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}})
    assert node["metadata"]["labels"][SCENARIO_LABEL] == live.scenario  # what the pods' selector picks


def test_another_scenarios_cluster_scoped_objects_are_not_seen(tmp_path: Path) -> None:
    live = _system(tmp_path)
    assert live._visible({"metadata": {"name": "n", "labels": {SCENARIO_LABEL: live.scenario}}})
    assert live._visible({"metadata": {"name": "the-clusters-own"}})
    assert not live._visible({"metadata": {"name": "n", "labels": {SCENARIO_LABEL: "other"}}})


# --- clean-up ------------------------------------------------------------------------------------------
def _obj(kind: str, name: str, namespace: str | None = None, **meta: Any) -> Obj:
    return {"kind": kind, "metadata": {"name": name, **({"namespace": namespace} if namespace else {}), **meta},
            "spec": {}}


def test_clean_up_plans_every_pod_at_grace_0_wherever_bound_and_the_labelled_objects() -> None:
    pods = [{**_obj("Pod", "mine", "ns"), "spec": {"nodeName": "abc-worker-1"}},
            {**_obj("Pod", "elsewhere", "ns"), "spec": {"nodeName": "a-real-node"}},
            _obj("Pod", "unbound", "ns", finalizers=["example.com/hold"])]
    plan = cleanup.plan({"Pod": pods, "ResourceClaim": [_obj("ResourceClaim", "c", "ns")],
                         "ConfigMap": [_obj("ConfigMap", "driver-x", "ns")]},
                        {"Node": [_obj("Node", "abc-worker-1")], "ResourceSlice": [_obj("ResourceSlice", "abc-s")]})
    assert [(r.kind, r.name, r.grace_period_seconds) for r in plan] == [
        ("ConfigMap", "driver-x", None), ("Pod", "mine", 0), ("Pod", "elsewhere", 0), ("Pod", "unbound", 0),
        ("ResourceClaim", "c", None), ("Node", "abc-worker-1", None), ("ResourceSlice", "abc-s", None)]
    assert plan[3].finalizers == ("example.com/hold",)
    assert cleanup.plan({}, {}) == []


class FakeApi:
    """Objects by (kind, namespace, name), deleted as kube-apiserver does: at once with grace 0 or without a
    kubelet to wait for, else marked; an object with finalizers only marked until they are gone. `stuck`:
    objects whose finalizers cannot be removed (a webhook refusing it, say)."""

    def __init__(self, objects: list[Obj], stuck: builtins.set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.objects = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objects}
        self.stuck = stuck
        self.deleted: list[tuple[str, str, int | None]] = []

    def list(self, kind: str, namespace: str | None = None, labels: dict[str, str] | None = None,
             api_version: str | None = None) -> tuple[list[Obj], str]:
        return [copy.deepcopy(o) for (k, ns, _), o in sorted(self.objects.items(), key=lambda i: i[0][2])
                if k == kind and (namespace is None or ns == namespace)
                and all((o["metadata"].get("labels") or {}).get(key) == value for key, value in (labels or {}).items())
                ], "1"

    def get(self, kind: str, name: str, namespace: str | None = None, api_version: str | None = None) -> Obj | None:
        found = self.objects.get((kind, namespace, name))
        return copy.deepcopy(found) if found is not None else None

    def delete(self, kind: str, name: str, namespace: str | None = None,
               grace_period_seconds: int | None = None, api_version: str | None = None) -> None:
        obj = self.objects.get((kind, namespace, name))
        if obj is None:
            raise ApiError("NotFound", "not found")
        self.deleted.append((kind, name, grace_period_seconds))
        waits_for_kubelet = kind == "Pod" and grace_period_seconds != 0 and obj["spec"].get("nodeName")
        if obj["metadata"].get("finalizers") or waits_for_kubelet or kind == "Namespace":
            obj["metadata"]["deletionTimestamp"] = "now"
        else:
            del self.objects[(kind, namespace, name)]

    def update(self, obj: Obj) -> Obj:
        meta = obj["metadata"]
        if meta["name"] in self.stuck:
            raise ApiError("Forbidden", "a webhook refuses it")
        key = (obj["kind"], meta.get("namespace"), meta["name"])
        self.objects[key] = obj
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            del self.objects[key]
        return obj


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeTime]:
    fake = FakeTime()
    monkeypatch.setattr("draconform.live.sut.time", fake)
    monkeypatch.setattr("draconform.live.cleanup.time", fake)
    monkeypatch.setattr("draconform.live.cleanup._DELETING", {})
    yield fake


def _connected(tmp_path: Path, api: FakeApi) -> LiveSystem:
    live = _system(tmp_path)
    live._cluster = ClusterConfig(kubeconfig=str(tmp_path / "kubeconfig"))
    live._client = api  # type: ignore[assignment]
    live._namespace_created = True
    live._cluster_kinds = {"Node", "ResourceSlice"}
    return live


def _scenario_objects(live: LiveSystem) -> list[Obj]:
    ns, labels = live.namespace, {SCENARIO_LABEL: live.scenario}
    return [
        _obj("Namespace", ns),
        {**_obj("Pod", "on-own-node", ns), "spec": {"nodeName": f"{live.scenario}-worker-1"}},
        {**_obj("Pod", "on-another-node", ns), "spec": {"nodeName": "someone-elses"}},
        _obj("ResourceClaim", "held", ns, finalizers=["resource.kubernetes.io/delete-protection"]),
        _obj("Node", f"{live.scenario}-worker-1", labels=labels),
        _obj("ResourceSlice", f"{live.scenario}-s", labels=labels),
        _obj("Node", "someone-elses", labels={SCENARIO_LABEL: "other"}),
    ]


def test_clean_up_removes_every_pod_and_finalizer_and_starts_the_namespaces_deletion(tmp_path: Path,
                                                                                     clock: FakeTime) -> None:
    api = FakeApi([])
    live = _connected(tmp_path, api)
    api.objects = FakeApi(_scenario_objects(live)).objects
    live.close()
    assert sorted(api.objects) == [("Namespace", None, live.namespace), ("Node", None, "someone-elses")]
    assert api.objects[("Namespace", None, live.namespace)]["metadata"]["deletionTimestamp"]
    assert ("Pod", "on-another-node", 0) in api.deleted
    assert clock.now == 1000.0  # nothing was waited for


def test_what_clean_up_cannot_remove_is_an_error_naming_it(tmp_path: Path, clock: FakeTime) -> None:
    api = FakeApi([], stuck={"held"})
    live = _connected(tmp_path, api)
    api.objects = FakeApi(_scenario_objects(live)).objects
    with pytest.raises(RuntimeError, match=r"still exist 60s after clean-up began: ResourceClaim/draconform-\w+/held "
                       r"marked for deletion \(finalizers resource.kubernetes.io/delete-protection\) "
                       r"\(refused: Forbidden: a webhook refuses it\)"):
        live.close()


def test_a_namespace_still_there_long_after_its_deletion_began_fails_a_later_scenario_naming_it(
        tmp_path: Path, clock: FakeTime) -> None:
    api = FakeApi([])
    first = _connected(tmp_path, api)
    api.objects = FakeApi(_scenario_objects(first)).objects
    first.close()  # the namespace controller never finishes it (the fake has none)
    clock.now += 61
    second = _connected(tmp_path, api)
    with pytest.raises(RuntimeError, match=f"namespaces of earlier scenarios still exist 60s after their deletion "
                                           f"began: {first.namespace}"):
        second.close()
    third = _connected(tmp_path, api)
    third.close()  # named once


def test_namespaces_gone_are_forgotten_without_a_look_per_scenario(tmp_path: Path, clock: FakeTime) -> None:
    api = FakeApi([])
    looks = []
    list_ = api.list

    def counting(kind: str, namespace: str | None = None, labels: dict[str, str] | None = None,
                 api_version: str | None = None) -> tuple[list[Obj], str]:
        if kind == "Namespace":
            looks.append(namespace)
        return list_(kind, namespace, labels, api_version)

    api.list = counting  # type: ignore[method-assign]
    for _ in range(20):
        live = _connected(tmp_path, api)
        api.objects[("Namespace", None, live.namespace)] = _obj("Namespace", live.namespace)
        live.close()
        del api.objects[("Namespace", None, live.namespace)]  # the namespace controller at work
    assert 0 < len(looks) <= 20 // 8


# --- turns -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("texts", "reason"), [
    (['the metric "scheduler_pod_scheduling_attempts" is 1'], "scheduler's metrics"),
    (["kind: DeviceTaintRule\nspec: {}"], "DeviceTaintRule"),
    (["kind: ResourceSlice\nspec:\n  allNodes: true"], "every node"),
    (["kind: ResourceSlice\nspec:\n  nodeSelector:\n    nodeSelectorTerms: []"], "a selector picks"),
    (["kind: DeviceClass\nspec:\n  extendedResourceName: example.com/gpu"], "extended resource"),
])
def test_scenarios_that_can_see_one_another_run_alone(texts: list[str], reason: str) -> None:
    (got,) = alone_reasons(["Given a node", *texts], (), driver_under_test=False)
    assert reason in got


def test_scenarios_of_their_own_names_run_side_by_side() -> None:
    pod_then_slice = ["kind: Pod\nspec:\n  nodeSelector:\n    zone: a\n---\nkind: ResourceSlice\nspec:\n  nodeName: n"]
    assert alone_reasons(["Given a node", 'When pod "p" is created', *pod_then_slice], (), False) == []
    step = 'Given driver "gpu.example.com" under test publishes devices "a" of class "gpu" on node "n"'
    assert alone_reasons([step], (), driver_under_test=False) == []  # the scenario's own node, class, slice
    assert alone_reasons([step], (), driver_under_test=True) == [
        "it uses the cluster's own driver under test, its node and devices"]
    assert alone_reasons([], {ALONE_TAG, "kep-3063"}, False) == [f"it is tagged @{ALONE_TAG}"]
    assert manifest_names(['the objects of manifests "a.yaml, b.yaml" are created', "no manifest"]) == [
        "a.yaml", "b.yaml"]


def _busy(lock: Path) -> bool:
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases it if taken
    return False


def test_a_scenario_running_alone_waits_for_the_others_and_none_starts_beside_it(tmp_path: Path) -> None:
    log: list[str] = []
    first_in, release_first = threading.Event(), threading.Event()

    def shared(name: str, hold: threading.Event | None) -> None:
        with turn(tmp_path, alone=False):
            log.append(f"{name} in")
            first_in.set()
            if hold is not None:
                assert hold.wait(timeout=60)
            log.append(f"{name} out")

    def alone() -> None:
        with turn(tmp_path, alone=True):
            log.append("alone in")
            log.append("alone out")

    threads = [threading.Thread(target=shared, args=("first", release_first))]
    threads[0].start()
    assert first_in.wait(timeout=60)
    threads.append(threading.Thread(target=alone))
    threads[1].start()
    wait_until(lambda: _busy(tmp_path / "turnstile.lock"), 60, "the scenario to run alone queueing")
    threads.append(threading.Thread(target=shared, args=("second", None)))  # comes while it waits
    threads[2].start()
    release_first.set()
    for thread in threads:
        thread.join(timeout=60)
    assert log == ["first in", "first out", "alone in", "alone out", "second in", "second out"]


def test_clean_up_leaves_the_configmaps_the_cluster_publishes_in_every_namespace(tmp_path: Path,
                                                                               clock: FakeTime) -> None:
    """kube-controller-manager writes kube-root-ca.crt into every namespace (and writes it again at once when it
    is deleted): clean-up removes only the scenario's own ConfigMaps, and the namespace takes the rest along."""
    api = FakeApi([])
    live = _connected(tmp_path, api)
    published = _obj("ConfigMap", "kube-root-ca.crt", live.namespace)
    api.objects = FakeApi([*_scenario_objects(live), published]).objects
    live.close()
    assert ("ConfigMap", live.namespace, "kube-root-ca.crt") in api.objects
    assert ("ConfigMap", "kube-root-ca.crt", None) not in api.deleted


def test_pods_of_a_driver_under_test_scenario_stay_on_its_node(tmp_path: Path) -> None:
    """Issue 42: a real driver publishes on every node; a scenario's pod must run on the node under test (whose
    plugin and CDI files the scenario reads), not on another node the same driver serves."""
    live = _system(tmp_path)
    live.names.aliases["worker-1"] = "node-a"
    live.names.own_node = "node-a"
    pod: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": "i"}]}}
    stored = live.names.to_cluster(pod)
    terms = stored["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                            "values": ["node-a"]}]}]
    assert live.names.from_cluster(stored) == pod
    bound = live.names.to_cluster({**pod, "spec": {**pod["spec"], "nodeName": "worker-1"}})
    assert "affinity" not in bound["spec"]
