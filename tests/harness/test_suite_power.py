"""docs/suite-power.md stays true: every rule it names is catalogued, every scenario it cites
(`` `folder/file.feature` *Scenario name* ``, by name so that adding a scenario above it breaks nothing) is
exactly one scenario of that file, every feature file it names exists, and every MUST rule of the KEPs whose
variants the mutation check requires that only one scenario carries is listed with the reason one is enough."""

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
FEATURE = re.compile(r"`([a-z0-9-]+/[a-z0-9-]+\.feature)`")
CITED = re.compile(r"`([a-z0-9-]+/[a-z0-9-]+\.feature)` \*([^*]+)\*")
TITLE = re.compile(r"^\s*Scenario(?: Outline)?:\s*(.+?)\s*$", re.MULTILINE)
SINGLE_SECTION = "## P5"


def _text() -> str:
    if not AUDIT.is_file():
        pytest.skip("docs/suite-power.md is not part of an installed wheel")
    return AUDIT.read_text(encoding="utf-8")


def test_every_named_rule_is_catalogued() -> None:
    rules = load_catalogue().rules
    assert set(RULE_ID.findall(_text())) - set(rules) == set()


def test_every_cited_scenario_is_one_scenario_of_its_file() -> None:
    cited = CITED.findall(_text())
    assert cited, "the audit cites scenarios"
    for relative, name in cited:
        titles = TITLE.findall((FEATURES_DIR / relative).read_text(encoding="utf-8"))
        assert titles.count(name) == 1, f"{relative} has {titles.count(name)} scenarios named {name!r}"


def test_every_named_feature_file_exists() -> None:
    missing = sorted({relative for relative in FEATURE.findall(_text()) if not (FEATURES_DIR / relative).is_file()})
    assert missing == []


def test_no_citation_by_line_number() -> None:
    """Lines move whenever a scenario is added above; a name does not."""
    assert re.findall(r"\.feature:[0-9]+|`:[0-9]+`", _text()) == []


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
