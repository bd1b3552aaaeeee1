"""Run every check against one plugin and write the reports with the writers `draconform run` uses."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from draconform.catalogue import load_catalogue
from draconform.claims import Claims, Implementation
from draconform.harness.wording import humanize
from draconform.kube.cdi import read_dirs
from draconform.kubeletplugin.client import PluginCallError, registration_info
from draconform.kubeletplugin.types import API_VERSIONS, PrepareResult
from draconform.plugincheck.checks import CHECKS, Check, CheckResult, Target, run_check
from draconform.plugincheck.claims import ClaimSource, Support
from draconform.reporting import write_reports
from draconform.reporting.records import Interruption, Run, RunInfo, ScenarioRecord, signal_name, stop_on_sigterm
from draconform.reporting.results import Results

FEATURE = "draconform plugin-check: a live kubelet plugin"


@dataclass(frozen=True)
class CheckRun:
    run: Run
    results: Results
    written: list[Path]


def implementation(target: Target, driver_version: str | None) -> Implementation:
    """The driver as the report names it; without --driver-version, the DRAPlugin versions its registration
    advertises stand for its version."""
    version = driver_version
    name = target.driver
    if target.registration is not None:
        try:
            info = registration_info(target.registration, timeout=target.timeout)
            name = info.name or name
            version = version or "advertises " + ", ".join(info.supported_versions)
        except PluginCallError:
            pass  # the registration checks report it
    return Implementation(project=name, version=version, mode="kubelet plugin on node " + target.node)


def served_versions(target: Target, support: Support) -> tuple[str, ...]:
    """The DRAPlugin versions the checks call: those --supports declares, else those the registration
    advertises (the kubelet calls nothing else, D-3063-8), else v1 alone."""
    if support.versions is not None:
        return support.versions
    if target.registration is not None:
        try:
            info = registration_info(target.registration, timeout=target.timeout)
        except PluginCallError:
            return ("v1",)  # the registration checks report it
        advertised = tuple(v for v in API_VERSIONS if f"{v}.DRAPlugin" in info.supported_versions)
        return advertised or ("v1",)
    return ("v1",)


def check_plugin(target: Target, source: ClaimSource, support: Support, report_dir: Path, name: str,
                 driver_version: str | None = None, command: str | None = None) -> CheckRun:
    catalogue = load_catalogue()
    started = datetime.now(UTC)
    clock = time.perf_counter()
    answers: list[PrepareResult] = []
    records = []
    versions = served_versions(target, support)
    static_specs = frozenset(read_dirs(target.cdi_dirs))
    stopped: str | None = None  # Ctrl-C or SIGTERM: the checks so far still reach the reports, marked interrupted
    restore = stop_on_sigterm()
    try:
        for index, check in enumerate(CHECKS, 1):
            result = run_check(check, target, source, support, answers, versions, static_specs)
            records.append(_record(check, index, result))
    except KeyboardInterrupt as interrupt:
        stopped = signal_name(interrupt)
    finally:
        restore()
    checked = {check.rule for check in CHECKS}
    rules = [rule for rule in catalogue.rules.values() if rule.id in checked or rule.kep == "DRA-PLUGIN"]
    interruption = Interruption(stopped, len(CHECKS) - len(records), len(CHECKS)) if stopped else None
    info = RunInfo(
        name=name, sut=f"plugin-check {target.endpoint}", started=started,
        duration_s=round(time.perf_counter() - clock, 3), workers=0,
        claims=Claims(implementation=implementation(target, driver_version), command=command),
        interruption=interruption,
    )
    not_run = frozenset(check.rule for check in CHECKS[len(records):]) if stopped else frozenset()
    run = Run(info, rules, catalogue.titles, records, not_run=not_run)
    written = write_reports(run, report_dir / name)
    _keep_timings(report_dir / name / "report.json", info)
    return CheckRun(run, Results.of(run), written)


def _keep_timings(path: Path, info: RunInfo) -> None:
    """A plugin-check report is evidence about one run on one node, never committed to compare outcomes, so
    its report.json keeps when the run started and how long it took (the writers leave them to timings.json)."""
    report = json.loads(path.read_text(encoding="utf-8"))
    report["run"]["started"] = info.started.isoformat() if info.started else None
    report["run"]["duration_s"] = info.duration_s
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _record(check: Check, index: int, result: CheckResult) -> ScenarioRecord:
    return ScenarioRecord(
        feature=FEATURE, feature_file=f"plugin-check/{check.rule.split('/')[0].lower()}", feature_line=1,
        feature_tags=("plugin-check",), rule=f"{check.rule}  {check.title}", keyword="Check", name=check.title,
        line=index, example=None, example_index=None, rules=(check.rule,), tags=("plugin-check",),
        status=result.status, duration_s=result.duration_s, steps=result.steps,
        message=humanize(result.message) if result.message else None,  # a dataclass's repr as YAML
        skip_reason=result.skip_reason,
    )
