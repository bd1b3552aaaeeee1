"""Profiles, features and implementation metadata: what a run claims decides which rules it judges,
the profile verdicts rest on MUST rules, and the metadata reaches every report."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from draconform.claims import Claims, Implementation, OptionsError, merge
from draconform.commands.run import load_options
from draconform.reporting.results import Results

from .helpers import KEP, rule, run, scenario
from .test_end_to_end import Outcome, Workspace, draconform_run, workspace  # noqa: F401 (a fixture)

OPTIONS = """\
apiVersion: draconform.dev/v1alpha1
kind: DRAConformanceOptions
implementation:
  organization: example
  project: gpu-driver
  version: v0.4.0
  url: https://example.com/gpu-driver
  contact: ["@example/dra"]
kubernetesVersion: "1.36"
profiles: [core]
"""


def _claims(profiles: tuple[str, ...] | None = None, features: tuple[str, ...] | None = None) -> Claims:
    return Claims(profiles=profiles, features=features)


def test_a_rule_outside_the_claimed_profiles_or_supported_features_is_excluded_with_the_reason() -> None:
    driver_rule = rule("A", profile="driver", gates=("DynamicResourceAllocation", "DRADeviceTaints"))
    assert _claims().exclusion(driver_rule) is None
    assert _claims(profiles=("core",)).exclusion(driver_rule) == (
        f"{KEP}/A belongs to profile 'driver', which the run does not claim (claimed: core)"
    )
    # DynamicResourceAllocation is DRA itself and never needs to be listed.
    assert _claims(features=("DRADeviceTaints",)).exclusion(driver_rule) is None
    assert _claims(features=()).exclusion(driver_rule) == (
        f"{KEP}/A needs feature DRADeviceTaints, which the system under test does not support"
    )


def test_a_scenario_runs_when_any_rule_it_cites_is_claimed() -> None:
    claims = _claims(profiles=("core",))
    core, driver = rule("A"), rule("B", profile="driver")
    assert claims.scenario_exclusion([core, driver]) is None
    reason = claims.scenario_exclusion([driver])
    assert reason is not None and reason.startswith("not claimed: ") and f"{KEP}/B" in reason


def test_claims_travel_to_workers_unchanged() -> None:
    implementation = Implementation("o", "p", "1", contact=("a", "b"))
    claims = Claims(("core",), ("DRADeviceTaints",), implementation, "draconform run")
    assert Claims.from_json(claims.to_json()) == claims
    assert Claims.from_json(None) == Claims()


def test_flags_override_the_options_file(tmp_path: Path) -> None:
    path = tmp_path / "options.yaml"
    path.write_text(OPTIONS)
    loaded = load_options(path)
    assert loaded.profiles == ("core",) and loaded.features is None
    assert loaded.implementation.kubernetes_version == "1.36" and loaded.implementation.contact == ("@example/dra",)
    merged = merge(loaded, profiles=("core", "driver"), project="other", version=None, contact=())
    assert merged.profiles == ("core", "driver")
    assert merged.implementation.project == "other" and merged.implementation.version == "v0.4.0"
    assert merged.implementation.contact == ("@example/dra",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (OPTIONS.replace("kind: DRAConformanceOptions", "kind: Other"),
         'options.yaml:2: DRAConformanceOptions: kind: Invalid value: "Other": must be "DRAConformanceOptions"'),
        (OPTIONS.replace("project: gpu-driver", "project: GPU Driver"),
         "options.yaml:5: DRAConformanceOptions: implementation.project: Invalid value: 'GPU Driver': lower-case "
         "letters"),
        (OPTIONS + "features: [DRANoSuchGate]\n", "features: unknown feature gate DRANoSuchGate"),
        ("kind: [", "options.yaml:2: not valid YAML"),
    ],
)
def test_a_bad_options_file_names_the_file_and_field(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "options.yaml"
    path.write_text(text)
    with pytest.raises(OptionsError, match=r"options\.yaml") as raised:
        load_options(path)
    assert expected in str(raised.value)


def _verdicts(claims: Claims, statuses: dict[str, str], levels: dict[str, str] | None = None) -> dict[str, object]:
    levels = levels or {}
    rules = [rule(name, level=levels.get(name, "MUST")) for name in statuses]
    scenarios = [
        scenario(f"checks {name}", status, rules=(f"{KEP}/{name}",))  # type: ignore[arg-type]
        for name, status in statuses.items()
        if status != "untested"
    ]
    demo = run(rules, scenarios)
    demo = replace(demo, info=replace(demo.info, claims=claims))
    [verdict] = Results.of(demo).verdicts()
    return {"verdict": verdict.verdict, "summary": verdict.summary, "failed": verdict.failed_rules}


def test_a_profile_succeeds_only_when_every_must_rule_passed() -> None:
    result = _verdicts(Claims(), {"A": "passed", "B": "passed", "S": "failed"}, {"S": "SHOULD"})
    assert result["verdict"] == "success"  # a failed SHOULD rule is reported beside the verdict, not in it
    assert result["summary"] == "Profile core conforms: all 2 MUST rules passed; 0 of 1 SHOULD/MAY rules passed."


def test_a_failed_must_rule_fails_the_profile_and_is_named() -> None:
    result = _verdicts(Claims(), {"A": "passed", "B": "failed", "C": "untested"})
    assert result["verdict"] == "failure" and result["failed"] == (f"{KEP}/B",)
    assert result["summary"] == (
        f"Profile core does not conform: 1 of 3 MUST rules passed (1 failed, 1 untested: {KEP}/B)."
    )


@pytest.mark.parametrize("status", ["error", "skipped", "untested"])
def test_an_unverified_must_rule_makes_the_profile_partial(status: str) -> None:
    result = _verdicts(Claims(), {"A": "passed", "B": status})
    assert result["verdict"] == "partial"
    assert result["summary"] == f"Profile core is partly verified: 1 of 2 MUST rules passed (1 {status})."


def test_an_unclaimed_profile_has_no_verdict() -> None:
    result = _verdicts(Claims(profiles=("driver",)), {"A": "skipped"})
    assert result["verdict"] == "not claimed"


# --- through `draconform run`, as a vendor would ---------------------------------------------------


@pytest.fixture(scope="module")
def claimed(workspace: Workspace) -> Outcome:  # noqa: F811 (the imported fixture)
    options = workspace.root / "dra-conformance.yaml"
    options.write_text(OPTIONS)
    return draconform_run(workspace, "claimed", "--options", str(options), "--project", "gpu-plugin")


def test_rules_of_an_unclaimed_profile_are_skipped_before_any_step_runs(claimed: Outcome) -> None:
    report = claimed.report()
    assert report["claims"] == {"profiles": ["core"], "features": None}
    unsupported = next(r for r in report["rules"] if r["id"] == "KEP-9999/UNSUPPORTED")
    assert unsupported["status"] == "skipped"
    assert unsupported["not_claimed"] == (
        "KEP-9999/UNSUPPORTED belongs to profile 'extended', which the run does not claim (claimed: core)"
    )
    for name in ("The SUT refuses a step", "A step skips itself"):
        assert claimed.scenario(name)["skip_reason"] == f"not claimed: {unsupported['not_claimed']}"
    # No step ran: in the Cucumber JSON each is skipped without a duration.
    cucumber = json.loads((claimed.reports / "cucumber.json").read_text())
    elements = {e["name"]: e for feature in cucumber for e in feature["elements"]}
    steps = elements["A step skips itself"]["steps"]
    assert [s["result"]["status"] for s in steps] == ["skipped", "skipped"]
    assert all(s["result"]["duration"] == 0 for s in steps)
    # Claimed rules still ran.
    assert claimed.scenario("The total is wrong")["status"] == "failed"


def test_profile_verdicts_and_metadata_reach_every_report(claimed: Outcome) -> None:
    report = claimed.report()
    verdicts = {entry["profile"]: entry["verdict"] for entry in report["conformance"]}
    assert verdicts == {"core": "failure", "extended": "not claimed"}
    assert report["implementation"] == {
        "organization": "example",
        "project": "gpu-plugin",  # the flag over the file
        "version": "v0.4.0",
        "url": "https://example.com/gpu-driver",
        "contact": ["@example/dra"],
        "kubernetes_version": "1.36",
        "mode": "default",
    }
    assert report["run"]["command"].startswith("draconform run --features-dir ")
    assert report["run"]["command"].endswith("--project gpu-plugin")
    markdown = (claimed.reports / "report.md").read_text()
    assert "- Implementation: example / gpu-plugin v0.4.0; Kubernetes 1.36; mode default;" in markdown
    assert "### extended: ⚪ not claimed" in markdown
    junit = ET.parse(claimed.reports / "junit.xml").getroot()
    names = {p.get("name"): p.get("value") for p in junit.iter("property") if p.get("name", "").startswith("impl")}
    assert names["implementation.organization"] == "example" and names["implementation.version"] == "v0.4.0"


def test_a_bad_options_file_stops_the_run_before_it_starts(workspace: Workspace) -> None:  # noqa: F811
    options = workspace.root / "bad-options.yaml"
    options.write_text(OPTIONS.replace("profiles: [core]", "profiles: core"))
    outcome = draconform_run(workspace, "bad-options", "--options", str(options))
    assert outcome.status == 2
    assert 'bad-options.yaml:10: DRAConformanceOptions: profiles: Invalid value: "core": must be of type array' in \
        outcome.output
    assert not outcome.reports.exists()


def test_an_unknown_profile_stops_the_run_before_it_starts(workspace: Workspace) -> None:  # noqa: F811
    outcome = draconform_run(workspace, "typo", "--profile", "core,extnded")
    assert outcome.status == 2
    assert "profiles: unknown profile extnded; the catalogue has core, extended" in outcome.output
    assert not outcome.reports.exists()
