"""`report.json`: the machine-readable conformance report, described by
`schemas/harness/report.schema.json`. Timings appear only in `duration_s` fields and in `run`, so two
runs with the same outcomes differ nowhere else (serial or parallel alike)."""

from __future__ import annotations

import json
from typing import Any

from draconform.catalogue import Divergence
from draconform.claims import Claims
from draconform.reporting.records import Run, ScenarioRecord
from draconform.reporting.results import ObservedDivergence, ProfileVerdict, Results, RuleResult

SCHEMA_ID = "https://draconform.dev/schemas/harness/report.schema.json"
VERSION = 4  # 4: the "upstream divergence" outcome and rule status, upstream_divergences (3: run.interrupted, the
# "not run" status, core and features per profile verdict)


def _present(**fields: Any) -> dict[str, Any]:
    """Drop absent optional fields, so that consumers test for a key rather than for null."""
    return {key: value for key, value in fields.items() if value is not None}


def scenario_entry(scenario: ScenarioRecord) -> dict[str, Any]:
    step = scenario.failing_step
    return _present(
        name=scenario.name,
        feature=scenario.feature,
        feature_file=scenario.feature_file,
        line=scenario.line,
        rule=scenario.rule,
        example=dict(scenario.example) if scenario.example is not None else None,
        rules=list(scenario.rules),
        tags=list(scenario.tags),
        status=scenario.status,
        duration_s=scenario.duration_s,
        failing_step={"keyword": step.keyword, "text": step.text, "line": step.line} if step else None,
        message=scenario.message,
        skip_reason=scenario.skip_reason,
        upstream_divergences=list(scenario.divergences) or None,
    )


def divergence_entry(divergence: Divergence) -> dict[str, Any]:
    return {"id": divergence.id, "releases": divergence.releases, "upstream": divergence.upstream,
            "source": divergence.source}


def observed_entry(observed: ObservedDivergence) -> dict[str, Any]:
    """A known upstream divergence the run saw, with the failure text of each scenario that failed as it."""
    return divergence_entry(observed.divergence) | {
        "rule": observed.rule.id,
        "scenarios": [
            _present(name=s.name, feature_file=s.feature_file, line=s.line, message=s.message,
                     failing_step=({"keyword": step.keyword, "text": step.text, "line": step.line}
                                   if (step := s.failing_step) else None))
            for s in observed.scenarios
        ],
    }


def rule_entry(result: RuleResult, claims: Claims) -> dict[str, Any]:
    rule = result.rule
    return _present(
        id=rule.id,
        kep=rule.kep,
        level=rule.level,
        profile=rule.profile,
        section=rule.section,
        text=rule.text,
        gates=list(rule.gates),
        status=result.status,
        decision=rule.decision,
        upstream=rule.upstream,
        upstream_divergences=[divergence_entry(d) for d in rule.divergences] or None,
        untested_reason=rule.untested_reason,
        not_claimed=claims.exclusion(rule),
        scenarios=[scenario_entry(scenario) for scenario in result.scenarios],
    )


def implementation_entry(claims: Claims) -> dict[str, Any]:
    impl = claims.implementation
    return _present(
        organization=impl.organization,
        project=impl.project,
        version=impl.version,
        url=impl.url,
        contact=list(impl.contact),
        kubernetes_version=impl.kubernetes_version,
        mode=impl.mode,
    )


def verdict_entry(verdict: ProfileVerdict) -> dict[str, Any]:
    return {
        "profile": verdict.profile,
        "verdict": verdict.verdict,
        "summary": verdict.summary,
        "conformant_for": ["core", *verdict.conformant_for],
        "must": verdict.must,
        "should_may": verdict.optional,
        "failed_rules": list(verdict.failed_rules),
        "core": verdict.core,
        "features": [{"feature": f.feature, "claimed": f.claimed, "must": f.must} for f in verdict.features],
    }


def report_data(run: Run) -> dict[str, Any]:
    results = Results.of(run)
    info = run.info
    return {
        "$schema": SCHEMA_ID,
        "version": VERSION,
        "run": {
            "name": info.name,
            "sut": info.sut,
            "started": info.started.isoformat() if info.started else None,
            "duration_s": info.duration_s,
            "workers": info.workers,
            "selection": list(info.selection),
            "command": info.claims.command,
            "interrupted": ({"signal": info.interruption.signal, "not_run": info.interruption.not_run,
                             "selected": info.interruption.selected} if info.interruption else None),
        },
        "implementation": implementation_entry(info.claims),
        "claims": {
            "profiles": list(info.claims.profiles) if info.claims.profiles is not None else None,
            "features": list(info.claims.features) if info.claims.features is not None else None,
        },
        "conformance": [verdict_entry(verdict) for verdict in results.verdicts()],
        "summary": {
            "scenarios": results.scenario_counts(),
            "rules": results.rule_counts(),
            "harness_errors": len(run.errors),
        },
        "profiles": {profile: results.rule_counts(profile=profile) for profile in results.profiles()},
        "keps": [
            {
                "kep": kep,
                "title": run.kep_titles.get(kep, ""),
                "rules": results.rule_counts(kep=kep),
                "profiles": {p: results.rule_counts(kep=kep, profile=p) for p in results.profiles(kep)},
            }
            for kep in results.keps()
        ],
        "upstream_divergences": [observed_entry(observed) for observed in results.divergences()],
        "rules": [rule_entry(result, info.claims) for result in results.rules],
        "scenarios": [scenario_entry(scenario) for scenario in run.scenarios],
        "errors": [{"where": error.where, "message": error.message} for error in run.errors],
    }


def render_json(run: Run) -> str:
    return json.dumps(report_data(run), indent=2, ensure_ascii=False) + "\n"
