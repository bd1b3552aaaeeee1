"""The README's table of catalogues says how many rules each has; the numbers must stay those of the catalogue."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from draconform.catalogue import load_catalogue
from draconform.paths import FEATURES_DIR

README = Path(__file__).resolve().parents[2] / "README.md"
ROW = re.compile(r"^\| `(?P<folder>[a-z0-9-]+)`[^|]*\| (?P<count>\d+) \|", re.M)


def test_the_catalogue_table_counts_the_rules_of_each_folder() -> None:
    if not README.is_file():
        pytest.skip("README.md is not part of an installed wheel")
    per_folder = {path.parent.name: len(load_catalogue(path.parent).rules)
                  for path in sorted(FEATURES_DIR.glob("*/rules.yaml"))}
    listed = {m["folder"]: int(m["count"]) for m in ROW.finditer(README.read_text())}
    assert listed, "the README lists no catalogue"
    assert listed == dict(per_folder)
