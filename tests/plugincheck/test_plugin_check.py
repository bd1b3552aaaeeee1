"""`draconform plugin-check` against the reference driver's kubelet plugin started as a separate OS process on
its own unix sockets (python -m draconform.reference.drivers.standalone), the way a vendor runs it against
their plugin on a node: once well-behaved, and once with injected faults (a hang past the deadline, a crash),
where the expected checks fail, the report is complete and nothing hangs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from draconform import faults as faults_module
from draconform.cli import main
from draconform.plugincheck.checks import CHECKS

# Checks that need claims only --kubeconfig can make, or a --restart-command.
NEEDS_MORE = {"DRA-PLUGIN/DEVICES-ON-THIS-NODE", "DRA-PLUGIN/EXCLUSIVE-DEVICE-ONCE", "DRA-PLUGIN/CLAIM-IDENTITY-IS-UID",
              "DRA-PLUGIN/SURVIVES-RESTART"}

DRIVER, NODE = "gpu.example.com", "node-1"
SLICES = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpus}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  devices:
  - name: gpu-0
  - name: gpu-1
"""
SUPPORT = "versions: [v1, v1beta1]\npermanentErrors:\n  claims: [bad-config]\n"


@pytest.fixture
def workdir() -> Iterator[Path]:
    # Short, because a unix socket path must fit in about 100 bytes.
    directory = Path(tempfile.mkdtemp(prefix="dcf-pc-", dir="/tmp"))
    (directory / "slices.yaml").write_text(SLICES)
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
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


class Plugin:
    """The standalone plugin process: started, and stopped at the end of the test whatever happened."""

    def __init__(self, directory: Path, faults: Sequence[str] = (), switches: Sequence[str] = ()) -> None:
        """`faults` are injected failures of calls; `switches` are the reference's fault switches (known bugs)."""
        command = [sys.executable, "-m", "draconform.reference.drivers.standalone", "--driver", DRIVER,
                   "--node", NODE, "--socket", str(directory / "dra.sock"), "--registration",
                   str(directory / "reg.sock"), "--slices", str(directory / "slices.yaml"),
                   "--claims", str(directory / "claims.yaml"), "--cdi-dir", str(directory / "cdi")]
        for fault in faults:
            command += ["--fault", fault]
        env = {**os.environ, faults_module.ENV: ",".join(switches)}
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # blocks until the sockets serve, or the process ends
        stderr = self.process.stderr.read() if line.strip() != "ready" and self.process.stderr else ""
        assert line.strip() == "ready", f"the plugin did not start: {stderr}"

    def stop(self) -> int | None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def check(directory: Path, *extra: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    status = main(["plugin-check", "--endpoint", f"unix://{directory}/dra.sock",
                   "--registration", f"unix://{directory}/reg.sock", "--driver", DRIVER, "--node", NODE,
                   "--claims", str(directory / "claims.yaml"), "--supports", str(directory / "supports.yaml"),
                   "--report-dir", str(directory / "reports"), "--name", "run", *extra])
    report = json.loads((directory / "reports" / "run" / "report.json").read_text())
    return status, report


def outcomes(report: dict) -> dict[str, str]:  # type: ignore[type-arg]
    return {scenario["rules"][0]: scenario["status"] for scenario in report["scenarios"]}


def test_a_well_behaved_plugin_passes_every_check(workdir: Path) -> None:
    plugin = Plugin(workdir)
    try:
        status, report = check(workdir, "--driver-version", "1.2.3", "--cdi-dir", str(workdir / "cdi"),
                               "--cdi-dir", str(workdir / "no-such-dir"))
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
    reasons = {s["rules"][0]: s["skip_reason"] for s in report["scenarios"] if s["status"] == "skipped"}
    assert "--kubeconfig" in reasons["DRA-PLUGIN/CLAIM-IDENTITY-IS-UID"]
    assert "--restart-command" in reasons["DRA-PLUGIN/SURVIVES-RESTART"]
    for name in ("junit.xml", "cucumber.json", "report.md"):
        assert (workdir / "reports" / "run" / name).is_file()


def test_cdi_spec_files_are_checked_only_where_the_runtime_reads_them(workdir: Path) -> None:
    """Without --cdi-dir the check is skipped with the way to run it; with it, a plugin that writes no spec file
    fails it, naming the IDs, and a spec file a runtime would refuse is named with its fault."""
    (workdir / "other").mkdir()
    (workdir / "other" / "broken.json").write_text('{"kind": "example.com/gpu", "devices": []}')
    plugin = Plugin(workdir, switches=["plugin-writes-no-cdi-spec"])
    try:
        _, unchecked = check(workdir)
        status, report = check(workdir, "--cdi-dir", str(workdir / "cdi"), "--cdi-dir", str(workdir / "other"),
                               "--cdi-dir", str(workdir / "typo"))
    finally:
        plugin.stop()
    skipped = next(s for s in unchecked["scenarios"] if s["rules"] == ["DRA-PLUGIN/CDI-SPEC-FILES"])
    assert skipped["status"] == "skipped" and "--cdi-dir" in skipped["skip_reason"]
    failed = next(s for s in report["scenarios"] if s["rules"] == ["DRA-PLUGIN/CDI-SPEC-FILES"])
    assert failed["status"] == "failed", failed
    assert f"k8s.{DRIVER}/device=gpu-" in failed["message"]
    assert "broken.json: cdiVersion: missing" in failed["message"]
    assert "broken.json" in failed["message"] and "devices:" in failed["message"]
    assert str(workdir / "typo") in failed["message"].split("no such directory: ")[1]  # a mistyped --cdi-dir
    assert status == 1
    assert outcomes(report)["DRA-PLUGIN/CDI-ID-SYNTAX"] == "passed"  # nothing else changed


def test_a_hanging_plugin_fails_the_check_in_progress_and_the_run_completes(workdir: Path) -> None:
    plugin = Plugin(workdir, ["hang:prepare:1"])
    try:
        status, report = check(workdir, "--timeout", "1")
    finally:
        plugin.stop()
    got = outcomes(report)
    assert status == 1
    assert len(got) == len(CHECKS)
    assert got["DRA-PLUGIN/ANSWER-EVERY-CLAIM"] == "failed"
    first = next(s for s in report["scenarios"] if s["rules"][0] == "DRA-PLUGIN/ANSWER-EVERY-CLAIM")
    assert "NodePrepareResources" in first["message"] and "DEADLINE_EXCEEDED" in first["message"]
    assert f"{workdir}/dra.sock" in first["message"]
    assert got["DRA-PLUGIN/PREPARE-IDEMPOTENT"] == "passed"  # the plugin answers again afterwards


def test_a_crashing_plugin_fails_its_checks_with_the_grpc_status_and_the_report_is_complete(workdir: Path) -> None:
    plugin = Plugin(workdir, ["crash:unprepare:1"])
    try:
        status, report = check(workdir, "--timeout", "2")
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


def test_bad_invocations_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["plugin-check", "--endpoint", "relative/dra.sock", "--driver", DRIVER, "--node", NODE,
            "--claims", str(workdir / "claims.yaml")]
    assert main(base) == 2
    assert "relative/dra.sock" in capsys.readouterr().err
    (workdir / "unallocated.yaml").write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                                              "metadata: {name: idle, uid: x}\nspec: {}\n")
    assert main([*base[:2], f"unix://{workdir}/dra.sock", *base[3:-1], str(workdir / "unallocated.yaml")]) == 2
    err = capsys.readouterr().err
    assert "unallocated.yaml" in err and "'idle'" in err and "status.allocation" in err
