"""The result stream: plain records of what ran, independent of any output format. The recorder
produces them (on xdist workers they travel to the controller as dicts); every writer reads them."""

from __future__ import annotations

import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from draconform.catalogue import Rule
from draconform.claims import Claims

# passed: every step held. failed: a step's check failed, i.e. the SUT does not conform.
# error: the harness or environment broke (no step definition, fixture error, unexpected exception).
# skipped: not run, with a reason (e.g. the SUT raised `Unsupported`).
# upstream divergence: failed, and tagged @upstream-differs:<ID> as an outcome upstream Kubernetes itself does not
# give (the catalogue records what upstream does); not held against the implementation. Whether the failure is
# that divergence or another cannot be told apart: the message is kept and reported beside the divergence.
Outcome = Literal["passed", "failed", "error", "skipped", "upstream divergence"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "error", "skipped", "upstream divergence")
DIVERGED: Outcome = "upstream divergence"

# As Outcome, plus "undefined": no step definition matches the text (the scenario is an error).
# Steps after a failure, error or skip never ran and are "skipped".
StepStatus = Literal["passed", "failed", "error", "undefined", "skipped"]
BROKEN_STEP: frozenset[StepStatus] = frozenset({"failed", "error", "undefined"})


@dataclass(frozen=True)
class StepRecord:
    keyword: str  # as written: Given, When, Then, And, But, *
    text: str
    line: int
    status: StepStatus
    duration_s: float = 0.0
    message: str | None = None


@dataclass(frozen=True)
class ScenarioRecord:
    """One scenario run; an outline yields one record per Examples row."""

    feature: str  # the Feature's title
    feature_file: str  # relative to the features directory
    feature_line: int
    feature_tags: tuple[str, ...]
    rule: str | None  # title of the enclosing `Rule:` block
    keyword: str  # Scenario, Scenario Outline, Example, ...
    name: str  # outline rows end in their example values: "name [a=1, b=2]"
    line: int
    example: Mapping[str, str] | None  # the Examples row, for outlines
    example_index: int | None  # position of that row among the outline's rows
    rules: tuple[str, ...]  # cited rule IDs (see draconform.suite.tracing)
    tags: tuple[str, ...]  # every tag in effect, without "@", sorted
    status: Outcome
    duration_s: float
    steps: tuple[StepRecord, ...]
    message: str | None = None  # why it failed or errored
    skip_reason: str | None = None
    worker: str = "main"  # xdist worker id, "main" when serial
    divergences: tuple[str, ...] = ()  # upstream divergence IDs its tags name (@upstream-differs:<ID>)

    @property
    def failing_step(self) -> StepRecord | None:
        return next((step for step in self.steps if step.status in BROKEN_STEP), None)

    @property
    def location(self) -> str:
        return f"{self.feature_file}:{self.line}"

    def sort_key(self) -> tuple[str, int, int]:
        return (self.feature_file, self.line, -1 if self.example_index is None else self.example_index)

    def to_dict(self) -> dict[str, Any]:
        """A dict of plain values, which pytest-xdist can carry from a worker to the controller."""
        data = asdict(self)
        data["example"] = dict(self.example) if self.example is not None else None
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScenarioRecord:
        fields = dict(data)
        fields["steps"] = tuple(StepRecord(**step) for step in data["steps"])
        for name in ("feature_tags", "rules", "tags", "divergences"):
            fields[name] = tuple(data.get(name, ()))
        return cls(**fields)


@dataclass(frozen=True)
class HarnessError:
    """Something that went wrong outside any scenario: a feature file that does not load, a worker
    that crashed and took a scenario with it."""

    where: str
    message: str


@dataclass(frozen=True)
class Interruption:
    """The run was stopped before every selected scenario ran (Ctrl-C, or SIGTERM from a CI cancel): what
    stopped it and how many scenarios of the selection never ran. Its reports are not a verdict."""

    signal: str  # SIGINT or SIGTERM
    not_run: int  # selected scenarios (outline rows counted one each) without a result
    selected: int  # every scenario the selection holds

    def sentence(self) -> str:
        return (f"interrupted by {self.signal}: {self.not_run} of {self.selected} scenarios not run; "
                "these reports are not a conformance verdict")


class Stopped(KeyboardInterrupt):
    """A signal asked the run to stop (SIGTERM, from a CI cancel): it ends the run as Ctrl-C does, so the results
    so far still reach the reports, marked interrupted."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(f"stopped by {signal_name}")
        self.signal_name = signal_name


def signal_name(interrupt: BaseException) -> str:
    """Which signal a KeyboardInterrupt stands for: SIGTERM through `Stopped`, else Ctrl-C's SIGINT."""
    return getattr(interrupt, "signal_name", "SIGINT")


def stop_on_sigterm() -> Callable[[], None]:
    """Make SIGTERM end the run as SIGINT does; return what puts the previous handler back. Only the main thread
    may set a handler: a run started from another thread keeps the default."""

    def stop(signum: int, frame: object) -> None:
        raise Stopped(signal.Signals(signum).name)

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:
        return lambda: None

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore


@dataclass(frozen=True)
class RunInfo:
    name: str
    sut: str | None  # module:factory, None when the run did not use the SUT seam
    started: datetime | None  # None in the files kept free of timings (they are in timings.json)
    duration_s: float
    workers: int  # 0 = serial
    selection: tuple[str, ...] = ()  # narrowed-to paths, relative to the features directory
    claims: Claims = field(default_factory=Claims)  # profiles, features, implementation metadata
    interruption: Interruption | None = None  # the run stopped before every selected scenario ran


@dataclass(frozen=True)
class Run:
    """Everything the writers need: the records, and the catalogue rules the run accounts for
    (a rule without a scenario among them is untested). Sorted on creation so that every writer's
    output depends on the outcomes only, not on the order in which workers finished."""

    info: RunInfo
    rules: Sequence[Rule]
    kep_titles: Mapping[str, str]
    scenarios: Sequence[ScenarioRecord]
    errors: Sequence[HarnessError] = field(default_factory=tuple)
    not_selected: frozenset[str] = frozenset()  # rules with scenarios only outside a narrowed run's selection
    not_run: frozenset[str] = frozenset()  # rules with selected scenarios an interruption kept from running

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", tuple(sorted(self.rules, key=lambda rule: rule.id)))
        object.__setattr__(self, "scenarios", tuple(sorted(self.scenarios, key=ScenarioRecord.sort_key)))
        object.__setattr__(self, "errors", tuple(sorted(self.errors, key=lambda e: (e.where, e.message))))


def without_timings(run: Run) -> Run:
    """The run with every duration zero and no start time: what the report files hold, so that running the
    same suite again rewrites them only where outcomes changed (`timings.json` keeps the timings)."""
    scenarios = [replace(s, duration_s=0.0, steps=tuple(replace(step, duration_s=0.0) for step in s.steps))
                 for s in run.scenarios]
    return replace(run, info=replace(run.info, started=None, duration_s=0.0), scenarios=scenarios)


def timings(run: Run) -> dict[str, Any]:
    """When the run started, how long it and each scenario took: `timings.json`."""
    return {
        "started": run.info.started.isoformat() if run.info.started else None,
        "duration_s": run.info.duration_s,
        "scenarios": [{"feature_file": s.feature_file, "line": s.line, "name": s.name, "duration_s": s.duration_s}
                      for s in run.scenarios],
    }
