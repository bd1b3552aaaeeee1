"""The mutation check itself (`draconform mutants`): fault switches are off unless asked for and change
behaviour when on; the catalogue of variants names only catalogued rules, gives every MUST rule of the
KEPs it covers a variant, and names only switches the code reads; a run with a fault on is judged by its
report. The kill rate itself is measured by `tox -e mutants`, not here (it takes minutes)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import draconform
from draconform import faults
from draconform.catalogue import load_catalogue
from draconform.mutation import summary
from draconform.mutation.catalogue import VARIANTS, Variant, must_rules, must_rules_without_variant
from draconform.mutation.runner import HUNG, KILLED, SURVIVED, Verdict, run_one
from draconform.paths import FEATURES_DIR
from draconform.reference.allocator.compatibility import EMPTY
from draconform.reference.scheduler.bindingconditions import Outcome, claim_verdict

SOURCE_ROOTS = [Path(draconform.__file__).parent, Path(draconform.__file__).parent.parent / "reference"]
SWITCH = re.compile(r'faults\.on\(\s*"([a-z0-9-]+)"\s*\)')


def _switches_in_code() -> set[str]:
    found: set[str] = set()
    for root in SOURCE_ROOTS:
        for path in root.rglob("*.py"):
            if path.name != "faults.py":
                found.update(SWITCH.findall(path.read_text(encoding="utf-8")))
    return found


def test_no_fault_is_on_without_the_environment_variable() -> None:
    assert not faults.ACTIVE
    assert not faults.on(VARIANTS[0].name)


def test_the_environment_variable_names_faults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(faults.ENV, " never-times-out, ,pools-in-reverse-order")
    assert faults._from_environment() == {"never-times-out", "pools-in-reverse-order"}


def test_a_fault_switch_changes_behaviour(monkeypatch: pytest.MonkeyPatch) -> None:
    groupless = EMPTY.add(())
    assert not groupless.admits(("mig",))
    monkeypatch.setattr(faults, "ACTIVE", frozenset({"groupless-set-admits-grouped"}))
    assert groupless.admits(("mig",))


def test_a_binding_fault_changes_the_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    claim = {
        "metadata": {"name": "c"},
        "status": {
            "allocation": {"allocationTimestamp": "2026-01-01T00:00:00Z", "devices": {"results": [
                {"driver": "d", "pool": "p", "device": "x", "bindingConditions": ["a", "b"],
                 "bindingFailureConditions": ["f"]}]}},
            "devices": [{"driver": "d", "pool": "p", "device": "x", "conditions": [
                {"type": "a", "status": "True"}, {"type": "b", "status": "False"}]}],
        },
    }  # fmt: skip
    assert claim_verdict(claim, now, timedelta(minutes=10), now).outcome == Outcome.WAITING
    monkeypatch.setattr(faults, "ACTIVE", frozenset({"any-condition-true-is-ready"}))
    assert claim_verdict(claim, now, timedelta(minutes=10), now).outcome == Outcome.READY


def test_variant_names_are_unique() -> None:
    names = [variant.name for variant in VARIANTS]
    assert len(names) == len(set(names))


def test_variants_name_only_catalogued_rules() -> None:
    catalogue = load_catalogue()
    assert [v.rule for v in VARIANTS if v.rule not in catalogue] == []


def test_every_must_rule_of_the_covered_keps_has_a_variant() -> None:
    catalogue = load_catalogue()
    assert len(must_rules(catalogue)) > 50, "the catalogues of the covered KEPs have their MUST rules"
    assert must_rules_without_variant(catalogue) == []


def test_a_must_rule_without_a_variant_is_reported() -> None:
    catalogue = load_catalogue()
    dropped = tuple(v for v in VARIANTS if v.rule != "KEP-5963/GROUP-LIMITS")
    assert must_rules_without_variant(catalogue, dropped) == ["KEP-5963/GROUP-LIMITS"]


def test_every_variant_is_a_switch_the_code_reads_and_back() -> None:
    in_code = _switches_in_code()
    names = {variant.name for variant in VARIANTS}
    assert sorted(names - in_code) == [], "variants whose switch no code reads (a no-op variant)"
    assert sorted(in_code - names) == [], "switches in the code that no variant names"


def test_a_run_with_a_fault_on_is_killed(tmp_path: Path) -> None:
    status, killers, scenarios, _ = run_one(
        "five", ["five-binding-conditions-accepted"], [FEATURES_DIR / "kep-5007" / "api.feature"], tmp_path,
        FEATURES_DIR, timeout=300, first_failure=True,
    )
    assert status == KILLED
    assert scenarios > 0
    assert any("api.feature" in killer for killer in killers)


def test_the_kill_rate_counts_hung_runs_as_killed_and_lists_survivors() -> None:
    def verdict(name: str, rule: str, kep: str, status: str, killers: int) -> Verdict:
        return Verdict(Variant(name, rule, "bug"), kep, status, tuple(f"s{i}" for i in range(killers)), 5)

    verdicts = [verdict("a", "KEP-1/A", "KEP-1", KILLED, 1), verdict("b", "KEP-1/B", "KEP-1", HUNG, 1),
                verdict("c", "KEP-1/C", "KEP-1", SURVIVED, 0), verdict("d", "KEP-2/D", "KEP-2", KILLED, 3)]
    scores = {score.kep: score for score in summary.scores(verdicts)}
    assert (scores["KEP-1"].variants, scores["KEP-1"].killed, scores["KEP-1"].survived) == (3, 2, ("c",))
    assert scores["KEP-1"].thin == ("a",)
    assert scores["KEP-2"].kill_rate == 1.0
    table = summary.text_table(summary.scores(verdicts))
    assert "KEP-1" in table and "66.7%" in table and "c" in table
    data = summary.to_json(verdicts, every_failure=True)
    assert data["keps"][-1] == {"kep": "total", "variants": 4, "killed": 3, "kill_rate": 0.75, "survived": ["c"],
                                "broken": [], "killed_by_one_scenario": ["a"]}
    assert "killed_by_one_scenario" not in summary.to_json(verdicts, every_failure=False)["keps"][-1]
