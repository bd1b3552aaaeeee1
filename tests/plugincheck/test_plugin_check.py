"""`draconform plugin-check` against the reference driver's kubelet plugin started as a separate OS process on
its own unix sockets (python -m draconform.reference.standalone_driver), the way a vendor runs it against
their plugin on a node: once well-behaved, and once with injected faults (a hang past the deadline, a crash),
where the expected checks fail, the report is complete and nothing hangs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from draconform.cli import main
from draconform.plugincheck.checks import CHECKS
from tests.harness.helpers import report_validator
from tests.plugincheck.helpers import DRIVER, NODE, Plugin, outcomes, plugin_check

# Checks that need claims only --kubeconfig can make, or a --restart-command.
NEEDS_MORE = {"DRA-PLUGIN/DEVICES-ON-THIS-NODE", "DRA-PLUGIN/EXCLUSIVE-DEVICE-ONCE", "DRA-PLUGIN/CLAIM-IDENTITY-IS-UID",
              "DRA-PLUGIN/SURVIVES-RESTART"}

SUPPORT = "versions: [v1, v1beta1]\npermanentErrors:\n  claims: [bad-config]\n"


@pytest.fixture
def claims_dir(workdir: Path) -> Path:
    """The claims of the node's slices, derived and written by plugin-check, and one more the driver must refuse
    permanently (an opaque configuration it does not understand), declared in supports.yaml."""
    directory = workdir
    (directory / "supports.yaml").write_text(SUPPORT)
    assert main(["plugin-check", "--endpoint", f"unix://{directory}/dra.sock", "--driver", DRIVER, "--node", NODE,
                 "--slices", str(directory / "slices.yaml"), "--write-claims", str(directory / "claims.yaml")]) == 0
    claims = list(yaml.safe_load_all((directory / "claims.yaml").read_text()))
    bad = json.loads(json.dumps(claims[0]))
    bad["metadata"].update(name="bad-config", uid="0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6")
    bad["status"]["allocation"]["devices"]["config"] = [{
        "source": "FromClaim", "requests": ["device"],
        "opaque": {"driver": DRIVER, "parameters": {"mode": "no-such-mode"}},
    }]
    (directory / "claims.yaml").write_text(yaml.safe_dump_all([*claims, bad]))
    return directory


def start(directory: Path, faults: Sequence[str] = (), variant: str | None = None) -> Plugin:
    return Plugin(directory, "--claims", str(directory / "claims.yaml"), faults=faults, variant=variant)


def check(directory: Path, *extra: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    return plugin_check(directory, "--claims", str(directory / "claims.yaml"), "--supports",
                        str(directory / "supports.yaml"), *extra)


def test_a_well_behaved_plugin_passes_every_check(claims_dir: Path) -> None:
    plugin = start(claims_dir)
    try:
        status, report = check(claims_dir, "--driver-version", "1.2.3", "--cdi-dir", str(claims_dir / "cdi"),
                               "--cdi-dir", str(claims_dir / "no-such-dir"))
    finally:
        plugin.stop()
    got = outcomes(report)
    assert got == {c.rule: ("skipped" if c.rule.startswith("KEP-5963") or c.rule in NEEDS_MORE else "passed")
                   for c in CHECKS}, got
    assert status == 0
    assert report["implementation"]["project"] == DRIVER
    assert report["implementation"]["version"] == "1.2.3"
    assert report["run"]["command"].startswith("draconform plugin-check --endpoint unix://")
    assert datetime.fromisoformat(report["run"]["started"]) <= datetime.now(UTC)
    assert report["run"]["duration_s"] > 0
    assert not list(report_validator().iter_errors(report))  # the schema allows the start time it keeps
    reasons = {s["rules"][0]: s["skip_reason"] for s in report["scenarios"] if s["status"] == "skipped"}
    assert "--kubeconfig" in reasons["DRA-PLUGIN/CLAIM-IDENTITY-IS-UID"]
    assert "--restart-command" in reasons["DRA-PLUGIN/SURVIVES-RESTART"]
    for name in ("junit.xml", "cucumber.json", "report.md"):
        assert (claims_dir / "reports" / "run" / name).is_file()


def test_cdi_spec_files_are_checked_only_where_the_runtime_reads_them(claims_dir: Path) -> None:
    """Without --cdi-dir the check is skipped with the way to run it; with it, a plugin that writes no spec file
    fails it, naming the IDs, and a spec file a runtime would refuse is named with its fault."""
    (claims_dir / "other").mkdir()
    (claims_dir / "other" / "broken.json").write_text('{"kind": "example.com/gpu", "devices": []}')
    plugin = start(claims_dir, variant="plugin-writes-no-cdi-spec")
    try:
        _, unchecked = check(claims_dir)
        status, report = check(claims_dir, "--cdi-dir", str(claims_dir / "cdi"), "--cdi-dir", str(claims_dir / "other"),
                               "--cdi-dir", str(claims_dir / "typo"))
    finally:
        plugin.stop()
    skipped = next(s for s in unchecked["scenarios"] if s["rules"] == ["DRA-PLUGIN/CDI-SPEC-FILES"])
    assert skipped["status"] == "skipped" and "--cdi-dir" in skipped["skip_reason"]
    failed = next(s for s in report["scenarios"] if s["rules"] == ["DRA-PLUGIN/CDI-SPEC-FILES"])
    assert failed["status"] == "failed", failed
    assert f"k8s.{DRIVER}/device=gpu-" in failed["message"]
    assert "broken.json: cdiVersion: missing" in failed["message"]
    assert "broken.json" in failed["message"] and "devices:" in failed["message"]
    assert str(claims_dir / "typo") in failed["message"].split("no such directory: ")[1]  # a mistyped --cdi-dir
    assert status == 1
    assert outcomes(report)["DRA-PLUGIN/CDI-ID-SYNTAX"] == "passed"  # nothing else changed


def test_a_hanging_plugin_fails_the_check_in_progress_and_the_run_completes(claims_dir: Path) -> None:
    plugin = start(claims_dir, ["hang:prepare:1"])
    try:
        # The hung call never answers, so its deadline passes whatever the load; the others must answer within
        # it, which 5 seconds leaves a loaded machine room for.
        status, report = check(claims_dir, "--timeout", "5")
    finally:
        plugin.stop()
    got = outcomes(report)
    assert status == 1
    assert len(got) == len(CHECKS)
    assert got["DRA-PLUGIN/ANSWER-EVERY-CLAIM"] == "failed"
    first = next(s for s in report["scenarios"] if s["rules"][0] == "DRA-PLUGIN/ANSWER-EVERY-CLAIM")
    assert "NodePrepareResources" in first["message"] and "DEADLINE_EXCEEDED" in first["message"]
    assert f"{claims_dir}/dra.sock" in first["message"]
    assert got["DRA-PLUGIN/PREPARE-IDEMPOTENT"] == "passed"  # the plugin answers again afterwards


def test_a_crashing_plugin_fails_its_checks_with_the_grpc_status_and_the_report_is_complete(claims_dir: Path) -> None:
    plugin = start(claims_dir, ["crash:unprepare:1"])
    try:
        status, report = check(claims_dir, "--timeout", "10")  # a crash fails its call at once; the rest answer
    finally:
        returncode = plugin.stop()
    got = outcomes(report)
    assert returncode == 70  # it did crash
    assert status == 1
    assert len(got) == len(CHECKS)
    assert got["DRA-PLUGIN/ANSWER-EVERY-CLAIM"] == "failed"
    assert all(s["status"] in ("failed", "skipped") for s in report["scenarios"][1:])
    failed = [s for s in report["scenarios"] if s["status"] == "failed"]
    assert all("UNAVAILABLE" in s["message"] for s in failed[1:])


def test_bad_invocations_exit_2(claims_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["plugin-check", "--endpoint", "relative/dra.sock", "--driver", DRIVER, "--node", NODE,
            "--claims", str(claims_dir / "claims.yaml")]
    assert main(base) == 2
    assert "relative/dra.sock" in capsys.readouterr().err
    (claims_dir / "unallocated.yaml").write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                                              "metadata: {name: idle, uid: x}\nspec: {}\n")
    assert main([*base[:2], f"unix://{claims_dir}/dra.sock", *base[3:-1], str(claims_dir / "unallocated.yaml")]) == 2
    err = capsys.readouterr().err
    assert "unallocated.yaml" in err and "'idle'" in err and "status.allocation" in err
    good = [*base[:2], f"unix://{claims_dir}/dra.sock", *base[3:]]
    (claims_dir / "config.yaml").write_text("permanentErrors:\n  config: {mode: no-such-mode}\n")
    assert main([*good, "--supports", str(claims_dir / "config.yaml")]) == 2
    assert "permanentErrors.config needs --kubeconfig" in capsys.readouterr().err
    assert main([*good, "--kubeconfig", str(claims_dir / "kubeconfig")]) == 2
    assert "one of --kubeconfig PATH, --claims FILE... or --slices FILE" in capsys.readouterr().err
    assert main([*good[:-2], "--kubeconfig", str(claims_dir / "no-such-kubeconfig")]) == 2
    assert "no-such-kubeconfig" in capsys.readouterr().err


def test_the_default_deadline_is_the_kubelets() -> None:
    from draconform.commands import plugincheck as command
    from draconform.plugincheck.checks import KUBELET_CALL_TIMEOUT, Target

    assert command.KUBELET_CALL_TIMEOUT == KUBELET_CALL_TIMEOUT == Target("e", None, "d", "n").timeout == 45.0
