"""How scenarios trace to catalogue rules. A scenario cites the rule ID that leads the title of its
`Rule:` block plus every `@rule:<ID>` tag on its feature, rule, scenario or Examples table. The run
(the recorder) and the static listing (`draconform rules`) both go through `trace`, so they always
agree on which scenario covers which rule."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pytest_bdd.exceptions import GherkinParseError
from pytest_bdd.gherkin_parser import get_gherkin_document
from pytest_bdd.parser import Examples, Feature, FeatureParser, ScenarioTemplate

from draconform.catalogue import Catalogue
from draconform.paths import SCHEMAS_DIR
from draconform.suite.selection import Selection

RULE_TAG_PREFIX = "rule:"
# Marks a scenario (or Examples table) whose expected outcome upstream Kubernetes does not give: the ID of an
# `upstream_divergences` entry of a rule the scenario cites.
DIVERGENCE_TAG_PREFIX = "upstream-differs:"


@cache
def _rule_id_pattern() -> re.Pattern[str]:
    """The rule ID syntax, taken from the catalogue schema so that there is one definition of it."""
    schema = json.loads((SCHEMAS_DIR / "harness" / "rule-catalogue.schema.json").read_text())
    return re.compile(schema["$defs"]["rule"]["properties"]["id"]["pattern"])


def scenario_tags(template: ScenarioTemplate, examples: Examples | None = None) -> set[str]:
    """Tags in effect for a scenario (without `@`): its feature's, rule's and own tags, plus those of
    one Examples table, or of all its tables when `examples` is None (the static view)."""
    tables = [examples] if examples is not None else template.examples
    tags = template.feature.tags | template.tags
    if template.rule is not None:
        tags |= template.rule.tags
    for table in tables:
        tags |= table.tags
    return tags


@dataclass(frozen=True)
class Trace:
    """The rule IDs a scenario cites (its `Rule:` title's first, then its tags', sorted), the upstream divergences
    it is marked with, and why the citation is unusable, if it is: an ID missing from the catalogue, or no ID at
    all, or a divergence no cited rule records."""

    rules: tuple[str, ...]
    problems: tuple[str, ...]
    divergences: tuple[str, ...] = ()


def trace(template: ScenarioTemplate, tags: Iterable[str], catalogue: Catalogue, where: str) -> Trace:
    """Trace one scenario; `where` ("file.feature:12") leads every problem message."""
    tags = sorted(tags)
    rules: list[str] = []
    problems: list[str] = []
    if template.rule is not None:
        title = template.rule.name.strip()
        lead = title.split(maxsplit=1)[0] if title else ""
        if _rule_id_pattern().match(lead):
            rules.append(lead)
        if lead not in catalogue:
            problems.append(f"{where}: Rule '{title}' does not start with a catalogued rule ID")
    for tag in tags:
        if not tag.startswith(RULE_TAG_PREFIX):
            continue
        rule_id = tag.removeprefix(RULE_TAG_PREFIX)
        if rule_id not in rules:
            rules.append(rule_id)
        if rule_id not in catalogue:
            problems.append(f"{where}: tag @{tag} cites rule {rule_id}, which is not in the catalogue")
    if not rules and not problems:
        problems.append(
            f"{where}: scenario '{template.name}' cites no rule; put it under a 'Rule:' whose title"
            f" starts with a rule ID, or tag it @{RULE_TAG_PREFIX}<ID>"
        )
    divergences = [tag.removeprefix(DIVERGENCE_TAG_PREFIX) for tag in tags if tag.startswith(DIVERGENCE_TAG_PREFIX)]
    for divergence in divergences:
        holder = catalogue.divergences.get(divergence)
        if holder is None:
            problems.append(f"{where}: tag @{DIVERGENCE_TAG_PREFIX}{divergence} names no upstream divergence "
                            "recorded in the catalogue (a rule's upstream_divergences)")
        elif holder[0].id not in rules:
            problems.append(f"{where}: tag @{DIVERGENCE_TAG_PREFIX}{divergence} names a divergence of rule "
                            f"{holder[0].id}, which the scenario does not cite")
    return Trace(tuple(rules), tuple(problems), tuple(divergences))


class ScenarioNameClash(GherkinParseError):
    """Two scenarios of one feature file share a name; pytest-bdd would silently keep only one."""


def check_unique_names(path: Path) -> None:
    """Raise `ScenarioNameClash` at the first repeated scenario name (also across Rule blocks)."""
    first_seen: dict[str, int] = {}
    for child in get_gherkin_document(str(path)).feature.children:
        for nested in child.rule.children if child.rule else [child]:
            scenario = nested.scenario
            if scenario is None:
                continue
            if scenario.name in first_seen:
                raise ScenarioNameClash(
                    f"scenario name {scenario.name!r} is used twice (first on line {first_seen[scenario.name]});"
                    " pytest-bdd would run only one of them",
                    scenario.location.line,
                    f"{scenario.keyword}: {scenario.name}",
                    str(path),
                )
            first_seen[scenario.name] = scenario.location.line


def feature_files(selection: Selection) -> list[Path]:
    """Every feature file the selection covers, sorted."""
    found: set[Path] = set()
    for target in selection.targets():
        found.update(target.rglob("*.feature") if target.is_dir() else [target])
    return sorted(found)


def parse_feature(path: Path, selection: Selection) -> Feature:
    """Parse a feature file with pytest-bdd's own parser (what the run binds), after checking that
    the parser will not drop a scenario."""
    check_unique_names(path)
    return FeatureParser(str(selection.features_dir), selection.relative(path)).parse()


@dataclass(frozen=True)
class ScenarioRef:
    """A scenario as written in a feature file, before it runs."""

    feature_file: str
    line: int
    name: str
    rules: tuple[str, ...]
    divergences: tuple[str, ...] = ()  # the upstream divergences its tags (any Examples table's) name


@dataclass(frozen=True)
class Inventory:
    """What the selected feature files cite, found without running them."""

    scenarios: tuple[ScenarioRef, ...]
    problems: tuple[str, ...]

    def covering(self, rule_id: str) -> list[ScenarioRef]:
        return [ref for ref in self.scenarios if rule_id in ref.rules]


def take_inventory(selection: Selection, catalogue: Catalogue) -> Inventory:
    """Trace every scenario of the selection; unparsable files become problems, not exceptions."""
    scenarios: list[ScenarioRef] = []
    problems: list[str] = []
    for path in feature_files(selection):
        relative = selection.relative(path)
        try:
            feature = parse_feature(path, selection)
        except GherkinParseError as exc:
            problems.append(f"{relative}:{exc.line}: {exc.message}")
            continue
        for template in feature.scenarios.values():
            found = trace(template, scenario_tags(template), catalogue, f"{relative}:{template.line_number}")
            scenarios.append(ScenarioRef(relative, template.line_number, template.name, found.rules,
                                         found.divergences))
            problems.extend(found.problems)
    if not selection.narrowed:  # a narrowed selection may leave out the scenarios that cite a divergence
        cited = {divergence for ref in scenarios for divergence in ref.divergences}
        for divergence, (rule, entry) in sorted(catalogue.divergences.items()):
            if divergence not in cited:
                problems.append(f"{rule.id}: upstream divergence {divergence} ({entry.releases}) is cited by no "
                                f"scenario; tag the scenarios or Examples tables upstream fails with "
                                f"@{DIVERGENCE_TAG_PREFIX}{divergence}, or remove the entry")
    return Inventory(tuple(scenarios), tuple(problems))
