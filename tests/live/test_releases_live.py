"""A live run against `draconform serve --release 1.36`: the scenarios needing what 1.37 has and 1.36 lacks are
skipped with the release and the lack named, the rest pass; given an --also-cluster with DRADeviceTaintRules on
(and v1beta2 served), the DeviceTaintRule scenarios move there and run, written at resource.k8s.io/v1beta2
(draconform/live/releases.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from draconform.paths import FEATURES_DIR
from tests.live.helpers import FAST_TIMEOUTS, assert_passed_or_skipped_with_reason, draconform_run, served_references

FILES = ("api-validation/devicetaintrule.feature", "api-validation/feature-gates.feature",
         "structured-allocation/results.feature")
TAINT_RULES_ON = ("--feature-gates", "DRADeviceTaintRules=true", "--runtime-config", "resource.k8s.io/v1beta2=true")


def _run(report_dir: Path, served: Path, name: str, files: tuple[str, ...], *args: str) -> dict[str, Any]:
    return draconform_run(report_dir, name, *(str(FEATURES_DIR / f) for f in files),
                          "--kubeconfig", str(served / "kubeconfig"), "--cluster-config", str(served / "cluster.yaml"),
                          "--timeout-config", str(FAST_TIMEOUTS), *args)


def test_a_1_36_cluster_skips_what_1_36_lacks_and_passes_the_rest(tmp_path: Path) -> None:
    for name in ("plain", "taints"):
        (tmp_path / name).mkdir()
    with served_references([(tmp_path / "plain", ("--release", "1.36")),
                            (tmp_path / "taints", ("--release", "1.36", *TAINT_RULES_ON))]) as (plain, taints):
        report = _run(tmp_path / "reports", plain, "plain", FILES)
        # a scenario whose taint rule the first cluster cannot take moves to the --also-cluster that can
        gated = _run(tmp_path / "reports", plain, "moved", FILES[:1], "--also-cluster", str(taints / "cluster.yaml"))
    assert_passed_or_skipped_with_reason(report)
    reasons = [s.get("skip_reason") or "" for s in report["scenarios"] if s["status"] == "skipped"]
    assert "Unsupported: Kubernetes 1.36 serves DeviceTaintRule only as resource.k8s.io/v1beta2 with " \
           "DRADeviceTaintRules on; the cluster config says DRADeviceTaintRules is off" in reasons
    assert any(reason.startswith("Unsupported: Kubernetes 1.36 has no field ResourceSlice ") and "from 1.37" in reason
               for reason in reasons), reasons
    # the allocation results and configs as 1.36 writes them (config requests listed) pass
    results = [s["status"] for s in report["scenarios"] if s["feature_file"] == FILES[2]]
    assert results and set(results) == {"passed"}, results
    assert_passed_or_skipped_with_reason(gated)
    assert gated["summary"]["scenarios"]["passed"] == gated["summary"]["scenarios"]["total"] > 0
