"""docs/suite-power.md stays true: every rule it names is catalogued, every scenario it cites
(`` `folder/file.feature` *Scenario name* ``, by name so that adding a scenario above it breaks nothing) is
exactly one scenario of that file, every feature file it names exists, and every MUST rule of the KEPs whose
variants the mutation check requires that only one scenario carries is listed with the reason one is enough."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from draconform.catalogue import load_catalogue
from draconform.mutation.catalogue import KEPS_WITH_VARIANTS, VARIANTS
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


# --- KEP-3063-CLASSIC: its own section, with the angles added and the rules still carried by one scenario ---
CLASSIC = "KEP-3063-CLASSIC"
CLASSIC_SECTION = "## KEP-3063-CLASSIC"
CLASSIC_ANGLES = "### Angles added"
CLASSIC_SINGLE = "### Still carried by one scenario"
VARIANT_NAME = re.compile(r"`(classic-[a-z0-9-]+)`")


def _classic_part(heading: str) -> str:
    section = _text().split(CLASSIC_SECTION, 1)[1].split("\n## ", 1)[0]
    return section.split(heading, 1)[1].split("\n### ", 1)[0]


def _classic_coverage() -> dict[str, int]:
    """Each MUST / MUST NOT rule of KEP-3063-CLASSIC with the number of scenarios carrying it (an outline
    counts once, whatever its rows)."""
    catalogue = load_catalogue()
    inventory = take_inventory(Selection.create(FEATURES_DIR), catalogue)
    return {rule.id: len(inventory.covering(rule.id)) for rule in catalogue.rules.values()
            if rule.kep == CLASSIC and rule.level.startswith("MUST")}


def test_every_single_scenario_must_rule_of_kep_3063_classic_is_judged() -> None:
    single = {rule for rule, scenarios in _classic_coverage().items() if scenarios == 1}
    listed = set(RULE_ID.findall(_classic_part(CLASSIC_SINGLE)))
    assert single - listed == set(), "KEP-3063-CLASSIC MUST rules carried by one scenario, not judged"


def test_every_kep_3063_classic_angle_gave_its_rule_a_second_scenario() -> None:
    coverage = _classic_coverage()
    rows = [line for line in _classic_part(CLASSIC_ANGLES).splitlines() if line.startswith(f"| {CLASSIC}/")]
    assert rows, "the section lists the angles added"
    rules = [RULE_ID.findall(row)[0] for row in rows]
    assert [rule for rule in rules if coverage.get(rule, 0) < 2] == []


def test_every_kep_3063_classic_variant_is_named_and_each_angle_names_its_own() -> None:
    """Each variant named in the section is catalogued; an angle's variant (its row's last cell) breaks that
    row's rule; and every variant of the catalogue's KEP-3063-CLASSIC block is named in the audit."""
    variants = {variant.name: variant.rule for variant in VARIANTS}
    section = _classic_part(CLASSIC_ANGLES) + _classic_part(CLASSIC_SINGLE)
    assert sorted(set(VARIANT_NAME.findall(section)) - set(variants)) == []
    for row in (line for line in _classic_part(CLASSIC_ANGLES).splitlines() if line.startswith(f"| {CLASSIC}/")):
        rule, last_cell = RULE_ID.findall(row)[0], row.rstrip(" |").rsplit("|", 1)[1]
        assert all(variants[name] == rule for name in VARIANT_NAME.findall(last_cell)), row
    classic_variants = {name for name, rule in variants.items() if rule.startswith(f"{CLASSIC}/")}
    assert sorted(classic_variants - set(VARIANT_NAME.findall(_text()))) == []
