"""Live progress: the NDJSON event stream a dashboard tails, the per-KEP totals it starts from, and the
rich display, which draws only on a terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys

import pytest

from draconform.commands.run import wants_progress
from draconform.harness import progress
from draconform.suite.selection import Selection

from .test_end_to_end import Workspace, draconform_run, workspace  # noqa: F401 (a fixture)


def test_totals_count_every_outline_row_per_kep_folder(workspace: Workspace) -> None:  # noqa: F811
    totals = progress.count_scenarios(Selection.create(workspace.features))
    # good.feature: an outline of 2 rows; bad.feature: 5 scenarios; unknown.feature: 2.
    assert totals == {"kep-9999": 9}


def test_events_stream_one_line_per_scenario_between_start_and_finish(workspace: Workspace) -> None:  # noqa: F811
    events = workspace.root / "events.ndjson"
    outcome = draconform_run(workspace, "with-events", "-n", "2", "--events", str(events))
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert lines[0] == {"event": "run-started", "run": "with-events", "totals": {"kep-9999": 9}, "total": 9}
    finished = [line for line in lines if line["event"] == "scenario-finished"]
    report = outcome.report()
    assert sorted((e["feature_file"], e["name"], e["status"]) for e in finished) == sorted(
        (s["feature_file"], s["name"], s["status"]) for s in report["scenarios"]
    )
    assert [e["done"] for e in finished] == list(range(1, 10))
    counts = report["summary"]["scenarios"]
    assert finished[-1]["failures"] == counts["failed"] + counts["error"]
    assert lines[-1]["event"] == "run-finished"
    assert lines[-1]["summary"]["rules"] == report["summary"]["rules"]
    assert str(outcome.reports / "report.json") in lines[-1]["reports"]
    # Not on a terminal (the subprocess's output is a pipe): plain lines naming feature:line, scenario and rules,
    # never pytest's generated test names, and no progress bars.
    assert "FAILED  kep-9999/bad.feature:6  The total is wrong  [KEP-9999/BROKEN]" in outcome.output
    assert "kep-9999: 9 of 9 scenarios done" in outcome.output
    # At the end: the failure digest with the step and message, the skip reasons, the verdicts.
    assert "      at Then the total is 3 (line 9)\n      assert 2 == 3\n      observed: 2\n" in outcome.output
    assert "skipped, by reason (2 scenarios):" in outcome.output
    assert "core: failure — Profile core does not conform" in outcome.output
    assert "test_" not in outcome.output and "━" not in outcome.output


@pytest.mark.parametrize("tty", [True, False])
def test_the_display_is_drawn_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch, tty: bool) -> None:
    monkeypatch.setattr("sys.stderr.isatty", lambda: tty)
    assert wants_progress() is tty


def test_on_a_terminal_the_display_shows_each_kep_and_the_summary(workspace: Workspace) -> None:  # noqa: F811
    # A pseudo-terminal makes the run believe a person is watching.
    primary, secondary = pty.openpty()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "DRACONFORM_"))}
    env |= {"PYTHONPATH": str(workspace.root), "COLUMNS": "100", "TERM": "xterm"}
    command = [sys.executable, "-m", "draconform.cli", "run", "--features-dir", str(workspace.features)]
    command += ["--plugin", "demo_steps", "--report-dir", str(workspace.root / "reports"), "--name", "on-a-tty"]
    child = subprocess.Popen(command, cwd=workspace.root, env=env, stdin=secondary, stdout=secondary, stderr=secondary)
    os.close(secondary)
    chunks = []
    while True:  # read while it writes, so that a full terminal buffer never blocks it
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    assert child.wait(timeout=600) == 1  # the demo has failures (a hang guard, with room for load)
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode("utf-8", "replace"))
    assert "kep-9999" in screen and "9/9" in screen and "5 failures" in screen
    assert "draconform 9 scenarios" in screen
    assert "test_features.py" not in screen  # pytest's own progress lines are replaced by the display
