"""From scenario outcomes to rule verdicts: the one place that decides a rule's status and counts
outcomes, so that every report format agrees."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from draconform.catalogue import Divergence, Rule
from draconform.claims import IMPLIED_GATES, Claims
from draconform.reporting.records import DIVERGED, OUTCOMES, Outcome, Run, ScenarioRecord

RuleStatus = Literal["passed", "failed", "error", "skipped", "upstream divergence", "untested", "not selected",
                     "not run"]
# "upstream divergence": every failed scenario of the rule is a known upstream divergence (none failed otherwise).
# "not selected": a narrowed run left out every scenario of the rule (it has some, elsewhere).
# "not run": the run was interrupted before any selected scenario of the rule ran.
RULE_STATUSES: tuple[RuleStatus, ...] = (*OUTCOMES, "untested", "not selected", "not run")
# Judged MUST rules that hold for a profile's success: passed, or differing only as upstream Kubernetes does.
HOLDING: tuple[RuleStatus, ...] = ("passed", DIVERGED)
# A profile's verdict rests on its MUST rules; SHOULD and MAY results are reported beside it.
MUST_LEVELS = frozenset({"MUST", "MUST NOT"})
# incomplete: the run was interrupted and no MUST rule failed before it stopped: no verdict either way.
Verdict = Literal["success", "partial", "failure", "incomplete", "not claimed"]
CORE = "core"  # the name of a profile's rules that need no feature beyond DRA itself


def claims_feature(claims: Claims, feature: str) -> bool:
    """Whether the run claims an extended feature: every one when it names none."""
    return claims.features is None or feature in claims.features


def features_of(rule: Rule) -> tuple[str, ...]:
    """The extended features (feature gates) a rule needs beyond DRA itself; none for a core rule."""
    return tuple(gate for gate in rule.gates if gate not in IMPLIED_GATES)
_PRECEDENCE: tuple[RuleStatus, ...] = ("failed", "error", DIVERGED, "passed", "skipped")


def rule_status(outcomes: Iterable[Outcome]) -> RuleStatus:
    """A rule fails if any of its scenarios failed; else it is in error if any errored; else it is an upstream
    divergence if any failed as upstream Kubernetes does; it passes if at least one passed and the rest passed or
    were skipped; it is untested with no scenario."""
    seen = set(outcomes)
    for status in _PRECEDENCE:
        if status in seen:
            return status
    return "untested"


def _status(rule: Rule, scenarios: Iterable[ScenarioRecord], run: Run) -> RuleStatus:
    status = rule_status(s.status for s in scenarios)
    if status == "untested" and rule.id in run.not_run:
        return "not run"
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
class ObservedDivergence:
    """A known upstream divergence some scenarios of the run failed as: the rule, what upstream does and in which
    releases, and those scenarios (with their failure text: that it is the divergence is not checked)."""

    rule: Rule
    divergence: Divergence
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

    def divergences(self) -> list[ObservedDivergence]:
        """Each known upstream divergence the run observed, with the scenarios that failed as it, by ID."""
        found: dict[str, list[ScenarioRecord]] = {}
        for scenario in self.run.scenarios:
            if scenario.status == DIVERGED:
                for divergence in scenario.divergences:
                    found.setdefault(divergence, []).append(scenario)
        known = {d.id: (r.rule, d) for r in self.rules for d in r.rule.divergences}
        return [ObservedDivergence(known[key][0], known[key][1], tuple(found[key]))
                for key in sorted(found) if key in known]

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
        if self.run.info.interruption is not None:
            line += f"; {self.run.info.interruption.sentence()}"
        return line


def _phrase(counts: dict[str, int], keys: Iterable[str], noun: str) -> str:
    parts = ", ".join(f"{counts[key]} {key}" for key in keys if counts[key])
    plural = "s" * (counts["total"] != 1)
    return f"{counts['total']} {noun}{plural}" + (f" ({parts})" if parts else "")


@dataclass(frozen=True)
class FeatureResult:
    """A profile's MUST rules that need one extended feature, and whether the run claims the feature."""

    feature: str
    claimed: bool
    must: dict[str, int]


@dataclass(frozen=True)
class ProfileVerdict:
    """Gateway API style, core apart from extended features: a profile's rules that need no feature beyond
    DRA are its core; a rule needing a feature gate belongs to that extended feature. The verdict rests on the
    MUST rules of core and of every feature the run claims (all, without --feature): `success` when each
    passed or failed only as upstream Kubernetes does (a known upstream divergence, named in the summary),
    `failure` when one failed, `partial` otherwise (some errored, were skipped or are untested), `incomplete`
    when the run was interrupted before it could tell. Rules of unclaimed features are listed apart and judge
    nothing."""

    profile: str
    verdict: Verdict
    must: dict[str, int]  # rule counts of the judged MUST / MUST NOT rules (core and claimed features)
    optional: dict[str, int]  # rule counts of the judged SHOULD / SHOULD NOT / MAY rules
    failed_rules: tuple[str, ...]  # judged MUST rules that failed
    summary: str  # one sentence for people
    core: dict[str, int]  # rule counts of the core MUST rules
    features: tuple[FeatureResult, ...] = ()  # per extended feature with MUST rules in the profile

    @property
    def conformant_for(self) -> tuple[str, ...]:
        """The set the verdict is about: core and these claimed features."""
        return tuple(f.feature for f in self.features if f.claimed)

    @property
    def unclaimed(self) -> tuple[str, ...]:
        return tuple(f.feature for f in self.features if not f.claimed)

    @classmethod
    def of(cls, results: Results, profile: str) -> ProfileVerdict:
        claims = results.run.info.claims
        rules = results.select(profile=profile)
        # An unclaimed profile keeps every count, so the reader still sees what it holds.
        judged = [r for r in rules if claims.exclusion(r.rule) is None or not claims.claims_profile(profile)]
        must = [r for r in judged if r.rule.level in MUST_LEVELS]
        must_counts = tally((r.status for r in must), RULE_STATUSES)
        optional = tally((r.status for r in judged if r.rule.level not in MUST_LEVELS), RULE_STATUSES)
        all_must = [r for r in rules if r.rule.level in MUST_LEVELS]
        core = tally((r.status for r in all_must if not features_of(r.rule)), RULE_STATUSES)
        features = _feature_results(claims, all_must, {r.rule.id for r in must})
        failed = tuple(r.rule.id for r in must if r.status == "failed")
        verdict = verdict_of(claims.claims_profile(profile), must_counts, results.run.info.interruption is not None)
        summary = _sentence(profile, verdict, must_counts, optional, failed, features, results.run)
        return cls(profile, verdict, must_counts, optional, failed, summary, core, features)


def _feature_results(claims: Claims, all_must: list[RuleResult], judged_ids: set[str]) -> tuple[FeatureResult, ...]:
    """Per extended feature of the profile's MUST rules: whether the run claims it, and its rule counts."""
    results = []
    for name in sorted({f for r in all_must for f in features_of(r.rule)}):
        claimed = claims_feature(claims, name)
        # A claimed feature counts its judged rules (a rule needing an unclaimed feature too is not judged).
        counted = [r for r in all_must if name in features_of(r.rule) and (r.rule.id in judged_ids or not claimed)]
        results.append(FeatureResult(name, claimed, tally((r.status for r in counted), RULE_STATUSES)))
    return tuple(results)


def verdict_of(claimed: bool, must: dict[str, int], interrupted: bool) -> Verdict:
    """A profile's verdict from the counts of its judged MUST rules alone (`report verify` re-derives it)."""
    if not claimed:
        return "not claimed"
    if must["failed"]:
        return "failure"
    if interrupted:
        return "incomplete"
    return "success" if sum(must[key] for key in HOLDING) == must["total"] else "partial"


def feature_set(features: Iterable[str]) -> str:
    """"core and A, B" (or "core" alone): what a verdict is about."""
    names = list(features)
    return "core and " + ", ".join(names) if names else "core"


def _sentence(profile: str, verdict: Verdict, must: dict[str, int], optional: dict[str, int],
              failed: tuple[str, ...], features: tuple[FeatureResult, ...], run: Run) -> str:
    if verdict == "not claimed":
        total = must["total"] + optional["total"]
        return f"Profile {profile} is not claimed by this run; its {total} rules were not judged."
    # Which set the verdict is about, where the profile has extended features to tell apart.
    about = f" for {feature_set(f.feature for f in features if f.claimed)}" if features else ""
    if verdict == "incomplete":
        stop = run.info.interruption
        text = (f"Profile {profile} is not judged: the run was interrupted by {stop.signal if stop else 'a signal'}"
                f" with {stop.not_run if stop else 'some'} scenarios not run; "
                f"{must['passed']} of {must['total']} MUST rules{about} passed before it stopped, none failed")
    elif verdict == "success":
        text = f"Profile {profile} conforms{about}: all {must['total']} MUST rules passed"
        if must[DIVERGED]:
            text = (f"Profile {profile} conforms{about} but for upstream Kubernetes' own differences: "
                    f"{must['passed']} of {must['total']} MUST rules passed, {must[DIVERGED]} failed only as "
                    "upstream does (known upstream divergences)")
    else:
        text = f"Profile {profile} {'does not conform' if failed else 'is partly verified'}{about}: "
        text += f"{must['passed']} of {must['total']} MUST rules passed"
        others = [f"{must[key]} {key}" for key in RULE_STATUSES if key != "passed" and must[key]]
        text += f" ({', '.join(others)}" + (f": {', '.join(failed)}" if failed else "") + ")"
    if optional["total"]:
        text += f"; {optional['passed']} of {optional['total']} SHOULD/MAY rules passed"
    unclaimed = [f.feature for f in features if not f.claimed]
    if unclaimed:
        text += f"; features not claimed, not judged: {', '.join(unclaimed)}"
    return text + "."
