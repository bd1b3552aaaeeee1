"""The result recorder: a pytest plugin that turns every scenario and step into the plain records of
`draconform.reporting.records` and, at the end of the session, writes the reports.

It does not rely on pytest-bdd's reporters, which lose data under pytest-xdist. The process that runs
a scenario (an xdist worker, or the only process) builds its record from pytest-bdd's step hooks and
pytest's phase reports and attaches it to the teardown report's `user_properties`; xdist carries
those to the controller, which alone collects records and writes the reports.

It also decides outcomes: an assertion (or `pytest.fail`) is `failed`, any other exception is
`error`, `Unsupported` from the SUT is `skipped` with its message as the reason, a failure of a scenario tagged
`@upstream-differs:<ID>` is an `upstream divergence` (upstream Kubernetes does not give the outcome either), and a
scenario that cites a rule missing from the catalogue is an `error` before any step runs."""

from __future__ import annotations

import signal
import time
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pytest_bdd.exceptions import GherkinParseError
from pytest_bdd.parser import Examples, ScenarioTemplate, Step
from pytest_bdd.scenario import scenario_wrapper_template_registry
from pytest_bdd.utils import registry_get_safe

from draconform.catalogue import Catalogue, CatalogueError, Rule, load_catalogue
from draconform.claims import Claims
from draconform.harness.wording import describe
from draconform.reporting import write_reports
from draconform.reporting.records import (
    DIVERGED,
    HarnessError,
    Interruption,
    Outcome,
    Run,
    RunInfo,
    ScenarioRecord,
    StepRecord,
    StepStatus,
    signal_name,
    stop_on_sigterm,
)
from draconform.reporting.results import Results
from draconform.reporting.submission import write_submission
from draconform.suite.selection import Selection
from draconform.suite.tracing import feature_files, parse_feature, scenario_tags, take_inventory, trace
from draconform.sut import Unsupported, missing_method

RECORD_PROPERTY = "draconform.scenario"
EXAMPLE_PARAM = "_pytest_bdd_example"  # the parameter pytest-bdd gives outline rows


class UnknownRule(Exception):
    """A scenario cites a rule that is not in the catalogue, or cites none."""


def count_scenarios(selection: Selection) -> dict[str, int]:
    """Scenarios per KEP folder, as the run will record them (an outline counts one per Examples row); files
    that do not parse count nothing (the recorder reports them as harness errors)."""
    totals: Counter[str] = Counter()
    for path in feature_files(selection):
        try:
            feature = parse_feature(path, selection)
        except GherkinParseError:
            continue
        rows = sum(sum(len(table.examples) for table in t.examples) or 1 for t in feature.scenarios.values())
        totals[folder_of(selection.relative(path))] += rows
    return dict(sorted(totals.items()))


def folder_of(feature_file: str) -> str:
    """The KEP folder a feature file lies in (`kep-3063/scheduling.feature` -> `kep-3063`)."""
    return feature_file.split("/", 1)[0] if "/" in feature_file else "."


def classify(exc: BaseException) -> StepStatus:
    """What an exception raised by a step means for conformance."""
    if isinstance(exc, (Unsupported, pytest.skip.Exception)) or missing_method(exc):
        return "skipped"
    if isinstance(exc, (AssertionError, pytest.fail.Exception)):
        return "failed"
    return "error"


def _skip_reason(report: pytest.TestReport) -> str:
    if isinstance(report.longrepr, tuple):
        return report.longrepr[2].removeprefix("Skipped: ")
    return report.longreprtext.strip() or "skipped"


def _examples_table(template: ScenarioTemplate, index: int | None) -> Examples | None:
    """The Examples table holding outline row `index` (rows are numbered across all tables)."""
    if index is None:
        return None
    for table in template.examples:
        if index < len(table.examples):
            return table
        index -= len(table.examples)
    raise IndexError(f"outline row {index} beyond the Examples tables of {template.name!r}")


@dataclass
class _ScenarioBuilder:
    """Accumulates one scenario's record while it runs, phase by phase and step by step."""

    record: ScenarioRecord  # the static part; status, steps and timings are filled in by finish()
    steps: list[Step]
    problems: tuple[str, ...]
    results: dict[int, StepRecord] = field(default_factory=dict)  # by line: unique in a scenario
    started: dict[int, float] = field(default_factory=dict)
    status: Outcome | None = None
    message: str | None = None
    skip_reason: str | None = None
    duration_s: float = 0.0

    @classmethod
    def start(
        cls, item: pytest.Function, template: ScenarioTemplate, selection: Selection, catalogue: Catalogue, worker: str
    ) -> _ScenarioBuilder:
        callspec = getattr(item, "callspec", None)
        example: dict[str, str] | None = callspec.params.get(EXAMPLE_PARAM) if callspec else None
        index: int | None = callspec.indices.get(EXAMPLE_PARAM) if callspec else None
        rendered = template.render(example or {})
        feature_file = selection.relative(template.feature.filename)
        tags = scenario_tags(template, _examples_table(template, index))
        traced = trace(template, tags, catalogue, f"{feature_file}:{template.line_number}")
        values = ", ".join(f"{key}={value}" for key, value in (example or {}).items())
        record = ScenarioRecord(
            feature=template.feature.name,
            feature_file=feature_file,
            feature_line=template.feature.line_number,
            feature_tags=tuple(sorted(template.feature.tags)),
            rule=template.rule.name.strip() if template.rule else None,
            keyword=template.keyword,
            name=f"{rendered.name} [{values}]" if example is not None else rendered.name,
            line=template.line_number,
            example=example,
            example_index=index,
            rules=traced.rules,
            tags=tuple(sorted(tags)),
            status="passed",
            duration_s=0.0,
            steps=(),
            worker=worker,
            divergences=traced.divergences,
        )
        return cls(record, rendered.steps, traced.problems)

    def begin_step(self, step: Step) -> None:
        self.started[step.line_number] = time.perf_counter()

    def end_step(self, step: Step, status: StepStatus, message: str | None = None) -> None:
        began = self.started.pop(step.line_number, None)
        duration = time.perf_counter() - began if began is not None else 0.0
        self.results[step.line_number] = StepRecord(
            step.keyword.strip(), step.name, step.line_number, status, duration, message
        )

    def add_phase(self, report: pytest.TestReport, call: pytest.CallInfo[None]) -> None:
        """Fold one phase (setup, call, teardown) in; the first phase that did not pass decides."""
        self.duration_s += report.duration
        if self.status is not None or report.passed:
            return
        if report.skipped:
            self.status, self.skip_reason = "skipped", _skip_reason(report)
            return
        exc = call.excinfo.value if call.excinfo is not None else None
        self.status = "failed" if report.when == "call" and exc is not None and classify(exc) == "failed" else "error"
        self.message = describe(exc) if exc is not None else report.longreprtext

    def finish(self) -> ScenarioRecord:
        status = self.status or "passed"
        if status == "failed" and self.record.divergences:  # what upstream itself does: not the SUT's failure
            status = DIVERGED
        for line in list(self.started):  # a step that never returned: it skipped, or something killed it
            step = next(s for s in self.steps if s.line_number == line)
            self.end_step(step, "skipped" if status == "skipped" else "error", self.skip_reason or self.message)
        steps = tuple(
            self.results.get(step.line_number)
            or StepRecord(step.keyword.strip(), step.name, step.line_number, "skipped")
            for step in self.steps
        )
        return replace(
            self.record,
            status=status,
            duration_s=round(self.duration_s, 6),
            steps=steps,
            message=self.message,
            skip_reason=self.skip_reason,
        )


_BUILDER = pytest.StashKey[_ScenarioBuilder]()


def _builder(request: pytest.FixtureRequest) -> _ScenarioBuilder:
    builder: _ScenarioBuilder = request.node.stash[_BUILDER]  # the node is typed Any
    return builder


class Recorder:
    """Registered once per pytest process; state is per process (per worker under xdist)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        self.worker: str = config.workerinput["workerid"] if self.is_worker else "main"  # type: ignore[attr-defined]
        self.selection = Selection.from_environ()
        self.claims = Claims.from_json(config.getoption("draconform_claims", default=None))
        # This plugin also sits in plain pytest runs of the unit tests (via plugin.py): a broken
        # catalogue must fail the scenarios, not every test of the project.
        self.catalogue_error: str | None = None
        try:
            self.catalogue = load_catalogue(self.selection.features_dir)
        except CatalogueError as exc:
            self.catalogue, self.catalogue_error = Catalogue(), str(exc)
        self.records: list[ScenarioRecord] = []
        self.errors: list[HarnessError] = []
        self.started = datetime.now(UTC)
        self.clock = time.perf_counter()
        self.written: list[Path] = []
        self.results: Results | None = None
        self.interrupted_by: str | None = None  # SIGINT or SIGTERM once a signal stopped the run
        self.interruption: Interruption | None = None
        self.restore_sigterm = stop_on_sigterm()

    def pytest_unconfigure(self) -> None:
        self.restore_sigterm()

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        if str(excinfo.value).startswith("stopping after"):
            return  # xdist ends a run that reached --maxfail (-x) this way: a stop asked for, not a signal
        self.interrupted_by = signal_name(excinfo.value)

    # --- where scenarios run -------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        """Start the record before anything else can end the setup (a skip mark, a fixture error),
        and refuse a scenario whose rules are not catalogued before any fixture or step runs."""
        template = registry_get_safe(scenario_wrapper_template_registry, getattr(item, "obj", None))
        if template is not None and isinstance(item, pytest.Function):
            builder = _ScenarioBuilder.start(item, template, self.selection, self.catalogue, self.worker)
            item.stash[_BUILDER] = builder
            if self.catalogue_error is not None:
                raise CatalogueError(self.catalogue_error)
            if builder.problems:
                raise UnknownRule("\n".join(builder.problems))
            excluded = self.claims.scenario_exclusion(self.catalogue.rules[r] for r in builder.record.rules)
            if excluded is not None:  # outside the claims: skipped before any fixture or step runs
                pytest.skip(excluded)
        return (yield)

    def pytest_bdd_before_step(self, request: pytest.FixtureRequest, step: Step) -> None:
        _builder(request).begin_step(step)

    def pytest_bdd_after_step(self, request: pytest.FixtureRequest, step: Step) -> None:
        _builder(request).end_step(step, "passed")

    def pytest_bdd_step_error(self, request: pytest.FixtureRequest, step: Step, exception: Exception) -> None:
        missing = missing_method(exception)
        message = f"Unsupported: {missing}" if missing else describe(exception)
        _builder(request).end_step(step, classify(exception), message)

    def pytest_bdd_step_func_lookup_error(
        self, request: pytest.FixtureRequest, step: Step, exception: Exception
    ) -> None:
        _builder(request).end_step(step, "undefined", describe(exception))

    @pytest.hookimpl(tryfirst=True, specname="pytest_runtest_makereport")
    def pytest_runtest_makereport_unsupported(self, item: pytest.Item,
                                              call: pytest.CallInfo[None]) -> pytest.TestReport | None:
        """A scenario the SUT cannot run gets its skipped report here, without the traceback pytest would render
        for a failure and the wrapper below replace by the reason: rendering it (each frame's source parsed)
        cost a quarter of a second of CPU per skipped scenario, a live run's largest cost of its own."""
        if call.excinfo is None or item.stash.get(_BUILDER, None) is None:
            return None
        exc = call.excinfo.value
        if not (isinstance(exc, Unsupported) or missing_method(exc)):
            return None
        assert call.when != "collect"
        sections = [(f"Captured {key} {when}", content) for when, key, content in item._report_sections]
        return pytest.TestReport(item.nodeid, item.location, dict.fromkeys(item.keywords, 1), "skipped",
                                 None, call.when, sections, call.duration, call.start, call.stop,
                                 user_properties=item.user_properties)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        builder = item.stash.get(_BUILDER, None)
        if builder is None:  # not a scenario
            return report
        if call.excinfo is not None and (isinstance(call.excinfo.value, Unsupported)
                                         or missing_method(call.excinfo.value)):
            # The SUT cannot do what the scenario needs (or lacks the seam method): no verdict on conformance.
            exc = call.excinfo.value
            report.outcome = "skipped"
            report.longrepr = (str(item.path), (item.location[1] or 0) + 1,
                               f"Unsupported: {missing_method(exc)}" if missing_method(exc) else describe(exc))
        builder.add_phase(report, call)
        if report.when == "teardown":
            report.user_properties.append((RECORD_PROPERTY, builder.finish().to_dict()))
        return report

    # --- where results are collected (the controller, or the only process) --------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        record = next((value for name, value in report.user_properties if name == RECORD_PROPERTY), None)
        if isinstance(record, dict):
            self.records.append(ScenarioRecord.from_dict(record))
        elif report.failed and report.when not in ("setup", "call"):
            # A record rides on its scenario's teardown report; a failed report without one means
            # the scenario was lost, e.g. its xdist worker crashed.
            self.errors.append(HarnessError(report.nodeid, report.longreprtext))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if self.is_worker or not report.failed:
            return
        # Keep the exception lines ("E   ...") of the traceback: the file and line pytest-bdd names.
        text = report.longreprtext
        message = "\n".join(line[4:] for line in text.splitlines() if line.startswith("E   ")) or text
        error = HarnessError(report.nodeid or "collection", message)
        if error not in self.errors:  # every xdist worker collects, and reports, the same error
            self.errors.append(error)

    def run(self, name: str) -> Run:
        """The run as recorded. A narrowed run accounts only for the KEPs its scenarios cite, so that
        leaving a KEP out does not make all its rules look untested."""
        rules = list(self.catalogue.rules.values())
        if self.selection.narrowed:
            keps = {self.catalogue.rules[r].kep for s in self.records for r in s.rules if r in self.catalogue}
            rules = [rule for rule in rules if rule.kep in keps]
        not_run: frozenset[str] = frozenset()
        if self.interrupted_by is not None:
            selected = sum(count_scenarios(self.selection).values())
            self.interruption = Interruption(self.interrupted_by, max(selected - len(self.records), 0), selected)
            # The KEPs of every selected scenario are accounted for, ran or not; rules whose selected scenarios
            # never ran are "not run", neither untested nor passed.
            inventory = take_inventory(self.selection, self.catalogue)
            ran = {rule_id for record in self.records for rule_id in record.rules}
            selected_rules = {rule_id for ref in inventory.scenarios for rule_id in ref.rules}
            not_run = frozenset(selected_rules - ran)
            if self.selection.narrowed:
                keps = {self.catalogue.rules[r].kep for r in selected_rules | ran if r in self.catalogue}
                rules = [rule for rule in self.catalogue.rules.values() if rule.kep in keps]
        info = RunInfo(
            name=name,
            sut=self.config.getoption("sut", default=None),
            started=self.started,
            duration_s=round(time.perf_counter() - self.clock, 3),
            workers=len(self.config.getoption("tx", default=None) or ()),
            selection=tuple(self.selection.relative(path) for path in self.selection.paths),
            claims=self.claims,
            interruption=self.interruption,
        )
        errors = list(self.errors)
        if self.catalogue_error is not None:
            errors.append(HarnessError("rule catalogue", self.catalogue_error))
        return Run(info, rules, self.catalogue.titles, self.records, errors, self._not_selected(rules) - not_run,
                   not_run)

    def _not_selected(self, rules: list[Rule]) -> frozenset[str]:
        """In a narrowed run, the rules whose scenarios all lie outside the selection: "not selected", not
        untested."""
        if not self.selection.narrowed:
            return frozenset()
        ran = {rule_id for record in self.records for rule_id in record.rules}
        everywhere = take_inventory(Selection(self.selection.features_dir), self.catalogue)
        return frozenset(rule.id for rule in rules if rule.id not in ran and everywhere.covering(rule.id))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        directory = self.config.getoption("draconform_report_dir")
        if self.is_worker or directory is None:
            return
        # A second Ctrl-C or SIGTERM while the reports are written would leave them half written.
        previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)} \
            if self.interrupted_by is not None else {}
        try:
            self._write(directory)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _write(self, directory: str) -> None:
        run = self.run(self.config.getoption("draconform_run_name") or Path(directory).name)
        self.written = write_reports(run, Path(directory))
        submit = self.config.getoption("draconform_submit_dir")
        if submit is not None and run.info.interruption is None:  # an interrupted run is no submission
            self.written += write_submission(run, Path(submit))
        self.results = Results.of(run)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("draconform")
    group.addoption("--draconform-report-dir", default=None, help="write the conformance reports into this directory")
    group.addoption(
        "--draconform-submit-dir", default=None, help="also write the submission folder <k8s>/<org>-<project>/ here"
    )
    group.addoption("--draconform-claims", default=None, help="what the run claims, as JSON (draconform.claims)")
    group.addoption(
        "--draconform-run-name", default=None, help="the run's name in the reports (default: the directory's name)"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(Recorder(config), "draconform-recorder")
