"""docs/suite-power.md stays true: every rule it names is catalogued, every scenario it cites
(`` `folder/file.feature` *Scenario name* ``, by name so that adding a scenario above it breaks nothing) is
exactly one scenario of that file, every feature file it names exists, and every MUST rule of the KEPs whose
variants the mutation check requires that only one scenario carries is listed with the reason one is enough.
The same holds for the other catalogues' section (KEP-3063, KEP-5322, KEP-5075, KEP-5004, DRA-PLUGIN, DRA-API),
whose rules listed there as single still are, and whose second angles each name the variant they kill."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from draconform.catalogue import load_catalogue
from draconform.mutation.catalogue import KEPS_WITH_VARIANTS, VARIANTS
from draconform.mutation.conforming import CONFORMING
from draconform.mutation.runner import check_variant
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
# --- P5 for the catalogues whose MUST rules need no variant each -------------------------------------------
OTHER_CATALOGUES = ("KEP-3063", "KEP-5322", "KEP-5075", "KEP-5004", "DRA-PLUGIN", "DRA-API")
OTHER_SECTION = "## P5, the other catalogues"
ADDED_TABLE = "### Second angles added"
SINGLE_TABLE = "### Still carried by one scenario"
ROW_RULE = re.compile(r"^\| ((?:KEP-[0-9]+|DRA-API|DRA-PLUGIN)/[A-Z0-9-]+) \|(.*)$", re.MULTILINE)
VARIANT_CELL = re.compile(r"^`([a-z0-9-]+)`")
NAMED_VARIANT = re.compile(r"variant `([a-z0-9-]+)`")


def _other_section() -> str:
    text = _text()
    assert OTHER_SECTION in text, f"docs/suite-power.md has no section {OTHER_SECTION!r}"
    return text.split(OTHER_SECTION, 1)[1].split("\n## ", 1)[0]


def _table(title: str) -> dict[str, list[str]]:
    """The rows of one table of the section, by rule ID: the cells after the rule."""
    part = _other_section().split(title, 1)[1].split("\n### ", 1)[0]
    rows = {rule: [cell.strip() for cell in rest.strip().strip("|").split(" | ")]
            for rule, rest in ROW_RULE.findall(part)}
    assert rows, f"no rows under {title!r}"
    return rows


def _covering() -> dict[str, int]:
    catalogue = load_catalogue()
    inventory = take_inventory(Selection.create(FEATURES_DIR), catalogue)
    return {rule.id: len(inventory.covering(rule.id)) for rule in catalogue.rules.values()
            if rule.id.split("/")[0] in OTHER_CATALOGUES and rule.level.startswith("MUST")}


def test_every_single_scenario_must_rule_of_the_other_catalogues_is_judged() -> None:
    single = {rule for rule, count in _covering().items() if count == 1}
    assert single - set(_table(SINGLE_TABLE)) == set(), "MUST rules carried by one scenario, not judged"


def test_rules_listed_as_single_are_carried_by_one_scenario() -> None:
    """A rule that gained a second scenario moves to the table of angles added (or out of the section)."""
    covering = _covering()
    assert {rule for rule in _table(SINGLE_TABLE) if covering.get(rule) != 1} == set()


def test_an_outline_given_as_the_reason_is_an_outline() -> None:
    for rule, (cited, reason) in _table(SINGLE_TABLE).items():
        if reason.startswith("outline"):
            relative, name = CITED.findall(cited)[0]
            text = (FEATURES_DIR / relative).read_text(encoding="utf-8")
            assert f"Scenario Outline: {name}\n" in text, f"{rule}: {name!r} is not an outline"


def test_every_angle_added_gave_its_rule_a_second_scenario_and_a_variant() -> None:
    covering = _covering()
    variants = {variant.name: variant.rule for variant in VARIANTS}
    for rule, (_alone, added, variant_cell) in _table(ADDED_TABLE).items():
        assert covering.get(rule, 0) >= 2, f"{rule} is still carried by {covering.get(rule, 0)} scenario(s)"
        assert CITED.findall(added), f"{rule}: the angle added cites no scenario"
        named = VARIANT_CELL.match(variant_cell)
        assert named, f"{rule}: no variant named"
        assert variants.get(named.group(1)) == rule, f"{rule}: variant {named.group(1)!r} is not tied to it"


def test_a_variant_named_as_evidence_breaks_its_rule() -> None:
    variants = {variant.name: variant.rule for variant in VARIANTS}
    for rule, (_cited, reason) in _table(SINGLE_TABLE).items():
        for name in NAMED_VARIANT.findall(reason):
            assert variants.get(name) == rule, f"{rule}: variant {name!r} is not tied to it"


FREEDOMS_SECTION = "## Freedoms per KEP"


def test_every_conforming_variant_is_listed_and_applies_once() -> None:
    """Each conforming variant names a catalogued rule, is listed in the audit's freedoms, and fits the current
    code, so an override that no longer applies shows here first."""
    section = _text().split(FREEDOMS_SECTION, 1)[1].split("\n## ", 1)[0]
    catalogue = load_catalogue()
    names = [variant.name for variant in CONFORMING]
    assert len(names) == len(set(names))
    for variant in CONFORMING:
        assert variant.kind == "conforming" and variant.allows, variant.name
        assert variant.rule in catalogue.rules, variant.name
        assert f"`{variant.name}`" in section, f"{variant.name} is not in docs/suite-power.md's freedoms"
        assert check_variant(variant) == []
