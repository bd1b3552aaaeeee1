"""A live cluster of an older release: the version each object is written in, the fields renamed, and the
scenarios skipped for what the release lacks (draconform/live/releases.py)."""

from __future__ import annotations

from typing import Any

import pytest

from draconform.live.config import ClusterConfig
from draconform.live.releases import ReleaseView, view
from draconform.live.sut import _mismatch
from draconform.sut import ApiError, ComponentConfig, FieldCause

TAINT_RULE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "r"},
    "spec": {"deviceSelector": {"driver": "gpu.example.com"}, "taint": {"key": "k", "effect": "NoSchedule"}}}


def slice_with(**device: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n",
                     "devices": [{"name": "d", **device}]}}


def claim_selecting(expression: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                "deviceClassName": "gpu", "selectors": [{"cel": {"expression": expression}}]}}]}}}


def on(release: str, gates: dict[str, bool] | None = None,
       wanted: list[tuple[str, ComponentConfig]] | None = None) -> ReleaseView:
    return view(release, gates or {}, wanted or [])


# --- versions ---------------------------------------------------------------------------------------------

def test_the_current_release_takes_every_object_as_written() -> None:
    release = on("1.37")
    assert release.to_cluster(TAINT_RULE) is TAINT_RULE
    assert release.api_version("DeviceTaintRule") is None
    assert release.lacks(slice_with(nodeAllocatableResources={"cpu": {"overhead": {"perPod": "1"}}})) is None


def test_a_taint_rule_goes_to_1_36_at_v1beta2_and_comes_back_at_v1() -> None:
    release = on("1.36", {"DRADeviceTaintRules": True})
    out = release.to_cluster(TAINT_RULE)
    assert out["apiVersion"] == "resource.k8s.io/v1beta2"
    assert out["spec"] == TAINT_RULE["spec"]
    assert release.api_version("DeviceTaintRule") == "resource.k8s.io/v1beta2"
    assert release.api_version("ResourceSlice") is None  # v1 is served from 1.34
    assert release.from_cluster(out) == TAINT_RULE


@pytest.mark.parametrize(("release", "gates", "reason"), [
    ("1.36", {}, "Kubernetes 1.36 serves DeviceTaintRule only as resource.k8s.io/v1beta2 with DRADeviceTaintRules "
                 "on; the cluster config says DRADeviceTaintRules is off"),
    ("1.35", {"DRADeviceTaintRules": True}, "Kubernetes 1.35 does not serve DeviceTaintRule (served from 1.36)"),
])
def test_a_taint_rule_where_the_release_serves_none_skips(release: str, gates: dict[str, bool], reason: str) -> None:
    assert on(release, gates).lacks(TAINT_RULE) == reason


def test_a_v1beta1_slice_is_carried_by_upstreams_conversion() -> None:
    release = on("1.36", {"DRADeviceTaintRules": True})
    v1beta1 = {**slice_with(), "apiVersion": "resource.k8s.io/v1beta1"}
    v1beta1["spec"]["devices"] = [{"name": "d", "basic": {"attributes": {"a": {"int": 1}}}}]
    assert release.to_cluster(v1beta1) == v1beta1  # 1.36 serves v1beta1 (when enabled): sent as written
    assert release.from_cluster(v1beta1)["spec"]["devices"] == [{"name": "d", "attributes": {"a": {"int": 1}}}]


# --- renaming ---------------------------------------------------------------------------------------------

NODE_GATE = {"DRANodeAllocatableResources": True}
ASKED = [("kube-apiserver", ComponentConfig({"DRANodeAllocatableResources": True}))]


@pytest.mark.parametrize(("now", "before"), [
    ({"cpu": {"mapping": {"deviceMultiplier": "8"}}}, {"cpu": {"allocationMultiplier": "8"}}),
    ({"cpu": {"mapping": {"capacityKey": "cores", "capacityMultiplier": "2"}}},
     {"cpu": {"capacityKey": "cores", "allocationMultiplier": "2"}}),
])
def test_node_allocatable_resources_are_1_36s_mappings(now: dict[str, Any], before: dict[str, Any]) -> None:
    release = on("1.36", NODE_GATE, ASKED)
    written = slice_with(nodeAllocatableResources=now)
    assert release.lacks(written) is None
    out = release.to_cluster(written)
    assert out["spec"]["devices"][0] == {"name": "d", "nodeAllocatableResourceMappings": before}
    assert release.from_cluster(out) == written
    assert written["spec"]["devices"][0] == {"name": "d", "nodeAllocatableResources": now}  # not changed in place


@pytest.mark.parametrize("entries", [
    {"memory": {"overhead": {"perPod": "1Gi"}}},  # 1.36 has no overheads
    {"cpu": {"mapping": {"capacityKey": "cores"}}},  # 1.37 refuses it, 1.36 takes it
    {"Memory": {"mapping": {"deviceMultiplier": "1"}}},  # a native name 1.37 refuses and 1.36 takes
    {"cpu": {}},
])
def test_node_allocatable_entries_1_36_says_otherwise_skip(entries: dict[str, Any]) -> None:
    reason = on("1.36", NODE_GATE, ASKED).lacks(slice_with(nodeAllocatableResources=entries))
    assert reason is not None and reason.startswith("Kubernetes 1.36 has no field ResourceSlice "
                                                    "spec.devices[*].nodeAllocatableResources: its alpha")


def test_a_refusal_names_the_current_field() -> None:
    error = ApiError("Invalid", "spec.devices[0].nodeAllocatableResourceMappings[x/y]: Invalid value",
                     [FieldCause("spec.devices[0].nodeAllocatableResourceMappings[x/y]", "must be ...")])
    back = on("1.36", NODE_GATE).error_from_cluster(error)
    assert [c.field for c in back.causes] == ["spec.devices[0].nodeAllocatableResources[x/y]"]
    assert "nodeAllocatableResourceMappings" not in back.message


# --- what a release lacks -----------------------------------------------------------------------------------

def test_a_field_the_release_has_not_got_skips_naming_release_and_gate() -> None:
    written = slice_with(consumesCounters=[{"counterSet": "c", "compatibilityGroups": ["mig"],
                                           "counters": {"m": {"value": "1"}}}])
    assert on("1.36").lacks(written) == (
        "Kubernetes 1.36 has no field ResourceSlice spec.devices[*].consumesCounters[*].compatibilityGroups "
        "(feature gate DRADeviceCompatibilityGroups from 1.37)")
    assert on("1.37").lacks(written) is None


def test_a_field_whose_gate_the_cluster_runs_otherwise_than_the_scenario_expects_skips() -> None:
    listed = slice_with(attributes={"a": {"ints": [1, 2]}})
    wanted = [("kube-apiserver", ComponentConfig({"DRAListTypeAttributes": True}))]
    assert on("1.36", {"DRAListTypeAttributes": True}, wanted).lacks(listed) is None
    # not asked: 1.37's default (off) against a cluster running it on
    assert "expecting feature gate DRAListTypeAttributes off" in (
        on("1.36", {"DRAListTypeAttributes": True}).lacks(listed) or "")
    # asked: whether the cluster runs it so is the cluster choice's business, not the object's
    assert on("1.36", {}, wanted).lacks(listed) is None
    # 1.37 runs DRAPartitionableDevices on by default, 1.35 off
    counters = slice_with(consumesCounters=[{"counterSet": "c", "counters": {"m": {"value": "1"}}}])
    assert on("1.36").lacks(counters) is None
    assert on("1.35").lacks(counters) == (
        "the scenario writes ResourceSlice spec.devices[*].consumesCounters expecting feature gate "
        "DRAPartitionableDevices on (Kubernetes 1.37's default); the cluster config says Kubernetes 1.35 with it off")
    assert on("1.35", {"DRAPartitionableDevices": True}).lacks(counters) is None


def test_older_releases_lack_a_field_their_gate_came_after() -> None:
    taints = slice_with(bindsToNode=True)
    assert on("1.36").lacks(taints) is None  # the binding gates are on by default in 1.36, as in 1.37
    assert "expecting feature gate DRADeviceBindingConditions on" in (on("1.35").lacks(taints) or "")
    assert on("1.35").lacks(slice_with(attributes={"a": {"ints": [1]}})) == (
        "Kubernetes 1.35 has no field ResourceSlice spec.devices[*].attributes[*].ints (feature gate "
        "DRAListTypeAttributes from 1.36)")


@pytest.mark.parametrize(("release", "gates", "reason"), [
    ("1.37", {}, None),
    ("1.36", {"DRAListTypeAttributes": True}, None),
    ("1.36", {}, "Kubernetes 1.36 has the CEL function includes() only with feature gate DRAListTypeAttributes on; "
                 "the cluster config says it is off"),
    ("1.35", {}, "Kubernetes 1.35 has no CEL function includes() (it comes with feature gate "
                 "DRAListTypeAttributes, from 1.36)"),
])
def test_includes_needs_its_gate_before_1_37(release: str, gates: dict[str, bool], reason: str | None) -> None:
    wanted = [("kube-apiserver", ComponentConfig({"DRAListTypeAttributes": True}))] if gates else []
    expression = 'device.attributes["gpu.example.com"].models.includes("a100")'
    assert on(release, gates, wanted).lacks(claim_selecting(expression)) == reason
    assert on(release, gates, wanted).lacks(claim_selecting('device.driver == "includes"')) is None


def test_a_scenario_pinned_to_the_release_runs_and_writes_without_strictness() -> None:
    """A rule about an older release dropping a field it does not know must still be judged there."""
    pinned = on("1.36", {}, [("kube-apiserver", ComponentConfig(version="1.36"))])
    written = slice_with(consumesCounters=[{"counterSet": "c", "compatibilityGroups": ["mig"],
                                           "counters": {"m": {"value": "1"}}}])
    assert pinned.lacks(written) is None
    assert pinned.strict(written) is False  # the API server drops the field instead of refusing the object
    assert pinned.strict(slice_with()) is True
    assert on("1.36").strict(written) is True


# --- choosing the cluster: a component the scenario does not pin runs on an older release ---------------------

def test_an_unpinned_component_runs_on_an_older_cluster_with_the_gates_it_asks() -> None:
    cluster = ClusterConfig(release="1.36", feature_gates={"DRAListTypeAttributes": True})
    assert _mismatch(cluster, "kube-scheduler", ComponentConfig({"DRAListTypeAttributes": True})) is None
    assert _mismatch(cluster, "kube-scheduler", ComponentConfig({"DRADeviceCompatibilityGroups": False})) is None
    assert _mismatch(cluster, "kube-scheduler", ComponentConfig({"DRADeviceCompatibilityGroups": True})) == (
        "the scenario needs kube-scheduler with DRADeviceCompatibilityGroups=on; Kubernetes 1.36 has no such "
        "feature gate (from 1.37)")
    assert "at release 1.37" in (_mismatch(cluster, "kube-scheduler", ComponentConfig(version="1.37")) or "")


# --- the reference at an older release agrees ---------------------------------------------------------------

@pytest.mark.parametrize(("release", "gates", "compiles"), [
    ("1.37", {}, True),
    ("1.37", {"DRAListTypeAttributes": False}, True),  # 1.37 declares includes() whatever the gate says
    ("1.36", {"DRAListTypeAttributes": True}, True),
    ("1.36", {}, False),
])
def test_the_reference_api_server_declares_includes_as_the_release_does(release: str, gates: dict[str, bool],
                                                                        compiles: bool) -> None:
    from draconform.kube.featuregates import FeatureGates
    from draconform.validation.core import validate_object

    claim = claim_selecting('device.attributes["gpu.example.com"].model.includes("a100")')
    problems = [p for p in validate_object(claim, FeatureGates(gates, release=release)) if p.severity == "error"]
    assert [p.rule for p in problems] == ([] if compiles else ["DRA-API/CEL-COMPILES"])
    assert compiles or "undeclared reference to 'includes'" in problems[0].message
