"""The conformance suite through the live system under test against `draconform serve` (the reference store
behind the Kubernetes API; its scheduler, resourceclaim controller, kubelet, driver and external controllers as
separate processes): the same rules pass as in process, minus those skipped live with a reason, and no scenario
leaves an object behind."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from draconform.live.kube import KINDS, KubeClient, load_config
from draconform.paths import FEATURES_DIR
from draconform.serve.control import kubeconfig as served_kubeconfig
from draconform.serve.handlers import STANDARD_NAMESPACES
from tests.live.helpers import FAST_TIMEOUTS, assert_passed_or_skipped_with_reason, draconform_run, served_reference

# The catalogues whose scenarios drive the scheduler and the controller (the rest is mostly skipped live or
# checks the API server alone, which the test of the live SUT covers more cheaply), a kubelet-plugin file and a
# dynamic-device-scaler file (the served driver, kubelet and external controllers, programmed through the API),
# and a file whose gate only a second served cluster runs (--also-cluster); a few minutes on 2 cores.
GATED = FEATURES_DIR / "kep-5963" / "search.feature"
SELECTION = (FEATURES_DIR / "kep-3063", FEATURES_DIR / "structured-allocation", FEATURES_DIR / "api-validation" /
             "resourceclaim.feature", FEATURES_DIR / "kubelet-plugin" / "prepare.feature",
             FEATURES_DIR / "kep-5007" / "dynamic-device-scaling.feature", GATED)


# kube-apiserver 1.37 serves these only when turned on; the project's own live runs turn them on, so the
# scenarios about objects written in them run rather than being skipped.
OLDER_VERSIONS_ON = ("--runtime-config", "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true")


def _by_scenario(report: dict[str, Any]) -> dict[tuple[str, int, str], dict[str, Any]]:
    return {(s["feature_file"], s["line"], s["name"]): s for s in report["scenarios"]}


def _rule_status(report: dict[str, Any]) -> dict[str, str]:
    return {rule["id"]: rule["status"] for rule in report["rules"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The selection run in process and live, and whatever the served store still holds afterwards."""
    reports = tmp_path_factory.mktemp("reports")
    paths = [str(path) for path in SELECTION]
    reference = draconform_run(reports, "reference", *paths)
    with served_reference(tmp_path_factory.mktemp("served"), *OLDER_VERSIONS_ON) as served, served_reference(
            tmp_path_factory.mktemp("gated"), "--feature-gates", "DRADeviceCompatibilityGroups=true",
            *OLDER_VERSIONS_ON) as gated:
        live = draconform_run(reports, "live", *paths, "--kubeconfig", str(served / "kubeconfig"),
                              "--cluster-config", str(served / "cluster.yaml"), "--timeout-config", str(FAST_TIMEOUTS),
                              "--also-cluster", str(gated / "cluster.yaml"))
        left = []
        for cluster in (served, gated):
            client = KubeClient(load_config(cluster / "kubeconfig"))
            left += [f"{kind}/{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"
                     for kind in KINDS if kind != "Event" for obj in client.list(kind)[0]
                     if not (kind == "Namespace" and obj["metadata"]["name"] in STANDARD_NAMESPACES)]
            client.close()
    return reference, live, left


def test_every_scenario_passes_live_or_is_skipped_with_the_reason(runs: Any) -> None:
    reference, live, _ = runs
    assert reference["run"]["sut"] != live["run"]["sut"]
    assert_passed_or_skipped_with_reason(live)
    assert _by_scenario(live).keys() == _by_scenario(reference).keys()


def test_the_same_rules_pass_as_in_process_minus_those_skipped_live(runs: Any) -> None:
    reference, live, _ = runs
    in_process, live_rules = _rule_status(reference), _rule_status(live)
    passed_live = {rule for rule, status in live_rules.items() if status == "passed"}
    skipped_live = {rule for rule, status in live_rules.items() if status == "skipped"}
    assert passed_live == {rule for rule, status in in_process.items() if status == "passed"} - skipped_live
    assert len(passed_live) >= 30, f"only {len(passed_live)} rules ran live: the live path lost its scenarios"


def test_the_served_driver_kubelet_and_controllers_and_a_gated_cluster_run_their_scenarios(runs: Any) -> None:
    """Scenarios that hand the driver an inventory, call its kubelet plugin or start the dynamic device
    scaler, and those whose gate only the --also-cluster runs, pass live rather than being skipped."""
    _, live, _ = runs
    passed = {s["feature_file"] for s in live["scenarios"] if s["status"] == "passed"}
    for path in ("kubelet-plugin/prepare.feature", "kep-5007/dynamic-device-scaling.feature",
                 "kep-3063/kubelet.feature", str(GATED.relative_to(FEATURES_DIR))):
        assert path in passed, f"no scenario of {path} passed live"
    assert all(s["status"] == "passed" for s in live["scenarios"] if s["feature_file"] == "kep-5963/search.feature")


def test_objects_written_in_v1beta1_and_v1beta2_round_trip_live(runs: Any) -> None:
    """With --runtime-config turning the older versions on, every scenario writing an object in v1beta1 or
    v1beta2 through their own paths runs and passes live (a conversion that lost a field would fail one)."""
    _, live, _ = runs
    versions = [s for s in live["scenarios"] if s["feature_file"] == "kep-3063/versions.feature"]
    assert len(versions) >= 10 and all(s["status"] == "passed" for s in versions), [
        (s["name"], s["status"], s.get("skip_reason")) for s in versions if s["status"] != "passed"]


def test_no_scenario_leaves_an_object_behind(runs: Any) -> None:
    _, live, left = runs
    assert live["scenarios"], "the live run had no scenarios"
    assert not left, f"objects left on the served store after the run: {left}"


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
