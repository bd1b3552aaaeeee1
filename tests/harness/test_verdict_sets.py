"""Core apart from extended features: a run that claims some features is judged on the core MUST rules and those
of the features it claims; rules of other features judge nothing, and every report says which set the verdict is
about. And failures in words: what the reports show for a failed assertion."""

from __future__ import annotations

from dataclasses import replace

import yaml

from draconform.claims import Claims
from draconform.harness.wording import describe
from draconform.reporting.json_report import report_data
from draconform.reporting.markdown import render_markdown
from draconform.reporting.records import Run
from draconform.reporting.results import Results
from draconform.reporting.submission import render_submission, verify

from .helpers import KEP, rule, run, scenario


def _claiming(features: tuple[str, ...] | None, taints: str = "skipped") -> Run:
    demo = run(
        [rule("CORE"), rule("PART", gates=("DRAPartitionableDevices",)), rule("TAINT", gates=("DRADeviceTaints",)),
         rule("CAP", gates=("DRAConsumableCapacity",))],
        [scenario("core", rules=(f"{KEP}/CORE",), line=10),
         scenario("partitions", rules=(f"{KEP}/PART",), line=20),
         scenario("taints", taints, rules=(f"{KEP}/TAINT",), line=30,  # type: ignore[arg-type]
                  skip_reason="not claimed: needs DRADeviceTaints" if taints == "skipped" else None),
         scenario("capacity", "skipped", rules=(f"{KEP}/CAP",), line=40, skip_reason="not claimed")],
    )
    return replace(demo, info=replace(demo.info, claims=Claims(features=features)))


def test_claiming_features_judges_core_and_those_features_only() -> None:
    [verdict] = Results.of(_claiming(("DRAPartitionableDevices",))).verdicts()
    assert verdict.verdict == "success"
    assert verdict.conformant_for == ("DRAPartitionableDevices",)
    assert verdict.must["total"] == 2 and verdict.core["passed"] == verdict.core["total"] == 1
    assert verdict.unclaimed == ("DRAConsumableCapacity", "DRADeviceTaints")
    assert verdict.summary.startswith("Profile core conforms for core and DRAPartitionableDevices: all 2 MUST rules")
    assert "features not claimed, not judged: DRAConsumableCapacity, DRADeviceTaints" in verdict.summary


def test_a_claimed_feature_that_is_not_shown_to_work_keeps_the_verdict_partial() -> None:
    [verdict] = Results.of(_claiming(("DRAPartitionableDevices", "DRADeviceTaints"))).verdicts()
    assert verdict.verdict == "partial" and verdict.must["skipped"] == 1


def test_a_failure_in_a_claimed_feature_fails_and_one_in_an_unclaimed_feature_cannot_happen() -> None:
    [verdict] = Results.of(_claiming(("DRADeviceTaints", "DRAPartitionableDevices"), taints="failed")).verdicts()
    assert verdict.verdict == "failure" and verdict.failed_rules == (f"{KEP}/TAINT",)


def test_every_report_says_which_set_the_verdict_is_about(tmp_path: object) -> None:
    demo = _claiming(("DRAPartitionableDevices",))
    [entry] = report_data(demo)["conformance"]
    assert entry["conformant_for"] == ["core", "DRAPartitionableDevices"]
    assert {f["feature"]: f["claimed"] for f in entry["features"]} == {
        "DRAConsumableCapacity": False, "DRADeviceTaints": False, "DRAPartitionableDevices": True}
    submission = yaml.safe_load(render_submission(demo))
    assert submission["profiles"][0]["conformantFor"] == ["core", "DRAPartitionableDevices"]
    assert "### core: ✅ success for core and DRAPartitionableDevices" in render_markdown(demo)


def test_verify_accepts_a_run_claiming_features(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "conformance-report.yaml"
    demo = _claiming(("DRAPartitionableDevices",))
    path.write_text(render_submission(demo))
    assert verify(path).problems == ()


def test_a_failed_assertion_reads_as_words_not_python_internals() -> None:
    text = describe(AssertionError(
        "pod 'trainer' is bound to 'worker-1'\nassert not 'worker-1'\n +  where 'worker-1' = <built-in method get "
        "of dict object at 0x7f99d964c740>('nodeName')"))
    assert text == "pod 'trainer' is bound to 'worker-1'"
    compared = describe(AssertionError("claim 'c' got devices ['gpu-0']\nassert ['gpu-0'] == ['gpu-0', 'gpu-1']\n"
                                       "  Right contains one more item: 'gpu-1'\n  Use -v to get more diff"))
    assert compared == "claim 'c' got devices [gpu-0]\nobserved: [gpu-0]\nexpected: [gpu-0, gpu-1]"


def test_conditions_read_by_type_and_reason_and_objects_as_yaml() -> None:
    conditions = describe(AssertionError(
        "conditions are [{'type': 'Ready', 'status': 'False', 'reason': 'Waiting', 'message': 'no device'}]"))
    assert conditions == "conditions are Ready=False (Waiting: no device)"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"nodeName": "worker-1", "containers": [{"name": "main", "image": "registry.example/app:1"}]}}
    text = describe(AssertionError(f"the pod is {pod!r}"))
    assert "<" not in text and "'apiVersion'" not in text
    assert yaml.safe_load(text.split("the pod is", 1)[1]) == pod
    assert describe(KeyError("x")) == "KeyError: 'x'"


def test_a_rule_needing_a_claimed_and_an_unclaimed_feature_is_not_counted_for_the_claimed_one() -> None:
    demo = run([rule("BOTH", gates=("DRADeviceTaints", "DRADeviceTaintRules")),
                rule("ONE", gates=("DRADeviceTaints",))],
               [scenario("one", rules=(f"{KEP}/ONE",)),
                scenario("both", "skipped", rules=(f"{KEP}/BOTH",), line=20, skip_reason="not claimed")])
    [verdict] = Results.of(replace(demo, info=replace(demo.info, claims=Claims(features=("DRADeviceTaints",))))
                           ).verdicts()
    counts = {f.feature: (f.claimed, f.must["passed"], f.must["total"]) for f in verdict.features}
    assert counts == {"DRADeviceTaints": (True, 1, 1), "DRADeviceTaintRules": (False, 0, 1)}
    assert verdict.verdict == "success"


def test_a_dataclass_repr_reads_as_yaml() -> None:
    """plugin-check's messages quote the plugin's answers: as YAML, never as `PrepareResult(devices=(...))`."""
    from draconform.harness.wording import humanize

    text = humanize("the answer was PrepareResult(devices=(Device(requests=('device',), pool_name='node-1', "
                    "device_name='gpu-0'),), error=None)")
    assert "PrepareResult(" not in text and "Device(" not in text
    assert yaml.safe_load(text.split("the answer was", 1)[1]) == {
        "devices": [{"requests": ["device"], "pool_name": "node-1", "device_name": "gpu-0"}], "error": None}
    assert humanize("KeyError(x) and Foo(1, 2) stay") == "KeyError(x) and Foo(1, 2) stay"
