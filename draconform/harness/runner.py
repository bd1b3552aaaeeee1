"""Runs the conformance suite: pytest in this process, on the one suite module, with the harness
plugin and the recorder, shielded from whatever pytest configuration the current directory holds
(no ini file, no conftest.py, no cache) and from other installed pytest plugins, so a run means the
same thing wherever it starts."""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

import draconform.suite
from draconform.claims import Claims
from draconform.live.config import LiveOptions
from draconform.paths import FEATURES_DIR
from draconform.reporting.records import DIVERGED
from draconform.suite.selection import Selection
from draconform.sut import DEFAULT_SUT

SUITE_MODULE = Path(draconform.suite.__file__).parent / "test_features.py"
RECORDER_PLUGIN = "draconform.harness.recorder"
PROGRESS_PLUGIN = "draconform.harness.progress"
DEFAULT_PLUGINS = ("draconform.harness.plugin",)
REFERENCE_RUN_NAME = "reference"
LIVE_SUT = "draconform.live.sut:live_system"
LIVE_RUN_NAME = "live"
LIVE_PLUGIN = "draconform.harness.live"


def default_run_name(sut: str | None) -> str:
    """`reference` for the reference implementation, otherwise the factory spec made path-safe."""
    if sut is None or sut == DEFAULT_SUT:
        return REFERENCE_RUN_NAME
    if sut == LIVE_SUT:
        return LIVE_RUN_NAME
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", sut).strip("-")


@dataclass(frozen=True)
class RunOptions:
    paths: tuple[Path, ...] = ()  # feature files or directories; empty = all
    workers: int | str = 0  # pytest-xdist workers: 0 = serial, or "auto"
    report_dir: Path = Path("reports")
    name: str | None = None
    sut: str | None = None  # module:factory; None = the plugin's default, the reference implementation
    features_dir: Path = FEATURES_DIR
    plugins: tuple[str, ...] = DEFAULT_PLUGINS  # steps and fixtures; tests swap in their own
    live: LiveOptions | None = None  # a cluster reached through a kubeconfig; sut is then LIVE_SUT
    claims: Claims = field(default_factory=Claims)  # profiles, features and implementation metadata
    submit: bool = False  # also write the submission folder report_dir/<k8s-version>/<org>-<project>/
    allow_nothing_passed: bool = False  # a run where no scenario passed (all skipped, or none) still exits 0
    progress: bool = False  # draw live progress per KEP in place of pytest's own terminal output
    events: Path | None = None  # write an NDJSON event stream here

    @property
    def run_name(self) -> str:
        return self.name or default_run_name(self.sut)

    @property
    def output_dir(self) -> Path:
        return self.report_dir / self.run_name


def pytest_args(options: RunOptions) -> list[str]:
    args = [
        "-c", os.devnull,  # ignore pytest.ini / pyproject.toml / tox.ini around the current directory
        "--rootdir", str(SUITE_MODULE.parent),
        "--noconftest",
        "-p", "no:cacheprovider",
        # Only the plugins a run needs, not whatever else is installed (randomisers, coverage, ...).
        "--disable-plugin-autoload", "-p", "pytest_bdd.plugin", "-p", "xdist.plugin",
        # Feature tags become pytest marks; they are free-form, so unregistered marks are expected.
        "-W", "ignore::pytest.PytestUnknownMarkWarning",
        "-p", RECORDER_PLUGIN, "-p", PROGRESS_PLUGIN,
    ]  # fmt: skip
    for plugin in options.plugins:
        args += ["-p", plugin]
    if options.sut is not None:
        args += ["--sut", options.sut]
    args += ["-n", str(options.workers)]
    if options.live is not None:
        # scenarios that can see one another on the cluster run alone, all on one worker (harness/live.py)
        args += ["-p", LIVE_PLUGIN, "--dist", "loadgroup"]
    args += ["--draconform-report-dir", str(options.output_dir), "--draconform-run-name", options.run_name]
    args += ["--draconform-claims", options.claims.to_json()]
    if options.submit:
        args += ["--draconform-submit-dir", str(options.report_dir)]
    # The run's own console (harness/progress.py) replaces pytest's, which names generated test functions.
    args += ["-p", "no:terminal"]
    if options.progress:
        args += ["--draconform-progress"]
    if options.events is not None:
        args += ["--draconform-events", str(options.events)]
    return [*args, str(SUITE_MODULE)]


@contextmanager
def _environment(variables: Mapping[str, str]) -> Iterator[None]:
    """Set variables for the run (xdist workers inherit them) and restore the caller's afterwards."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def _live_run(options: RunOptions) -> Iterator[LiveOptions | None]:
    """The live options with the run's ID (on every object it writes) and, with workers, a folder for the lock
    files through which they take turns on the cluster."""
    if options.live is None:
        yield None
        return
    live = replace(options.live, run_id=options.live.run_id or secrets.token_hex(4))
    if options.workers in (0, "0"):
        yield live
        return
    with tempfile.TemporaryDirectory(prefix="draconform-live-") as lock_dir:
        yield replace(live, lock_dir=lock_dir)


def run(options: RunOptions) -> int:
    """Run the suite and write the reports into `options.output_dir`; return pytest's exit status,
    which is 0 only if no scenario failed or errored (a known upstream divergence is no failure).
    Raises `SelectionError` for a bad path. Once per process: pytest imports the suite module, which binds the
    scenarios, only once."""
    selection = Selection.create(options.features_dir, options.paths)
    with _live_run(options) as live, _environment(selection.environ() | (live.environ() if live else {})):
        status = int(pytest.main(pytest_args(options)))
    interrupted = _interrupted(options.output_dir / "report.json")
    if interrupted is not None:
        return interrupted
    if status == pytest.ExitCode.TESTS_FAILED and _only_divergences(options.output_dir / "report.json"):
        status = pytest.ExitCode.OK  # pytest saw the divergences' assertions fail; the report does not count them
    if status == 0 and not options.allow_nothing_passed:
        return _nothing_passed(options.output_dir / "report.json")
    return status


def _only_divergences(report: Path) -> bool:
    """Whether every scenario pytest saw fail is a known upstream divergence: none failed or errored otherwise,
    and nothing broke outside the scenarios."""
    try:
        summary = json.loads(report.read_text(encoding="utf-8"))["summary"]
    except (OSError, ValueError, KeyError):
        return False
    counts = summary["scenarios"]
    return counts["failed"] == counts["error"] == summary["harness_errors"] == 0 and counts[DIVERGED] > 0


def _interrupted(report: Path) -> int | None:
    """An interrupted run exits as a shell reports a process a signal ended (128 + its number: 130 for
    SIGINT, 143 for SIGTERM), after saying so; None for a run that finished."""
    try:
        stop = json.loads(report.read_text(encoding="utf-8"))["run"].get("interrupted")
    except (OSError, ValueError, KeyError):
        return None
    if not stop:
        return None
    print(f"draconform run: interrupted by {stop['signal']}: {stop['not_run']} of {stop['selected']} scenarios "
          f"not run; the reports in {report.parent} are marked interrupted and are not a verdict", file=sys.stderr)
    return 128 + int(getattr(signal.Signals, stop["signal"], signal.SIGINT))


def _nothing_passed(report: Path) -> int:
    """A run in which no scenario passed proves nothing (every scenario skipped: the system under test
    supports none of what they need): exit 1 and say so, unless the user allows it."""
    try:
        counts = json.loads(report.read_text(encoding="utf-8"))["summary"]["scenarios"]
    except (OSError, ValueError, KeyError):
        return 0
    if counts.get("passed", 0) > 0:
        return 0
    print(f"draconform run: no scenario passed ({counts.get('skipped', 0)} skipped of {counts.get('total', 0)}); "
          "the system under test showed nothing conformant (see the skip reasons in the report); "
          "--allow-nothing-passed accepts such a run", file=sys.stderr)
    return 1
