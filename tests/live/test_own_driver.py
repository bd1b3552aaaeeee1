"""The driver and kubelet-plugin scenarios judging a driver the harness cannot program: `draconform serve --driver`
runs a driver of the cluster's own (a fixed set of devices on its node, no ConfigMap programs it) and names it in
cluster.yaml as driverUnderTest; the live run takes the devices it publishes instead of handing it an inventory,
and its rules pass live as in process, where before every one of them was skipped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from draconform.paths import FEATURES_DIR
from tests.live.helpers import FAST_TIMEOUTS, assert_passed_or_skipped_with_reason, draconform_run, served_reference

DRIVER = "accel.vendor.example"  # not the scenarios' "gpu.example.com": their names stand for it
SELECTION = [FEATURES_DIR / "kubelet-plugin" / name for name in ("registration.feature", "unprepare.feature",
                                                                 "versions.feature")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], str]:
    """The selection in process and live against the served driver of its own; the served cluster.yaml, and the
    dra-driver process's log."""
    reports = tmp_path_factory.mktemp("reports")
    paths = [str(path) for path in SELECTION]
    reference = draconform_run(reports, "reference", *paths)
    with served_reference(tmp_path_factory.mktemp("served"), "--driver", DRIVER) as served:
        cluster = yaml.safe_load((served / "cluster.yaml").read_text())
        live = draconform_run(reports, "live", *paths, "--kubeconfig", str(served / "kubeconfig"),
                              "--cluster-config", str(served / "cluster.yaml"), "--timeout-config", str(FAST_TIMEOUTS))
        calls = Path(cluster["kubeletPluginDir"]) / "worker-1" / f"{DRIVER}.calls.jsonl"
        cluster["calls"] = [json.loads(line) for line in calls.read_text().splitlines()] if calls.exists() else []
    return reference, live, cluster, (served / "dra-driver.log").read_text()


def test_the_served_cluster_names_its_own_driver_and_cannot_be_programmed(runs: Any) -> None:
    _, _, cluster, driver_log = runs
    assert cluster["driverUnderTest"] == {"name": DRIVER, "node": "worker-1", "deviceClassName": DRIVER}
    assert "referencePrograms" not in cluster
    assert "started driver" not in driver_log, f"a ConfigMap programmed a driver:\n{driver_log}"


def test_the_plugin_rules_pass_live_with_the_devices_the_driver_publishes(runs: Any) -> None:
    reference, live, cluster, _ = runs
    assert_passed_or_skipped_with_reason(live)
    in_process = {rule["id"] for rule in reference["rules"] if rule["status"] == "passed"}
    passed_live = {rule["id"] for rule in live["rules"] if rule["status"] == "passed"}
    for rule in ("DRA-PLUGIN/REGISTRATION-INFO", "DRA-PLUGIN/REGISTRATION-VERSIONS", "DRA-PLUGIN/SERVES-V1",
                 "DRA-PLUGIN/UNPREPARE-AFTER-PREPARE", "DRA-PLUGIN/UNPREPARE-IDEMPOTENT",
                 "DRA-PLUGIN/ANSWER-EVERY-CLAIM"):
        assert rule in in_process and rule in passed_live, f"{rule} did not pass live against the driver of its own"
    # The harness called the served driver's own plugin, in the cluster's namespaces, about claims it allocated
    # from that driver's devices.
    unprepares = [call for call in cluster["calls"] if call["method"] == "NodeUnprepareResources"]
    assert unprepares, "the served driver's plugin was never asked to unprepare a claim"
    assert all(not claim.startswith("default/") for call in cluster["calls"] for claim in call["claims"])
