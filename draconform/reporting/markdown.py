"""`report.md` for people, rendered by Jinja2 from `templates/report.md.j2`: the verdict per profile (core apart
from the extended features claimed), a summary per KEP and profile, the traceability matrix rule -> outcome, the
untested rules with the reason they are, the failures and errors, the known upstream divergences observed, the
skips grouped by reason, and the decisions the rules rest on. It stays readable in a browser or a terminal: prose
wrapped at `WIDTH` columns, at most `MAX_FAILURES` failures in full and a bounded list per skip reason; every detail
is in report.html and report.json."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

from draconform.claims import Claims
from draconform.reporting.records import OUTCOMES, Run, ScenarioRecord
from draconform.reporting.results import RULE_STATUSES, Results, RuleResult, feature_set, tally
from draconform.reporting.templating import environment

SYMBOL = {"passed": "✅", "failed": "❌", "error": "⚠️", "skipped": "⏭️", "upstream divergence": "🔀", "untested": "⬜",
          "not selected": "⏸️", "not run": "⏹️"}
VERDICT = {"success": "✅", "partial": "🟡", "failure": "❌", "incomplete": "⏹️", "not claimed": "⚪"}
DECISION_MARK = "⚖️"
WIDTH = 110  # columns of wrapped prose
MAX_FAILURES = 40  # failures shown in full; the rest are named in one line each
MAX_MESSAGE_LINES = 25  # lines of one failure's message
MAX_PER_REASON = 8  # scenarios named under one skip reason
MAX_DIVERGENCE_LINES = 8  # lines of a known upstream divergence's failure text


def cell(text: str) -> str:
    """Text fit for one table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def wrap(text: str, indent: str = "", first: str | None = None) -> str:
    """Prose wrapped at WIDTH columns; `first` prefixes the first line (a list bullet), `indent` the others."""
    return textwrap.fill(" ".join(text.split()), WIDTH, initial_indent=indent if first is None else first,
                         subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def clip(text: str | None, lines: int = MAX_MESSAGE_LINES) -> str:
    """A message of at most `lines` lines, each at most 4 * WIDTH characters."""
    kept = (text or "").strip().splitlines()
    shown = [line if len(line) <= 4 * WIDTH else line[: 4 * WIDTH] + " …" for line in kept[:lines]]
    if len(kept) > lines:
        shown.append(f"… {len(kept) - lines} more lines in report.html and report.json")
    return "\n".join(shown)


def implementation_line(claims: Claims) -> str:
    """Who the report is about, in one line (every human-readable format shows it)."""
    impl = claims.implementation
    name = " / ".join(part for part in (impl.organization, impl.project) if part) or "unnamed implementation"
    parts = [name + (f" {impl.version}" if impl.version else ""), f"Kubernetes {impl.kubernetes_version}"]
    parts.append(f"mode {impl.mode}")
    parts += [part for part in (impl.url, ", ".join(impl.contact)) if part]
    return "; ".join(parts)


def claims_line(claims: Claims) -> str:
    profiles = ", ".join(claims.profiles) if claims.profiles is not None else "all profiles"
    features = ", ".join(claims.features) if claims.features is not None else "every feature"
    return f"Claims {profiles}; supports {features}"


def outcome_counts(scenarios: Sequence[ScenarioRecord]) -> str:
    """"2 passed, 1 failed": a rule's scenarios at a glance."""
    counts = tally((s.status for s in scenarios), OUTCOMES)
    return ", ".join(f"{counts[key]} {key}" for key in OUTCOMES if counts[key]) or "—"


def _rule_id(result: RuleResult) -> str:
    return f"{result.rule.id} {DECISION_MARK}" if result.rule.decision else result.rule.id


def _skips(run: Run) -> list[dict[str, Any]]:
    """Skipped scenarios grouped by reason, the most frequent reason first."""
    groups: dict[str, list[ScenarioRecord]] = {}
    for scenario in run.scenarios:
        if scenario.status == "skipped":
            groups.setdefault((scenario.skip_reason or "no reason given").strip(), []).append(scenario)
    return [{"reason": reason, "scenarios": members,
             "named": ", ".join(f"`{location}`" for location in list(dict.fromkeys(s.location for s in members))
                                [:MAX_PER_REASON])}
            for reason, members in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))]


def _matrix(results: Results) -> list[dict[str, Any]]:
    return [{"kep": kep, "title": results.run.kep_titles.get(kep, ""),
             "rows": [[_rule_id(r), r.rule.level, r.rule.profile, f"{SYMBOL[r.status]} {r.status}",
                       outcome_counts(r.scenarios)] for r in results.select(kep=kep)]}
            for kep in results.keps()]


def _summary_rows(results: Results) -> list[list[object]]:
    rows: list[list[object]] = []
    for kep in results.keps():
        title = results.run.kep_titles.get(kep, "")
        for index, profile in enumerate(results.profiles(kep)):
            counts = results.rule_counts(kep=kep, profile=profile)
            name = f"{kep} {title}".strip() if index == 0 else ""
            rows.append([cell(name), profile, *(counts[key] for key in (*RULE_STATUSES, "total"))])
    counts = results.rule_counts()
    rows.append(["**All**", "", *(counts[key] for key in (*RULE_STATUSES, "total"))])
    return rows


def table(header: Sequence[str], rows: Iterable[Iterable[object]], numeric_from: int) -> str:
    def row(cells: Iterable[object]) -> str:
        return "| " + " | ".join(str(c) for c in cells) + " |"

    align = ["---" if i < numeric_from else "---:" for i in range(len(header))]
    return "\n".join([row(header), row(align), *(row(r) for r in rows)])


def render_markdown(run: Run) -> str:
    results = Results.of(run)
    broken = [s for s in run.scenarios if s.status in ("failed", "error")]
    text = environment().get_template("report.md.j2").render(
        run=run,
        info=run.info,
        results=results,
        implementation=implementation_line(run.info.claims),
        claims=claims_line(run.info.claims),
        verdicts=results.verdicts(),
        summary_header=["KEP", "Profile", *(status.capitalize() for status in RULE_STATUSES), "Rules"],
        summary_rows=_summary_rows(results),
        matrix=_matrix(results),
        untested=[r for r in results.rules if r.status == "untested"],
        broken=broken[:MAX_FAILURES],
        more_broken=broken[MAX_FAILURES:],
        skips=_skips(run),
        divergences=results.divergences(),
        divergence_lines=MAX_DIVERGENCE_LINES,
        decisions=[r.rule for r in results.rules if r.rule.decision],
        symbol=SYMBOL,
        verdict_symbol=VERDICT,
        decision_mark=DECISION_MARK,
        max_per_reason=MAX_PER_REASON,
        feature_set=feature_set,
        table=table,
        wrap=wrap,
        clip=clip,
        cell=cell,
        rule_id=_rule_id,
    )
    return text.rstrip("\n") + "\n"
