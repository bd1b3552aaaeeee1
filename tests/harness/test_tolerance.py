"""A rule's catalogue `tolerance` (what a conforming component may do beyond the rule's plain reading) is read
into `Rule.tolerance`, needs its `why`, and reaches the steps through `tolerance(ctx)`."""

from __future__ import annotations

from pathlib import Path

import pytest

from draconform.catalogue import CatalogueError, Tolerance, load_catalogue
from draconform.steps.scenario import ScenarioContext, tolerance

CATALOGUE = """\
kep: KEP-9999
title: test
source: none
rules:
  - id: KEP-9999/RE-PICK
    level: SHOULD
    section: nowhere
    text: a failed object is not picked again
{tolerance}
"""


def _write(tmp_path: Path, tolerance_yaml: str) -> Path:
    folder = tmp_path / "kep-9999"
    folder.mkdir()
    (folder / "rules.yaml").write_text(CATALOGUE.format(tolerance=tolerance_yaml), encoding="utf-8")
    return tmp_path


def test_a_tolerance_is_read_with_its_amounts(tmp_path: Path) -> None:
    features = _write(tmp_path, "    tolerance: {repicks: 1, why: the withdrawal arrives later}")
    assert load_catalogue(features).rules["KEP-9999/RE-PICK"].tolerance == Tolerance(repicks=1)


def test_a_tolerance_without_its_reason_is_refused_naming_the_field(tmp_path: Path) -> None:
    features = _write(tmp_path, "    tolerance: {repicks: 1}")
    with pytest.raises(CatalogueError, match=r"rules\.0\.tolerance"):
        load_catalogue(features)


def test_the_steps_see_the_tolerance_of_the_scenarios_rule() -> None:
    assert tolerance(ScenarioContext(rule="KEP-5007/CONTROLLER-FAILURE-NOT-REPICKED")).repicks == 1
    assert tolerance(ScenarioContext(rule="KEP-5007/PREBIND-ALL-TRUE")) == Tolerance()
    assert tolerance(ScenarioContext()) == Tolerance()
