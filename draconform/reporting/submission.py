"""The submission report: a versioned YAML document (`kind: DRAConformanceReport`, schema
`schemas/harness/conformance-report.schema.json`) an implementation attaches to a pull request under
`reports/<kubernetes-version>/<org>-<project>/`, in the manner of Gateway API's conformance reports.

It is built from the same records as every other format, and `verify` checks a copy: the schema, that
every count agrees with the rules and scenarios listed, that each profile's verdict follows from its
counts, and a SHA-256 digest over the canonical JSON of everything else, which any edit breaks.
The digest proves the document is as the tool wrote it, not who ran the tool: it is a seal against
mistakes and casual edits, not a signature."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml

from draconform.reporting.records import DIVERGED, OUTCOMES, Run, ScenarioRecord
from draconform.reporting.results import MUST_LEVELS, RULE_STATUSES, Results, tally, verdict_of
from draconform.reporting.templating import environment

API_VERSION = "draconform.dev/v1alpha1"
KIND = "DRAConformanceReport"
FILENAME = "conformance-report.yaml"
DIGEST_ALGORITHM = "sha256"


def tool_version() -> str:
    try:
        return version("draconform")
    except PackageNotFoundError:  # a checkout on sys.path without an install
        return "unknown"


def scenario_name(scenario: ScenarioRecord) -> str:
    """How the submission names a scenario: where it is and what it is called."""
    return f"{scenario.location} {scenario.name}"


def digest(document: dict[str, Any]) -> str:
    """SHA-256 over the canonical JSON of the document without its `digest` field."""
    body = {key: value for key, value in document.items() if key != "digest"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _counts(statuses: Iterable[str], keys: Iterable[str]) -> dict[str, int]:
    return dict(tally(statuses, keys))


def submission_data(run: Run) -> dict[str, Any]:
    results = Results.of(run)
    info = run.info
    impl = info.claims.implementation
    document: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"generatedBy": f"draconform {tool_version()}",
                     "date": info.started.isoformat(timespec="seconds") if info.started else None},
        "implementation": _implementation(run),
        "kubernetesVersion": impl.kubernetes_version,
        "mode": impl.mode,
        "reproduce": {"command": info.claims.command or "", "sut": info.sut or "", "selection": list(info.selection)},
        "claims": {
            "profiles": list(info.claims.profiles) if info.claims.profiles is not None else None,
            "features": list(info.claims.features) if info.claims.features is not None else None,
        },
        "summary": {
            "scenarios": results.scenario_counts(),
            "rules": results.rule_counts(),
            "harnessErrors": len(run.errors),
            "interrupted": ({"signal": info.interruption.signal, "notRun": info.interruption.not_run,
                             "selected": info.interruption.selected} if info.interruption else None),
        },
        "profiles": _profiles(run, results),
        "upstreamDivergences": [
            {"id": o.divergence.id, "rule": o.rule.id, "releases": o.divergence.releases,
             "upstream": o.divergence.upstream, "source": o.divergence.source,
             "scenarios": [scenario_name(s) for s in o.scenarios]}
            for o in results.divergences()
        ],
        "rules": _rules(run, results),
        "scenarios": [_scenario(s) for s in run.scenarios],
    }
    document["digest"] = {"algorithm": DIGEST_ALGORITHM, "value": digest(document)}
    return document


def _scenario(scenario: ScenarioRecord) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": scenario_name(scenario), "status": scenario.status, "rules": list(scenario.rules)}
    if scenario.divergences:
        entry["upstreamDivergences"] = list(scenario.divergences)
    return entry


def _implementation(run: Run) -> dict[str, Any]:
    """Who claims what was tested, without the fields they left out."""
    impl = run.info.claims.implementation
    fields = {"organization": impl.organization, "project": impl.project, "version": impl.version,
              "url": impl.url, "contact": list(impl.contact)}
    return {key: value for key, value in fields.items() if value not in (None, [])}


def _profiles(run: Run, results: Results) -> list[dict[str, Any]]:
    """Each profile's verdict with its counts and the scenarios of its rules, by outcome."""
    scenario_profiles: dict[int, set[str]] = {}  # by id(): records hold dicts and do not hash
    for result in results.rules:
        for scenario in result.scenarios:
            scenario_profiles.setdefault(id(scenario), set()).add(result.rule.profile)
    profiles = []
    for verdict in results.verdicts():
        mine = [s for s in run.scenarios if verdict.profile in scenario_profiles.get(id(s), ())]
        profiles.append(
            {
                "name": verdict.profile,
                "claimed": verdict.verdict != "not claimed",
                "result": verdict.verdict,
                "summary": verdict.summary,
                "conformantFor": ["core", *verdict.conformant_for],
                "must": verdict.must,
                "shouldMay": verdict.optional,
                "failedRules": list(verdict.failed_rules),
                "core": verdict.core,
                "features": [{"name": f.feature, "claimed": f.claimed, "must": f.must} for f in verdict.features],
                # Named, not only counted: a reader sees exactly what was shown to work.
                "passedScenarios": [scenario_name(s) for s in mine if s.status == "passed"],
                "failedScenarios": [scenario_name(s) for s in mine if s.status in ("failed", "error")],
                "skippedScenarios": [
                    {"name": scenario_name(s), "reason": s.skip_reason or ""} for s in mine if s.status == "skipped"
                ],
                "upstreamDivergenceScenarios": [scenario_name(s) for s in mine if s.status == DIVERGED],
            }
        )
    return profiles


def _rules(run: Run, results: Results) -> list[dict[str, Any]]:
    """Each rule's status, and why it was not judged where the claims left its feature out."""
    rules = []
    for r in results.rules:
        entry = {"id": r.rule.id, "profile": r.rule.profile, "level": r.rule.level, "status": r.status,
                 "notClaimed": run.info.claims.exclusion(r.rule)}
        rules.append({key: value for key, value in entry.items() if value is not None})
    return rules


def render_submission(run: Run) -> str:
    header = f"# {KIND} written by draconform; `draconform report verify` refuses an edited copy.\n"
    return header + yaml.safe_dump(submission_data(run), sort_keys=False, allow_unicode=True, width=120)


# --- the submission folder ------------------------------------------------------------------------


def submission_folder(run: Run, base: Path) -> Path:
    """`base/<kubernetes-version>/<org>-<project>/`; the implementation must name both."""
    impl = run.info.claims.implementation
    if impl.slug is None:
        raise ValueError("a submission needs the implementation's organization and project (--organization, --project)")
    return base / impl.kubernetes_version / impl.slug


def report_filename(run: Run) -> str:
    impl = run.info.claims.implementation
    return f"{impl.version or 'unversioned'}-{impl.mode}-report.yaml"


def write_submission(run: Run, base: Path) -> list[Path]:
    """Write the report YAML and a README (with the command that reproduces the run) into the
    submission folder; return both paths."""
    folder = submission_folder(run, base)
    folder.mkdir(parents=True, exist_ok=True)
    report = folder / report_filename(run)
    report.write_text(render_submission(run), encoding="utf-8")
    readme = folder / "README.md"
    data = submission_data(run)
    readme.write_text(environment().get_template("submission-readme.md.j2").render(r=data, report=report.name))
    return [report, readme]


# --- verify ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verification:
    path: Path
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


class UnreadableSubmission(ValueError):
    """The path holds no readable submission report."""


def find_report(path: Path) -> Path:
    """The report itself, or the one report YAML in a submission or run folder."""
    if path.is_file():
        return path
    if path.is_dir():
        found = sorted(path.glob("*report.yaml"))
        if len(found) == 1:
            return found[0]
        raise UnreadableSubmission(f"{path}: expected one *report.yaml in the folder, found {len(found)}")
    raise UnreadableSubmission(f"{path}: no such file or folder")


def verify(path: Path) -> Verification:
    """Every problem with the submission at `path` (empty when it is as the tool wrote it)."""
    report = find_report(path)
    from draconform.validation.inputs import InputError, problems_of, read_documents

    try:  # a submission comes from someone else: read it as carefully as any manifest
        documents = read_documents(report)
    except InputError as exc:
        raise UnreadableSubmission(f"{exc}") from exc
    if len(documents) != 1:
        return Verification(report, (f"<root>: a submission is one YAML document holding an object, found "
                                     f"{len(documents)} documents",))
    (loaded,) = documents
    document = loaded.data
    errors = problems_of(loaded, "conformance-report")
    if errors:
        return Verification(report, tuple(f"{e.field}: {e.message} (line {loaded.line_of(e.path)})" for e in errors))
    if not isinstance(document, dict):  # the schema asks for one object; this only narrows the type
        return Verification(report, ("<root>: a submission is one YAML document holding an object",))
    return Verification(report, tuple(_consistency(document)))


def incomplete(document: dict[str, Any]) -> list[str]:
    """Why a run, however faithfully reported, is no submission: it was interrupted, it was narrowed to some
    feature files, or it lost scenarios to harness errors (a feature file that did not load, a worker that
    crashed)."""
    summary = document["summary"]
    problems = []
    stop = summary["interrupted"]
    if stop is not None:
        problems.append(f"summary.interrupted: the run was interrupted by {stop['signal']} with {stop['notRun']} of "
                        f"{stop['selected']} scenarios not run; an interrupted run is no submission, run it again to "
                        "the end")
    selection = document["reproduce"]["selection"]
    if selection:
        problems.append(f"reproduce.selection: the run was narrowed to {', '.join(selection)}, so the rules of the "
                        "other feature files were never judged; a submission runs every feature file (its claimed "
                        "profiles and features choose what is judged)")
    if summary["harnessErrors"]:
        problems.append(f"summary.harnessErrors: {summary['harnessErrors']} harness error(s) kept scenarios from "
                        "running (see report.json's errors); an incomplete run is no submission")
    return problems


def _consistency(document: dict[str, Any]) -> list[str]:
    """Where the document's stated counts, verdicts, claims and digest disagree with its own listed results."""
    rules, scenarios = document["rules"], document["scenarios"]
    found = [
        _mismatch("summary.rules", document["summary"]["rules"], _counts((r["status"] for r in rules), RULE_STATUSES)),
        _mismatch("summary.scenarios", document["summary"]["scenarios"],
                  _counts((s["status"] for s in scenarios), OUTCOMES)),
    ]
    interrupted = document["summary"]["interrupted"] is not None
    for index, profile in enumerate(document["profiles"]):
        found += _profile_mismatches(f"profiles[{index}] ({profile['name']})", profile, rules, scenarios, interrupted)
    found += _divergence_mismatches(document["upstreamDivergences"], scenarios)
    problems = [problem for problem in found if problem is not None]
    claimed = document["claims"]["profiles"]
    for profile in document["profiles"]:
        if profile["claimed"] != (claimed is None or profile["name"] in claimed):
            problems.append(f"profiles ({profile['name']}): claimed is {profile['claimed']}, but claims say otherwise")
    problems += incomplete(document)
    stated = document["digest"]["value"]
    if stated != digest(document):
        problems.append(
            "digest: the document was changed after draconform wrote it (its SHA-256 no longer matches);"
            " submit the file exactly as `draconform run` wrote it"
        )
    return problems


def _profile_mismatches(where: str, profile: dict[str, Any], rules: list[dict[str, Any]],
                        scenarios: list[dict[str, Any]], interrupted: bool) -> list[str | None]:
    """A profile's counts, result and passed scenarios against the ones its listed rules and scenarios give."""
    # Judged: every rule of a claimed profile but those of unclaimed features (all of an unclaimed one).
    mine = [r for r in rules if r["profile"] == profile["name"] and (not profile["claimed"] or "notClaimed" not in r)]
    must = _counts((r["status"] for r in mine if r["level"] in MUST_LEVELS), RULE_STATUSES)
    profile_of = {r["id"]: r["profile"] for r in rules}
    passed = [s["name"] for s in scenarios
              if s["status"] == "passed" and any(profile_of.get(rule) == profile["name"] for rule in s["rules"])]
    diverged = [s["name"] for s in scenarios
                if s["status"] == DIVERGED and any(profile_of.get(rule) == profile["name"] for rule in s["rules"])]
    return [
        _mismatch(f"{where}.upstreamDivergenceScenarios", profile["upstreamDivergenceScenarios"], diverged,
                  "which are no upstream divergence"),
        _mismatch(f"{where}.must", profile["must"], must),
        _mismatch(f"{where}.shouldMay", profile["shouldMay"],
                  _counts((r["status"] for r in mine if r["level"] not in MUST_LEVELS), RULE_STATUSES)),
        _mismatch(f"{where}.result", profile["result"], verdict_of(profile["claimed"], must, interrupted)),
        _mismatch(f"{where}.passedScenarios", profile["passedScenarios"], passed),
    ]


def _divergence_mismatches(observed: list[dict[str, Any]], scenarios: list[dict[str, Any]]) -> list[str | None]:
    """A known upstream divergence must be what its scenarios say: a scenario is an upstream divergence only when it
    names one, and each listed divergence holds exactly the scenarios that failed as it."""
    found: list[str | None] = []
    for index, scenario in enumerate(scenarios):
        if scenario["status"] == DIVERGED and not scenario.get("upstreamDivergences"):
            found.append(f"scenarios[{index}] ({scenario['name']}): status upstream divergence, but it names no "
                         "upstream divergence (upstreamDivergences)")
    stated = {entry["id"]: entry["scenarios"] for entry in observed}
    derived: dict[str, list[str]] = {}
    for scenario in scenarios:
        if scenario["status"] == DIVERGED:
            for divergence in scenario.get("upstreamDivergences", ()):
                derived.setdefault(divergence, []).append(scenario["name"])
    for divergence in sorted(stated.keys() | derived.keys()):
        found.append(_mismatch(f"upstreamDivergences ({divergence}).scenarios", stated.get(divergence, []),
                               derived.get(divergence, []), "which did not fail as this divergence"))
    return found


def _mismatch(where: str, stated: object, derived: object, extra: str = "which did not pass") -> str | None:
    """How a stated value differs from the derived one (a list: which names it adds, being `extra`, or leaves
    out), or None."""
    if stated == derived:
        return None
    if isinstance(stated, list) and isinstance(derived, list):
        added, missing = [s for s in stated if s not in derived], [d for d in derived if d not in stated]
        detail = "; ".join(
            text for text in (f"names {added!r}, {extra}" if added else "",
                              f"leaves out {missing!r}" if missing else "") if text
        ) or "lists them in another order"  # fmt: skip
        return f"{where}: {detail}"
    return f"{where}: says {stated!r}, but the listed results give {derived!r}"
