"""The whole conformance suite through the live system under test against `draconform serve` (the reference
store behind the Kubernetes API; its scheduler, resourceclaim controller, kubelet, driver and external
controllers as separate processes), each scenario needing alpha gates on a second served cluster
(--also-cluster), as the guide's live run: every scenario passes live or is skipped with the SUT's reason, none
fails, and none leaves an object behind. That every scenario passes in process is the in-process suite's
check (draconform/suite), so what passes live is what passes in process minus what is skipped live.

A live run waits (settle's quiet period, the Then steps' polls, clean-up) far more than it computes, and it
runs one scenario at a time per cluster, since scenarios share a cluster's drivers and pools. So the feature
files are cut into chunks, and PAIRS pairs of served clusters each run chunks one after another, the pairs side
by side: a few minutes on 2 cores under .ci/stress's CPU hog."""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

import pytest

from draconform.catalogue import load_catalogue
from draconform.paths import FEATURES_DIR
from draconform.suite.selection import Selection
from draconform.suite.tracing import take_inventory
from tests.live.helpers import (
    FAST_TIMEOUTS,
    assert_passed_or_skipped_with_reason,
    draconform_run,
    left_on,
    served_references,
)

PAIRS = 4  # pairs of served clusters running chunks side by side: more than cores, for a run that mostly waits
CHUNKS = 3 * PAIRS  # chunks of feature files: small enough that the pairs end close together
# The second cluster of each pair: the alpha gates of the scenarios the first cluster (release defaults) skips.
ALPHA_GATES = ("DRAListTypeAttributes", "DRANodeAllocatableResources", "DRADeviceCompatibilityGroups",
               "DRAPartitionableDevicesType", "DRAOptionalNodeOperations", "DRADerivedAttributes",
               "DRAHandlePermanentDriverFailures")
# Files whose scenarios the served driver, kubelet and external controllers, or the second cluster's gate, run.
MUST_PASS = ("kubelet-plugin/prepare.feature", "kep-5007/dynamic-device-scaling.feature", "kep-3063/kubelet.feature",
             "kep-5963/search.feature")
GATED = "kep-5963/search.feature"  # its rows with DRADeviceCompatibilityGroups on need the --also-cluster
# kube-apiserver 1.37 serves these only when turned on; the project's own live runs turn them on, so the
# scenarios about objects written in them run rather than being skipped.
OLDER_VERSIONS_ON = ("--runtime-config", "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true")
VERSIONS = "kep-3063/versions.feature"  # objects written in v1beta1 and v1beta2 through their own paths


def _chunks() -> list[list[Path]]:
    """Every feature file, in CHUNKS groups of about equal weight, heaviest first (each pair takes the next). A
    file weighs its scenarios; a scenario of the classic API, skipped live at its first step, hardly counts."""
    inventory = take_inventory(Selection.create(), load_catalogue())
    weight: dict[str, float] = {}
    for ref in inventory.scenarios:
        weight[ref.feature_file] = weight.get(ref.feature_file, 0.0) + (
            0.05 if ref.feature_file.startswith("kep-3063-classic/") else 1.0)
    chunks: list[list[Path]] = [[] for _ in range(CHUNKS)]
    loads = [0.0] * CHUNKS
    for name in sorted(weight, key=lambda n: (-weight[n], n)):
        lightest = loads.index(min(loads))
        chunks[lightest].append(FEATURES_DIR / name)
        loads[lightest] += weight[name]
    return [chunk for _, chunk in sorted(zip(loads, chunks, strict=True), key=lambda pair: -pair[0]) if chunk]


def _run_everything(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], list[str]]:
    """Every chunk's live report, and whatever the served stores still hold afterwards."""
    reports = tmp_path_factory.mktemp("reports")
    gates = ",".join(f"{gate}=true" for gate in ALPHA_GATES)
    servers: list[tuple[Path, tuple[str, ...]]] = []
    for pair in range(PAIRS):
        servers += [(tmp_path_factory.mktemp(f"served{pair}"), OLDER_VERSIONS_ON),
                    (tmp_path_factory.mktemp(f"gated{pair}"), ("--feature-gates", gates, *OLDER_VERSIONS_ON))]
    todo: queue.Queue[tuple[int, list[Path]]] = queue.Queue()
    for number, chunk in enumerate(_chunks()):
        todo.put((number, chunk))
    done: list[dict[str, Any]] = []
    errors: list[BaseException] = []

    def work(served: Path, gated: Path) -> None:
        while not errors:
            try:
                number, chunk = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.append(draconform_run(
                    reports, f"live-{number}", *map(str, chunk), "--kubeconfig", str(served / "kubeconfig"),
                    "--cluster-config", str(served / "cluster.yaml"), "--timeout-config", str(FAST_TIMEOUTS),
                    "--also-cluster", str(gated / "cluster.yaml")))
            except BaseException as error:  # handed to the test's thread below
                errors.append(error)

    with served_references(servers) as directories:
        threads = [threading.Thread(target=work, args=(directories[i], directories[i + 1]))
                   for i in range(0, len(directories), 2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        left = [line for directory in directories for line in left_on(directory)]
    return done, left


def test_the_whole_suite_passes_live_or_is_skipped_with_the_reason_and_leaves_nothing(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """One test, so that pytest-xdist never runs the whole suite twice on two workers. Every scenario of every
    feature file ran, and passed live or was skipped with the SUT's reason; no rule failed and most passed (a
    rule's scenarios may lie in several chunks: it passed when one of them passed); the scenarios that hand the
    driver an inventory, call its kubelet plugin or start the dynamic device scaler, and those whose gate only
    the --also-cluster runs, passed rather than being skipped; nothing is left on any served store."""
    reports, left = _run_everything(tmp_path_factory)
    scenarios = [scenario for report in reports for scenario in report["scenarios"]]
    for report in reports:
        assert_passed_or_skipped_with_reason(report)
    ran = {(s["feature_file"], s["line"]) for s in scenarios}
    written = {(ref.feature_file, ref.line) for ref in take_inventory(Selection.create(), load_catalogue()).scenarios}
    assert ran == written, f"not run: {sorted(written - ran)[:10]}; unknown: {sorted(ran - written)[:10]}"

    verdicts: dict[str, set[str]] = {}
    for report in reports:
        for rule in report["rules"]:
            verdicts.setdefault(rule["id"], set()).add(rule["status"])
    allowed = {"passed", "skipped", "untested", "not selected"}  # the last: outside the chunk's files
    failed = sorted(rule for rule, statuses in verdicts.items() if statuses - allowed)
    assert not failed, f"rules not passed live: {failed}"
    passed_rules = {rule for rule, statuses in verdicts.items() if "passed" in statuses}
    assert len(passed_rules) >= 200, f"only {len(passed_rules)} rules passed live: the live path lost its scenarios"

    passed = {s["feature_file"] for s in scenarios if s["status"] == "passed"}
    for path in MUST_PASS:
        assert path in passed, f"no scenario of {path} passed live"
    # its rows with the gate on pass; its gate-off rows (the gate off in one component, or a 1.35 scheduler) ask
    # for a cluster neither served one is, so they may be skipped
    gated = [s for s in scenarios if s["feature_file"] == GATED]
    gate_on = [s for s in gated if not any(mark in s["name"] for mark in ("gate off", "=off", "1.35"))]
    assert len(gate_on) >= 4 and all(s["status"] == "passed" for s in gate_on), [
        (s["name"], s["status"]) for s in gate_on if s["status"] != "passed"]
    # with the older versions on, every scenario writing through their paths runs and passes (a conversion that
    # lost a field would fail one)
    versions = [s for s in scenarios if s["feature_file"] == VERSIONS]
    assert len(versions) >= 10 and all(s["status"] == "passed" for s in versions), [
        (s["name"], s["status"], s.get("skip_reason")) for s in versions if s["status"] != "passed"]
    assert not left, f"objects left on the served stores after the run: {left}"
