"""A component refuses to start with gate settings its release forbids, as upstream's do (v1.36.2's
pkg/features/kube_features.go: LockToDefault and defaultKubernetesFeatureGateDependencies)."""

from __future__ import annotations

import pytest

from draconform.kube.featuregates import startup_refusals
from draconform.sut import ComponentConfig
from reference.classic_cluster import ClassicCluster
from reference.cluster import ReferenceCluster


def test_a_gate_whose_dependency_is_off_is_refused_from_1_35() -> None:
    # DRADeviceBindingConditions is on by default from 1.36 and needs DRAResourceClaimDeviceStatus.
    assert startup_refusals({"DRAResourceClaimDeviceStatus": False}, "1.36") == [
        "DRADeviceBindingConditions is enabled, but depends on features that are disabled: "
        "[DRAResourceClaimDeviceStatus]"]
    assert startup_refusals({"DRADeviceBindingConditions": True, "DRAResourceClaimDeviceStatus": False},
                            "1.35") != []
    # 1.34 checked no dependencies; with both off nothing depends on a disabled gate.
    assert startup_refusals({"DRADeviceBindingConditions": True, "DRAResourceClaimDeviceStatus": False},
                            "1.34") == []
    assert startup_refusals({"DRADeviceBindingConditions": False, "DRAResourceClaimDeviceStatus": False},
                            "1.37") == []


def test_taint_rules_need_taints_when_both_are_on() -> None:
    # DRADeviceTaintRules is off by default in 1.36 and on in 1.37 (the harness's current release).
    assert startup_refusals({"DRADeviceTaints": False}, "1.36") == []
    assert startup_refusals({"DRADeviceTaints": False}, "1.37") == [
        "DRADeviceTaintRules is enabled, but depends on features that are disabled: [DRADeviceTaints]"]
    assert startup_refusals({"DRADeviceTaints": False, "DRADeviceTaintRules": False}, "1.37") == []


def test_a_locked_gate_set_away_from_its_default_is_refused() -> None:
    assert startup_refusals({"DynamicResourceAllocation": False}, "1.35") == [
        "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"]
    assert startup_refusals({"DynamicResourceAllocation": True}, "1.35") == []  # its own value is fine
    assert startup_refusals({"DynamicResourceAllocation": False}, "1.34") == []
    assert startup_refusals({"DRAAdminAccess": False}, "1.36") != []
    assert startup_refusals({"DRAAdminAccess": False}, "1.35") == []


def test_the_reference_cluster_refuses_and_names_the_component() -> None:
    config = ComponentConfig(feature_gates={"DRAResourceClaimDeviceStatus": False})
    with pytest.raises(ValueError, match=r"kube-scheduler 1\.37 refuses to start .* DRADeviceBindingConditions"):
        ReferenceCluster(configs={"kube-scheduler": config})


def test_the_classic_cluster_predates_the_checks() -> None:
    config = ComponentConfig(feature_gates={"DynamicResourceAllocation": False})
    ClassicCluster(configs={"kubelet": config}).close()
