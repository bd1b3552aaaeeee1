"""Kubernetes 1.36 named the node-allocatable resources of a device `nodeAllocatableResourceMappings` (alpha,
DRANodeAllocatableResources), a shape 1.37 replaced with `nodeAllocatableResources`. An API server of release 1.36
(`draconform serve --release 1.36`, whose store this is) keeps and checks the 1.36 field as kube-apiserver 1.36
does (pkg/apis/resource/validation validateNodeAllocatableResourceMappings), drops it with the gate off, and a
1.37 one does not know it."""

from __future__ import annotations

import pytest

from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.admission import install
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.sut import ApiError, Obj


def _slice(mappings: Obj) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "cpus"},
            "spec": {"driver": "cpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n",
                     "devices": [{"name": "socket-0", "capacity": {"cores": {"value": "8"}},
                                  "nodeAllocatableResourceMappings": mappings}]}}


def _store(release: str, on: bool = True) -> Store:
    store = Store(FakeClock(), FeatureGates({"DRANodeAllocatableResources": on}, release=release))
    install(store)  # the admission `draconform serve` installs: dropped fields, validation
    return store


def test_a_1_36_api_server_keeps_the_mappings_it_knows_and_defaults_the_multiplier() -> None:
    mappings = {"cpu": {"capacityKey": "cores", "allocationMultiplier": "2"}, "memory": {"allocationMultiplier": "1Gi"},
                "hugepages-2Mi": {"capacityKey": "cores"}, "kubernetes.io/batch": {}}
    stored = _store("1.36").create(_slice(mappings))
    assert stored["spec"]["devices"][0]["nodeAllocatableResourceMappings"] == {
        **mappings, "hugepages-2Mi": {"capacityKey": "cores", "allocationMultiplier": "1"},
        "kubernetes.io/batch": {"allocationMultiplier": "1"}}


@pytest.mark.parametrize(("mappings", "field"), [
    ({"example.com/gpu-memory": {"allocationMultiplier": "1"}},
     "spec.devices[0].nodeAllocatableResourceMappings[example.com/gpu-memory]"),
    ({"cpu": {"allocationMultiplier": "0"}},
     "spec.devices[0].nodeAllocatableResourceMappings[cpu].allocationMultiplier"),
    ({"cpu": {"capacityKey": "threads"}}, "spec.devices[0].nodeAllocatableResourceMappings[cpu].capacityKey"),
    ({"cpu": {"capacityKey": ""}}, "spec.devices[0].nodeAllocatableResourceMappings[cpu].capacityKey"),
    ({"cpu": {"capacityKey": "cores", "deviceMultiplier": "1"}},
     "spec.devices[0].nodeAllocatableResourceMappings[cpu].deviceMultiplier"),
])
def test_a_1_36_api_server_refuses_what_1_36_refuses(mappings: Obj, field: str) -> None:
    with pytest.raises(ApiError) as refused:
        _store("1.36").create(_slice(mappings))
    assert [cause.field for cause in refused.value.causes] == [field]


@pytest.mark.parametrize(("release", "on"), [("1.36", False), ("1.37", True)])
def test_the_mappings_are_dropped_with_the_gate_off_or_by_a_release_without_them(release: str, on: bool) -> None:
    stored = _store(release, on).create(_slice({"cpu": {"allocationMultiplier": "1"}}))
    assert "nodeAllocatableResourceMappings" not in stored["spec"]["devices"][0]
