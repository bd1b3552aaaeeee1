"""docs/suite-power.md's shapes walk stays what the feature files and the rules' `shapes:` say
(draconform.mutation.shapewalk draws it; `python -m draconform.mutation.shapewalk` prints it), no `@shape:` tag
names a form its rules do not declare, and every variant aimed at a form is a known-bad variant of that rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from draconform.catalogue import load_catalogue
from draconform.mutation import shapewalk
from draconform.mutation.catalogue import VARIANTS
from draconform.mutation.known_bad.shapes import FORMS

AUDIT = Path(__file__).resolve().parents[2] / "docs" / "suite-power.md"
BEGIN, END = "<!-- shapewalk:begin -->", "<!-- shapewalk:end -->"


def test_the_walk_in_the_audit_is_the_one_the_features_give() -> None:
    if not AUDIT.is_file():
        pytest.skip("docs/suite-power.md is not part of an installed wheel")
    text = AUDIT.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, "docs/suite-power.md holds the shapes walk between its markers"
    held = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    walked = shapewalk.walk()
    drawn = f"{shapewalk.summary(walked)}\n\n{shapewalk.table(walked)}"
    assert held == drawn, "the walk is out of date: paste `python -m draconform.mutation.shapewalk` between the markers"


def test_every_shape_tag_and_aimed_variant_names_a_declared_form() -> None:
    assert shapewalk.problems() == []


def test_a_variant_aimed_at_a_form_breaks_that_rule() -> None:
    rules = {variant.name: variant.rule for variant in VARIANTS}
    for name, (rule, _subject, _form) in FORMS.items():
        assert rules.get(name) == rule, f"{name} is not a known-bad variant of {rule}"


def test_every_declared_form_is_walked() -> None:
    catalogue = load_catalogue()
    declared = {(rule.id, subject, form) for rule in catalogue.rules.values()
                for subject, forms in rule.shapes for form in forms}
    assert {(entry.rule, entry.subject, entry.form) for entry in shapewalk.walk(catalogue)} == declared
