"""Property tests: whatever bytes or JSON-like values come in, loading and validation report problems
and never raise anything else."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draconform.bench.validation import corpus
from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.admission import install
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.sut import ApiError
from draconform.validation import validate_gates, validate_manifest
from draconform.validation.loader import LoadError, load_documents

GATES = validate_gates(None, "1.37")
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
                    st.text(max_size=20), st.sampled_from(["gpu-0", "gpu.example.com", "All", "1.2.3", "80Gi"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)), max_leaves=20)
FIELDS = ("name", "driver", "pool", "devices", "requests", "exactly", "firstAvailable", "selectors", "count",
          "consumesCounters", "counters", "bindingConditions", "bindingFailureConditions", "allocation",
          "results", "reservedFor", "uid", "conditions", "sharedCounters", "nodeName", "allNodes", "spec",
          "constraints", "config", "opaque", "parameters", "tolerations", "compatibilityGroups", "attributes",
          "ints", "strings", "versions", "nodeAllocatableResources", "mapping", "overhead", "capacityKey",
          "capacityMultiplier", "deviceMultiplier", "partitionTypeAttribute", "skipNodeOperations")
api_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(FIELDS), inner, max_size=5)), max_leaves=30)
TEMPLATES = {obj["kind"]: obj for obj in corpus(10)}


@SETTINGS
@given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_loading_any_bytes_gives_documents_or_a_load_error(data: bytes) -> None:
    try:
        for document in load_documents(data):
            assert document.line >= 1
    except LoadError as error:
        assert error.message


@SETTINGS
@given(kind=st.sampled_from(sorted(TEMPLATES)), spec=api_values, status=api_values)
def test_validating_any_spec_and_status_reports_and_never_raises(kind: str, spec: Any, status: Any) -> None:
    obj = {**TEMPLATES[kind], "spec": spec, "status": status}
    problems = validate_manifest(obj, GATES)[1]
    assert all(problem.message for problem in problems)


@SETTINGS
@given(kind=st.sampled_from(sorted(TEMPLATES)), extra=values)
def test_any_top_level_value_is_reported(kind: str, extra: Any) -> None:
    problems = validate_manifest({**TEMPLATES[kind], "metadata": extra}, GATES)[1]
    assert isinstance(problems, list)


@SETTINGS
@given(kind=st.sampled_from(sorted(TEMPLATES)), spec=api_values)
def test_the_store_refuses_any_bad_object_with_an_api_error(kind: str, spec: Any) -> None:
    api = Store(FakeClock(), FeatureGates({"DRADeviceCompatibilityGroups": False}))
    install(api)
    try:
        api.create({**TEMPLATES[kind], "spec": spec})
    except ApiError as error:
        assert error.reason == "Invalid" and error.causes


CEL_PIECES = st.sampled_from(['device', '.driver', '.attributes', '.capacity', '["gpu.example.com"]', '.memory',
                              ' == ', ' > ', ' && ', '!', '(', ')', '[', ']', '"80Gi"', '10', '2.5', 'quantity(',
                              'semver(', '.isGreaterThan(', '.all(x, ', 'x', 'has(', 'cel.bind(a, ', ', ', 'true',
                              '.includes(', 'size(', '.?m', '{', '}', ':', '//', "'", '\\'])


@SETTINGS
@given(st.lists(CEL_PIECES, max_size=14).map("".join) | st.text(max_size=40))
def test_compiling_any_text_as_a_selector_reports_and_never_raises(expression: str) -> None:
    """Any text compiles to a selector or fails with a CelError, and whatever compiles has a cost estimate: the
    decoder reads every checked AST cel-cpp produces (cel-cpp's checker and the has() rewrite included)."""
    from draconform.kube.cel import CelError, check
    from draconform.validation.celcost import checked_cost

    try:
        compiled = check(expression)
    except CelError:
        return
    assert checked_cost(compiled.checked) >= 0
