"""The submission report: built from the records, written into the submission folder with a README
that says how to reproduce it, and `draconform report verify` accepting a fresh copy and refusing an
edited one."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
import yaml

from draconform.claims import Claims, Implementation
from draconform.cli import main
from draconform.paths import SCHEMAS_DIR
from draconform.reporting.records import Run
from draconform.reporting.submission import render_submission, submission_data, verify, write_submission

from .helpers import KEP, rule, run, scenario
from .test_end_to_end import Outcome, Workspace, draconform_run, workspace  # noqa: F401 (a fixture)

IMPLEMENTATION = Implementation("example", "gpu-driver", "v0.4.0", "https://example.com", ("@dra",), "1.36", "default")


def _run() -> Run:
    demo = run(
        [rule("A"), rule("B"), rule("C", level="SHOULD"), rule("D", profile="driver")],
        [
            scenario("passes", rules=(f"{KEP}/A",), line=10),
            scenario("fails", "failed", rules=(f"{KEP}/B",), line=20),
            scenario("passes too", rules=(f"{KEP}/B", f"{KEP}/C"), line=30),
            scenario("not claimed", "skipped", rules=(f"{KEP}/D",), line=40, skip_reason="not claimed: driver"),
        ],
    )
    claims = Claims(profiles=("core",), implementation=IMPLEMENTATION, command="draconform run --profile core")
    return replace(demo, info=replace(demo.info, claims=claims))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "conformance-report.yaml"
    path.write_text(text)
    return path


def test_the_document_follows_its_schema_and_names_passed_scenarios() -> None:
    data = yaml.safe_load(render_submission(_run()))
    schema = json.loads((SCHEMAS_DIR / "harness" / "conformance-report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(data)
    assert data["kind"] == "DRAConformanceReport" and data["kubernetesVersion"] == "1.36"
    core, driver = data["profiles"]
    assert core["result"] == "failure" and core["failedRules"] == [f"{KEP}/B"]
    assert core["passedScenarios"] == ["kep-1/demo.feature:10 passes", "kep-1/demo.feature:30 passes too"]
    assert core["failedScenarios"] == ["kep-1/demo.feature:20 fails"]
    assert driver["claimed"] is False and driver["result"] == "not claimed"
    skipped = {"name": "kep-1/demo.feature:40 not claimed", "reason": "not claimed: driver"}
    assert driver["skippedScenarios"] == [skipped]
    assert data["reproduce"]["command"] == "draconform run --profile core"


def test_verify_accepts_the_report_as_written(tmp_path: Path) -> None:
    assert verify(_write(tmp_path, render_submission(_run()))).problems == ()


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        # Someone turns the failure into a pass but forgets the counts: the counts give it away.
        ("status: failed", "status: passed", "summary.rules: says"),
        # Someone edits the counts and the verdict consistently: the digest gives it away.
        ("result: failure", "result: success", "profiles[0] (core).result: says 'success'"),
        ("organization: example", "organization: another", "digest: the document was changed"),
        ("kind: DRAConformanceReport", "kind: Other", 'kind: Invalid value: "Other": must be "DRAConformanceReport" '
                                                      "(line 3)"),
    ],
)
def test_verify_refuses_an_edited_copy(tmp_path: Path, old: str, new: str, problem: str) -> None:
    text = render_submission(_run())
    assert old in text
    problems = verify(_write(tmp_path, text.replace(old, new, 1))).problems
    assert any(p.startswith(problem) for p in problems), problems


def test_a_fully_consistent_edit_is_still_refused_by_the_digest(tmp_path: Path) -> None:
    data = submission_data(_run())
    data["profiles"][0]["passedScenarios"].append("kep-1/demo.feature:20 fails")
    data["scenarios"][1]["status"] = "passed"
    data["rules"][1]["status"] = "passed"
    problems = verify(_write(tmp_path, yaml.safe_dump(data, sort_keys=False))).problems
    assert problems[-1].startswith("digest: ")


def test_the_submission_folder_has_the_report_and_a_readme_saying_how_to_reproduce(tmp_path: Path) -> None:
    report, readme = write_submission(_run(), tmp_path)
    assert report == tmp_path / "1.36" / "example-gpu-driver" / "v0.4.0-default-report.yaml"
    text = readme.read_text()
    assert "```sh\ndraconform run --profile core\n```" in text
    assert "| core | failure | core | 1/2 | 1/1 |" in text
    assert f"draconform report verify {report.name}" in text
    assert verify(report.parent).ok


def test_a_submission_needs_organization_and_project(tmp_path: Path) -> None:
    demo = _run()
    nameless = replace(demo, info=replace(demo.info, claims=Claims()))
    with pytest.raises(ValueError, match="organization and project"):
        write_submission(nameless, tmp_path)


def test_verify_command_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path, render_submission(_run()))
    assert main(["report", "verify", str(good)]) == 0
    assert "valid DRAConformanceReport" in capsys.readouterr().out
    good.write_text(good.read_text().replace("version: v0.4.0", "version: v0.5.0"))
    assert main(["report", "verify", str(good)]) == 1
    assert "digest:" in capsys.readouterr().out
    assert main(["report", "verify", str(tmp_path / "missing.yaml")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_a_vendor_run_with_submit_writes_a_folder_that_verifies(workspace: Workspace) -> None:  # noqa: F811
    options = workspace.root / "submit-options.yaml"
    options.write_text(
        "apiVersion: draconform.dev/v1alpha1\nkind: DRAConformanceOptions\n"
        "implementation: {organization: acme, project: dra, version: v1}\nprofiles: [core]\n"
    )
    outcome: Outcome = draconform_run(workspace, "submitted", "--options", str(options), "--submit")
    folder = workspace.root / "reports" / "1.37" / "acme-dra"
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "v1-default-report.yaml"]
    assert main(["report", "verify", str(folder)]) == 0
    assert (outcome.reports / "conformance-report.yaml").read_text() == (folder / "v1-default-report.yaml").read_text()
    nameless = draconform_run(workspace, "nameless", "--submit", "--sut", "tests:factory")
    assert nameless.status == 2 and "--submit needs the implementation's organization and project" in nameless.output


def test_verify_refuses_a_narrowed_or_broken_run_and_says_why(tmp_path: Path) -> None:
    from draconform.reporting.records import HarnessError

    demo = _run()
    narrowed = replace(demo, info=replace(demo.info, selection=("kep-1/demo.feature",)))
    problems = verify(_write(tmp_path, render_submission(narrowed))).problems
    assert any(p.startswith("reproduce.selection: the run was narrowed to kep-1/demo.feature") for p in problems)
    broken = replace(demo, errors=(HarnessError("test_features.py", "a worker crashed"),))
    problems = verify(_write(tmp_path, render_submission(broken))).problems
    assert any(p.startswith("summary.harnessErrors: 1 harness error(s) kept scenarios from running") for p in problems)


def test_a_run_whose_command_is_unknown_says_so_with_an_empty_command() -> None:
    """Found by `.ci/unit-mutation reports`: a run started from Python, not the command line, has no command."""
    demo = _run()
    bare = replace(demo, info=replace(demo.info, claims=replace(demo.info.claims, command=None)))
    assert submission_data(bare)["reproduce"]["command"] == ""
