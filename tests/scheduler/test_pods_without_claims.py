"""A pod that uses no ResourceClaim is scheduled as kube-scheduler schedules any pod: the DRA plugin
skips it, whatever the DRA state of the cluster, the scheduler's gates or its release, and whether it
shares a scheduling pass with pods that wait for devices."""

from __future__ import annotations

import pytest

from draconform.reference.cluster import ReferenceCluster
from draconform.sut import ComponentConfig, Obj
from tests.scheduler.helpers import NAMESPACE, add_pod, cluster_with_fabric, node_of, set_condition

ALL_DRA_OFF = {"DynamicResourceAllocation": False, "DRADeviceBindingConditions": False,
               "DRAResourceClaimDeviceStatus": False, "DRAExtendedResource": False}


def _plain_pod(cluster: ReferenceCluster, name: str, spec: Obj | None = None) -> None:
    cluster.store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE},
                          "spec": {"containers": [{"name": "main", "image": "registry.example/app:1"}],
                                   **(spec or {})}})


@pytest.mark.parametrize("scheduler", [
    ComponentConfig(),
    ComponentConfig(feature_gates=ALL_DRA_OFF, version="1.34"),  # locked on from 1.35
    ComponentConfig(version="1.32"),
], ids=["current", "dra-gates-off", "older-release"])
@pytest.mark.parametrize("spec", [{}, {"resourceClaims": []}, {"resourceClaims": None}],
                         ids=["no-field", "empty-list", "null"])
def test_a_pod_without_claims_is_bound(scheduler: ComponentConfig, spec: Obj) -> None:
    cluster = cluster_with_fabric(devices=1, scheduler=scheduler)
    _plain_pod(cluster, "plain", spec)
    cluster.settle()
    assert node_of(cluster, "plain") == "worker-1"


def test_a_pod_without_claims_is_bound_while_another_waits_for_its_devices() -> None:
    cluster = cluster_with_fabric(devices=1)
    add_pod(cluster, "waiting", "claim")
    _plain_pod(cluster, "plain")
    cluster.settle()
    assert node_of(cluster, "plain") == "worker-1"
    assert node_of(cluster, "waiting") is None  # its device's binding condition is not met yet
    set_condition(cluster, "claim", "dra.example.com/attached")
    cluster.settle()
    assert node_of(cluster, "waiting") == "worker-1"


def test_a_pod_without_a_spec_does_not_stop_the_scheduler() -> None:
    """The reference API server does not validate pods; a pod written without a spec must not crash the
    scheduler's watch handling, and pods after it are still scheduled."""
    cluster = cluster_with_fabric(devices=1)
    cluster.store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare", "namespace": NAMESPACE}})
    _plain_pod(cluster, "plain")
    cluster.settle()
    assert node_of(cluster, "plain") == "worker-1"
