"""`junit.xml` for CI test tabs: one testsuite per feature file, one testcase per scenario named as in
the feature file (not after a generated Python function), with the cited rule IDs as properties, the time it
took (a CI tab sorts by it; this is the one report file that holds durations besides `timings.json`, so it is
not committed), and a failure's text naming the step and the rule. An interrupted run adds an error test
case saying so, so that the CI tab is not green."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import asdict
from itertools import groupby

from draconform.claims import Claims
from draconform.reporting.records import Run, ScenarioRecord

# JUnit has no element for "the SUT does not conform" versus "the harness broke"; failure and error
# are its two, and they mean exactly that. A known upstream divergence is no failure of the implementation: it is
# skipped with type "upstream-divergence" (as pytest writes an expected failure), its failure text kept.
_ELEMENT = {"failed": "failure", "error": "error", "skipped": "skipped", "upstream divergence": "skipped"}
DIVERGENCE_TYPE = "upstream-divergence"


def _counts(scenarios: list[ScenarioRecord], harness_errors: int = 0) -> dict[str, str]:
    return {
        "tests": str(len(scenarios) + harness_errors),
        "failures": str(sum(s.status == "failed" for s in scenarios)),
        "errors": str(sum(s.status == "error" for s in scenarios) + harness_errors),
        "skipped": str(sum(s.status in ("skipped", "upstream divergence") for s in scenarios)),
        "time": f"{sum(s.duration_s for s in scenarios):.3f}",
    }


def _testcase(parent: ET.Element, scenario: ScenarioRecord) -> None:
    classname = scenario.feature_file + (f" :: {scenario.rule}" if scenario.rule else "")
    case = ET.SubElement(
        parent,
        "testcase",
        classname=classname,
        name=scenario.name,
        file=scenario.feature_file,
        line=str(scenario.line),
        time=f"{scenario.duration_s:.3f}",
    )
    properties = ET.SubElement(case, "properties")
    for rule_id in scenario.rules:
        ET.SubElement(properties, "property", name="rule", value=rule_id)
    for tag in scenario.tags:
        ET.SubElement(properties, "property", name="tag", value=tag)
    ET.SubElement(properties, "property", name="worker", value=scenario.worker)
    for divergence in scenario.divergences:
        ET.SubElement(properties, "property", name="upstream-divergence", value=divergence)
    element = _ELEMENT.get(scenario.status)
    if scenario.status == "upstream divergence":
        step = scenario.failing_step
        where = f" at {step.keyword} {step.text} ({scenario.feature_file}:{step.line})" if step else ""
        summary = f"known upstream divergence {', '.join(scenario.divergences)}: failed as upstream Kubernetes does"
        skipped = ET.SubElement(case, "skipped", message=summary, type=DIVERGENCE_TYPE)
        skipped.text = f"{summary}{where}; not held against the implementation\n{scenario.message or ''}"
    elif element == "skipped":
        ET.SubElement(case, element, message=scenario.skip_reason or "")
    elif element is not None:
        message = scenario.message or ""
        outcome = ET.SubElement(case, element, message=message, type=scenario.status)
        step = scenario.failing_step
        rules = ", ".join(scenario.rules) or "no rule"
        where = f"at {step.keyword} {step.text} ({scenario.feature_file}:{step.line})" if step else "before any step"
        outcome.text = f"{scenario.status} {where}; rules {rules}\n{message}"


def _implementation(suite: ET.Element, claims: Claims) -> None:
    """Who the run is about, as properties of every testsuite (JUnit has no run-level metadata)."""
    properties = ET.SubElement(suite, "properties")
    for name, value in asdict(claims.implementation).items():
        if value not in (None, ()):
            text = ", ".join(value) if isinstance(value, tuple) else str(value)
            ET.SubElement(properties, "property", name=f"implementation.{name}", value=text)


def render_junit(run: Run) -> str:
    scenarios = list(run.scenarios)
    stop = run.info.interruption
    problems = [(error.where, error.message) for error in run.errors]
    if stop is not None:
        problems.append(("run interrupted", stop.sentence()))
    root = ET.Element("testsuites", {"name": f"draconform {run.info.name}", **_counts(scenarios, len(problems))})
    for feature_file, group in groupby(scenarios, key=lambda s: s.feature_file):
        members = list(group)
        suite = ET.SubElement(root, "testsuite", {"name": feature_file, **_counts(members)})
        _implementation(suite, run.info.claims)
        for scenario in members:
            _testcase(suite, scenario)
    if problems:
        suite = ET.SubElement(root, "testsuite", {"name": "draconform harness", **_counts([], len(problems))})
        for where, message in problems:
            case = ET.SubElement(suite, "testcase", classname="draconform harness", name=where)
            ET.SubElement(case, "error", message=message, type="error").text = message
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
