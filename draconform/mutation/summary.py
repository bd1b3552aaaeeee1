"""The kill rate of a mutation run, per KEP: a text table for people and JSON for tools."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from draconform.mutation.runner import BROKEN, HUNG, KILLED, SURVIVED, Verdict


@dataclass(frozen=True)
class KepScore:
    kep: str
    variants: int
    killed: int
    survived: tuple[str, ...]  # variant names
    broken: tuple[str, ...]
    thin: tuple[str, ...]  # killed by exactly one scenario (meaningful with --every-failure)

    @property
    def kill_rate(self) -> float:
        return self.killed / self.variants if self.variants else 1.0


def scores(verdicts: Sequence[Verdict]) -> list[KepScore]:
    by_kep: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        by_kep.setdefault(verdict.kep, []).append(verdict)
    return [
        KepScore(
            kep, len(group), sum(v.status in (KILLED, HUNG) for v in group),
            tuple(v.variant.name for v in group if v.status == SURVIVED),
            tuple(v.variant.name for v in group if v.status == BROKEN),
            tuple(v.variant.name for v in group if v.status == KILLED and len(v.killers) == 1),
        )
        for kep, group in sorted(by_kep.items())
    ]


def total(kep_scores: Sequence[KepScore]) -> KepScore:
    return KepScore(
        "total", sum(s.variants for s in kep_scores), sum(s.killed for s in kep_scores),
        tuple(n for s in kep_scores for n in s.survived), tuple(n for s in kep_scores for n in s.broken),
        tuple(n for s in kep_scores for n in s.thin),
    )  # fmt: skip


def text_table(kep_scores: Sequence[KepScore]) -> str:
    rows = [*kep_scores, total(kep_scores)]
    width = max(10, *(len(row.kep) for row in rows))  # KEP-3063-CLASSIC is longer than the rest
    lines = [f"{'KEP':<{width}} {'variants':>8} {'killed':>7} {'kill rate':>9}  survived",
             f"{'-' * width} {'-' * 8} {'-' * 7} {'-' * 9}  {'-' * 8}"]
    for row in rows:
        survived = ", ".join(row.survived) or "-"
        if row.broken:
            survived += f" (broken runs: {', '.join(row.broken)})"
        lines.append(f"{row.kep:<{width}} {row.variants:>8} {row.killed:>7} {row.kill_rate:>9.1%}  {survived}")
    return "\n".join(lines)


def to_json(verdicts: Sequence[Verdict], every_failure: bool) -> dict[str, object]:
    """With `every_failure` (each run went to the end) also the variants only one scenario kills."""
    kep_scores = scores(verdicts)
    keps: list[dict[str, object]] = []
    for s in [*kep_scores, total(kep_scores)]:
        entry: dict[str, object] = {"kep": s.kep, "variants": s.variants, "killed": s.killed,
                                    "kill_rate": round(s.kill_rate, 4), "survived": list(s.survived),
                                    "broken": list(s.broken)}
        if every_failure:
            entry["killed_by_one_scenario"] = list(s.thin)
        keps.append(entry)
    return {"every_failure": every_failure, "keps": keps, "variants": [v.to_json() for v in verdicts]}
