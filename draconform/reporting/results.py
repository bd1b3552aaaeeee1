"""From scenario outcomes to rule verdicts: the one place that decides a rule's status and counts
outcomes, so that every report format agrees."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from draconform.catalogue import Rule
from draconform.reporting.records import OUTCOMES, Outcome, Run, ScenarioRecord

RuleStatus = Literal["passed", "failed", "error", "skipped", "untested"]
RULE_STATUSES: tuple[RuleStatus, ...] = (*OUTCOMES, "untested")
_PRECEDENCE: tuple[RuleStatus, ...] = ("failed", "error", "passed", "skipped")


def rule_status(outcomes: Iterable[Outcome]) -> RuleStatus:
    """A rule fails if any of its scenarios failed; else it is in error if any errored; it passes if
    at least one passed and the rest passed or were skipped; it is untested with no scenario."""
    seen = set(outcomes)
    for status in _PRECEDENCE:
        if status in seen:
            return status
    return "untested"


def tally(statuses: Iterable[str], keys: Iterable[str]) -> dict[str, int]:
    """Counts for every key (zeros included, so reports always have the same shape) and a total."""
    counts = Counter(statuses)
    return {key: counts[key] for key in keys} | {"total": sum(counts.values())}


@dataclass(frozen=True)
class RuleResult:
    rule: Rule
    status: RuleStatus
    scenarios: tuple[ScenarioRecord, ...]


@dataclass(frozen=True)
class Results:
    """A run's rules with their verdicts, in catalogue ID order."""

    run: Run
    rules: tuple[RuleResult, ...]

    @classmethod
    def of(cls, run: Run) -> Results:
        covering: dict[str, list[ScenarioRecord]] = {}
        for scenario in run.scenarios:
            for rule_id in scenario.rules:
                covering.setdefault(rule_id, []).append(scenario)
        return cls(
            run,
            tuple(
                RuleResult(
                    rule, rule_status(s.status for s in covering.get(rule.id, ())), tuple(covering.get(rule.id, ()))
                )
                for rule in run.rules
            ),
        )

    def scenario_counts(self) -> dict[str, int]:
        return tally((s.status for s in self.run.scenarios), OUTCOMES)

    def select(self, kep: str | None = None, profile: str | None = None) -> list[RuleResult]:
        return [
            result
            for result in self.rules
            if (kep is None or result.rule.kep == kep) and (profile is None or result.rule.profile == profile)
        ]

    def rule_counts(self, kep: str | None = None, profile: str | None = None) -> dict[str, int]:
        return tally((r.status for r in self.select(kep, profile)), RULE_STATUSES)

    def keps(self) -> list[str]:
        return sorted({result.rule.kep for result in self.rules})

    def profiles(self, kep: str | None = None) -> list[str]:
        return sorted({result.rule.profile for result in self.select(kep)})

    def summary_line(self) -> str:
        """One line for a terminal: non-zero counts only."""
        scenarios, rules = self.scenario_counts(), self.rule_counts()
        line = f"{_phrase(scenarios, OUTCOMES, 'scenario')}; {_phrase(rules, RULE_STATUSES, 'rule')}"
        if self.run.errors:
            line += f"; {len(self.run.errors)} harness error{'s' * (len(self.run.errors) != 1)}"
        return line


def _phrase(counts: dict[str, int], keys: Iterable[str], noun: str) -> str:
    parts = ", ".join(f"{counts[key]} {key}" for key in keys if counts[key])
    plural = "s" * (counts["total"] != 1)
    return f"{counts['total']} {noun}{plural}" + (f" ({parts})" if parts else "")
