"""The shapes walk over the catalogue (issue 39), drawn from the feature files so that it cannot drift: for each
rule whose `shapes:` (rules.yaml) name a list, map, counter or selector with the forms the API allows, and each
form, the first scenario of the rule that shows it and the known-bad variants only that form kills.

A scenario shows a form when it, or one of its Examples tables, is tagged `@shape:<subject>:<form>` and cites the
rule. A tag naming a subject or form that none of the scenario's rules declares is a problem (`problems()`), so a
typo cannot make a form look covered. `python -m draconform.mutation.shapewalk` prints the table;
tests/harness/test_shape_walk.py keeps docs/suite-power.md's copy equal to it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pytest_bdd.parser import Examples

from draconform.catalogue import Catalogue, load_catalogue
from draconform.mutation.known_bad.shapes import FORMS
from draconform.paths import FEATURES_DIR
from draconform.suite.selection import Selection
from draconform.suite.tracing import RULE_TAG_PREFIX, feature_files, parse_feature, scenario_tags

SHAPE_TAG_PREFIX = "shape:"


@dataclass(frozen=True)
class Shown:
    """A scenario (or one Examples table of it) with the rules it cites and the forms it is tagged with."""

    cite: str  # `folder/file.feature` *Scenario name*
    rules: tuple[str, ...]
    forms: frozenset[tuple[str, str]]  # (subject, form)


def _shown(catalogue: Catalogue) -> Iterator[Shown]:
    selection = Selection.create(FEATURES_DIR)
    for path in feature_files(selection):
        relative = selection.relative(path)
        for template in parse_feature(path, selection).scenarios.values():
            tables: list[Examples | None] = list(template.examples) or [None]
            for table in tables:
                tags = scenario_tags(template, table)
                rules = [template.rule.name.split()[0]] if template.rule is not None else []
                rules += [tag.removeprefix(RULE_TAG_PREFIX) for tag in sorted(tags) if tag.startswith(RULE_TAG_PREFIX)]
                forms = set()
                for tag in tags:
                    if tag.startswith(SHAPE_TAG_PREFIX):
                        subject, _, form = tag.removeprefix(SHAPE_TAG_PREFIX).partition(":")
                        forms.add((subject, form))
                yield Shown(f"`{relative}` *{template.name}*", tuple(r for r in rules if r in catalogue.rules),
                            frozenset(forms))


@dataclass(frozen=True)
class Walked:
    rule: str
    subject: str
    form: str
    shown: str  # the first scenario citing the rule and tagged with the form, or "no"
    variants: tuple[str, ...]  # known-bad variants of known_bad/shapes.py aimed at this form


def walk(catalogue: Catalogue | None = None) -> list[Walked]:
    catalogue = catalogue or load_catalogue()
    shown = list(_shown(catalogue))
    walked = []
    for rule in sorted(catalogue.rules.values(), key=lambda rule: rule.id):
        for subject, forms in rule.shapes:
            for form in forms:
                cite = next((s.cite for s in shown if rule.id in s.rules and (subject, form) in s.forms), "no")
                variants = tuple(name for name, aim in FORMS.items() if aim == (rule.id, subject, form))
                walked.append(Walked(rule.id, subject, form, cite, variants))
    return walked


def problems(catalogue: Catalogue | None = None) -> list[str]:
    """Shape tags no cited rule declares, and variants aimed at a form no rule declares."""
    catalogue = catalogue or load_catalogue()
    found = []
    for s in _shown(catalogue):
        declared = {(subject, form) for rule in s.rules for subject, forms in catalogue.rules[rule].shapes
                    for form in forms}
        found += [f"{s.cite}: @{SHAPE_TAG_PREFIX}{subject}:{form} is not a form any rule it cites declares"
                  for subject, form in sorted(s.forms - declared)]
    for name, (rule, subject, form) in FORMS.items():
        if rule not in catalogue.rules or form not in dict(catalogue.rules[rule].shapes).get(subject, ()):
            found.append(f"variant {name}: {rule} declares no form {subject}:{form}")
    return found


def table(walked: list[Walked] | None = None) -> str:
    """The walk as the Markdown table docs/suite-power.md holds."""
    lines = ["| rule | subject | form | a scenario showing it | known-bad variant aimed at it |",
             "|---|---|---|---|---|"]
    for entry in walked if walked is not None else walk():
        variants = ", ".join(f"`{name}`" for name in entry.variants)
        lines.append(f"| {entry.rule} | {entry.subject} | {entry.form} | {entry.shown} | {variants} |")
    return "\n".join(lines)


def summary(walked: list[Walked] | None = None) -> str:
    """Counts per catalogue: rules walked, forms declared, forms shown."""
    walked = walked if walked is not None else walk()
    counts: dict[str, tuple[set[str], list[int]]] = {}
    for entry in walked:
        rules, count = counts.setdefault(entry.rule.split("/")[0], (set(), [0, 0]))
        rules.add(entry.rule)
        count[0] += 1
        count[1] += entry.shown != "no"
    lines = ["| catalogue | rules walked | forms declared | forms shown |", "|---|---|---|---|"]
    lines += [f"| {kep} | {len(rules)} | {a} | {b} |" for kep, (rules, (a, b)) in sorted(counts.items())]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
    print()
    print(table())
