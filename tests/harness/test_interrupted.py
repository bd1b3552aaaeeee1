"""Interruption is a result: a real SIGINT or SIGTERM sent to a real `draconform run` in a subprocess, serial and
with xdist workers. The run stops without a traceback, writes every report marked interrupted with the scenarios
that did not run, says so on the console, exits 128 + the signal's number, and `report verify` refuses its
submission. No sleeping: the events stream goes through a FIFO the test reads line by line, and the signal is sent
once it shows the quick scenarios done while a step waits to be stopped."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from draconform.cli import main

RULES = """\
kep: KEP-7777
title: Stopping demo
source: tests/harness/test_interrupted.py
rules:
  - {id: KEP-7777/QUICK, level: MUST, section: Demo, text: A quick check.}
  - {id: KEP-7777/SLOW, level: MUST, section: Demo, text: A check that waits until the run is stopped.}
  - {id: KEP-7777/LATER, level: MUST, section: Demo, text: A check the run never reaches.}
"""

FEATURE = """\
@kep-7777
Feature: A run someone stops

  Rule: KEP-7777/QUICK  Quick

    Scenario Outline: Quick <n>
      Given the number <n>

      Examples:
        | n |
        | 1 |
        | 2 |
        | 3 |

  Rule: KEP-7777/SLOW  Slow

    Scenario: Waits to be stopped
      Given the run waits to be stopped

  Rule: KEP-7777/LATER  Later

    Scenario: Never reached one
      Given the run waits to be stopped

    Scenario: Never reached two
      Given the run waits to be stopped
"""

STEPS = """\
import threading

from pytest_bdd import given, parsers


@given(parsers.parse("the number {n:d}"))
def number(n):
    assert n > 0


@given("the run waits to be stopped")
def waits():
    threading.Event().wait()  # only a signal ends it
"""

QUICK = 3  # the outline's rows, which finish before the waiting scenario can


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("stop")
    (base / "features" / "kep-7777").mkdir(parents=True)
    (base / "features" / "kep-7777" / "rules.yaml").write_text(RULES)
    (base / "features" / "kep-7777" / "stop.feature").write_text(FEATURE)
    (base / "stop_steps.py").write_text(STEPS)
    return base


def _end_of_stream_when_gone(child: subprocess.Popen[str], fifo: Path) -> None:
    """Should the run end without ever opening the event stream (a broken run), open and close it once, so that
    the test's reader sees the end of the stream instead of waiting for ever."""
    child.wait()
    with contextlib.suppress(OSError):  # the reader is gone already: nothing waits
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def interrupted_run(root: Path, name: str, sig: signal.Signals, *args: str) -> tuple[int, str, Path]:
    """Start the run in its own process group, read its events until the quick scenarios are done, send `sig` to
    the group (as a terminal's Ctrl-C or a CI cancel does), and return its status, output and report folder."""
    fifo = root / f"{name}.events"
    os.mkfifo(fifo)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "DRACONFORM_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "draconform.cli", "run", "--features-dir", str(root / "features"),
               "--plugin", "stop_steps", "--report-dir", str(root / "reports"), "--name", name,
               "--events", str(fifo), "--organization", "example", "--project", "stopper", *args]
    child = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
    threading.Thread(target=_end_of_stream_when_gone, args=(child, fifo), daemon=True).start()
    with fifo.open(encoding="utf-8") as events:  # blocks until the run opens it for writing
        done = 0
        for line in events:
            if json.loads(line)["event"] == "scenario-finished":
                done += 1
            if done == QUICK:
                break
        assert done == QUICK, f"the run ended before {QUICK} scenarios finished: {child.communicate()[0]}"
        os.killpg(child.pid, sig)
        rest = events.read()  # drain until the run closes the stream, so it never blocks on a full pipe
    output, _ = child.communicate(timeout=600)  # a hang guard, with room for load
    assert '"run-finished"' in rest
    return child.returncode, output, root / "reports" / name


@pytest.mark.parametrize(("sig", "workers"), [(signal.SIGINT, "0"), (signal.SIGTERM, "0"), (signal.SIGINT, "2"),
                                             (signal.SIGTERM, "2")])
def test_a_stopped_run_writes_every_report_marked_interrupted(root: Path, sig: signal.Signals, workers: str) -> None:
    name = f"{sig.name.lower()}-{workers}"
    status, output, reports = interrupted_run(root, name, sig, "-n", workers)
    assert status == 128 + sig.value, output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
    assert f"INTERRUPTED by {sig.name}" in output

    report = json.loads((reports / "report.json").read_text())
    stop = report["run"]["interrupted"]
    assert stop["signal"] == sig.name and stop["selected"] == 6
    assert stop["not_run"] == 6 - len(report["scenarios"]) >= 1
    statuses = {rule["id"]: rule["status"] for rule in report["rules"]}
    assert statuses["KEP-7777/QUICK"] == "passed"
    assert statuses["KEP-7777/SLOW"] == "not run"  # killed mid-step: no result, neither passed nor untested
    [verdict] = report["conformance"]
    assert verdict["verdict"] == "incomplete" and "interrupted by " + sig.name in verdict["summary"]
    if workers == "0":  # serial: exactly the waiting scenario and the two after it did not run
        assert stop["not_run"] == 3 and statuses["KEP-7777/LATER"] == "not run"

    assert f"Interrupted by {sig.name}" in (reports / "report.md").read_text()
    assert f"interrupted by {sig.name}" in (reports / "report.html").read_text()
    junit = ET.parse(reports / "junit.xml").getroot()
    assert any(case.get("name") == "run interrupted" for case in junit.iter("testcase"))
    assert junit.get("errors") != "0"


def test_report_verify_refuses_an_interrupted_run(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, output, reports = interrupted_run(root, "verify", signal.SIGTERM, "--submit")
    assert not (root / "reports" / "1.37").exists(), output  # --submit writes no submission folder for it
    assert main(["report", "verify", str(reports)]) == 1
    out = capsys.readouterr().out
    assert "summary.interrupted: the run was interrupted by SIGTERM with 3 of 6 scenarios not run" in out
    assert "an interrupted run is no submission" in out


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
"""


def test_a_stopped_plugin_check_writes_its_reports_marked_interrupted() -> None:
    """plugin-check against a socket that accepts a connection and never answers: once the check's call has
    connected (the test's accept returns), SIGTERM stops it; the checks done and not done reach the reports."""
    import shutil
    import socket
    import tempfile

    directory = Path(tempfile.mkdtemp(prefix="dcf-stop-", dir="/tmp"))  # a unix socket path must be short
    try:
        (directory / "slices.yaml").write_text(SLICES)
        common = ["--endpoint", f"unix://{directory}/dra.sock", "--driver", "gpu.example.com", "--node", "node-1"]
        assert main(["plugin-check", *common, "--slices", str(directory / "slices.yaml"),
                     "--write-claims", str(directory / "claims.yaml")]) == 0
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(str(directory / "dra.sock"))
            listener.listen()
            child = subprocess.Popen(
                [sys.executable, "-m", "draconform.cli", "plugin-check", *common, "--claims",
                 str(directory / "claims.yaml"), "--timeout", "600", "--report-dir", str(directory / "reports"),
                 "--name", "stopped"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
            connection, _ = listener.accept()  # a check is calling the plugin: the run is under way
            with connection:
                os.killpg(child.pid, signal.SIGTERM)
                output, _ = child.communicate(timeout=600)  # a hang guard, with room for load
        assert child.returncode == 128 + signal.SIGTERM.value, output
        assert "Traceback" not in output and "INTERRUPTED by SIGTERM" in output
        report = json.loads((directory / "reports" / "stopped" / "report.json").read_text())
        stop = report["run"]["interrupted"]
        assert stop["signal"] == "SIGTERM" and stop["not_run"] >= 1
        assert stop["not_run"] + len(report["scenarios"]) == stop["selected"]
        assert "not run" in {rule["status"] for rule in report["rules"]}
    finally:
        shutil.rmtree(directory, ignore_errors=True)
