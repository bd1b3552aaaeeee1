"""docs/suite-power.md stays true: every rule it names is catalogued, every scenario it cites
(`folder/file.feature:LINE`) starts on that line, and every MUST rule of the KEPs whose variants the
mutation check requires that only one scenario carries is listed with the reason one is enough."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from draconform.catalogue import load_catalogue
from draconform.mutation.catalogue import KEPS_WITH_VARIANTS
from draconform.paths import FEATURES_DIR
from draconform.suite.selection import Selection
from draconform.suite.tracing import take_inventory

AUDIT = Path(__file__).resolve().parents[2] / "docs" / "suite-power.md"
RULE_ID = re.compile(r"\b(?:KEP-[0-9]+(?:-CLASSIC)?|DRA-API|DRA-PLUGIN)/[A-Z0-9-]+\b")
CITED = re.compile(r"`([a-z0-9-]+/[a-z0-9-]+\.feature):([0-9]+)`")
SINGLE_SECTION = "## P5"


def _text() -> str:
    if not AUDIT.is_file():
        pytest.skip("docs/suite-power.md is not part of an installed wheel")
    return AUDIT.read_text(encoding="utf-8")


def test_every_named_rule_is_catalogued() -> None:
    rules = load_catalogue().rules
    assert set(RULE_ID.findall(_text())) - set(rules) == set()


def test_every_cited_line_starts_a_scenario() -> None:
    for relative, line in CITED.findall(_text()):
        lines = (FEATURES_DIR / relative).read_text(encoding="utf-8").splitlines()
        assert int(line) <= len(lines), f"{relative}:{line} is past the end of the file"
        assert lines[int(line) - 1].strip().startswith("Scenario"), f"{relative}:{line} is not a scenario"


def test_every_single_scenario_must_rule_is_judged() -> None:
    catalogue = load_catalogue()
    inventory = take_inventory(Selection.create(FEATURES_DIR), catalogue)
    single = {
        rule.id for rule in catalogue.rules.values()
        if rule.id.split("/")[0] in KEPS_WITH_VARIANTS and rule.level.startswith("MUST")
        and len(inventory.covering(rule.id)) == 1
    }
    listed = set(RULE_ID.findall(_text().split(SINGLE_SECTION, 1)[1].split("\n## ", 1)[0]))
    assert single - listed == set(), "MUST rules carried by one scenario, not judged in docs/suite-power.md"
