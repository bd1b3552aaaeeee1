"""Conformance reports. The recorder turns a run into one stream of plain records (`records.Run`);
each format is a pure function from that stream to text, so a new format is a new entry in
`WRITERS`, never a change to how results are collected."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from draconform.reporting.cucumber import render_cucumber
from draconform.reporting.html import render_html
from draconform.reporting.json_report import render_json
from draconform.reporting.junit import render_junit
from draconform.reporting.markdown import render_markdown
from draconform.reporting.records import Run, timings, without_timings
from draconform.reporting.submission import FILENAME as SUBMISSION_FILE
from draconform.reporting.submission import render_submission

WRITERS: dict[str, Callable[[Run], str]] = {
    "report.json": render_json,
    "junit.xml": render_junit,
    "cucumber.json": render_cucumber,
    "report.md": render_markdown,
    "report.html": render_html,
    SUBMISSION_FILE: render_submission,
}


TIMINGS_FILE = "timings.json"  # kept out of version control (.gitignore): it changes on every run
# Written with the run's durations: a CI test tab shows them. Like timings.json it changes on every run.
TIMED = frozenset({SUBMISSION_FILE, "junit.xml"})


def write_reports(run: Run, directory: Path) -> list[Path]:
    """Write every format into `directory` (created if needed); return the files written. Durations and the
    start time go to `timings.json` and `junit.xml` only, so a committed report changes only when outcomes do;
    the submission keeps its date, as a submission must say when it ran."""
    directory.mkdir(parents=True, exist_ok=True)
    stable = without_timings(run)
    written = []
    for filename, render in WRITERS.items():
        path = directory / filename
        path.write_text(render(run if filename in TIMED else stable), encoding="utf-8")
        written.append(path)
    path = directory / TIMINGS_FILE
    path.write_text(json.dumps(timings(run), indent=2) + "\n", encoding="utf-8")
    written.append(path)
    return written
