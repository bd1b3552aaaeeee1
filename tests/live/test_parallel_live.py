"""A live run with workers (`draconform run --kubeconfig ... -n 2`) against one served cluster: scenarios run side
by side in their own namespaces and names, those that could see one another alone (a slice offered on every node,
a DeviceTaintRule), those that program the served driver in turns; every scenario passes or is skipped with the
SUT's reason, and nothing is left on the cluster once the run has ended (its namespaces' deletions were only
begun by each scenario's clean-up; the run's end checks that they finished)."""

from __future__ import annotations

from pathlib import Path

import pytest

from draconform.paths import FEATURES_DIR
from tests.live.helpers import (
    FAST_TIMEOUTS,
    assert_passed_or_skipped_with_reason,
    draconform_run,
    left_on,
    served_reference,
)

# Side by side: kep-3063/scheduling; alone: results (allNodes slices) and availability (DeviceTaintRules); the
# served driver programmed in turns: kep-3063/kubelet.
SELECTION = [FEATURES_DIR / name for name in ("kep-3063/scheduling.feature", "structured-allocation/results.feature",
                                              "structured-allocation/availability.feature",
                                              "kep-3063/kubelet.feature")]


def test_a_parallel_live_run_passes_and_leaves_nothing(tmp_path_factory: pytest.TempPathFactory) -> None:
    reports = tmp_path_factory.mktemp("reports")
    with served_reference(tmp_path_factory.mktemp("served")) as served:
        report = draconform_run(reports, "parallel", *map(str, SELECTION), "-n", "2",
                                "--kubeconfig", str(served / "kubeconfig"),
                                "--cluster-config", str(served / "cluster.yaml"),
                                "--timeout-config", str(FAST_TIMEOUTS))
        left = left_on(Path(served))
    assert report["run"]["workers"] == 2
    assert_passed_or_skipped_with_reason(report)
    assert not report["errors"], report["errors"]  # among them the run's own check for objects left over
    passed = {s["feature_file"] for s in report["scenarios"] if s["status"] == "passed"}
    assert passed == {path.relative_to(FEATURES_DIR).as_posix() for path in SELECTION}
    assert not left, f"objects left on the served cluster after the run: {left}"
