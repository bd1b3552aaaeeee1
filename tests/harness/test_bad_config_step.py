"""The KEP-5322 step giving a claim configuration its driver cannot use: a vendor's driver under test says itself
what it refuses (plugin-check's `--supports`), so the live scenarios skip it rather than fail a driver that reads
no configuration (Intel's GPU driver and dra-example-driver each failed five such scenarios live)."""

from __future__ import annotations

from pathlib import Path

import pytest

from draconform.reference.sut import ReferenceSystem
from draconform.steps.kubelet import claim_with_bad_config
from draconform.steps.scenario import ScenarioContext
from draconform.sut import DriverUnderTest, Unsupported


def test_a_driver_under_test_is_not_handed_configuration_it_never_declared(tmp_path: Path) -> None:
    sut = ReferenceSystem()
    try:
        ctx = ScenarioContext(feature_dir=tmp_path)
        ctx.own_driver = DriverUnderTest("gpu.vendor.com", "node-a", "gpu.vendor.com", "ns")
        ctx.own_driver_alias = "gpu.example.com"
        with pytest.raises(Unsupported, match="declares no configuration"):
            claim_with_bad_config(sut, ctx, "model", "gpu", "gpu.example.com")
        assert not sut.list("ResourceClaim")
        # A driver the harness runs (the reference's) is still handed it and judged.
        ctx.own_driver = ctx.own_driver_alias = None
        claim_with_bad_config(sut, ctx, "model", "gpu", "gpu.example.com")
        assert [obj["metadata"]["name"] for obj in sut.list("ResourceClaim")] == ["model"]
    finally:
        sut.close()
