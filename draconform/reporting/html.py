"""`report.html`: the report for people, one self-contained file (styles, script and charts inline; no
external asset, no network), rendered by Jinja2 from `templates/report.html.j2`. It shows the verdict
per profile, a summary per KEP and profile with a bar chart, the traceability matrix with filters,
every failure with its steps, the known upstream divergences the run observed (with their failure text), and the
decisions and upstream differences the rules rest on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from draconform.reporting.markdown import claims_line, implementation_line
from draconform.reporting.records import OUTCOMES, Run, ScenarioRecord
from draconform.reporting.results import RULE_STATUSES, Results, RuleResult, feature_set, tally
from draconform.reporting.submission import tool_version
from draconform.reporting.templating import environment

BAR_WIDTH = 240  # pixels of a full bar in the summary chart


@dataclass(frozen=True)
class Segment:
    status: str
    count: int
    x: float
    width: float


def bar(counts: dict[str, int]) -> list[Segment]:
    """The stacked bar of one row of the summary: a segment per non-zero status, in status order."""
    total = counts["total"] or 1
    segments, x = [], 0.0
    for status in RULE_STATUSES:
        if counts.get(status):
            width = BAR_WIDTH * counts[status] / total
            segments.append(Segment(status, counts[status], round(x, 2), round(width, 2)))
            x += width
    return segments


def _summary_rows(results: Results) -> list[dict[str, Any]]:
    rows = []
    for kep in results.keps():
        for profile in results.profiles(kep):
            counts = results.rule_counts(kep=kep, profile=profile)
            rows.append({"kep": kep, "title": results.run.kep_titles.get(kep, ""), "profile": profile,
                         "counts": counts, "bar": bar(counts)})  # fmt: skip
    return rows


def outcomes(scenarios: Sequence[ScenarioRecord]) -> str:
    """"2 passed, 1 failed": a rule's scenarios at a glance."""
    counts = tally((s.status for s in scenarios), OUTCOMES)
    return ", ".join(f"{counts[key]} {key}" for key in OUTCOMES if counts[key]) or "none"


@dataclass(frozen=True)
class Outline:
    """The rows of one Scenario Outline a rule cites, shown as a table (a skew outline's states, for one)."""

    location: str
    name: str
    columns: tuple[str, ...]
    rows: tuple[ScenarioRecord, ...]


def outlines(result: RuleResult) -> list[Outline]:
    """A rule's outline rows grouped into one table per outline, in file order."""
    groups: dict[str, list[ScenarioRecord]] = {}
    for scenario in result.scenarios:
        if scenario.example is not None:
            groups.setdefault(scenario.location, []).append(scenario)
    return [Outline(location, _common_words([row.name.split(" [", 1)[0] for row in rows]),
                    tuple(rows[0].example or {}), tuple(rows))
            for location, rows in groups.items()]


def _common_words(names: list[str]) -> str:
    """What the rows' names share (each row fills the outline's placeholders in its own way): the longest common
    run of leading words, with "…" where they part."""
    split = [name.split() for name in names]
    shared = []
    for words in zip(*split, strict=False):
        if any(word != words[0] for word in words):
            break
        shared.append(words[0])
    whole = all(len(words) == len(shared) for words in split)
    return " ".join(shared) + ("" if whole else " …")


def render_html(run: Run) -> str:
    results = Results.of(run)
    info = run.info
    broken: list[ScenarioRecord] = [s for s in run.scenarios if s.status in ("failed", "error")]
    rule_of = {r.rule.id: r.rule for r in results.rules}
    return environment().get_template("report.html.j2").render(
        info=info,
        tool=f"draconform {tool_version()}",
        implementation=implementation_line(info.claims),
        claims=claims_line(info.claims),
        summary_line=results.summary_line(),
        scenario_counts=results.scenario_counts(),
        rule_counts=results.rule_counts(),
        verdicts=results.verdicts(),
        summary_rows=_summary_rows(results),
        bar_width=BAR_WIDTH,
        statuses=RULE_STATUSES,
        results=results.rules,
        outcomes={r.rule.id: outcomes(r.scenarios) for r in results.rules},
        outlines={r.rule.id: outlines(r) for r in results.rules},
        singles={r.rule.id: [s for s in r.scenarios if s.example is None] for r in results.rules},
        feature_set=feature_set,
        keps=results.keps(),
        levels=sorted({r.rule.level for r in results.rules}),
        profiles=results.profiles(),
        broken=broken,
        rule_of=rule_of,
        claims_obj=info.claims,
        decisions=[r.rule for r in results.rules if r.rule.decision],
        upstream_notes=[r.rule for r in results.rules if r.rule.upstream],
        observed=results.divergences(),
        errors=run.errors,
    )
