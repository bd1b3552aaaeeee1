"""A failure about a plugin's answer names the cluster's own driver under test, not only the scenario's name for
it: a submission judging Intel's GPU driver said "driver 'gpu.example.com' prepared claim 'far'" (issue 42)."""

from __future__ import annotations

import pytest

from draconform.kubeletplugin.types import ClaimRef, PrepareResult
from draconform.steps.drivers import KubeletRecord, PrepareAnswer, _real, driver_refused
from draconform.steps.scenario import ScenarioContext
from draconform.sut import DriverUnderTest


def _kubelet(real: str | None) -> KubeletRecord:
    kubelet = KubeletRecord()
    ref = ClaimRef("default", "far", "uid-1")
    kubelet.prepared["far"] = [PrepareAnswer("gpu.example.com", "v1", ref, PrepareResult(), real)]
    return kubelet


def test_a_driver_under_test_is_named_beside_the_scenarios_name() -> None:
    ctx = ScenarioContext()
    assert _real(ctx, "gpu.example.com") is None
    ctx.own_driver = DriverUnderTest("gpu.intel.com", "node-1", "gpu.intel.com", "ns")
    ctx.own_driver_alias = "gpu.example.com"
    assert _real(ctx, "gpu.example.com") == "gpu.intel.com"
    assert _real(ctx, "nic.example.com") is None  # another driver of the scenario, the harness's own
    with pytest.raises(AssertionError, match=r"driver 'gpu.example.com' \(the cluster's 'gpu.intel.com'\) prepared "
                                             r"claim 'far'"):
        driver_refused(_kubelet("gpu.intel.com"), "far", None, None, None)


@pytest.mark.parametrize("real", [None, "gpu.example.com"])
def test_a_driver_of_the_scenarios_name_is_named_once(real: str | None) -> None:
    with pytest.raises(AssertionError, match=r"driver 'gpu.example.com' prepared claim 'far'"):
        driver_refused(_kubelet(real), "far", None, None, None)
