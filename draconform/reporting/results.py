"""From scenario outcomes to rule verdicts: the one place that decides a rule's status and counts
outcomes, so that every report format agrees."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from draconform.catalogue import Rule
from draconform.reporting.records import OUTCOMES, Outcome, Run, ScenarioRecord

RuleStatus = Literal["passed", "failed", "error", "skipped", "untested", "not selected"]
# "not selected": a narrowed run left out every scenario of the rule (it has some, elsewhere).
RULE_STATUSES: tuple[RuleStatus, ...] = (*OUTCOMES, "untested", "not selected")
# A profile's verdict rests on its MUST rules; SHOULD and MAY results are reported beside it.
MUST_LEVELS = frozenset({"MUST", "MUST NOT"})
Verdict = Literal["success", "partial", "failure", "not claimed"]
_PRECEDENCE: tuple[RuleStatus, ...] = ("failed", "error", "passed", "skipped")


def rule_status(outcomes: Iterable[Outcome]) -> RuleStatus:
    """A rule fails if any of its scenarios failed; else it is in error if any errored; it passes if
    at least one passed and the rest passed or were skipped; it is untested with no scenario."""
    seen = set(outcomes)
    for status in _PRECEDENCE:
        if status in seen:
            return status
    return "untested"


def _status(rule: Rule, scenarios: Iterable[ScenarioRecord], run: Run) -> RuleStatus:
    status = rule_status(s.status for s in scenarios)
    return "not selected" if status == "untested" and rule.id in run.not_selected else status


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
                RuleResult(rule, _status(rule, covering.get(rule.id, ()), run), tuple(covering.get(rule.id, ())))
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

    def verdicts(self) -> list[ProfileVerdict]:
        return [ProfileVerdict.of(self, profile) for profile in self.profiles()]

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


@dataclass(frozen=True)
class ProfileVerdict:
    """Gateway API style: `success` when every MUST rule of a claimed profile passed, `failure` when
    any failed, `partial` otherwise (some errored, were skipped or are untested)."""

    profile: str
    verdict: Verdict
    must: dict[str, int]  # rule counts of the MUST / MUST NOT rules
    optional: dict[str, int]  # rule counts of the SHOULD / SHOULD NOT / MAY rules
    failed_rules: tuple[str, ...]  # MUST rules that failed
    summary: str  # one sentence for people

    @classmethod
    def of(cls, results: Results, profile: str) -> ProfileVerdict:
        rules = results.select(profile=profile)
        must = [r for r in rules if r.rule.level in MUST_LEVELS]
        must_counts = tally((r.status for r in must), RULE_STATUSES)
        optional = tally((r.status for r in rules if r.rule.level not in MUST_LEVELS), RULE_STATUSES)
        failed = tuple(r.rule.id for r in must if r.status == "failed")
        verdict: Verdict
        if not results.run.info.claims.claims_profile(profile):
            verdict = "not claimed"
        elif failed:
            verdict = "failure"
        elif must_counts["passed"] == must_counts["total"]:
            verdict = "success"
        else:
            verdict = "partial"
        summary = _sentence(profile, verdict, must_counts, optional, failed)
        return cls(profile, verdict, must_counts, optional, failed, summary)


def _sentence(
    profile: str, verdict: Verdict, must: dict[str, int], optional: dict[str, int], failed: tuple[str, ...]
) -> str:
    if verdict == "not claimed":
        total = must["total"] + optional["total"]
        return f"Profile {profile} is not claimed by this run; its {total} rules were not judged."
    if verdict == "success":
        text = f"Profile {profile} conforms: all {must['total']} MUST rules passed"
    else:
        text = f"Profile {profile} {'does not conform' if failed else 'is partly verified'}: "
        text += f"{must['passed']} of {must['total']} MUST rules passed"
        others = [f"{must[key]} {key}" for key in RULE_STATUSES if key != "passed" and must[key]]
        text += f" ({', '.join(others)}" + (f": {', '.join(failed)}" if failed else "") + ")"
    if optional["total"]:
        text += f"; {optional['passed']} of {optional['total']} SHOULD/MAY rules passed"
    return text + "."
