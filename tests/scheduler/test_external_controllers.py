"""The reference's external controllers act through the store only, answer each allocation once after
their delay, and keep what must survive a restart in API objects; older schedulers see old objects."""

from __future__ import annotations

import json

import pytest

from draconform.kube.featuregates import FeatureGates
from draconform.reference import components
from draconform.reference.controllers.scaler import ANNOTATION
from draconform.reference.scheduler.releaseview import as_seen_by
from tests.scheduler.helpers import (
    ATTACHED,
    DRIVER,
    NAMESPACE,
    add_pod,
    cluster_with_fabric,
    fabric_device,
    node_of,
)


@pytest.mark.parametrize("behaviour", [{"outcome": "maybe"}, {"colour": "blue"}, {"after": -1}, {"after": "5s"}])
def test_the_binding_controller_refuses_behaviours_it_does_not_know(behaviour: dict[str, object]) -> None:
    cluster = cluster_with_fabric(devices=1)
    with pytest.raises(ValueError):
        components.external_controller("binding-controller", cluster.store, cluster.clock, behaviour)


def test_a_ready_answer_comes_after_the_delay_as_standard_conditions() -> None:
    cluster = cluster_with_fabric(devices=1)
    cluster.run_controller("binding-controller", {"driver": DRIVER, "outcome": "ready", "after": 30})
    add_pod(cluster, "p", "c")
    cluster.settle()
    cluster.advance(29)
    assert node_of(cluster, "p") is None
    cluster.advance(1)
    assert node_of(cluster, "p") == "worker-1"
    claim = cluster.store.get("ResourceClaim", "c", NAMESPACE) or {}
    (entry,) = claim["status"]["devices"]
    (condition,) = entry["conditions"]
    assert condition["type"] == ATTACHED and condition["status"] == "True"
    assert condition["lastTransitionTime"] == "2026-01-01T00:00:30Z" and condition["reason"] and condition["message"]


def test_a_controller_for_another_driver_does_not_answer() -> None:
    cluster = cluster_with_fabric(devices=1)
    cluster.run_controller("binding-controller", {"driver": "other.example.com", "outcome": "ready"})
    add_pod(cluster, "p", "c")
    cluster.advance(60)
    assert node_of(cluster, "p") is None


def test_each_new_allocation_of_a_claim_is_answered_again() -> None:
    cluster = cluster_with_fabric(devices=1)
    cluster.run_controller("binding-controller", {"driver": DRIVER, "outcome": "fail", "after": 10})
    add_pod(cluster, "p", "c")
    cluster.settle()
    cluster.advance(10)
    assert "failure\"} 1.0" in cluster.metrics.text()
    cluster.advance(1 + 10)  # backoff, a new allocation, and its own delay
    assert "failure\"} 2.0" in cluster.metrics.text()


def test_an_unknown_controller_is_refused_by_name() -> None:
    cluster = cluster_with_fabric(devices=1)
    with pytest.raises(KeyError):
        cluster.run_controller("device-healer", {})


def test_the_scaler_needs_both_drivers() -> None:
    cluster = cluster_with_fabric(devices=1)
    with pytest.raises(ValueError):
        components.external_controller("dynamic-device-scaler", cluster.store, cluster.clock, {"pool_driver": DRIVER})


def test_a_restarted_scaler_still_knows_what_it_attached_and_detaches_it() -> None:
    cluster = cluster_with_fabric(devices=1)
    behaviour = {"pool_driver": DRIVER, "node_driver": DRIVER, "after": 0}  # the class selects the driver
    cluster.run_controller("dynamic-device-scaler", behaviour)
    add_pod(cluster, "p", "c")
    cluster.advance(1)
    assert node_of(cluster, "p") == "worker-1"
    attached = cluster.store.get("ResourceSlice", f"worker-1-{DRIVER}-attached") or {}
    record = json.loads(attached["metadata"]["annotations"][ANNOTATION])["attached-0"]
    assert record["pod"] == "default/p" and record["from"]["device"] == fabric_device("gpu-0")
    cluster.run_controller("dynamic-device-scaler", behaviour)  # a new process, only the store to go on
    cluster.store.delete("Pod", "p", NAMESPACE)
    cluster.settle()
    fabric = cluster.store.get("ResourceSlice", "fabric") or {}
    assert [d["name"] for d in fabric["spec"]["devices"]] == ["gpu-0"]
    attached = cluster.store.get("ResourceSlice", f"worker-1-{DRIVER}-attached") or {}
    assert attached["spec"]["devices"] == []


def test_an_older_scheduler_reads_devices_without_binding_fields() -> None:
    cluster = cluster_with_fabric(devices=1)
    assert as_seen_by(cluster.store, FeatureGates()) is cluster.store
    old = as_seen_by(cluster.store, FeatureGates(release="1.33"))
    watch = old.watch("ResourceSlice")
    cluster.store.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "more"},
                          "spec": {"driver": DRIVER, "pool": {"name": "more", "generation": 1, "resourceSliceCount": 1},
                                   "allNodes": True, "devices": [fabric_device("gpu-9")]}})
    (event,) = watch.drain()
    assert event.object["spec"]["devices"] == [{"name": "gpu-9"}]
    assert (old.get("ResourceSlice", "fabric") or {})["spec"]["devices"] == [{"name": "gpu-0"}]
    assert all(d == {"name": d["name"]} for s in old.list("ResourceSlice") for d in s["spec"]["devices"])
    assert cluster.store.get("ResourceSlice", "more", None)["spec"]["devices"][0]["bindsToNode"] is True  # type: ignore[index]
