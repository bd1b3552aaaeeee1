"""The console of a run and its live progress, on the controller only, in place of pytest's own output
(which names generated `test_…` functions): a display per KEP folder (scenarios done of total, failures so
far) drawn with rich while the run is on a terminal, else a plain line per failed scenario (feature:line,
scenario, rule IDs) and per finished KEP folder; at the end a failure digest, the verdict per profile and
where the reports are. An optional NDJSON event stream (`draconform run --events FILE`) feeds a dashboard.
All follow the records the recorder collects, so they count exactly what the reports will.

Totals come from parsing the selected feature files (an outline counts one per Examples row), because
under pytest-xdist the controller never sees the collected tests themselves.

Events, one JSON object per line, flushed as written:
  {"event": "run-started", "run": NAME, "totals": {FOLDER: N, ...}, "total": N}
  {"event": "scenario-finished", "folder", "feature_file", "line", "name", "status", "rules",
   "done", "total", "failures"}
  {"event": "run-finished", "summary": {"scenarios": {...}, "rules": {...}}, "reports": [PATH, ...],
   "interrupted": null or {"signal": "SIGINT" | "SIGTERM", "not_run": N}}"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import IO, Any

import pytest

from draconform.harness.recorder import RECORD_PROPERTY, count_scenarios, folder_of
from draconform.reporting.records import DIVERGED, Run, ScenarioRecord
from draconform.reporting.results import Results
from draconform.suite.selection import Selection

BROKEN = frozenset({"failed", "error"})
DIGEST_SCENARIOS = 20  # failures the digest shows in full; report.md and report.html hold every one
DIGEST_LINES = 6  # lines of a failure's message the digest shows
SKIP_REASONS = 5  # skip reasons the end of a run names


def scenario_line(record: ScenarioRecord) -> str:
    """`FAILED kep-5004/extended.feature:40  Scenario name  [KEP-5004/RULE]`: one scenario on the console (a known
    upstream divergence reads `UPSTREAM`, with the divergence's ID after the rules)."""
    status = "UPSTREAM" if record.status == DIVERGED else record.status.upper()
    marks = f" upstream-differs:{','.join(record.divergences)}" if record.status == DIVERGED else ""
    return f"{status:7} {record.location}  {record.name}  [{', '.join(record.rules) or 'no rule'}{marks}]"


def digest(run: Run) -> list[str]:
    """The end-of-run summary of what went wrong: each failed or errored scenario with its rules, the step
    and the first lines of the message; harness errors; the interruption."""
    broken = [s for s in run.scenarios if s.status in BROKEN]
    lines: list[str] = []
    if broken:
        lines.append(f"{len(broken)} scenario{'s' * (len(broken) != 1)} failed or errored:")
    for record in broken[:DIGEST_SCENARIOS]:
        step = record.failing_step
        lines.append("  " + scenario_line(record))
        where = f"at {step.keyword} {step.text} (line {step.line})" if step else "before any step ran"
        lines.append(f"      {where}")
        message = (record.message or "").strip().splitlines()
        lines += [f"      {text}" for text in message[:DIGEST_LINES]]
        if len(message) > DIGEST_LINES:
            lines.append(f"      … {len(message) - DIGEST_LINES} more lines in report.md / report.html")
    if len(broken) > DIGEST_SCENARIOS:
        lines.append(f"  … and {len(broken) - DIGEST_SCENARIOS} more (report.md lists every one)")
    for error in run.errors:
        lines.append(f"harness error: {error.where}: {error.message.strip().splitlines()[0] if error.message else ''}")
    return lines


def divergence_digest(results: Results) -> list[str]:
    """The known upstream divergences the run observed, apart from the failures: each with its rule, releases and
    the scenarios that failed as it (their failure text is in report.md / report.html)."""
    observed = results.divergences()
    if not observed:
        return []
    count = sum(len(o.scenarios) for o in observed)
    lines = [f"{count} scenario{'s' * (count != 1)} failed as upstream Kubernetes does (known upstream divergences, "
             "not counted as failures; check each failure text in report.md):"]
    for o in observed:
        lines.append(f"  {o.divergence.id} [{o.rule.id}, upstream {o.divergence.releases}]: "
                     + ", ".join(s.location for s in o.scenarios))
    return lines


def skip_reasons(run: Run) -> list[str]:
    """The most frequent reasons scenarios were skipped, with their counts: what a system under test lacks."""
    reasons = Counter((s.skip_reason or "no reason given").strip().splitlines()[0] for s in run.scenarios
                      if s.status == "skipped")
    if not reasons:
        return []
    lines = [f"skipped, by reason ({sum(reasons.values())} scenarios):"]
    lines += [f"  {count:4}  {reason}" for reason, count in reasons.most_common(SKIP_REASONS)]
    if len(reasons) > SKIP_REASONS:
        lines.append(f"  … and {len(reasons) - SKIP_REASONS} other reasons (report.md lists them all)")
    return lines


def closing(results: Results, written: list[str]) -> list[str]:
    """The last lines of a run: digest, skip reasons, verdicts, counts, interruption, reports."""
    lines = digest(results.run) + divergence_digest(results) + skip_reasons(results.run)
    lines += [f"{v.profile}: {v.verdict} — {v.summary}" for v in results.verdicts()]
    lines.append(f"draconform {results.summary_line()}")
    stop = results.run.info.interruption
    if stop is not None:
        lines.append(f"INTERRUPTED by {stop.signal}: {stop.not_run} of {stop.selected} scenarios not run; every "
                     "report is marked interrupted and `report verify` refuses it as a submission")
    lines.append(f"reports: {', '.join(written)}")
    return lines


class Progress:
    """Registered on the controller (or the only process) of a `draconform run`."""

    def __init__(self, config: pytest.Config, display: bool, events: Path | None) -> None:
        self.config = config
        self.totals: dict[str, int] = {}
        self.done: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.outcomes: dict[str, Counter[str]] = {}
        self.events: IO[str] | None = events.open("w", encoding="utf-8") if events is not None else None
        self.display: Any = None  # a rich Progress while on a terminal
        self.tasks: dict[str, Any] = {}
        self.wants_display = display

    def emit(self, event: str, **fields: Any) -> None:
        if self.events is not None:
            self.events.write(json.dumps({"event": event, **fields}, ensure_ascii=False) + "\n")
            self.events.flush()  # a dashboard tails the file while the run goes on

    def say(self, line: str) -> None:
        if self.display is not None:
            self.display.console.print(line, markup=False, highlight=False)
        else:
            print(line, flush=True)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.totals = count_scenarios(Selection.from_environ())
        total = sum(self.totals.values())
        self.emit("run-started", run=self.config.getoption("draconform_run_name"), totals=self.totals, total=total)
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
            for folder, count in self.totals.items():
                self.tasks[folder] = self.display.add_task(folder, total=count, failures=0)
            self.display.start()
        else:
            workers = self.config.getoption("numprocesses", default=None)
            how = f"{workers} workers" if workers else "serially"
            self.say(f"draconform run {self.config.getoption('draconform_run_name')}: {total} scenarios in "
                     f"{len(self.totals)} KEP folder{'s' * (len(self.totals) != 1)}, {how}")

    @pytest.hookimpl(trylast=True)  # after the recorder kept the record: a signal between the two loses neither
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = next((value for name, value in report.user_properties if name == RECORD_PROPERTY), None)
        if not isinstance(data, dict):
            return
        record = ScenarioRecord.from_dict(data)
        folder = folder_of(record.feature_file)
        self.done[folder] += 1
        self.failures[folder] += record.status in BROKEN
        self.outcomes.setdefault(folder, Counter())[record.status] += 1
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
            return
        if record.status in BROKEN or record.status == DIVERGED:
            self.say(scenario_line(record))
        if self.done[folder] == self.totals.get(folder):
            counts = ", ".join(f"{n} {status}" for status, n in sorted(self.outcomes[folder].items()))
            self.say(f"{folder}: {self.done[folder]} of {self.totals[folder]} scenarios done ({counts})")

    @pytest.hookimpl(trylast=True)  # after the recorder wrote the reports
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        recorder = self.config.pluginmanager.get_plugin("draconform-recorder")
        results: Results | None = getattr(recorder, "results", None)
        written = [str(path) for path in getattr(recorder, "written", [])]
        if self.display is not None:
            self.display.stop()
        if results is not None:
            for line in closing(results, written):
                self.say(line)
        summary = {"scenarios": results.scenario_counts(), "rules": results.rule_counts()} if results else None
        stop = results.run.info.interruption if results else None
        interrupted = {"signal": stop.signal, "not_run": stop.not_run} if stop else None
        self.emit("run-finished", summary=summary, reports=written, interrupted=interrupted)
        if self.events is not None:
            self.events.close()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("draconform")
    group.addoption("--draconform-progress", action="store_true", help="draw live progress per KEP (rich)")
    group.addoption("--draconform-events", default=None, help="write an NDJSON event stream to this file")


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return  # workers send their records to the controller, which alone follows the run
    if config.getoption("draconform_report_dir", default=None) is None:
        return  # not a `draconform run` (the unit tests collect the suite with pytest's own output)
    display = bool(config.getoption("draconform_progress"))
    events = config.getoption("draconform_events")
    config.pluginmanager.register(Progress(config, display, Path(events) if events else None), "draconform-progress")
