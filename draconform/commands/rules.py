"""`draconform rules`: the rule catalogue with its coverage, found by parsing the feature files
without running them. Exits 1 if a feature file cites a rule the catalogue lacks (or none), so CI can
lint feature files cheaply. `-o markdown` is the user guide's catalogue page (built by docs/hooks/pages.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from draconform.catalogue import Catalogue, CatalogueError, Rule, load_catalogue
from draconform.commands.findings import EXIT_FINDINGS, EXIT_OK, EXIT_UNUSABLE, diagnostic
from draconform.paths import FEATURES_DIR
from draconform.suite.selection import Selection, SelectionError

if TYPE_CHECKING:
    from draconform.suite.tracing import Inventory

DECISION_MARK = "⚖"
DIVERGENCE_MARK = "⇄"  # upstream Kubernetes differs on some of the rule's scenarios (upstream_divergences)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "rules", help="list the rule catalogue and which rules have scenarios", description=__doc__
    )
    parser.add_argument("--untested", action="store_true", help="list only the rules no scenario covers")
    parser.add_argument(
        "-o", "--output", choices=("text", "json", "markdown"), default="text", help="output format (default: text)"
    )
    parser.add_argument("--features-dir", type=Path, default=FEATURES_DIR, help=argparse.SUPPRESS)
    parser.set_defaults(handler=handle)


def _entry(rule: Rule, inventory: Inventory) -> dict[str, Any]:
    scenarios = inventory.covering(rule.id)
    entry: dict[str, Any] = {
        "id": rule.id,
        "kep": rule.kep,
        "level": rule.level,
        "profile": rule.profile,
        "section": rule.section,
        "covered": bool(scenarios),
        "scenarios": [{"feature_file": s.feature_file, "line": s.line, "name": s.name} for s in scenarios],
    }
    for optional in ("decision", "untested_reason"):
        if getattr(rule, optional) is not None:
            entry[optional] = getattr(rule, optional)
    if rule.divergences:  # with the scenarios that cite each (tagged @upstream-differs:<id>)
        entry["upstream_divergences"] = [
            {"id": d.id, "releases": d.releases,
             "scenarios": [f"{s.feature_file}:{s.line}" for s in scenarios if d.id in s.divergences]}
            for d in rule.divergences
        ]
    return entry


def _text(entries: list[dict[str, Any]], titles: dict[str, str]) -> str:
    lines: list[str] = []
    width = max((len(entry["id"]) for entry in entries), default=0) + 4
    kep = None
    for entry in entries:
        if entry["kep"] != kep:
            kep = entry["kep"]
            lines += [""] if lines else []
            lines.append(f"{kep}  {titles.get(kep, '')}".rstrip())
        rule_id = entry["id"] + (f" {DECISION_MARK}" if "decision" in entry else "")
        rule_id += f" {DIVERGENCE_MARK}" if "upstream_divergences" in entry else ""
        if entry["covered"]:
            where = ", ".join(f"{s['feature_file']}:{s['line']}" for s in entry["scenarios"])
            coverage = f"{len(entry['scenarios'])} scenario(s): {where}"
        else:
            coverage = "untested" + (f" ({entry['untested_reason']})" if "untested_reason" in entry else "")
        lines.append(f"  {rule_id:<{width}}{entry['level']:<12}{entry['profile']:<12}{coverage}")
    return "\n".join(lines)


def _cell(text: str) -> str:
    """Catalogue prose as one Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


def _markdown(entries: list[dict[str, Any]], catalogue: Catalogue) -> str:
    """Every rule by KEP, as a table per catalogue: its words, level, profile, gates and where it is tested."""
    lines = [f"{len(entries)} rules, generated from `features/*/rules.yaml` and the feature files citing them "
             "(`draconform rules -o markdown`). "
             f"{DECISION_MARK} marks a rule resting on a [decision](decisions.md), "
             f"{DIVERGENCE_MARK} one where upstream Kubernetes is known to differ.", ""]
    kep = None
    for entry in entries:
        rule = catalogue.rules[entry["id"]]
        if entry["kep"] != kep:
            kep = entry["kep"]
            lines += ["", f"## {kep}: {catalogue.titles.get(kep, '')}".rstrip(": "), "",
                      "| rule | level | profile | gates | what it says | scenarios |",
                      "|---|---|---|---|---|---|"]
        marks = (f" {DECISION_MARK}" if rule.decision else "") + (f" {DIVERGENCE_MARK}" if rule.divergences else "")
        text = _cell(f"{rule.text} ({rule.section})")
        if rule.decision:
            text += f"<br>{DECISION_MARK} {_cell(rule.decision)}"
        if rule.upstream:
            text += f"<br>upstream: {_cell(rule.upstream)}"
        if entry["covered"]:
            where = "<br>".join(f"`{s['feature_file']}:{s['line']}`" for s in entry["scenarios"])
        else:
            where = "untested" + (f": {_cell(entry['untested_reason'])}" if "untested_reason" in entry else "")
        gates = ", ".join(rule.gates) or "-"
        lines.append(f"| `{rule.id}`{marks} | {rule.level} | {rule.profile} | {gates} | {text} | {where} |")
    return "\n".join(lines) + "\n"


def handle(args: argparse.Namespace) -> int:
    # Imported late: the CLI loads every subcommand module, and pytest-bdd imported before
    # `pytest.main` (in `draconform run`) escapes pytest's assertion rewriting, with a warning.
    from draconform.suite.tracing import take_inventory

    try:
        selection = Selection.create(args.features_dir)
        catalogue = load_catalogue(selection.features_dir)
    except (SelectionError, CatalogueError) as exc:
        diagnostic("rules", str(exc))
        return EXIT_UNUSABLE
    inventory = take_inventory(selection, catalogue)
    rules = sorted(catalogue.rules.values(), key=lambda rule: rule.id)
    entries = [_entry(rule, inventory) for rule in rules]
    covered = sum(entry["covered"] for entry in entries)
    if args.untested:
        entries = [entry for entry in entries if not entry["covered"]]
    if args.output == "markdown":
        print(_markdown(entries, catalogue), end="")
    elif args.output == "json":
        print(json.dumps({"rules": entries, "problems": list(inventory.problems)}, indent=2, ensure_ascii=False))
    else:
        print(_text(entries, catalogue.titles))
        print(f"\n{len(rules)} rules: {covered} covered by a scenario, {len(rules) - covered} untested; "
              f"{DIVERGENCE_MARK} {len(catalogue.divergences)} known upstream divergences in "
              f"{sum(bool(rule.divergences) for rule in rules)} rules")
        for problem in inventory.problems:  # findings about the features: stdout, like every command's
            print(problem)
    return EXIT_FINDINGS if inventory.problems else EXIT_OK
