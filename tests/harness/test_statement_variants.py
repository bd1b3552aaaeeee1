"""The known-bad variants of the statement rules (draconform/mutation/statements.py): each patch still applies
to the code as it is (its old text occurs exactly once in its file), each variant names a catalogued rule and
changes something, and names are unique. Whether the suite kills them is the mutants check's business."""

from __future__ import annotations

from pathlib import Path

import pytest

from draconform.catalogue import load_catalogue
from draconform.mutation.statements import STATEMENT_VARIANTS
from draconform.mutation.variant import KNOWN_BAD, Variant

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("variant", STATEMENT_VARIANTS, ids=lambda v: v.name)
def test_each_patch_applies_exactly_once(variant: Variant) -> None:
    for patch in variant.patches:
        text = (ROOT / patch.path).read_text(encoding="utf-8")
        found = text.count(patch.old)
        assert found == 1, f"{variant.name}: {patch.path} has the old text {found} times"
        assert patch.old != patch.new


def test_statement_variants_are_known_bad_with_unique_names_and_catalogued_rules() -> None:
    catalogue = load_catalogue()
    names = [v.name for v in STATEMENT_VARIANTS]
    assert len(names) == len(set(names))
    assert [v.rule for v in STATEMENT_VARIANTS if v.rule not in catalogue] == []
    assert {v.kind for v in STATEMENT_VARIANTS} == {KNOWN_BAD}
