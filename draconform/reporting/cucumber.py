"""`cucumber.json` in the standard Cucumber JSON shape (features -> elements -> steps) for BDD
dashboards. Unlike pytest-bdd's own writer it is complete under pytest-xdist, keeps skipped
scenarios, and carries the cited rules as `@rule:<ID>` tags. A known upstream divergence's failed step is shown
skipped, with the divergence named before its failure text, as junit.xml shows it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from itertools import groupby
from typing import Any

from draconform.reporting.records import Run, ScenarioRecord, StepRecord, StepStatus
from draconform.suite.tracing import RULE_TAG_PREFIX

# Cucumber knows no "error": a broken step is failed there; the message tells which kind it was.
_STEP_STATUS: dict[StepStatus, str] = {
    "passed": "passed",
    "failed": "failed",
    "error": "failed",
    "undefined": "undefined",
    "skipped": "skipped",
}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _ns(seconds: float) -> int:
    return round(seconds * 1_000_000_000)


def _tags(names: Iterable[str], line: int) -> list[dict[str, Any]]:
    return [{"name": f"@{name}", "line": line} for name in sorted(set(names))]


def _step(step: StepRecord, divergences: tuple[str, ...] = ()) -> dict[str, Any]:
    """One step; in a known upstream divergence (`divergences`) its failure is shown skipped, as JUnit's is, with
    the failure text behind the divergence's name: not the implementation's failure."""
    status = _STEP_STATUS[step.status]
    result: dict[str, Any] = {"status": status, "duration": _ns(step.duration_s)}
    if divergences and status == "failed":
        result["status"] = "skipped"
        result["error_message"] = (f"known upstream divergence {', '.join(divergences)}: failed as upstream "
                                   f"Kubernetes does, not held against the implementation\n{step.message or ''}")
    elif step.message is not None:
        result["error_message"] = step.message
    return {
        "keyword": f"{step.keyword} ",
        "name": step.text,
        "line": step.line,
        "match": {"location": ""},
        "result": result,
    }


def _element(scenario: ScenarioRecord) -> dict[str, Any]:
    element: dict[str, Any] = {
        "id": f"{_slug(scenario.feature)};{_slug(scenario.name)}",
        "keyword": scenario.keyword,
        "type": "scenario",
        "name": scenario.name,
        "description": "",
        "line": scenario.line,
        "tags": _tags([*scenario.tags, *(RULE_TAG_PREFIX + rule for rule in scenario.rules)], scenario.line),
        "steps": [_step(step, scenario.divergences if scenario.status == "upstream divergence" else ())
                  for step in scenario.steps],
    }
    if scenario.example_index is not None:
        element["id"] += f";;{scenario.example_index + 1}"
    # An outcome that no step carries (a setup error, a skip mark) goes into a "before" hook, the
    # only place Cucumber JSON has for it, so that dashboards do not show the scenario as green.
    if scenario.status != "passed" and not any(step.message for step in scenario.steps):
        message = scenario.message if scenario.status != "skipped" else scenario.skip_reason
        status = "skipped" if scenario.status in ("skipped", "upstream divergence") else "failed"
        element["before"] = [
            {"match": {"location": ""}, "result": {"status": status, "duration": 0, "error_message": message or ""}}
        ]
    return element


def render_cucumber(run: Run) -> str:
    features = []
    for feature_file, group in groupby(run.scenarios, key=lambda s: s.feature_file):
        scenarios = list(group)
        first = scenarios[0]
        features.append(
            {
                "uri": feature_file,
                "id": _slug(first.feature),
                "keyword": "Feature",
                "name": first.feature,
                "description": "",
                "line": first.feature_line,
                "tags": _tags(first.feature_tags, first.feature_line),
                "elements": [_element(scenario) for scenario in scenarios],
            }
        )
    return json.dumps(features, indent=2, ensure_ascii=False) + "\n"
