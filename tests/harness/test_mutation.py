"""The mutation check itself (`draconform mutants`): every variant's overrides fit the current code (each
target exists, a Replace or Wrap takes its parameters, an Edit's text is once in its function and the edited
function compiles: what keeps variants true as the code moves), no fault
switch or defect is left in the code a normal run executes, a child runs a variant's overrides, the runner
runs them (a known-bad variant is killed, a conforming one passes), the
catalogue of variants names only catalogued rules and gives every MUST rule of the KEPs it covers a variant,
and the summary judges each kind its own way. The full measurement is `tox -e mutants` (it takes minutes)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import draconform
import draconform.reference as draconform_reference
import draconform.steps as draconform_steps
from draconform.catalogue import load_catalogue
from draconform.mutation import summary
from draconform.mutation.catalogue import VARIANTS, must_rules, must_rules_without_variant, variant_named
from draconform.mutation.conforming import CONFORMING
from draconform.mutation.overrides import Edit, Replace, Set, install
from draconform.mutation.runner import (
    HUNG,
    KILLED,
    SURVIVED,
    Plan,
    Verdict,
    check_variant,
    run_one,
    run_variants,
    variant_environment,
)
from draconform.mutation.variant import CONFORMING as CONFORMING_KIND
from draconform.mutation.variant import KNOWN_BAD, Variant
from draconform.paths import FEATURES_DIR
from draconform.suite.selection import Selection
from draconform.suite.tracing import take_inventory

ALL = (*VARIANTS, *CONFORMING)
CODE_ROOTS = [Path(module.__file__ or "").parent for module in (draconform, draconform_reference, draconform_steps)]
SWITCH = re.compile(r"(?<![.\w])faults\.(?:on|ACTIVE|has)\b|draconform\.faults\b|from draconform import faults|"
                    r"DRACONFORM_FAULTS|\bDEFECTS\b|--defect\b")


@pytest.mark.parametrize("variant", ALL, ids=lambda variant: variant.name)
def test_every_variant_fits_the_current_code(variant: Variant) -> None:
    """Each target resolves, and each edit applies once to its function's current source and compiles: a
    refactor that moves or rewrites what a variant changes fails here, naming the variant and the target."""
    assert variant.overrides, "a variant without overrides is the reference itself"
    assert check_variant(variant) == []


def test_no_fault_switch_or_defect_is_left_in_the_code() -> None:
    """Known-bad behaviour lives in draconform/mutation only: no switch, no defect catalogue elsewhere."""
    mutation = Path(draconform.__file__).parent / "mutation"
    found = [f"{path}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
             for root in CODE_ROOTS for path in sorted(root.rglob("*.py")) if not path.is_relative_to(mutation)
             for text in [path.read_text(encoding="utf-8")] for match in SWITCH.finditer(text)]
    assert found == []


def _key_by_name(self: object, ref: object) -> str:
    return "by-name"


def _wrong_arguments(self: object) -> str:
    return "x"


def test_an_override_whose_target_moved_names_the_variant_and_the_target() -> None:
    target = "draconform.reference.drivers.plugin:NodePlugin"
    gone = Variant("gone", "DRA-PLUGIN/CLAIM-IDENTITY-IS-UID", "bug",
                   overrides=(Replace(f"{target}._nope", _key_by_name),))
    reshaped = Variant("reshaped", "DRA-PLUGIN/CLAIM-IDENTITY-IS-UID", "bug",
                       overrides=(Replace(f"{target}._key", _wrong_arguments),))
    assert check_variant(gone) == [f"variant gone: override target {target}._nope: no attribute of that name"]
    assert check_variant(reshaped) == [f"variant reshaped: override of {target}._key takes (self), the code now "
                                       "needs (self, ref)"]


def test_a_child_runs_the_overrides_of_its_variant_and_the_checkout_stays_correct(tmp_path: Path) -> None:
    variant = variant_named("state-by-name")
    probe = ("from draconform.kubeletplugin.types import ClaimRef\n"
             "from draconform.reference.drivers.plugin import NodePlugin\n"
             "print(NodePlugin._key(None, ClaimRef(namespace='ns', name='a', uid='u-1')))")
    out = subprocess.run([sys.executable, "-c", probe], env=variant_environment(variant), cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "ns/a", "the child keeps prepared claims by name, as the variant says"
    from draconform.reference.drivers.plugin import NodePlugin

    assert NodePlugin._key.__module__ == "draconform.reference.drivers.plugin", "this process is untouched"


def test_variant_names_are_unique_across_both_kinds() -> None:
    names = [variant.name for variant in ALL]
    assert len(names) == len(set(names))


def test_each_list_holds_its_own_kind() -> None:
    assert {v.kind for v in VARIANTS} == {KNOWN_BAD}
    assert {v.kind for v in CONFORMING} <= {CONFORMING_KIND}
    assert all(v.allows for v in CONFORMING), "a conforming variant names what allows its choice"


def test_variants_name_only_catalogued_rules() -> None:
    catalogue = load_catalogue()
    assert [v.rule for v in ALL if v.rule not in catalogue] == []


def test_every_must_rule_of_the_covered_keps_has_a_variant() -> None:
    catalogue = load_catalogue()
    assert len(must_rules(catalogue)) > 50, "the catalogues of the covered KEPs have their MUST rules"
    assert must_rules_without_variant(catalogue) == []


def test_a_must_rule_without_a_variant_is_reported() -> None:
    catalogue = load_catalogue()
    dropped = tuple(v for v in VARIANTS if v.rule != "KEP-5963/GROUP-LIMITS")
    assert must_rules_without_variant(catalogue, dropped) == ["KEP-5963/GROUP-LIMITS"]


def test_an_edit_that_no_longer_applies_names_the_variant_the_target_and_the_text() -> None:
    target = "draconform.reference.nodeselector:_requirement_matches"
    gone = Variant("gone", "KEP-5007/TIMEOUT", "bug", (Edit(target, "no such text", "x"),))
    twice = Variant("twice", "KEP-5007/TIMEOUT", "bug", (Edit(target, "values", "x"),))
    broken = Variant("broken", "KEP-5007/TIMEOUT", "bug", (Edit(target, "def ", "def def "),))
    unset = Variant("unset", "KEP-5007/TIMEOUT", "bug", (Set("draconform.reference.nodeselector:NO_SUCH", 1),))
    assert check_variant(gone) == [f"variant gone: override target {target}: the text to edit occurs 0 times in the "
                                   "function, not once: 'no such text'"]
    assert f"variant twice: override target {target}: the text to edit occurs" in check_variant(twice)[0]
    assert "the edited function does not compile" in check_variant(broken)[0]
    assert check_variant(unset) == ["variant unset: override target draconform.reference.nodeselector:NO_SUCH: "
                                    "no attribute of that name"]
    moved = Variant("moved", "KEP-5007/TIMEOUT", "bug", (Edit("draconform.reference.podclaims:_requirement_matches",
                                                              "values", "x"),))
    assert check_variant(moved)[0].endswith("(defined now in draconform.reference.nodeselector:_requirement_matches)")


def test_an_edit_changes_the_named_function_only_and_keeps_its_module() -> None:
    """The edited function runs in its own module's namespace (its helpers, its imports), with its name, file
    and line numbers; names an edit brings reach that function alone."""
    import draconform.reference.nodeselector as nodeselector

    variant = variant_named("node-selector-values-ignored")
    original = nodeselector._requirement_matches
    try:
        install(variant.overrides)
        edited = nodeselector._requirement_matches
        assert edited({"operator": "In", "values": ["a"]}, "b"), "an In requirement matches any value"
        assert edited.__qualname__ == original.__qualname__ and edited.__globals__ is vars(nodeselector)
        assert edited.__code__.co_filename == original.__code__.co_filename
        assert edited.__code__.co_firstlineno == original.__code__.co_firstlineno
    finally:
        nodeselector._requirement_matches = original


SAMPLE = """from __future__ import annotations


class Base:
    def name(self) -> str:
        return "base"


class Thing(Base):
    def name(self) -> Unknown:  # an annotation only its module could resolve: never evaluated
        text = \"\"\"two
lines\"\"\"
        return super().name() + " " + text

    @property
    def size(self) -> int:
        return 1

    @size.setter
    def size(self, value: int) -> None:
        self._size = value


def double(value: int) -> int:
    return value * 2


LIMIT = 3
"""


def test_edits_keep_methods_properties_and_names_imported_elsewhere(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """An edited method keeps its bare super() and multi-line strings, an edited property setter keeps its
    getter, and a module that imported an edited function by name before the install sees the edit too."""
    (tmp_path / "sample_target.py").write_text(SAMPLE)
    (tmp_path / "sample_user.py").write_text("from sample_target import double\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        import sample_target  # type: ignore[import-not-found]
        import sample_user  # type: ignore[import-not-found]

        install((Edit("sample_target:Thing.name", '" " + text', '"/" + text + SUFFIX', names={"SUFFIX": "!"}),
                 Edit("sample_target:Thing.size", "self._size = value", "self._size = value + 1"),
                 Edit("sample_target:double", "value * 2", "value * 3"),
                 Set("sample_target:LIMIT", 4)))
        thing = sample_target.Thing()
        thing.size = 1
        assert (thing.name(), thing.size, thing._size) == ("base/two\nlines!", 1, 2)
        assert (sample_target.double(2), sample_user.double(2), sample_target.LIMIT) == (6, 6, 4)
    finally:
        for name in ("sample_target", "sample_user"):
            sys.modules.pop(name, None)


def test_a_known_bad_variant_is_killed(tmp_path: Path) -> None:
    variant = next(v for v in VARIANTS if v.name == "five-binding-conditions-accepted")
    status, killers, scenarios, _ = run_one(variant.name, [FEATURES_DIR / "kep-5007" / "api.feature"], tmp_path,
                                            FEATURES_DIR, timeout=300, first_failure=True)
    assert status == KILLED
    assert scenarios > 0
    assert any("api.feature" in killer for killer in killers)


# CI's subset of `draconform mutants` (the whole run takes about ten minutes): a few known-bad variants on the
# fast paths of the allocator and the kubelet, and every conforming variant, each over the feature files whose
# scenarios cite its rule.
CI_KNOWN_BAD = ("node-selector-values-ignored", "count-ignored", "release-drops-first-reservation")


def _narrow_plan(variants: Sequence[Variant]) -> Plan:
    inventory = take_inventory(Selection.create(FEATURES_DIR), load_catalogue())
    paths = {v.name: tuple(sorted({FEATURES_DIR / ref.feature_file for ref in inventory.covering(v.rule)}))
             for v in variants}
    assert all(paths.values()), "every variant's rule is cited by a scenario"
    return Plan(FEATURES_DIR, paths)


def test_ci_subset_known_bad_variants_are_killed(tmp_path: Path) -> None:
    chosen = [v for v in VARIANTS if v.name in CI_KNOWN_BAD]
    verdicts = run_variants(chosen, _narrow_plan(chosen), load_catalogue(), tmp_path, 2, 600, True)
    assert {v.variant.name: v.status for v in verdicts} == dict.fromkeys(CI_KNOWN_BAD, KILLED)


def test_ci_subset_conforming_variants_pass(tmp_path: Path) -> None:
    verdicts = run_variants(CONFORMING, _narrow_plan(CONFORMING), load_catalogue(), tmp_path, 2, 600, True)
    false_failures = {v.variant.name: v.killers or v.detail for v in verdicts if v.status != SURVIVED}
    assert false_failures == {}
    assert all(v.scenarios > 0 for v in verdicts)


def test_the_summary_judges_each_kind_its_own_way() -> None:
    def verdict(name: str, kep: str, status: str, killers: int, kind: str = KNOWN_BAD) -> Verdict:
        variant = Variant(name, f"{kep}/R", "bug", (), kind=kind)  # type: ignore[arg-type]
        return Verdict(variant, kep, status, tuple(f"s{i}" for i in range(killers)), 5)

    verdicts = [verdict("a", "KEP-1", KILLED, 1), verdict("b", "KEP-1", HUNG, 1), verdict("c", "KEP-1", SURVIVED, 0),
                verdict("d", "KEP-2", KILLED, 3), verdict("ok", "KEP-1", SURVIVED, 0, CONFORMING_KIND),
                verdict("strict", "KEP-2", KILLED, 1, CONFORMING_KIND)]
    scores = {score.kep: score for score in summary.scores(verdicts)}
    assert (scores["KEP-1"].variants, scores["KEP-1"].killed, scores["KEP-1"].survived) == (3, 2, ("c",))
    assert scores["KEP-1"].thin == ("a",)
    assert (scores["KEP-1"].conforming, scores["KEP-1"].passed, scores["KEP-1"].all_conforming_pass) == (1, 1, True)
    assert scores["KEP-2"].kill_rate == 1.0
    assert (scores["KEP-2"].false_failures, scores["KEP-2"].all_conforming_pass) == (("strict",), False)
    table = summary.text_table(summary.scores(verdicts))
    assert "KEP-1" in table and "66.7%" in table and "FALSE FAILURES: strict" in table
    data = summary.to_json(verdicts, every_failure=True)
    assert data["keps"][-1] == {"kep": "total", "variants": 4, "killed": 3, "kill_rate": 0.75, "survived": ["c"],
                                "broken": [], "conforming": 2, "conforming_passed": 1, "false_failures": ["strict"],
                                "killed_by_one_scenario": ["a"]}
    assert "killed_by_one_scenario" not in summary.to_json(verdicts, every_failure=False)["keps"][-1]


def test_mutants_lists_both_kinds_and_filters_by_kind(capsys: pytest.CaptureFixture[str]) -> None:
    from draconform.cli import main

    assert main(["mutants", "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert {line.split()[0] for line in listed} == {KNOWN_BAD, CONFORMING_KIND}
    assert len(listed) == len(ALL)
    assert main(["mutants", "--list", "--kind", CONFORMING_KIND]) == 0
    assert [line.split()[1] for line in capsys.readouterr().out.splitlines()] == [v.name for v in CONFORMING]


def test_mutants_stops_on_an_override_that_no_longer_fits(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from draconform.cli import main
    from draconform.commands import mutants

    target = "draconform.reference.scheduler.dynamicresources:DynamicResources.__init__"
    stale = Variant("stale-wording", "KEP-5007/EVENT-PENDING", "other words",
                    (Edit(target, "text the code no longer has", "x"),), kind=CONFORMING_KIND, allows="wording is free")
    monkeypatch.setattr(mutants, "CONFORMING", (stale,))
    assert main(["mutants", "--variant", "stale-wording"]) == 2
    err = capsys.readouterr().err
    assert f"stale-wording: override target {target}" in err and "text the code no longer has" in err
