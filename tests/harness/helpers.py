"""Hand-built record streams for the writer tests: each helper fills in what a test does not care about."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import jsonschema

from draconform.catalogue import Rule
from draconform.paths import SCHEMAS_DIR
from draconform.reporting.records import HarnessError, Outcome, Run, RunInfo, ScenarioRecord, StepRecord, StepStatus

KEP = "KEP-1"


def rule(name: str, **fields: Any) -> Rule:
    values: dict[str, Any] = {
        "id": f"{KEP}/{name}",
        "kep": KEP,
        "level": "MUST",
        "section": "Design Details",
        "text": f"The rule {name} holds.",
        "profile": "core",
    }
    return Rule(**(values | fields))


def step(text: str, status: StepStatus = "passed", line: int = 5, message: str | None = None) -> StepRecord:
    return StepRecord("Then", text, line, status, 0.001, message)


def scenario(
    name: str, status: Outcome = "passed", rules: tuple[str, ...] = (f"{KEP}/A",), **fields: Any
) -> ScenarioRecord:
    """A scenario whose steps agree with its status, unless the test passes its own."""
    steps = {
        "passed": (step("it holds"),),
        "failed": (step("it holds", "failed", message="AssertionError: assert 1 == 2"),),
        "error": (step("it holds", "error", message="KeyError: 'x'"),),
        "skipped": (step("it holds", "skipped", message="Unsupported: no clock"),),
        "upstream divergence": (step("it holds", "failed", message="AssertionError: assert 1 == 2"),),
    }[status]
    values: dict[str, Any] = {
        "feature": "Demo feature",
        "feature_file": "kep-1/demo.feature",
        "feature_line": 2,
        "feature_tags": ("kep-1",),
        "rule": None,
        "keyword": "Scenario",
        "name": name,
        "line": 10,
        "example": None,
        "example_index": None,
        "rules": rules,
        "tags": ("kep-1",),
        "status": status,
        "duration_s": 0.5,
        "steps": steps,
        "message": {"failed": "AssertionError: assert 1 == 2", "error": "KeyError: 'x'",
                    "upstream divergence": "AssertionError: assert 1 == 2"}.get(status),
        "skip_reason": "Unsupported: no clock" if status == "skipped" else None,
    }
    return ScenarioRecord(**(values | fields))


def run(
    rules: list[Rule], scenarios: list[ScenarioRecord], errors: tuple[HarnessError, ...] = (), name: str = "demo"
) -> Run:
    info = RunInfo(name, "tests:factory", datetime(2025, 1, 1, tzinfo=UTC), 1.0, 0)
    return Run(info, rules, {KEP: "A demo KEP"}, scenarios, errors)


def report_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS_DIR / "harness" / "report.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
