"""How scenarios trace to rules, and how the selection of feature files is checked, on throwaway
feature files (never the real ones under features/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from draconform.catalogue import Catalogue
from draconform.suite.selection import Selection, SelectionError
from draconform.suite.tracing import ScenarioNameClash, check_unique_names, parse_feature, scenario_tags, trace

from .helpers import rule

FEATURE = """\
@kep-1 @rule:KEP-1/FEATURE-WIDE
Feature: Tracing

  Rule: KEP-1/A  The rule A

    @rule:KEP-1/B
    Scenario: Under a rule, with a tag
      Given something

    Scenario: Under a rule only
      Given something

  Rule: KEP-1/MISSING  Not in the catalogue

    Scenario: Under an uncatalogued rule
      Given something

  Rule: A title that forgot its ID

    Scenario: Under a rule without ID
      Given something

  Rule: KEP-1/A  Outlines

    Scenario Outline: One row per <x>
      Given <x>

      @rule:KEP-1/B
      Examples: tagged
        | x |
        | 1 |

      Examples: untagged
        | x |
        | 2 |
"""

CATALOGUE = Catalogue({r.id: r for r in (rule("A"), rule("B"), rule("FEATURE-WIDE"))})


@pytest.fixture
def selection(tmp_path: Path) -> Selection:
    (tmp_path / "kep-1").mkdir()
    (tmp_path / "kep-1" / "tracing.feature").write_text(FEATURE)
    return Selection.create(tmp_path)


def _traces(
    selection: Selection, relative: str = "kep-1/tracing.feature", catalogue: Catalogue = CATALOGUE
) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Scenario name -> (cited rules, problems)."""
    feature = parse_feature(selection.features_dir / relative, selection)
    traces = {}
    for template in feature.scenarios.values():
        found = trace(template, scenario_tags(template), catalogue, f"{relative}:{template.line_number}")
        traces[template.name] = (found.rules, found.problems)
    return traces


def test_rule_title_comes_first_then_tags_from_every_level(selection: Selection) -> None:
    traces = _traces(selection)
    assert traces["Under a rule, with a tag"] == (("KEP-1/A", "KEP-1/B", "KEP-1/FEATURE-WIDE"), ())
    assert traces["Under a rule only"] == (("KEP-1/A", "KEP-1/FEATURE-WIDE"), ())


def test_uncatalogued_rule_title_is_a_problem_naming_file_line_and_id(selection: Selection) -> None:
    rules, problems = _traces(selection)["Under an uncatalogued rule"]
    assert rules == ("KEP-1/MISSING", "KEP-1/FEATURE-WIDE")
    assert problems == (
        "kep-1/tracing.feature:15: Rule 'KEP-1/MISSING  Not in the catalogue' does not start with a catalogued rule ID",
    )


def test_rule_title_without_an_id_is_a_problem(selection: Selection) -> None:
    rules, problems = _traces(selection)["Under a rule without ID"]
    assert rules == ("KEP-1/FEATURE-WIDE",)
    assert len(problems) == 1 and "A title that forgot its ID" in problems[0]


def test_unknown_tag_and_no_rule_at_all_are_problems(tmp_path: Path) -> None:
    (tmp_path / "f.feature").write_text(
        "Feature: F\n\n  @rule:KEP-1/GHOST\n  Scenario: Tagged\n    Given x\n\n  Scenario: Bare\n    Given x\n"
    )
    traces = _traces(Selection.create(tmp_path), "f.feature")
    assert traces["Tagged"] == (
        ("KEP-1/GHOST",),
        ("f.feature:4: tag @rule:KEP-1/GHOST cites rule KEP-1/GHOST, which is not in the catalogue",),
    )
    rules, problems = traces["Bare"]
    assert rules == () and len(problems) == 1 and "f.feature:7: scenario 'Bare' cites no rule" in problems[0]


def test_examples_table_tags_apply_to_their_rows_only(selection: Selection) -> None:
    feature = parse_feature(selection.features_dir / "kep-1" / "tracing.feature", selection)
    outline = feature.scenarios["One row per <x>"]
    tagged, untagged = outline.examples
    assert "rule:KEP-1/B" in scenario_tags(outline, tagged)
    assert "rule:KEP-1/B" not in scenario_tags(outline, untagged)
    assert "rule:KEP-1/B" in scenario_tags(outline)  # the static view covers every row


def test_repeated_scenario_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "twice.feature"
    path.write_text(
        "Feature: F\n  Rule: R1\n    Scenario: Same\n      Given x\n  Rule: R2\n    Scenario: Same\n      Given y\n"
    )
    with pytest.raises(ScenarioNameClash, match="'Same' is used twice") as raised:
        check_unique_names(path)
    assert raised.value.line == 6


def test_selection_refuses_paths_outside_the_features_dir(tmp_path: Path) -> None:
    (tmp_path / "features").mkdir()
    (tmp_path / "elsewhere.feature").write_text("Feature: F\n")
    with pytest.raises(SelectionError, match="not inside"):
        Selection.create(tmp_path / "features", [tmp_path / "elsewhere.feature"])
    with pytest.raises(SelectionError, match="no such"):
        Selection.create(tmp_path / "features", [tmp_path / "features" / "typo.feature"])


def test_selection_round_trips_through_the_environment(selection: Selection) -> None:
    narrowed = Selection.create(selection.features_dir, [selection.features_dir / "kep-1"])
    assert Selection.from_environ(narrowed.environ()) == narrowed
    assert Selection.from_environ(selection.environ()).targets() == [selection.features_dir]
