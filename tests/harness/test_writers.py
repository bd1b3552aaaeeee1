"""The report writers over a hand-built record stream: rule verdicts, untested rules, and the shape of
every format. Each scenario below exists to exercise one mapping."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from draconform.reporting import TIMINGS_FILE, WRITERS, write_reports
from draconform.reporting.cucumber import render_cucumber
from draconform.reporting.html import BAR_WIDTH, bar
from draconform.reporting.json_report import render_json, report_data
from draconform.reporting.junit import render_junit
from draconform.reporting.markdown import render_markdown
from draconform.reporting.records import HarnessError, Run, ScenarioRecord, timings, without_timings
from draconform.reporting.results import Results, rule_status

from .helpers import KEP, report_validator, rule, run, scenario, step

A, B, C, E = (f"{KEP}/{name}" for name in "ABCE")
GHOST = f"{KEP}/GHOST"


def _scenarios() -> list[ScenarioRecord]:
    return [
        scenario("passes", rules=(A,), line=10),
        scenario("is skipped", "skipped", rules=(A, E), line=12),
        scenario("fails", "failed", rules=(B,), line=20, rule=f"{B}  The rule B"),
        scenario("passes too", rules=(B,), line=22),
        scenario("breaks", "error", rules=(C,), line=30),
        scenario(
            "never starts",
            "error",
            rules=(C, GHOST),
            line=40,
            steps=(step("it holds", "skipped"),),
            message=f"UnknownRule: kep-1/demo.feature:40: tag @rule:{GHOST} cites rule {GHOST}, not in the catalogue",
        ),
        *(
            scenario(
                f"adds [a={a}]", rules=(A,), line=50, keyword="Scenario Outline", example={"a": a}, example_index=i
            )
            for i, a in enumerate("12")
        ),
    ]


def _run(reverse: bool = False) -> Run:
    rules = [
        rule("A"),
        rule("B"),
        rule("C", profile="extended"),
        rule("D", untested_reason="no kubelet yet", decision="D-7: the KEP is read as requiring X"),
        rule("E"),
    ]
    scenarios = _scenarios()
    errors = (HarnessError("test_features.py", "FeatureError: bad.feature:3: unexpected token"),)
    if reverse:
        rules.reverse()
        scenarios.reverse()
    return run(rules, scenarios, errors)


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ([], "untested"),
        (["passed"], "passed"),
        (["passed", "skipped"], "passed"),
        (["skipped", "skipped"], "skipped"),
        (["skipped", "error", "passed"], "error"),
        (["error", "failed", "passed"], "failed"),
    ],
)
def test_rule_status_orders_failed_over_error_over_passed_over_skipped(outcomes: list[Any], expected: str) -> None:
    assert rule_status(outcomes) == expected


def test_report_json_gives_every_catalogued_rule_a_verdict() -> None:
    data = report_data(_run())
    rules = {entry["id"]: entry for entry in data["rules"]}
    assert {rule_id: entry["status"] for rule_id, entry in rules.items()} == {
        A: "passed",
        B: "failed",
        C: "error",
        f"{KEP}/D": "untested",
        E: "skipped",
    }
    untested = rules[f"{KEP}/D"]
    assert untested["scenarios"] == []
    assert untested["untested_reason"] == "no kubelet yet"
    assert untested["decision"].startswith("D-7")
    assert GHOST not in rules  # an uncatalogued ID never becomes a rule; its scenario is an error
    assert data["summary"] == {
        "scenarios": {"passed": 4, "failed": 1, "error": 2, "skipped": 1, "upstream divergence": 0, "total": 8},
        "rules": {"passed": 1, "failed": 1, "error": 1, "skipped": 1, "upstream divergence": 0, "untested": 1,
                  "not selected": 0, "not run": 0,
                  "total": 5},
        "harness_errors": 1,
    }
    assert data["profiles"]["extended"] == {
        "passed": 0,
        "failed": 0,
        "error": 1,
        "skipped": 0,
        "upstream divergence": 0,
        "untested": 0,
        "not selected": 0,
        "not run": 0,
        "total": 1,
    }
    assert data["keps"][0]["profiles"]["core"]["total"] == 4


def test_report_json_scenarios_carry_failing_step_message_and_skip_reason() -> None:
    scenarios = {entry["name"]: entry for entry in report_data(_run())["scenarios"]}
    failed = scenarios["fails"]
    assert failed["failing_step"] == {"keyword": "Then", "text": "it holds", "line": 5}
    assert failed["message"] == "AssertionError: assert 1 == 2"
    assert failed["rule"] == f"{B}  The rule B"
    assert scenarios["is skipped"]["skip_reason"] == "Unsupported: no clock"
    assert "failing_step" not in scenarios["never starts"]
    assert not {"failing_step", "message", "skip_reason"} & scenarios["passes"].keys()
    assert scenarios["adds [a=1]"]["example"] == {"a": "1"}


def test_report_json_validates_against_its_schema() -> None:
    report_validator().validate(report_data(_run()))


def test_report_schema_rejects_a_failure_without_message() -> None:
    data = report_data(_run())
    del next(s for s in data["scenarios"] if s["status"] == "failed")["message"]
    assert not report_validator().is_valid(data)


def test_every_format_is_independent_of_arrival_order() -> None:
    for render in WRITERS.values():
        assert render(_run()) == render(_run(reverse=True))


def test_report_json_lists_outline_rows_in_examples_order() -> None:
    names = [entry["name"] for entry in report_data(_run(reverse=True))["scenarios"]]
    assert names.index("adds [a=1]") + 1 == names.index("adds [a=2]")


def test_junit_has_one_testcase_per_scenario_with_rules_as_properties() -> None:
    root = ET.fromstring(render_junit(_run()))
    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("9", "1", "3", "1")
    cases = {case.get("name"): case for case in root.iter("testcase")}
    failed = cases["fails"]
    assert failed.get("classname") == f"kep-1/demo.feature :: {B}  The rule B"
    assert [(p.get("name"), p.get("value")) for p in failed.iter("property") if p.get("name") == "rule"] == [
        ("rule", B)
    ]
    failure = failed.find("failure")
    assert failure is not None and failure.get("message") == "AssertionError: assert 1 == 2"
    assert "failed at Then it holds (kep-1/demo.feature:5); rules KEP-1/B" in (failure.text or "")
    assert failed.get("time") == "0.500"  # the scenario's real duration, for the CI tab
    error = cases["never starts"].find("error")
    assert error is not None and GHOST in (error.get("message") or "")
    skipped = cases["is skipped"].find("skipped")
    assert skipped is not None and skipped.get("message") == "Unsupported: no clock"
    assert cases["passes"].find("failure") is None and cases["passes"].find("error") is None
    harness = cases["test_features.py"].find("error")
    assert harness is not None and "unexpected token" in (harness.get("message") or "")


def test_cucumber_json_keeps_every_scenario_with_step_results() -> None:
    [feature] = json.loads(render_cucumber(_run()))
    assert feature["uri"] == "kep-1/demo.feature"
    assert feature["tags"] == [{"name": "@kep-1", "line": 2}]
    elements = {element["name"]: element for element in feature["elements"]}
    assert len(elements) == 8  # skipped scenarios included
    failed = elements["fails"]
    assert {"name": f"@rule:{B}", "line": 20} in failed["tags"]
    [failed_step] = failed["steps"]
    assert failed_step["keyword"] == "Then "
    assert failed_step["result"] == {
        "status": "failed",
        "duration": 1_000_000,
        "error_message": "AssertionError: assert 1 == 2",
    }
    assert elements["breaks"]["steps"][0]["result"]["status"] == "failed"
    assert "before" not in failed
    # An outcome that no step carries must still be visible: it goes into a before hook.
    [hook] = elements["never starts"]["before"]
    assert hook["result"]["status"] == "failed" and GHOST in hook["result"]["error_message"]
    assert elements["adds [a=1]"]["id"] != elements["adds [a=2]"]["id"]


def test_markdown_summarises_per_kep_and_profile_and_lists_untested_rules() -> None:
    text = render_markdown(_run())
    lines = text.splitlines()
    assert "| KEP-1 A demo KEP | core | 1 | 1 | 0 | 1 | 0 | 1 | 0 | 0 | 4 |" in lines
    assert "|  | extended | 0 | 0 | 1 | 0 | 0 | 0 | 0 | 0 | 1 |" in lines
    assert "| KEP-1/D ⚖️ | MUST | core | ⬜ untested | — |" in lines
    assert "| KEP-1/B | MUST | core | ❌ failed | 1 passed, 1 failed |" in lines
    assert "*Why untested:* no kubelet yet" in text
    assert "- **KEP-1/D**: D-7: the KEP is read as requiring X" in lines
    assert "### ⚠️ error: `kep-1/demo.feature:40` never starts" in lines
    assert "- `test_features.py`: FeatureError: bad.feature:3: unexpected token" in lines
    assert "- **1 skipped:** Unsupported: no clock" in lines  # skips grouped by reason
    assert max(len(line) for line in lines if not line.startswith("|")) <= 120  # wrapped prose


def test_summary_line_counts_scenarios_and_rules() -> None:
    assert Results.of(_run()).summary_line() == (
        "8 scenarios (4 passed, 1 failed, 2 error, 1 skipped); "
        "5 rules (1 passed, 1 failed, 1 error, 1 skipped, 1 untested); 1 harness error"
    )


def test_write_reports_writes_every_format(tmp_path: Path) -> None:
    written = write_reports(_run(), tmp_path / "demo")
    assert sorted(path.name for path in written) == sorted([*WRITERS, TIMINGS_FILE])
    stable = json.loads(render_json(without_timings(_run())))
    assert json.loads((tmp_path / "demo" / "report.json").read_text()) == stable


# Tests added from surviving mutants of `.ci/unit-mutation reports` (docs/suite-power.md, "Unit-test power").

def test_markdown_names_an_implementation_without_organization_or_project_as_unnamed() -> None:
    text = render_markdown(_run())
    assert "\n- Implementation: unnamed implementation; Kubernetes 1.37; mode default\n" in text


def test_junit_puts_harness_errors_in_a_suite_of_their_own() -> None:
    root = ET.fromstring(render_junit(_run()))
    (suite,) = [suite for suite in root.iter("testsuite") if suite.get("name") == "draconform harness"]
    assert (suite.get("tests"), suite.get("errors"), suite.get("failures")) == ("1", "1", "0")
    (case,) = suite.iter("testcase")
    assert (case.get("classname"), case.get("name")) == ("draconform harness", "test_features.py")


def test_cucumber_shows_a_skipped_scenario_without_step_messages_as_a_skipped_before_hook() -> None:
    skipped = scenario("waits", "skipped", rules=(A,), line=60, steps=(step("it waits", "skipped"),))
    demo = run([rule("A")], [replace(skipped, skip_reason="needs a kubelet")], name="skips")
    (feature,) = json.loads(render_cucumber(demo))
    (element,) = feature["elements"]
    assert element["before"] == [{"match": {"location": ""},
                                  "result": {"status": "skipped", "duration": 0, "error_message": "needs a kubelet"}}]


def test_a_scenario_record_survives_the_trip_from_a_worker() -> None:
    """pytest-xdist carries records as plain dicts; every tuple field comes back a tuple, a missing one empty."""
    for record in _scenarios():
        assert ScenarioRecord.from_dict(record.to_dict()) == record
    data = _scenarios()[0].to_dict()
    for name in ("feature_tags", "tags", "divergences"):
        del data[name]
    back = ScenarioRecord.from_dict(data)
    assert (back.feature_tags, back.tags, back.divergences) == ((), (), ())


def test_timings_say_when_the_run_started_and_how_long_each_scenario_took() -> None:
    demo = _run()
    data = timings(demo)
    assert data["started"] == "2025-01-01T00:00:00+00:00"
    assert data["duration_s"] == demo.info.duration_s
    assert data["scenarios"][0] == {"feature_file": demo.scenarios[0].feature_file, "line": demo.scenarios[0].line,
                                    "name": demo.scenarios[0].name, "duration_s": demo.scenarios[0].duration_s}
    assert timings(without_timings(demo))["started"] is None


def test_the_summary_bar_puts_each_status_after_the_last() -> None:
    segments = bar({"total": 4, "passed": 2, "failed": 1, "untested": 1})
    assert [(s.status, s.count, s.x, s.width) for s in segments] == [
        ("passed", 2, 0.0, BAR_WIDTH / 2), ("failed", 1, BAR_WIDTH / 2, BAR_WIDTH / 4),
        ("untested", 1, BAR_WIDTH * 3 / 4, BAR_WIDTH / 4)]
