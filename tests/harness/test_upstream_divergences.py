"""Known upstream divergences: a rule records where upstream Kubernetes gives another outcome than its scenarios
expect (`upstream_divergences`), the scenarios or Examples tables upstream fails cite it with
`@upstream-differs:<id>`, and such a scenario that fails is reported apart from the implementation's failures in
every format, `report verify` and the console, without failing the profile's verdict."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from draconform.catalogue import CatalogueError, Divergence, load_catalogue
from draconform.claims import Claims, Implementation
from draconform.cli import main
from draconform.harness.progress import closing, scenario_line
from draconform.reporting.cucumber import render_cucumber
from draconform.reporting.html import render_html
from draconform.reporting.json_report import report_data
from draconform.reporting.junit import render_junit
from draconform.reporting.markdown import render_markdown
from draconform.reporting.records import Run
from draconform.reporting.results import Results, rule_status
from draconform.reporting.submission import render_submission, submission_data, verify
from draconform.suite.selection import Selection
from draconform.suite.tracing import parse_feature, scenario_tags, take_inventory, trace

from .helpers import KEP, report_validator, rule, run, scenario, step
from .test_end_to_end import STEPS, Outcome, Workspace, draconform_run

RULES = """\
kep: KEP-7777
title: Rules upstream does not always follow
source: tests/harness/test_upstream_divergences.py
rules:
  - id: KEP-7777/LIMIT
    level: MUST
    section: Demo
    text: A total above three is refused.
    upstream_divergences:
      - id: limit-not-enforced
        releases: "1.34-1.36"
        upstream: Upstream accepts a total of four.
        source: pkg/demo/validation.go validateTotal
  - id: KEP-7777/SUM
    level: MUST
    section: Demo
    text: Adding gives the sum.
    upstream_divergences:
      - id: sum-off-by-one
        releases: "<=1.36"
        upstream: Upstream adds one too many.
        source: kubernetes/kubernetes#1
"""

FEATURE = """\
@kep-7777
Feature: Divergences

  Rule: KEP-7777/LIMIT  A total above three is refused

    Scenario Outline: A total of <total>
      Given the number <total>
      Then the total is <expected>

      Examples:
        | total | expected |
        | 2     | 2        |

      @upstream-differs:limit-not-enforced
      Examples: a total upstream accepts
        | total | expected |
        | 4     | 5        |

  Rule: KEP-7777/SUM  Adding gives the sum

    @upstream-differs:sum-off-by-one
    Scenario: A marked scenario that passes is just passed
      Given the number 1
      When I add 1
      Then the total is 2
"""

UNMARKED = """\
@kep-7777
Feature: A failure that is the implementation's

  Rule: KEP-7777/SUM  Adding gives the sum

    Scenario: An unmarked failure stays a failure
      Given the number 1
      When I add 1
      Then the total is 3
"""

IMPLEMENTATION = Implementation("acme", "dra", "v1", None, (), "1.36", "default")


def _workspace(root: Path, files: dict[str, str]) -> Workspace:
    features = root / "features"
    for relative, text in files.items():
        (features / relative).parent.mkdir(parents=True, exist_ok=True)
        (features / relative).write_text(text)
    (root / "demo_steps.py").write_text(STEPS)
    return Workspace(root, features)


@pytest.fixture(scope="module")
def diverging(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """A whole run (not narrowed, so its submission verifies) whose only failure is a known divergence."""
    workspace = _workspace(tmp_path_factory.mktemp("diverging"),
                           {"kep-7777/rules.yaml": RULES, "kep-7777/divergences.feature": FEATURE})
    options = workspace.root / "options.yaml"
    options.write_text("apiVersion: draconform.dev/v1alpha1\nkind: DRAConformanceOptions\n"
                       "implementation: {organization: acme, project: dra, version: v1}\n")
    return draconform_run(workspace, "diverging", "--options", str(options))


# --- the catalogue and the tags -------------------------------------------------------------------


def _catalogue_dir(tmp_path: Path, rules: str) -> Path:
    (tmp_path / "kep-7777").mkdir(parents=True, exist_ok=True)
    (tmp_path / "kep-7777" / "rules.yaml").write_text(rules)
    return tmp_path


def test_divergences_are_loaded_by_id_with_their_rule(tmp_path: Path) -> None:
    catalogue = load_catalogue(_catalogue_dir(tmp_path, RULES))
    holder, divergence = catalogue.divergences["limit-not-enforced"]
    assert holder.id == "KEP-7777/LIMIT"
    assert divergence == Divergence("limit-not-enforced", "1.34-1.36", "Upstream accepts a total of four.",
                                    "pkg/demo/validation.go validateTotal")


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ('releases: "1.34-1.36"', 'releases: "recent"', "upstream_divergences.0.releases: 'recent' does not match"),
        ("        source: pkg/demo/validation.go validateTotal\n", "", "'source' is a required property"),
        ("id: sum-off-by-one", "id: limit-not-enforced",
         "rule KEP-7777/SUM: upstream divergence limit-not-enforced is already recorded by KEP-7777/LIMIT"),
    ],
)
def test_a_malformed_or_repeated_divergence_is_a_catalogue_error(tmp_path: Path, old: str, new: str,
                                                                 problem: str) -> None:
    assert old in RULES
    with pytest.raises(CatalogueError, match=r"rules\.yaml") as caught:
        load_catalogue(_catalogue_dir(tmp_path, RULES.replace(old, new)))
    assert problem in str(caught.value)


def _problems(tmp_path: Path, feature: str) -> tuple[str, ...]:
    features = _catalogue_dir(tmp_path, RULES)
    (features / "kep-7777" / "f.feature").write_text(feature)
    return take_inventory(Selection.create(features), load_catalogue(features)).problems


def test_tags_naming_recorded_divergences_of_cited_rules_are_no_problem(tmp_path: Path) -> None:
    assert _problems(tmp_path, FEATURE) == ()


def test_a_tag_naming_an_unknown_divergence_is_a_problem(tmp_path: Path) -> None:
    problems = _problems(tmp_path, FEATURE.replace("@upstream-differs:sum-off-by-one", "@upstream-differs:ghost"))
    assert "kep-7777/f.feature:22: tag @upstream-differs:ghost names no upstream divergence recorded in the catalogue" \
           " (a rule's upstream_divergences)" in problems


def test_a_tag_naming_a_divergence_of_a_rule_the_scenario_does_not_cite_is_a_problem(tmp_path: Path) -> None:
    problems = _problems(tmp_path, FEATURE.replace("@upstream-differs:sum-off-by-one",
                                                   "@upstream-differs:limit-not-enforced"))
    assert ("kep-7777/f.feature:22: tag @upstream-differs:limit-not-enforced names a divergence of rule "
            "KEP-7777/LIMIT, which the scenario does not cite") in problems


def test_a_divergence_no_scenario_cites_is_a_problem_of_a_whole_selection_only(tmp_path: Path) -> None:
    feature = FEATURE.replace("    @upstream-differs:sum-off-by-one\n", "")
    problems = _problems(tmp_path, feature)
    assert len(problems) == 1 and problems[0].startswith(
        "KEP-7777/SUM: upstream divergence sum-off-by-one (<=1.36) is cited by no scenario")
    narrowed = Selection.create(tmp_path, [tmp_path / "kep-7777" / "f.feature"])
    assert take_inventory(narrowed, load_catalogue(tmp_path)).problems == ()


def test_an_examples_tag_marks_its_own_rows_only(tmp_path: Path) -> None:
    features = _catalogue_dir(tmp_path, RULES)
    (features / "kep-7777" / "f.feature").write_text(FEATURE)
    catalogue = load_catalogue(features)
    feature = parse_feature(features / "kep-7777" / "f.feature", Selection.create(features))
    outline = feature.scenarios["A total of <total>"]
    plain, marked = outline.examples
    assert trace(outline, scenario_tags(outline, plain), catalogue, "f").divergences == ()
    assert trace(outline, scenario_tags(outline, marked), catalogue, "f").divergences == ("limit-not-enforced",)


def test_the_rules_command_accepts_the_real_catalogue_and_its_tags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["problems"] == []
    assert load_catalogue().divergences  # the real catalogue records some, each cited (else problems above)


# --- deciding outcomes ----------------------------------------------------------------------------


def test_a_marked_failure_is_a_divergence_and_an_unmarked_one_a_failure(diverging: Outcome,
                                                                         tmp_path: Path) -> None:
    statuses = {s["name"]: s["status"] for s in diverging.report()["scenarios"]}
    assert statuses == {
        "A total of 2 [total=2, expected=2]": "passed",
        "A total of 4 [total=4, expected=5]": "upstream divergence",
        "A marked scenario that passes is just passed": "passed",
    }
    unmarked = _workspace(tmp_path, {"kep-7777/rules.yaml": RULES, "kep-7777/divergences.feature": FEATURE,
                                     "kep-7777/unmarked.feature": UNMARKED})
    outcome = draconform_run(unmarked, "unmarked")
    assert outcome.scenario("An unmarked failure stays a failure")["status"] == "failed"
    rules = {r["id"]: r["status"] for r in outcome.report()["rules"]}
    assert rules == {"KEP-7777/LIMIT": "upstream divergence", "KEP-7777/SUM": "failed"}
    assert outcome.status == 1  # the unmarked failure fails the run
    assert outcome.report()["conformance"][0]["verdict"] == "failure"


def test_a_run_whose_only_failures_are_divergences_conforms_and_exits_0(diverging: Outcome) -> None:
    assert diverging.status == 0, diverging.output
    report = diverging.report()
    report_validator().validate(report)
    assert {r["id"]: r["status"] for r in report["rules"]} == {"KEP-7777/LIMIT": "upstream divergence",
                                                               "KEP-7777/SUM": "passed"}
    (verdict,) = report["conformance"]
    assert verdict["verdict"] == "success" and verdict["failed_rules"] == []
    assert "1 failed only as upstream does (known upstream divergences)" in verdict["summary"]
    assert report["summary"]["scenarios"]["upstream divergence"] == 1
    assert report["summary"]["scenarios"]["failed"] == 0


def test_report_json_lists_each_divergence_with_its_failure_text(diverging: Outcome) -> None:
    (entry,) = diverging.report()["upstream_divergences"]
    assert {key: entry[key] for key in ("id", "rule", "releases", "upstream", "source")} == {
        "id": "limit-not-enforced", "rule": "KEP-7777/LIMIT", "releases": "1.34-1.36",
        "upstream": "Upstream accepts a total of four.", "source": "pkg/demo/validation.go validateTotal"}
    (failed,) = entry["scenarios"]
    assert failed["name"] == "A total of 4 [total=4, expected=5]" and "assert 4 == 5" in failed["message"]
    assert failed["failing_step"]["text"] == "the total is 5"


def test_the_console_counts_divergences_apart_and_names_them(diverging: Outcome) -> None:
    assert "3 scenarios (2 passed, 1 upstream divergence)" in diverging.output
    assert "1 scenario failed as upstream Kubernetes does (known upstream divergences" in diverging.output
    assert "limit-not-enforced [KEP-7777/LIMIT, upstream 1.34-1.36]: kep-7777/divergences.feature:6" \
           in diverging.output
    assert "failed or errored" not in diverging.output


def test_verify_accepts_a_submission_with_divergences(diverging: Outcome) -> None:
    path = diverging.reports / "conformance-report.yaml"
    assert verify(path).problems == ()
    data = yaml.safe_load(path.read_text())
    assert data["summary"]["scenarios"]["upstream divergence"] == 1
    (entry,) = data["upstreamDivergences"]
    assert entry["scenarios"] == ["kep-7777/divergences.feature:6 A total of 4 [total=4, expected=5]"]
    assert data["profiles"][0]["upstreamDivergenceScenarios"] == entry["scenarios"]


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        # The divergence counted as a pass: the counts give it away.
        ("    upstream divergence: 1\n    total: 3", "    upstream divergence: 0\n    total: 3",
         "summary.scenarios: says"),
        # The rule's divergence turned into a failure (rules are listed before scenarios).
        ("status: upstream divergence\n", "status: failed\n", "summary.rules: says"),
    ],
)
def test_verify_refuses_edited_divergence_counts(diverging: Outcome, tmp_path: Path, old: str, new: str,
                                                 problem: str) -> None:
    text = (diverging.reports / "conformance-report.yaml").read_text()
    assert old in text
    edited = tmp_path / "report.yaml"
    edited.write_text(text.replace(old, new, 1))
    problems = verify(edited).problems
    assert any(p.startswith(problem) for p in problems), problems


def test_verify_refuses_a_divergence_list_that_disagrees_with_the_scenarios(tmp_path: Path) -> None:
    data = submission_data(_run())
    data["upstreamDivergences"][0]["scenarios"].append("kep-1/demo.feature:10 passes")
    next(s for s in data["scenarios"] if "upstreamDivergences" in s).pop("upstreamDivergences")
    path = tmp_path / "report.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    problems = verify(path).problems
    assert any(p.startswith("scenarios[2] (kep-1/demo.feature:20 diverges): status upstream divergence, but it "
                            "names no upstream divergence") for p in problems), problems
    assert any(p.startswith("upstreamDivergences (limit).scenarios: names [") and "demo.feature:10 passes" in p
               and p.endswith("which did not fail as this divergence") for p in problems), problems


# --- each writer, from hand-built records ---------------------------------------------------------

LIMIT = Divergence("limit", "1.36", "Upstream accepts it.", "validation.go validateLimit")


def _run(*, unmarked_failure: bool = False) -> Run:
    diverged = scenario("diverges", "upstream divergence", rules=(f"{KEP}/A",), line=20,
                        steps=(step("it is refused", "failed", message="the API server accepted the request"),),
                        message="the API server accepted the request", divergences=("limit",),
                        tags=("kep-1", "upstream-differs:limit"))
    scenarios = [scenario("passes", rules=(f"{KEP}/A",), line=10), diverged]
    if unmarked_failure:
        scenarios.append(scenario("fails", "failed", rules=(f"{KEP}/A",), line=30))
    demo = run([rule("A", divergences=(LIMIT,)), rule("B")], [*scenarios, scenario("b", rules=(f"{KEP}/B",))])
    return replace(demo, info=replace(demo.info, claims=Claims(implementation=IMPLEMENTATION)))


def test_rule_status_divergence_sits_below_failure_and_error_above_pass() -> None:
    assert rule_status(["passed", "upstream divergence"]) == "upstream divergence"
    assert rule_status(["failed", "upstream divergence"]) == "failed"
    assert rule_status(["error", "upstream divergence"]) == "error"
    assert rule_status(["upstream divergence", "skipped"]) == "upstream divergence"


def test_results_decide_the_verdict_once() -> None:
    (verdict,) = Results.of(_run()).verdicts()
    assert verdict.verdict == "success" and verdict.must["upstream divergence"] == 1
    (failing,) = Results.of(_run(unmarked_failure=True)).verdicts()
    assert failing.verdict == "failure" and failing.failed_rules == (f"{KEP}/A",)


def test_report_json_and_its_schema() -> None:
    data: dict[str, Any] = report_data(_run())
    report_validator().validate(data)
    assert data["upstream_divergences"][0]["scenarios"][0]["message"] == "the API server accepted the request"
    rules = {r["id"]: r for r in data["rules"]}
    assert rules[f"{KEP}/A"]["status"] == "upstream divergence"
    assert rules[f"{KEP}/A"]["upstream_divergences"] == [
        {"id": "limit", "releases": "1.36", "upstream": "Upstream accepts it.",
         "source": "validation.go validateLimit"}]


def test_markdown_has_its_own_section_with_rule_upstream_releases_and_failure_text() -> None:
    text = render_markdown(_run())
    section = text.split("## Known upstream divergences", 1)[1]
    assert "### 🔀 limit (KEP-1/A, upstream 1.36)" in section
    assert "Upstream: Upstream accepts it." in section and "Source: validation.go validateLimit" in section
    assert "the API server accepted the request" in section
    assert "## Failures and errors" not in text  # a divergence is no failure


def test_html_has_its_own_section() -> None:
    page = render_html(_run())
    assert 'id="known-divergences"' in page and 'data-divergence="limit"' in page
    section = page.split('id="known-divergences"', 1)[1]
    assert "Upstream accepts it." in section and "the API server accepted the request" in section
    assert 'No scenario failed or errored.' in page


def test_junit_skips_a_divergence_with_its_type_and_failure_text() -> None:
    root = ET.fromstring(render_junit(_run()))
    assert root.get("failures") == "0" and root.get("skipped") == "1"
    (skipped,) = root.iter("skipped")
    assert skipped.get("type") == "upstream-divergence" and "known upstream divergence limit" in (skipped.get("message")
                                                                                               or "")
    assert "the API server accepted the request" in (skipped.text or "")
    assert {"upstream-divergence"} == {p.get("name") for p in root.iter("property") if p.get("value") == "limit"}


def test_cucumber_shows_the_failed_step_skipped_with_the_divergence() -> None:
    features = json.loads(render_cucumber(_run()))
    element = next(e for e in features[0]["elements"] if e["name"] == "diverges")
    (result,) = [s["result"] for s in element["steps"]]
    assert result["status"] == "skipped"
    assert result["error_message"].startswith("known upstream divergence limit")
    assert "@upstream-differs:limit" in {t["name"] for t in element["tags"]}


def test_submission_and_console_line() -> None:
    data = yaml.safe_load(render_submission(_run()))
    assert data["upstreamDivergences"][0]["id"] == "limit" and data["profiles"][0]["result"] == "success"
    results = Results.of(_run())
    diverged = next(s for s in results.run.scenarios if s.divergences)
    assert scenario_line(diverged).startswith("UPSTREAM kep-1/demo.feature:20  diverges")
    assert any(line.startswith("  limit [KEP-1/A, upstream 1.36]") for line in closing(results, []))
