"""Reports side by side: `diff` (what changed between two runs, and whether anything got worse) and
`matrix` (rules x implementations, in the manner of Autobahn's matrix). Both read `report.json`,
version 1 to 4; a version 1 report has no profile verdicts, so the diff compares those only when
both reports carry them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from draconform.reporting.templating import environment

READABLE_VERSIONS = (1, 2, 3, 4)
BROKEN = frozenset({"failed", "error"})
SYMBOL = {"passed": "✅", "failed": "❌", "error": "⚠️", "skipped": "⏭️", "upstream divergence": "🔀", "untested": "⬜",
          "not selected": "⏸️", "not run": "⏹️", None: "·"}


class ReportError(ValueError):
    """A path that holds no readable report.json."""


@dataclass(frozen=True)
class Report:
    path: Path
    data: dict[str, Any]

    @property
    def label(self) -> str:
        return str(self.data["run"]["name"])

    def rules(self) -> dict[str, dict[str, Any]]:
        return {rule["id"]: rule for rule in self.data["rules"]}

    def scenarios(self) -> dict[tuple[str, str], str]:
        """Status by (feature file, name): a scenario keeps its identity when lines move."""
        return {(s["feature_file"], s["name"]): s["status"] for s in self.data["scenarios"]}

    def verdicts(self) -> dict[str, str] | None:
        entries = self.data.get("conformance")
        return None if entries is None else {entry["profile"]: entry["verdict"] for entry in entries}


def load_report(path: Path) -> Report:
    """A report.json, or the run folder holding one."""
    from draconform.validation.inputs import InputError, read_documents

    file = path / "report.json" if path.is_dir() else path
    try:  # reports of other implementations are compared too: read them as carefully as any input
        documents = read_documents(file)
    except InputError as exc:
        raise ReportError(f"cannot read a report: {exc}") from exc
    data = documents[0].data if len(documents) == 1 else None
    if not isinstance(data, dict) or data.get("version") not in READABLE_VERSIONS:
        found = data.get("version") if isinstance(data, dict) else None
        raise ReportError(f"{file}: version: expected a draconform report.json of version 1 to 4, found {found!r}")
    return Report(file, data)


# --- diff -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    name: str  # a rule ID, "file: scenario name", or a profile
    old: str | None  # None: not in the old report
    new: str | None  # None: not in the new report


@dataclass(frozen=True)
class Diff:
    old: Report
    new: Report
    rules: list[Change] = field(default_factory=list)  # every rule whose status changed, or came or went
    scenarios: list[Change] = field(default_factory=list)
    verdicts: list[Change] = field(default_factory=list)

    @staticmethod
    def _worse(change: Change) -> bool:
        return change.new in BROKEN and change.old not in BROKEN

    @property
    def regressions(self) -> list[Change]:
        """Rules and scenarios now failed or errored that were not (including ones that are new)."""
        return [c for c in (*self.rules, *self.scenarios) if self._worse(c)]

    @property
    def fixes(self) -> list[Change]:
        return [c for c in (*self.rules, *self.scenarios) if c.old in BROKEN and c.new == "passed"]

    @property
    def worse_verdicts(self) -> list[Change]:
        rank = {"success": 0, "partial": 1, "incomplete": 1, "failure": 2}
        return [c for c in self.verdicts if rank.get(c.new or "", -1) > rank.get(c.old or "", -1) >= 0]

    @property
    def regressed(self) -> bool:
        return bool(self.regressions or self.worse_verdicts)


def _changes(old: dict[Any, str], new: dict[Any, str], name: Any) -> list[Change]:
    keys = sorted(set(old) | set(new))
    return [Change(name(key), old.get(key), new.get(key)) for key in keys if old.get(key) != new.get(key)]


def diff(old: Report, new: Report) -> Diff:
    old_verdicts, new_verdicts = old.verdicts(), new.verdicts()
    verdicts = [] if old_verdicts is None or new_verdicts is None else _changes(old_verdicts, new_verdicts, str)
    return Diff(
        old,
        new,
        rules=_changes(
            {k: v["status"] for k, v in old.rules().items()}, {k: v["status"] for k, v in new.rules().items()}, str
        ),
        scenarios=_changes(old.scenarios(), new.scenarios(), lambda key: f"{key[0]}: {key[1]}"),
        verdicts=verdicts,
    )


def _lines(title: str, changes: list[Change]) -> list[str]:
    if not changes:
        return []
    lines = [f"## {title} ({len(changes)})", ""]
    for change in changes:
        lines.append(f"- {change.name}: {change.old or 'absent'} → {change.new or 'absent'}")
    return [*lines, ""]


def render_diff(result: Diff) -> str:
    """The diff as Markdown: what a CI log or a pull-request comment shows."""
    rules, scenarios = result.rules, result.scenarios
    regressions = result.regressions
    lines = [
        f"# draconform report diff: {result.old.label} → {result.new.label}",
        "",
        f"{len(regressions)} regression(s), {len(result.fixes)} fix(es), "
        f"{len(result.worse_verdicts)} worse profile verdict(s).",
        "",
    ]
    lines += _lines("Profile verdicts changed", result.verdicts)
    lines += _lines("Regressions: now failed or errored", regressions)
    lines += _lines("Fixes: failed or errored before, passed now", result.fixes)
    lines += _lines("New rules", [c for c in rules if c.old is None])
    lines += _lines("Removed rules", [c for c in rules if c.new is None])
    lines += _lines("New scenarios", [c for c in scenarios if c.old is None])
    lines += _lines("Removed scenarios", [c for c in scenarios if c.new is None])
    shown = {id(c) for c in (*regressions, *result.fixes)}
    others = [c for c in (*rules, *scenarios) if c.old and c.new and id(c) not in shown]
    lines += _lines("Other status changes", others)
    if not (rules or scenarios or result.verdicts):
        lines.append("No rule, scenario or verdict changed.")
    return "\n".join(lines).rstrip("\n") + "\n"


def diff_data(result: Diff) -> dict[str, Any]:
    def entries(changes: list[Change]) -> list[dict[str, str | None]]:
        return [{"name": c.name, "old": c.old, "new": c.new} for c in changes]

    return {
        "old": str(result.old.path),
        "new": str(result.new.path),
        "regressed": result.regressed,
        "regressions": entries(result.regressions),
        "fixes": entries(result.fixes),
        "verdicts": entries(result.verdicts),
        "rules": entries(result.rules),
        "scenarios": entries(result.scenarios),
    }


# --- matrix ---------------------------------------------------------------------------------------


def _labels(reports: list[Report]) -> list[str]:
    """Column names: the run names, numbered where two runs share one."""
    labels: list[str] = []
    for report in reports:
        label, n = report.label, 2
        while label in labels:
            label, n = f"{report.label} ({n})", n + 1
        labels.append(label)
    return labels


def matrix_frame(reports: list[Report]) -> pl.DataFrame:
    """One row per rule (the union over all reports), one status column per implementation."""
    labels = _labels(reports)
    long = pl.DataFrame(
        [
            {"implementation": label, "id": rule["id"], "kep": rule["kep"], "level": rule["level"],
             "profile": rule["profile"], "status": rule["status"]}
            for label, report in zip(labels, reports, strict=True)
            for rule in report.data["rules"]
        ],
        schema={"implementation": pl.String, "id": pl.String, "kep": pl.String, "level": pl.String,
                "profile": pl.String, "status": pl.String},
    )  # fmt: skip
    rules = long.select("id", "kep", "level", "profile").unique(subset="id", keep="first")
    wide = long.pivot(on="implementation", index="id", values="status")
    return rules.join(wide, on="id", how="left").select("id", "kep", "level", "profile", *labels).sort("id")


def matrix_totals(frame: pl.DataFrame, labels: list[str]) -> dict[str, dict[str, int]]:
    """Per implementation: how many rules have each status."""
    totals: dict[str, dict[str, int]] = {}
    for label in labels:
        counts = frame.group_by(label).len()
        totals[label] = {str(row[label]): int(row["len"]) for row in counts.iter_rows(named=True) if row[label]}
    return totals


def render_matrix_markdown(reports: list[Report]) -> str:
    frame = matrix_frame(reports)
    labels = _labels(reports)
    totals = matrix_totals(frame, labels)
    lines = [
        "# DRA conformance matrix",
        "",
        " ".join(f"{symbol} {status}" for status, symbol in SYMBOL.items() if status) + " · not in that run",
        "",
        "| Rule | Level | Profile | " + " | ".join(labels) + " |",
        "|---|---|---|" + "---|" * len(labels),
    ]
    for row in frame.iter_rows(named=True):
        cells = [SYMBOL[row[label]] for label in labels]
        lines.append(f"| {row['id']} | {row['level']} | {row['profile']} | " + " | ".join(cells) + " |")
    passed = [f"{totals[label].get('passed', 0)}/{sum(totals[label].values())} passed" for label in labels]
    lines.append("| **Total** | | | " + " | ".join(passed) + " |")
    verdict_lines = ["", "## Profile verdicts", ""]
    for label, report in zip(labels, reports, strict=True):
        verdicts = report.verdicts()
        text = ", ".join(f"{p} {v}" for p, v in verdicts.items()) if verdicts else "no verdicts (version 1 report)"
        verdict_lines.append(f"- **{label}**: {text}")
    return "\n".join([*lines, *verdict_lines]) + "\n"


def render_matrix_html(reports: list[Report]) -> str:
    frame = matrix_frame(reports)
    labels = _labels(reports)
    return environment().get_template("matrix.html.j2").render(
        labels=labels,
        reports=dict(zip(labels, reports, strict=True)),
        rows=list(frame.iter_rows(named=True)),
        totals=matrix_totals(frame, labels),
        statuses=[status for status in SYMBOL if status],
    )
