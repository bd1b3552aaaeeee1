"""The figures of a mutation run, per KEP: known-bad variants killed (the kill rate) and conforming variants
passed (every one must pass: a failure is a false failure of the suite), as a text table for people and
JSON for tools."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from draconform.mutation.runner import BROKEN, HUNG, KILLED, SURVIVED, Verdict
from draconform.mutation.variant import CONFORMING


@dataclass(frozen=True)
class KepScore:
    kep: str
    variants: int  # known-bad ones
    killed: int
    survived: tuple[str, ...]  # known-bad variants the suite passed
    broken: tuple[str, ...]  # runs of either kind that wrote no report
    thin: tuple[str, ...]  # killed by exactly one scenario (meaningful with --every-failure)
    conforming: int = 0
    passed: int = 0
    false_failures: tuple[str, ...] = ()  # conforming variants the suite failed (or that hung)

    @property
    def kill_rate(self) -> float:
        return self.killed / self.variants if self.variants else 1.0

    @property
    def all_conforming_pass(self) -> bool:
        return self.passed == self.conforming


def _score(kep: str, group: Sequence[Verdict]) -> KepScore:
    bad = [v for v in group if v.variant.kind != CONFORMING]
    good = [v for v in group if v.variant.kind == CONFORMING]
    return KepScore(
        kep, len(bad), sum(v.status in (KILLED, HUNG) for v in bad),
        tuple(v.variant.name for v in bad if v.status == SURVIVED),
        tuple(v.variant.name for v in group if v.status == BROKEN),
        tuple(v.variant.name for v in bad if v.status == KILLED and len(v.killers) == 1),
        len(good), sum(v.status == SURVIVED for v in good),
        tuple(v.variant.name for v in good if v.status in (KILLED, HUNG)),
    )


def scores(verdicts: Sequence[Verdict]) -> list[KepScore]:
    by_kep: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        by_kep.setdefault(verdict.kep, []).append(verdict)
    return [_score(kep, group) for kep, group in sorted(by_kep.items())]


def total(kep_scores: Sequence[KepScore]) -> KepScore:
    return KepScore(
        "total", sum(s.variants for s in kep_scores), sum(s.killed for s in kep_scores),
        tuple(n for s in kep_scores for n in s.survived), tuple(n for s in kep_scores for n in s.broken),
        tuple(n for s in kep_scores for n in s.thin), sum(s.conforming for s in kep_scores),
        sum(s.passed for s in kep_scores), tuple(n for s in kep_scores for n in s.false_failures),
    )  # fmt: skip


def text_table(kep_scores: Sequence[KepScore]) -> str:
    rows = [*kep_scores, total(kep_scores)]
    width = max(10, *(len(row.kep) for row in rows))  # KEP-3063-CLASSIC is longer than the rest
    lines = [f"{'KEP':<{width}} {'known-bad':>9} {'killed':>7} {'kill rate':>9} {'conforming':>10} {'passed':>7}  "
             "survived (known-bad) / FALSE FAILURES (conforming)",
             f"{'-' * width} {'-' * 9} {'-' * 7} {'-' * 9} {'-' * 10} {'-' * 7}  {'-' * 8}"]
    for row in rows:
        notes = [", ".join(row.survived)] if row.survived else []
        if row.false_failures:
            notes.append(f"FALSE FAILURES: {', '.join(row.false_failures)}")
        if row.broken:
            notes.append(f"broken runs: {', '.join(row.broken)}")
        rate = f"{row.kill_rate:.1%}" if row.variants else "-"
        lines.append(f"{row.kep:<{width}} {row.variants:>9} {row.killed:>7} {rate:>9} {row.conforming:>10} "
                     f"{row.passed:>7}  {'; '.join(notes) or '-'}")
    return "\n".join(lines)


def to_json(verdicts: Sequence[Verdict], every_failure: bool) -> dict[str, object]:
    """With `every_failure` (each run went to the end) also the variants only one scenario kills."""
    kep_scores = scores(verdicts)
    keps: list[dict[str, object]] = []
    for s in [*kep_scores, total(kep_scores)]:
        entry: dict[str, object] = {"kep": s.kep, "variants": s.variants, "killed": s.killed,
                                    "kill_rate": round(s.kill_rate, 4), "survived": list(s.survived),
                                    "broken": list(s.broken), "conforming": s.conforming,
                                    "conforming_passed": s.passed, "false_failures": list(s.false_failures)}
        if every_failure:
            entry["killed_by_one_scenario"] = list(s.thin)
        keps.append(entry)
    return {"every_failure": every_failure, "keps": keps, "variants": [v.to_json() for v in verdicts]}
