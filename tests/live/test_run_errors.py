"""`draconform run --kubeconfig` against clusters it cannot use: a kubeconfig without its context is one clear
error before any scenario, and an API server that never answers ends each scenario on the request timeout
instead of hanging the run."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import yaml

from draconform.paths import FEATURES_DIR
from draconform.serve.control import kubeconfig as served_kubeconfig
from tests.live.helpers import draconform_run


def test_a_kubeconfig_without_its_context_is_one_clear_error_before_any_scenario(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\ncurrent-context: nowhere\n")
    done = subprocess.run([sys.executable, "-m", "draconform.cli", "run", "--kubeconfig", str(kubeconfig)],
                          capture_output=True, text=True, timeout=600, check=False)  # a hang guard
    assert done.returncode == 2
    assert str(kubeconfig) in done.stderr and "nowhere" in done.stderr


def test_a_cluster_that_never_answers_ends_the_run_with_every_scenario_not_passed(tmp_path: Path) -> None:
    """The API server accepts connections and never answers: each scenario ends on the request timeout with
    the request it was making, and the run ends and writes its report instead of hanging."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(served_kubeconfig(f"http://127.0.0.1:{silent.getsockname()[1]}")))
    timeouts = tmp_path / "timeouts.yaml"
    timeouts.write_text("requestTimeout: 300ms\ncleanupTimeout: 300ms\nsettleTimeout: 1s\n")
    try:
        report = draconform_run(tmp_path / "reports", "silent", str(FEATURES_DIR / "kep-3063" / "scheduling.feature"),
                                "--kubeconfig", str(kubeconfig), "--timeout-config", str(timeouts), timeout=300)
    finally:
        silent.close()
    scenarios = report["scenarios"]
    assert scenarios and all(s["status"] == "error" for s in scenarios), [(s["name"], s["status"]) for s in scenarios]
    assert all("did not answer" in (s.get("message") or "") for s in scenarios)
