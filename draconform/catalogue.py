"""The rule catalogue: every normative KEP rule the harness knows, loaded from the `rules.yaml` beside
each KEP's feature files and validated against `schemas/harness/rule-catalogue.schema.json`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path

import jsonschema
import yaml

from draconform.paths import FEATURES_DIR, SCHEMAS_DIR

CATALOGUE_FILE = "rules.yaml"
DEFAULT_PROFILE = "core"


class CatalogueError(Exception):
    """A catalogue file is unreadable or breaks the catalogue schema."""


@dataclass(frozen=True)
class Tolerance:
    """What a conforming component may do beyond a rule's plain reading; the rule's scenarios allow it."""

    repicks: int = 0  # times a withdrawn or failed object may be picked again before the change reaches it
    seconds: float = 0.0  # simulated seconds a reaction may lag behind its cause


@dataclass(frozen=True)
class Divergence:
    """One way upstream Kubernetes gives another outcome than a rule's scenarios expect (the KEP's or the API's):
    the scenarios tagged `@upstream-differs:<id>` that fail are reported as this, not as the implementation's
    failure."""

    id: str
    releases: str  # "1.36", "1.34-1.36", "<=1.36", ">=1.34"
    upstream: str  # what upstream does instead
    source: str  # where: upstream file and function, or an issue


@dataclass(frozen=True)
class Rule:
    id: str
    kep: str
    level: str
    section: str
    text: str
    profile: str
    gates: tuple[str, ...] = ()
    component: str | None = None  # the component a rule binds (api, scheduler, kubelet, ...), where given
    decision: str | None = None
    upstream: str | None = None
    divergences: tuple[Divergence, ...] = ()
    untested_reason: str | None = None
    tolerance: Tolerance = Tolerance()
    # rule over a list, map, counter or selector: subject -> the forms its scenarios must show (shapewalk)
    shapes: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class Catalogue:
    rules: dict[str, Rule] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)  # KEP -> title

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self.rules

    @cached_property
    def divergences(self) -> dict[str, tuple[Rule, Divergence]]:
        """Every recorded upstream divergence by its ID, with the rule that holds it."""
        return {d.id: (rule, d) for rule in self.rules.values() for d in rule.divergences}

    def by_kep(self) -> dict[str, list[Rule]]:
        grouped: dict[str, list[Rule]] = {}
        for rule in self.rules.values():
            grouped.setdefault(rule.kep, []).append(rule)
        return grouped


def _one_line(text: str | None) -> str | None:
    """Folded YAML text, as one line: catalogue prose is wrapped for the reader of the file only."""
    return " ".join(text.split()) if text is not None else None


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS_DIR / "harness" / "rule-catalogue.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def load_catalogue(features_dir: Path = FEATURES_DIR) -> Catalogue:
    """Load every `rules.yaml` under `features_dir`; rule IDs must be unique across all of them."""
    rules: dict[str, Rule] = {}
    titles: dict[str, str] = {}
    divergence_ids: dict[str, str] = {}  # divergence ID -> the rule holding it
    for path in sorted(features_dir.rglob(CATALOGUE_FILE)):
        try:
            data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        except (OSError, yaml.YAMLError) as exc:
            raise CatalogueError(f"{path}: cannot read catalogue: {exc}") from exc
        errors = sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
        if errors:
            where = ".".join(str(p) for p in errors[0].absolute_path) or "(top level)"
            raise CatalogueError(f"{path}: {where}: {errors[0].message}")
        kep = data["kep"]
        titles[kep] = data["title"]
        for entry in data["rules"]:
            if not entry["id"].startswith(kep + "/"):
                raise CatalogueError(f"{path}: rule {entry['id']} does not belong to {kep}")
            if entry["id"] in rules:
                raise CatalogueError(f"{path}: rule {entry['id']} is catalogued twice")
            divergences = tuple(Divergence(d["id"], d["releases"], _one_line(d["upstream"]) or "",
                                           _one_line(d["source"]) or "")
                                for d in entry.get("upstream_divergences", ()))
            for divergence in divergences:
                if divergence.id in divergence_ids:
                    raise CatalogueError(f"{path}: rule {entry['id']}: upstream divergence {divergence.id} is "
                                         f"already recorded by {divergence_ids[divergence.id]}")
                divergence_ids[divergence.id] = entry["id"]
            rules[entry["id"]] = Rule(
                id=entry["id"],
                kep=kep,
                level=entry["level"],
                section=entry["section"],
                text=" ".join(entry["text"].split()),
                profile=entry.get("profile", data.get("profile", DEFAULT_PROFILE)),
                gates=tuple(entry.get("gates", ())),
                component=entry.get("component"),
                decision=_one_line(entry.get("decision")),
                upstream=_one_line(entry.get("upstream")),
                divergences=divergences,
                untested_reason=_one_line(entry.get("untested_reason")),
                tolerance=Tolerance(**{key: value for key, value in (entry.get("tolerance") or {}).items()
                                       if key != "why"}),
                shapes=tuple((subject, tuple(forms)) for subject, forms in (entry.get("shapes") or {}).items()),
            )
    return Catalogue(rules=rules, titles=titles)
