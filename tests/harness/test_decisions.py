"""docs/decisions.md and the rule catalogues cite each other correctly: every `decision:` field starts
with an entry that exists, every rule an entry lists exists, and the rules an entry says rest on it
name it back (so a reader following either direction lands in the right place)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from draconform.catalogue import load_catalogue

DECISIONS = Path(__file__).resolve().parents[2] / "docs" / "decisions.md"
ENTRY = re.compile(r"^### (D-[0-9]+-[0-9]+): ", re.MULTILINE)
ENTRY_ID = re.compile(r"\bD-[0-9]+-[0-9]+\b")
RULE_ID = re.compile(r"\b[A-Z0-9-]+/[A-Z0-9-]+\b")


def _listed(body: str, label: str) -> set[str]:
    """Rule IDs in the paragraph of `body` that starts with `label`, leaving out parenthesised remarks."""
    start = body.find("\n" + label)
    if start < 0:
        return set()
    paragraph = body[start + 1 :].split("\n\n")[0].split("\nNot yet followed by:")[0]
    return set(RULE_ID.findall(re.sub(r"\([^)]*\)", "", paragraph)))


def _entries() -> dict[str, dict[str, set[str]]]:
    """Entry ID -> {"rules": IDs on its `Rules:` lines, "pending": IDs on its `Not yet followed by:`}."""
    if not DECISIONS.is_file():
        pytest.skip("docs/decisions.md is not part of an installed wheel")
    text = DECISIONS.read_text()
    entries: dict[str, dict[str, set[str]]] = {}
    bodies = ENTRY.split(text)[1:]
    for entry_id, body in zip(bodies[::2], bodies[1::2], strict=True):
        entries[entry_id] = {"rules": _listed(body, "Rules:"), "pending": _listed(body, "Not yet followed by:")}
    return entries


def test_entries_are_numbered_once() -> None:
    ids = ENTRY.findall(DECISIONS.read_text()) if DECISIONS.is_file() else []
    assert len(ids) == len(set(ids)), ids


def test_every_decision_field_names_an_existing_entry_first() -> None:
    entries = _entries()
    for rule in load_catalogue().rules.values():
        if rule.decision is None:
            continue
        first = ENTRY_ID.match(rule.decision)
        assert first, f"{rule.id}: decision does not start with a docs/decisions.md entry: {rule.decision}"
        for cited in ENTRY_ID.findall(rule.decision):
            assert cited in entries, f"{rule.id}: cites {cited}, which docs/decisions.md lacks"


def test_rules_listed_under_an_entry_exist_and_name_it() -> None:
    rules = load_catalogue().rules
    for entry_id, listed in _entries().items():
        for rule_id in listed["rules"] | listed["pending"]:
            assert rule_id in rules, f"{entry_id} lists {rule_id}, which no catalogue has"
        for rule_id in listed["rules"]:
            decision = rules[rule_id].decision or ""
            assert entry_id in ENTRY_ID.findall(decision), f"{rule_id} rests on {entry_id} but does not cite it"


def test_rules_citing_an_entry_are_listed_there() -> None:
    entries = _entries()
    for rule in load_catalogue().rules.values():
        for cited in ENTRY_ID.findall(rule.decision or ""):
            listed = entries[cited]["rules"] | entries[cited]["pending"]
            assert rule.id in listed, f"{rule.id} cites {cited}, which does not list it"
