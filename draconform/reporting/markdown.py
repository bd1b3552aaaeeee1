"""`report.md` for people: a per-KEP summary, the traceability matrix rule -> scenarios -> outcome,
the untested rules with the reason they are, and every failure, error and skip with its message."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from draconform.claims import Claims
from draconform.reporting.records import Run, ScenarioRecord
from draconform.reporting.results import RULE_STATUSES, Results, RuleResult

_SYMBOL = {"passed": "✅", "failed": "❌", "error": "⚠️", "skipped": "⏭️", "untested": "⬜", "not selected": "⏸️"}
_VERDICT = {"success": "✅", "partial": "🟡", "failure": "❌", "not claimed": "⚪"}
DECISION_MARK = "⚖️"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""


def _row(cells: Iterable[object]) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def _table(header: Sequence[str], rows: Iterable[Iterable[object]], numeric_from: int) -> list[str]:
    align = ["---" if i < numeric_from else "---:" for i in range(len(header))]
    return [_row(header), _row(align), *(_row(row) for row in rows)]


def _status(status: str) -> str:
    return f"{_SYMBOL[status]} {status}"


def _scenario_line(scenario: ScenarioRecord) -> str:
    text = f"{_SYMBOL[scenario.status]} `{scenario.location}` {scenario.name}"
    detail = scenario.skip_reason if scenario.status == "skipped" else scenario.message
    return text + (f": {_first_line(detail)}" if detail else "")


def _header(results: Results) -> list[str]:
    info = results.run.info
    workers = f"{info.workers} workers" if info.workers else "serial"
    lines = [
        f"# DRA conformance report: {info.name}",
        "",
        f"- Implementation: {implementation_line(info.claims)}",
        f"- System under test: `{info.sut or 'not configured'}`",
        (f"- Started {info.started.isoformat(timespec='seconds')}, took {info.duration_s:.1f} s, {workers}"
         if info.started else f"- Run with {workers}; timings are in `timings.json` beside this report"),
    ]
    if info.selection:
        paths = ", ".join(f"`{path}`" for path in info.selection)
        lines.append(f"- Narrowed to {paths}: only the KEPs its scenarios cite are accounted for")
    lines.append(f"- {results.summary_line()}")
    return lines


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


def _conformance(results: Results) -> list[str]:
    claims = results.run.info.claims
    lines = ["## Conformance by profile", "", f"{claims_line(claims)}.", ""]
    rows = [
        [f"**{v.profile}**", f"{_VERDICT[v.verdict]} {v.verdict}", _cell(v.summary),
         f"{v.must['passed']}/{v.must['total']}", f"{v.optional['passed']}/{v.optional['total']}"]
        for v in results.verdicts()
    ]  # fmt: skip
    header = ["Profile", "Verdict", "Summary", "MUST passed", "SHOULD/MAY passed"]
    return lines + _table(header, rows, numeric_from=3)


def _summary(results: Results) -> list[str]:
    rows = []
    for kep in results.keps():
        title = results.run.kep_titles.get(kep, "")
        for index, profile in enumerate(results.profiles(kep)):
            counts = results.rule_counts(kep=kep, profile=profile)
            name = f"{kep} {title}".strip() if index == 0 else ""
            rows.append([_cell(name), profile, *(counts[key] for key in (*RULE_STATUSES, "total"))])
    counts = results.rule_counts()
    rows.append(["**All**", "", *(counts[key] for key in (*RULE_STATUSES, "total"))])
    header = ["KEP", "Profile", *(status.capitalize() for status in RULE_STATUSES), "Rules"]
    return ["## Rules by KEP and profile", "", *_table(header, rows, numeric_from=2)]


def _rule_id(result: RuleResult) -> str:
    return f"{result.rule.id} {DECISION_MARK}" if result.rule.decision else result.rule.id


def _matrix(results: Results) -> list[str]:
    lines = ["## Traceability"]
    if any(result.rule.decision for result in results.rules):
        lines += ["", f"{DECISION_MARK} marks a rule that rests on a project decision (listed at the end)."]
    for kep in results.keps():
        rows = [
            [
                _rule_id(result),
                result.rule.level,
                result.rule.profile,
                _status(result.status),
                "<br>".join(_cell(_scenario_line(s)) for s in result.scenarios) or "—",
            ]
            for result in results.select(kep=kep)
        ]
        title = results.run.kep_titles.get(kep)
        lines += ["", f"### {kep}" + (f": {title}" if title else ""), ""]
        lines += _table(["Rule", "Level", "Profile", "Status", "Scenarios"], rows, numeric_from=5)
    return lines


def _untested(results: Results) -> list[str]:
    untested = [r for r in results.rules if r.status == "untested"]
    if not untested:
        return []
    lines = ["## Untested rules", ""]
    for result in untested:
        rule = result.rule
        line = f"- **{_rule_id(result)}** ({rule.level}, {rule.section}): {rule.text}"
        lines.append(line + (f" *Why untested:* {rule.untested_reason}" if rule.untested_reason else ""))
    return lines


def _problems(run: Run) -> list[str]:
    broken = [s for s in run.scenarios if s.status in ("failed", "error")]
    lines: list[str] = []
    if broken:
        lines += ["## Failures and errors", ""]
        for scenario in broken:
            step = scenario.failing_step
            where = f"at `{step.keyword} {step.text}` (line {step.line})" if step else "before any step ran"
            lines += [
                f"### {_SYMBOL[scenario.status]} {scenario.status}: `{scenario.location}` {scenario.name}",
                "",
                f"Rules: {', '.join(scenario.rules) or 'none'}; {where}.",
                "",
                "```",
                (scenario.message or "").strip(),
                "```",
                "",
            ]
    skipped = [s for s in run.scenarios if s.status == "skipped"]
    if skipped:
        lines += ["## Skipped scenarios", "", *(f"- {_scenario_line(s)}" for s in skipped), ""]
    if run.errors:
        lines += [
            "## Harness errors",
            "",
            *(f"- `{e.where}`: {'; '.join(e.message.splitlines())}" for e in run.errors),
            "",
        ]
    return lines


def _decisions(results: Results) -> list[str]:
    resting = [r.rule for r in results.rules if r.rule.decision]
    if not resting:
        return []
    return ["## Rules resting on a decision", "", *(f"- **{rule.id}**: {rule.decision}" for rule in resting)]


def render_markdown(run: Run) -> str:
    results = Results.of(run)
    sections = [
        _header(results),
        _conformance(results),
        _summary(results),
        _matrix(results),
        _untested(results),
        _problems(run),
        _decisions(results),
    ]
    return "\n\n".join("\n".join(section).rstrip("\n") for section in sections if section) + "\n"
