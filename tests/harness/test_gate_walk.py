"""docs/suite-power.md's walk over the gated rules stays what the feature files say (draconform.mutation.gatewalk
draws it; `python -m draconform.mutation.gatewalk` prints it), and every gate pair of the variant catalogue is
in the audit's table of pairs with the scenario that kills each side, or the reason it survives."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from draconform.mutation import gatewalk
from draconform.mutation.catalogue import VARIANTS
from draconform.mutation.known_bad.defects import pair_of

AUDIT = Path(__file__).resolve().parents[2] / "docs" / "suite-power.md"
BEGIN, END = "<!-- gatewalk:begin -->", "<!-- gatewalk:end -->"
PAIRS_SECTION = "### Each gated rule under both settings"
CITED = re.compile(r"`[a-z0-9-]+/[a-z0-9-]+\.feature` \*[^*]+\*")


def _text() -> str:
    if not AUDIT.is_file():
        pytest.skip("docs/suite-power.md is not part of an installed wheel")
    return AUDIT.read_text(encoding="utf-8")


def test_the_walk_in_the_audit_is_the_one_the_features_give() -> None:
    text = _text()
    assert BEGIN in text and END in text, "docs/suite-power.md holds the walk between its markers"
    held = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    walked = gatewalk.walk()
    drawn = f"{gatewalk.summary(walked)}\n\n{gatewalk.table(walked)}"
    assert held == drawn, "the walk is out of date: paste `python -m draconform.mutation.gatewalk` between the markers"


def test_a_covering_rule_carries_the_gate_off_side_itself() -> None:
    """A rule named in the walk as carrying another's gate-off side has a row with that gate off of its own."""
    walked = gatewalk.walk()
    own = {(entry.rule, entry.gate) for entry in walked if entry.off.startswith("own")}
    for entry in walked:
        if entry.off.startswith("via "):
            cover = entry.off.removeprefix("via ").split(":", 1)[0]
            assert (cover, entry.gate) in own, f"{entry.rule}: {cover} has no row with {entry.gate} off"


def test_the_settings_reader_knows_each_form() -> None:
    assert gatewalk.settings('kube-scheduler with feature gates "DRAAdminAccess=off"', "DRAAdminAccess") == {"off"}
    assert gatewalk.settings('a cluster with feature gates "DRAX, DRAAdminAccess" off', "DRAAdminAccess") == {"off"}
    assert gatewalk.settings('kube-scheduler is "new, gate on" (DRAAdminAccess)', "DRAAdminAccess") == {"on"}
    assert gatewalk.settings('kube-scheduler is "old" (DRAAdminAccess)', "DRAAdminAccess") == {"off"}
    assert gatewalk.settings("the scheduler runs", "DRAAdminAccess") == {"default"}


def _pair_rows() -> dict[str, list[str]]:
    """The audit's table of gate pairs, by pair name: the cells of its row."""
    section = _text().split(PAIRS_SECTION, 1)[1].split("\n### ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if len(cells) == 6 and cells[3].startswith("`"):
            rows[cells[3].split("`")[1].removesuffix("-as-if-on")] = cells
    return rows


def test_every_gate_pair_is_in_the_audit_with_each_side_judged() -> None:
    rows = _pair_rows()
    for variant in VARIANTS:
        found = pair_of(variant)
        if found is None or not variant.name.endswith("-as-if-on"):
            continue
        name = variant.name.removesuffix("-as-if-on")
        assert name in rows, f"gate pair {name} is not in the audit's table of pairs"
        rule, component, gate, _pair, on_side, off_side = rows[name]
        assert (rule, component, gate) == (variant.rule, *found), name
        for side in (on_side, off_side):
            assert CITED.search(side) or side.startswith("survives: "), f"{name}: {side!r}"


def test_a_row_cites_the_tags_of_its_own_examples_table_only() -> None:
    """As a run traces it: the 1.33 row of KEP-5007's skew outline is SKEW-OLDER-SCHEDULER's, not the rule of the
    outline's gate-off table."""
    from draconform.catalogue import load_catalogue

    rows = [row for row in gatewalk._rows(load_catalogue())
            if row.cite.endswith("*A device with binding conditions and <scheduler>*")]
    older = [row for row in rows if 'version "1.33"' in row.text]
    assert older, "the skew outline has its 1.33 row"
    for row in older:
        assert "KEP-5007/SKEW-OLDER-SCHEDULER" in row.rules and "KEP-5007/SKEW-GATE-OFF-SCHEDULER" not in row.rules


def test_a_rule_of_its_own_in_covered_by_is_looked_up_before_its_catalogue() -> None:
    walked = {(entry.rule, entry.gate): entry for entry in gatewalk.walk()}
    entry = walked[("KEP-5007/SKEW-OLDER-SCHEDULER", "DRADeviceBindingConditions")]
    assert entry.off.startswith("via KEP-5007/SKEW-GATE-OFF-SCHEDULER:")
