"""`draconform report diff` and `draconform report matrix` over report.json files: hand-built runs
for each kind of change, and two real runs of the demo suite."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from draconform.cli import main
from draconform.reporting.compare import diff, diff_data, load_report, matrix_frame, render_diff, render_matrix_markdown
from draconform.reporting.json_report import render_json
from draconform.reporting.records import Run

from .helpers import KEP, rule, run, scenario
from .test_end_to_end import Workspace, draconform_run, workspace  # noqa: F401 (a fixture)

A, B, C = (f"{KEP}/{name}" for name in "ABC")


def _old() -> Run:
    return run(
        [rule("A"), rule("B"), rule("C")],
        [scenario("a works", rules=(A,), line=10), scenario("b works", rules=(B,), line=20),
         scenario("c breaks", "failed", rules=(C,), line=30), scenario("gone", rules=(A,), line=40)],
        name="old",
    )  # fmt: skip


def _new() -> Run:
    return run(
        [rule("A"), rule("B"), rule("C"), rule("N")],
        [scenario("a works", rules=(A,), line=11), scenario("b works", "failed", rules=(B,), line=20),
         scenario("c breaks", rules=(C,), line=30), scenario("brand new", rules=(A,), line=50)],
        name="new",
    )  # fmt: skip


def _write(tmp_path: Path, name: str, demo: Run, version: int = 3) -> Path:
    data = json.loads(render_json(demo))
    if version == 1:  # what the first report format looked like: no verdicts, claims or metadata
        data = {k: v for k, v in data.items() if k not in ("conformance", "claims", "implementation")} | {"version": 1}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def test_diff_names_regressions_fixes_and_what_came_and_went(tmp_path: Path) -> None:
    result = diff(load_report(_write(tmp_path, "old", _old())), load_report(_write(tmp_path, "new", _new())))
    changes = {(c.name, c.old, c.new) for c in result.regressions}
    assert changes == {(B, "passed", "failed"), ("kep-1/demo.feature: b works", "passed", "failed")}
    assert {(c.name, c.old, c.new) for c in result.fixes} == {
        (C, "failed", "passed"),
        ("kep-1/demo.feature: c breaks", "failed", "passed"),
    }
    assert {(c.name, c.old, c.new) for c in result.rules if c.old is None} == {(f"{KEP}/N", None, "untested")}
    scenarios = {(c.name, c.old, c.new) for c in result.scenarios if None in (c.old, c.new)}
    assert scenarios == {
        ("kep-1/demo.feature: gone", "passed", None),
        ("kep-1/demo.feature: brand new", None, "passed"),
    }
    # A scenario that only moved to another line is the same scenario.
    assert not any("a works" in c.name for c in result.scenarios)
    assert result.verdicts == []  # core failed before (C) and fails now (B): the verdict did not change
    assert result.regressed


def test_a_verdict_that_gets_worse_is_a_regression(tmp_path: Path) -> None:
    good = run([rule("A")], [scenario("a works", rules=(A,))], name="good")
    bad = run([rule("A")], [scenario("a works", "error", rules=(A,))], name="bad")
    result = diff(load_report(_write(tmp_path, "good", good)), load_report(_write(tmp_path, "bad", bad)))
    assert [(c.name, c.old, c.new) for c in result.verdicts] == [("core", "success", "partial")]
    assert result.worse_verdicts and result.regressed


def test_diff_command_exits_1_on_a_regression_and_0_on_fixes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = _write(tmp_path, "old", _old()), _write(tmp_path, "new", _new())
    assert main(["report", "diff", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert "2 regression(s), 2 fix(es)" in out
    assert f"- {B}: passed → failed" in out and f"- {KEP}/N: absent → untested" in out
    assert main(["report", "diff", str(new), str(old)]) == 1  # C breaks again going back
    capsys.readouterr()
    fixed = run(_new().rules, [replace(s, status="passed") for s in _new().scenarios], name="fixed")
    assert main(["report", "diff", str(new), str(_write(tmp_path, "fixed", fixed)), "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["regressed"] is False and data["fixes"][0]["name"] == B


def test_diff_reads_a_version_1_report_without_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path, "old", _old(), version=1)
    result = diff(load_report(old), load_report(_write(tmp_path, "new", _new())))
    assert result.verdicts == [] and result.regressions
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": 7}')
    assert main(["report", "diff", str(old), str(broken)]) == 2
    expected = "broken.json: version: expected a draconform report.json of version 1 to 4, found 7"
    assert expected in capsys.readouterr().err


def test_matrix_has_a_row_per_rule_and_a_column_per_implementation(tmp_path: Path) -> None:
    reports = [load_report(_write(tmp_path, "old", _old())), load_report(_write(tmp_path, "new", _new()))]
    frame = matrix_frame(reports)
    assert frame.columns == ["id", "kep", "level", "profile", "old", "new"]
    assert frame.select("id", "old", "new").rows() == [
        (A, "passed", "passed"),
        (B, "passed", "failed"),
        (C, "failed", "passed"),
        (f"{KEP}/N", None, "untested"),
    ]
    text = render_matrix_markdown(reports)
    assert f"| {B} | MUST | core | ✅ | ❌ |" in text
    assert f"| {KEP}/N | MUST | core | · | ⬜ |" in text
    assert "| **Total** | | | 2/3 passed | 2/4 passed |" in text


def test_matrix_command_writes_markdown_and_a_self_contained_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = _write(tmp_path, "one", _old()), _write(tmp_path, "two", _old())
    page = tmp_path / "matrix.html"
    assert main(["report", "matrix", str(one), str(two), "--html", str(page)]) == 0
    assert "| Rule | Level | Profile | old | old (2) |" in capsys.readouterr().out  # same run name, told apart
    html = page.read_text()
    assert f'<tr data-id="{C}">' in html and '<td class="s failed">failed</td>' in html
    assert "http" not in html.replace('http-equiv="Content-Security-Policy"', "")


def test_diff_and_matrix_on_two_real_runs(workspace: Workspace, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    everything = draconform_run(workspace, "all-profiles")
    core_only = draconform_run(workspace, "core-only", "--profile", "core")
    assert main(["report", "diff", str(everything.reports), str(core_only.reports)]) == 0
    out = capsys.readouterr().out
    assert "0 regression(s)" in out and "- extended: success → not claimed" in out
    assert "- KEP-9999/UNSUPPORTED: skipped → skipped" not in out  # unchanged statuses are not listed
    assert main(["report", "matrix", str(everything.reports), str(core_only.reports)]) == 0
    assert "| KEP-9999/BROKEN | MUST | core | ❌ | ❌ |" in capsys.readouterr().out


# Tests added from surviving mutants of `.ci/unit-mutation reports` (docs/suite-power.md, "Unit-test power").

def test_a_change_that_is_neither_regression_nor_fix_is_listed_apart(tmp_path: Path) -> None:
    """passed → skipped is no regression (nothing failed) and no fix: the Markdown diff lists it on its own."""
    good = run([rule("A")], [scenario("a works", rules=(A,))], name="good")
    idle = run([rule("A")], [scenario("a works", "skipped", rules=(A,))], name="idle")
    result = diff(load_report(_write(tmp_path, "good", good)), load_report(_write(tmp_path, "idle", idle)))
    assert not result.regressions and not result.fixes
    text = render_diff(result)
    assert text.startswith("# draconform report diff: good → idle\n\n0 regression(s), 0 fix(es), ")
    assert "worse profile verdict(s).\n\n" in text
    assert (f"## Other status changes (2)\n\n- {A}: passed → skipped\n"
            "- kep-1/demo.feature: a works: passed → skipped\n") in text


def test_the_json_diff_names_both_reports_and_each_change_as_old_and_new(tmp_path: Path) -> None:
    old, new = _write(tmp_path, "old", _old()), _write(tmp_path, "new", _new())
    data = diff_data(diff(load_report(old), load_report(new)))
    assert (data["old"], data["new"], data["regressed"]) == (str(old), str(new), True)
    assert data["regressions"] == [{"name": B, "old": "passed", "new": "failed"},
                                   {"name": "kep-1/demo.feature: b works", "old": "passed", "new": "failed"}]


def test_the_matrix_command_prints_exactly_the_markdown_matrix(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    one, two = _write(tmp_path, "old", _old()), _write(tmp_path, "new", _new())
    assert main(["report", "matrix", str(one), str(two)]) == 0
    assert capsys.readouterr().out == render_matrix_markdown([load_report(one), load_report(two)])


def test_the_markdown_matrix_opens_with_its_title_and_legend(tmp_path: Path) -> None:
    text = render_matrix_markdown([load_report(_write(tmp_path, "old", _old()))])
    assert text.startswith("# DRA conformance matrix\n\n")
    assert text.splitlines()[2].endswith(" · not in that run") and text.splitlines()[3] == ""
