"""The whole pipeline (CLI -> runner -> pytest -> recorder -> writers) on a throwaway features
directory with its own catalogue and step module, run in a subprocess as a user would. Each run costs
about a second, so the runs are few and shared; the tests read their reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from draconform.cli import main

from .helpers import report_validator

RULES = """\
kep: KEP-9999
title: Demo rules
source: tests/harness/test_end_to_end.py
rules:
  - {id: KEP-9999/PASSES, level: MUST, section: Demo, text: The demo check passes when it should.}
  - {id: KEP-9999/BROKEN, level: MUST, section: Demo, text: A broken implementation fails this rule.}
  - {id: KEP-9999/CRASHES, level: SHOULD, section: Demo, text: The harness breaks while checking this rule.}
  - {id: KEP-9999/UNSUPPORTED, level: MAY, profile: extended, section: Demo, text: The SUT cannot do what this needs.}
  - id: KEP-9999/UNCOVERED
    level: MUST
    section: Demo
    text: No scenario covers this rule yet.
    untested_reason: nobody wrote it yet
"""

OTHER_RULES = """\
kep: KEP-8888
title: Another KEP without features
source: tests/harness/test_end_to_end.py
rules:
  - {id: KEP-8888/LONELY, level: MUST, section: Demo, text: A rule of a KEP with no feature file.}
"""

GOOD = """\
@kep-9999
Feature: Demo checks that pass

  Rule: KEP-9999/PASSES  The check passes

    Scenario Outline: Adding numbers
      Given the number <a>
      When I add <b>
      Then the total is <total>

      Examples:
        | a | b | total |
        | 1 | 2 | 3     |
        | 2 | 2 | 4     |
"""

BAD = """\
@kep-9999
Feature: Demo checks that do not pass

  Rule: KEP-9999/BROKEN  A broken implementation fails

    Scenario: The total is wrong
      Given the number 1
      When I add 1
      Then the total is 3
      And the total is 2

  Rule: KEP-9999/CRASHES  The harness breaks

    Scenario: A step raises an unexpected exception
      Given the number 1
      When the harness breaks

    Scenario: A step has no definition
      Given the number 1
      When nobody defined this step

  Rule: KEP-9999/UNSUPPORTED  The SUT cannot do it

    Scenario: The SUT refuses a step
      Given the number 1
      When the SUT refuses
      Then the total is 1

    Scenario: A step skips itself
      Given the number 1
      When the step skips
"""

UNKNOWN = """\
Feature: Citing rules the catalogue lacks

  @rule:KEP-9999/GHOST
  Scenario: Tagged with an unknown rule
    Given the number 1

  Rule: KEP-9999/NOT-CATALOGUED  Not in rules.yaml

    Scenario: Under an unknown rule
      Given the number 1
"""

STEPS = """\
import pytest
from pytest_bdd import given, parsers, then, when

from draconform.sut import Unsupported


@given(parsers.parse("the number {n:d}"), target_fixture="total")
def number(n):
    return [n]


@when(parsers.parse("I add {n:d}"))
def add(total, n):
    total[0] += n


@then(parsers.parse("the total is {n:d}"))
def check(total, n):
    assert total[0] == n


@when("the harness breaks")
def breaks():
    raise KeyError("no such object")


@when("the SUT refuses")
def refuses():
    raise Unsupported("the SUT cannot add numbers")


@when("the step skips")
def skips():
    pytest.skip("not today")
"""


@dataclass(frozen=True)
class Workspace:
    root: Path
    features: Path


@dataclass(frozen=True)
class Outcome:
    """A finished `draconform run`: exit status, output and the report directory."""

    status: int
    output: str
    reports: Path

    def report(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.reports / "report.json").read_text())
        return data

    def scenario(self, name: str) -> dict[str, Any]:
        return next(s for s in self.report()["scenarios"] if s["name"] == name)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("e2e")
    features = root / "features"
    for relative, text in {
        "kep-9999/rules.yaml": RULES,
        "kep-9999/good.feature": GOOD,
        "kep-9999/bad.feature": BAD,
        "kep-9999/unknown.feature": UNKNOWN,
        "kep-8888/rules.yaml": OTHER_RULES,
    }.items():
        (features / relative).parent.mkdir(parents=True, exist_ok=True)
        (features / relative).write_text(text)
    (root / "demo_steps.py").write_text(STEPS)
    # A hostile pytest configuration where the user stands: the runner must not pick it up.
    (root / "pytest.ini").write_text("[pytest]\naddopts = --no-such-option\n")
    (root / "conftest.py").write_text("raise RuntimeError('the conftest of the current directory was loaded')\n")
    return Workspace(root, features)


def draconform_run(workspace: Workspace, name: str, *args: str) -> Outcome:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST_", "DRACONFORM_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(workspace.root), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "draconform.cli", "run", "--features-dir", str(workspace.features)]
    command += ["--plugin", "demo_steps", "--report-dir", str(workspace.root / "reports"), "--name", name, *args]
    # The timeout only guards against a hang, with room for a loaded machine.
    done = subprocess.run(command, cwd=workspace.root, env=env, capture_output=True, text=True, timeout=600)
    return Outcome(done.returncode, done.stdout + done.stderr, workspace.root / "reports" / name)


@pytest.fixture(scope="module")
def serial(workspace: Workspace) -> Outcome:
    return draconform_run(workspace, "serial")


def _comparable(data: Any) -> Any:
    """report.json without what may differ between equivalent runs: timings and run metadata."""
    if isinstance(data, dict):
        return {key: _comparable(value) for key, value in data.items() if key not in ("duration_s", "run")}
    if isinstance(data, list):
        return [_comparable(item) for item in data]
    return data


def test_serial_and_parallel_runs_give_equivalent_reports(workspace: Workspace, serial: Outcome) -> None:
    parallel = draconform_run(workspace, "parallel", "-n", "2")
    assert parallel.status == serial.status != 0
    assert parallel.report()["run"]["workers"] == 2 and serial.report()["run"]["workers"] == 0
    assert {s["name"] for s in serial.report()["scenarios"]} >= {"Adding numbers [a=1, b=2, total=3]"}
    assert _comparable(parallel.report()) == _comparable(serial.report())
    for outcome in (serial, parallel):
        report_validator().validate(outcome.report())
    properties = ET.parse(parallel.reports / "junit.xml").iter("property")
    workers = {p.get("value") for p in properties if p.get("name") == "worker"}
    assert workers and workers <= {"gw0", "gw1"}


def test_outcomes_are_told_apart(serial: Outcome) -> None:
    statuses = {s["name"]: s["status"] for s in serial.report()["scenarios"]}
    assert statuses == {
        "Adding numbers [a=1, b=2, total=3]": "passed",
        "Adding numbers [a=2, b=2, total=4]": "passed",
        "The total is wrong": "failed",
        "A step raises an unexpected exception": "error",
        "A step has no definition": "error",
        "The SUT refuses a step": "skipped",
        "A step skips itself": "skipped",
        "Tagged with an unknown rule": "error",
        "Under an unknown rule": "error",
    }
    assert serial.scenario("A step raises an unexpected exception")["message"] == "KeyError: 'no such object'"
    assert serial.scenario("A step has no definition")["message"].startswith("StepDefinitionNotFoundError")
    assert serial.scenario("The SUT refuses a step")["skip_reason"] == "Unsupported: the SUT cannot add numbers"
    assert serial.scenario("A step skips itself")["skip_reason"] == "not today"


def test_rule_verdicts_include_untested_rules(serial: Outcome) -> None:
    rules = {r["id"]: r for r in serial.report()["rules"]}
    assert {rule_id: r["status"] for rule_id, r in rules.items()} == {
        "KEP-8888/LONELY": "untested",
        "KEP-9999/BROKEN": "failed",
        "KEP-9999/CRASHES": "error",
        "KEP-9999/PASSES": "passed",
        "KEP-9999/UNCOVERED": "untested",
        "KEP-9999/UNSUPPORTED": "skipped",
    }
    assert rules["KEP-9999/UNCOVERED"]["untested_reason"] == "nobody wrote it yet"


def test_unknown_rules_are_errors_naming_file_line_and_id(serial: Outcome) -> None:
    assert (
        "unknown.feature:4: tag @rule:KEP-9999/GHOST cites rule KEP-9999/GHOST"
        in serial.scenario("Tagged with an unknown rule")["message"]
    )
    assert (
        "unknown.feature:9: Rule 'KEP-9999/NOT-CATALOGUED  Not in rules.yaml' does not start"
        in serial.scenario("Under an unknown rule")["message"]
    )


def test_a_failing_step_shows_in_every_format(serial: Outcome) -> None:
    failed = serial.scenario("The total is wrong")
    assert failed["failing_step"] == {"keyword": "Then", "text": "the total is 3", "line": 9}
    # In words: what was compared, observed and expected; no Python exception name, no introspection.
    assert failed["message"] == "assert 2 == 3\nobserved: 2\nexpected: 3"

    cases = {case.get("name"): case for case in ET.parse(serial.reports / "junit.xml").iter("testcase")}
    failure = cases["The total is wrong"].find("failure")
    assert failure is not None and (failure.get("message") or "").startswith("assert 2 == 3")
    assert "at Then the total is 3 (kep-9999/bad.feature:9); rules KEP-9999/BROKEN" in (failure.text or "")
    assert [p.get("value") for p in cases["The total is wrong"].iter("property") if p.get("name") == "rule"] == [
        "KEP-9999/BROKEN"
    ]

    features = {f["uri"]: f for f in json.loads((serial.reports / "cucumber.json").read_text())}
    element = next(e for e in features["kep-9999/bad.feature"]["elements"] if e["name"] == "The total is wrong")
    assert [step["result"]["status"] for step in element["steps"]] == ["passed", "passed", "failed", "skipped"]
    assert element["steps"][2]["result"]["error_message"].startswith("assert 2 == 3")

    markdown = (serial.reports / "report.md").read_text()
    assert "### ❌ failed: `kep-9999/bad.feature:6` The total is wrong" in markdown
    assert "assert 2 == 3\nobserved: 2\nexpected: 3" in markdown


def test_terminal_output_names_the_reports_and_summarises(serial: Outcome) -> None:
    assert "9 scenarios (2 passed, 1 failed, 4 error, 2 skipped)" in serial.output
    assert str(serial.reports / "report.json") in serial.output
    assert "the conftest of the current directory was loaded" not in serial.output


@pytest.mark.parametrize(("feature", "status"), [("good.feature", 0), ("unknown.feature", 1)])
def test_narrowed_run_exits_by_its_own_outcomes(workspace: Workspace, feature: str, status: int) -> None:
    outcome = draconform_run(workspace, f"only-{feature}", str(workspace.features / "kep-9999" / feature))
    assert outcome.status == status, outcome.output
    report = outcome.report()
    assert {s["feature_file"] for s in report["scenarios"]} == {f"kep-9999/{feature}"}
    assert report["run"]["selection"] == [f"kep-9999/{feature}"]
    assert "KEP-8888/LONELY" not in {r["id"] for r in report["rules"]}  # a KEP the run left out


def test_a_narrowed_run_reports_rules_outside_the_selection_as_not_selected(workspace: Workspace) -> None:
    outcome = draconform_run(workspace, "only-good", str(workspace.features / "kep-9999" / "good.feature"))
    statuses = {r["id"]: r["status"] for r in outcome.report()["rules"]}
    assert statuses["KEP-9999/PASSES"] == "passed"
    assert statuses["KEP-9999/BROKEN"] == "not selected"  # its scenarios are in bad.feature
    assert statuses["KEP-9999/UNCOVERED"] == "untested"  # no scenario anywhere
    assert outcome.report()["summary"]["rules"]["not selected"] == 3


def test_feature_paths_outside_the_features_directory_run_from_their_own_folder(workspace: Workspace) -> None:
    vendor = workspace.root / "vendor" / "features" / "kep-9999"
    vendor.mkdir(parents=True)
    (vendor / "rules.yaml").write_text(RULES)
    (vendor / "good.feature").write_text(GOOD)
    outcome = draconform_run(workspace, "vendor", str(vendor / "good.feature"))
    assert outcome.status == 0, outcome.output
    assert {s["feature_file"] for s in outcome.report()["scenarios"]} == {"kep-9999/good.feature"}
    lost = draconform_run(workspace, "lost", str(workspace.root / "demo_steps.py"))
    assert lost.status == 2 and "nor inside a features folder of its own" in lost.output


def test_a_run_where_nothing_passed_exits_1_and_says_why(workspace: Workspace) -> None:
    folder = workspace.root / "skipping" / "kep-9999"
    folder.mkdir(parents=True)
    (folder / "rules.yaml").write_text(RULES)
    (folder / "skips.feature").write_text(
        "@kep-9999\nFeature: Nothing the SUT can do\n\n  Rule: KEP-9999/UNSUPPORTED  Not supported\n\n"
        "    Scenario: The SUT refuses a step\n      Given the number 1\n      When the SUT refuses\n")
    outcome = draconform_run(workspace, "skipping", str(folder / "skips.feature"))
    assert outcome.status == 1
    assert "no scenario passed (1 skipped of 1)" in outcome.output and "--allow-nothing-passed" in outcome.output
    assert draconform_run(workspace, "skipping", str(folder / "skips.feature"), "--allow-nothing-passed").status == 0


def test_report_files_hold_no_timings_and_timings_json_does(serial: Outcome) -> None:
    report = serial.report()
    assert report["run"]["started"] is None and report["run"]["duration_s"] == 0
    assert {s["duration_s"] for s in report["scenarios"]} == {0}
    timings = json.loads((serial.reports / "timings.json").read_text())
    assert timings["started"] and len(timings["scenarios"]) == len(report["scenarios"])
    # junit.xml is the one report with real durations (a CI test tab shows them): the same as timings.json's
    junit = ET.fromstring((serial.reports / "junit.xml").read_text())
    timed = {(case.get("file"), int(case.get("line", 0))): case.get("time") for case in junit.iter("testcase")}
    assert timed == {(s["feature_file"], s["line"]): f"{s['duration_s']:.3f}" for s in timings["scenarios"]}


def test_a_broken_catalogue_fails_the_run_and_is_reported(workspace: Workspace) -> None:
    broken = workspace.root / "broken-features"
    (broken / "kep-9999").mkdir(parents=True)
    (broken / "kep-9999" / "rules.yaml").write_text("kep: KEP-9999\ntitle: Empty\nsource: test\nrules: []\n")
    (broken / "kep-9999" / "good.feature").write_text(GOOD)
    outcome = draconform_run(replace(workspace, features=broken), "broken")
    assert outcome.status == 1, outcome.output
    report = outcome.report()
    assert [error["where"] for error in report["errors"]] == ["rule catalogue"]
    assert "rules" in report["errors"][0]["message"]
    assert {s["status"] for s in report["scenarios"]} == {"error"}


def test_a_feature_file_that_cannot_be_bound_is_one_harness_error(workspace: Workspace) -> None:
    clashing = workspace.root / "clashing-features"
    (clashing / "kep-9999").mkdir(parents=True)
    (clashing / "kep-9999" / "rules.yaml").write_text(RULES)
    (clashing / "kep-9999" / "twice.feature").write_text(GOOD + GOOD.split("\n", 2)[2])
    outcome = draconform_run(replace(workspace, features=clashing), "clashing", "-n", "2")
    assert outcome.status != 0
    [error] = outcome.report()["errors"]  # once, though both workers collected it
    assert "ScenarioNameClash: scenario name 'Adding numbers' is used twice" in error["message"]
    assert "twice.feature" in error["message"]


def test_rules_command_lists_coverage_without_running(workspace: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    main(["rules", "--features-dir", str(workspace.features), "-o", "json"])
    everything = {r["id"]: r for r in json.loads(capsys.readouterr().out)["rules"]}
    assert everything["KEP-9999/BROKEN"]["scenarios"] == [
        {"feature_file": "kep-9999/bad.feature", "line": 6, "name": "The total is wrong"}
    ]

    status = main(["rules", "--features-dir", str(workspace.features), "--untested", "-o", "json"])
    captured = capsys.readouterr()
    listing = json.loads(captured.out)
    assert [r["id"] for r in listing["rules"]] == ["KEP-8888/LONELY", "KEP-9999/UNCOVERED"]
    assert listing["rules"][1]["untested_reason"] == "nobody wrote it yet"
    assert status == 1  # the unknown rules below make the listing fail, as they make a run fail
    assert any("KEP-9999/GHOST" in problem for problem in listing["problems"])
    assert any("KEP-9999/NOT-CATALOGUED" in problem for problem in listing["problems"])
