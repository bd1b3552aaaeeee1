"""Live progress of a run, on the controller only: a display per KEP folder (scenarios done of total,
failures so far) drawn with rich while the run is on a terminal, and an optional NDJSON event stream
(`draconform run --events FILE`) a dashboard can tail. Both follow the records the recorder collects,
so they count exactly what the reports will.

Totals come from parsing the selected feature files (an outline counts one per Examples row), because
under pytest-xdist the controller never sees the collected tests themselves.

Events, one JSON object per line, flushed as written:
  {"event": "run-started", "run": NAME, "totals": {FOLDER: N, ...}, "total": N}
  {"event": "scenario-finished", "folder", "feature_file", "line", "name", "status", "rules",
   "done", "total", "failures"}
  {"event": "run-finished", "summary": {"scenarios": {...}, "rules": {...}}, "reports": [PATH, ...]}"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import IO, Any

import pytest
from pytest_bdd.exceptions import GherkinParseError

from draconform.harness.recorder import RECORD_PROPERTY
from draconform.reporting.records import ScenarioRecord
from draconform.suite.selection import Selection
from draconform.suite.tracing import feature_files, parse_feature

BROKEN = frozenset({"failed", "error"})


def folder_of(feature_file: str) -> str:
    """The KEP folder a feature file lies in (`kep-3063/scheduling.feature` -> `kep-3063`)."""
    return feature_file.split("/", 1)[0] if "/" in feature_file else "."


def count_scenarios(selection: Selection) -> dict[str, int]:
    """Scenarios per KEP folder, as the run will record them; files that do not parse count nothing
    (the recorder reports them as harness errors)."""
    totals: Counter[str] = Counter()
    for path in feature_files(selection):
        try:
            feature = parse_feature(path, selection)
        except GherkinParseError:
            continue
        rows = sum(sum(len(table.examples) for table in t.examples) or 1 for t in feature.scenarios.values())
        totals[folder_of(selection.relative(path))] += rows
    return dict(sorted(totals.items()))


class Progress:
    """Registered on the controller (or the only process) when a display or an event file is wanted."""

    def __init__(self, config: pytest.Config, display: bool, events: Path | None) -> None:
        self.config = config
        self.totals: dict[str, int] = {}
        self.done: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.events: IO[str] | None = events.open("w", encoding="utf-8") if events is not None else None
        self.display: Any = None  # a rich Progress while on a terminal
        self.tasks: dict[str, Any] = {}
        self.wants_display = display

    def emit(self, event: str, **fields: Any) -> None:
        if self.events is not None:
            self.events.write(json.dumps({"event": event, **fields}, ensure_ascii=False) + "\n")
            self.events.flush()  # a dashboard tails the file while the run goes on

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.totals = count_scenarios(Selection.from_environ())
        self.emit(
            "run-started",
            run=self.config.getoption("draconform_run_name"),
            totals=self.totals,
            total=sum(self.totals.values()),
        )
        if self.wants_display:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            console = Console(stderr=True)
            self.display = Progress(
                TextColumn("{task.description:<24}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("[red]{task.fields[failures]} failures[/red]", justify="right"),
                console=console,
                transient=False,
            )
            for folder, total in self.totals.items():
                self.tasks[folder] = self.display.add_task(folder, total=total, failures=0)
            self.display.start()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = next((value for name, value in report.user_properties if name == RECORD_PROPERTY), None)
        if not isinstance(data, dict):
            return
        record = ScenarioRecord.from_dict(data)
        folder = folder_of(record.feature_file)
        self.done[folder] += 1
        self.failures[folder] += record.status in BROKEN
        self.emit(
            "scenario-finished",
            folder=folder,
            feature_file=record.feature_file,
            line=record.line,
            name=record.name,
            status=record.status,
            rules=list(record.rules),
            done=sum(self.done.values()),
            total=sum(self.totals.values()),
            failures=sum(self.failures.values()),
        )
        if self.display is not None:
            if folder not in self.tasks:  # a scenario the static count did not foresee
                self.tasks[folder] = self.display.add_task(folder, total=0, failures=0)
            task = self.tasks[folder]
            total = max(self.totals.get(folder, 0), self.done[folder])
            self.display.update(task, completed=self.done[folder], total=total, failures=self.failures[folder])

    @pytest.hookimpl(trylast=True)  # after the recorder wrote the reports
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        recorder = self.config.pluginmanager.get_plugin("draconform-recorder")
        results = getattr(recorder, "results", None)
        written = [str(path) for path in getattr(recorder, "written", [])]
        if self.display is not None:
            self.display.stop()
            if results is not None:
                self.display.console.print(f"[bold]draconform[/bold] {results.summary_line()}")
                self.display.console.print(f"reports: {', '.join(written)}")
        summary = {"scenarios": results.scenario_counts(), "rules": results.rule_counts()} if results else None
        self.emit("run-finished", summary=summary, reports=written)
        if self.events is not None:
            self.events.close()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("draconform")
    group.addoption("--draconform-progress", action="store_true", help="draw live progress per KEP (rich)")
    group.addoption("--draconform-events", default=None, help="write an NDJSON event stream to this file")


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return  # workers send their records to the controller, which alone follows the run
    display = bool(config.getoption("draconform_progress"))
    events = config.getoption("draconform_events")
    if display or events:
        plugin = Progress(config, display, Path(events) if events else None)
        config.pluginmanager.register(plugin, "draconform-progress")
