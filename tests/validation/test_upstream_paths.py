"""Each violation is reported where kube-apiserver reports it, with its error type (the Status cause's reason), by
`draconform validate` and by the reference store alike (issue 37). The expected places come from reading
kube-apiserver's validation (pkg/apis/resource/validation and apimachinery's validateSet/validateMap of v1.36.2,
checked against master): a repeated entry of a list of keyed items at the item, a map's key at the map, a device's
limits and node fields at the device, label keys at `metadata.labels`."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.admission import install
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.sut import ApiError
from draconform.validation import validate_gates, validate_manifest

SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-1-gpus"},
    "spec": {"driver": "gpu.example.com", "nodeName": "node-1", "pool": {"name": "node-1", "resourceSliceCount": 1},
             "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}}}]},
}
CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "gpu", "namespace": "default"},
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
}
COUNTERS: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-1-counters"},
    "spec": {"driver": "gpu.example.com", "nodeName": "node-1", "pool": {"name": "node-1", "resourceSliceCount": 1},
             "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]},
}


def _with(obj: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(obj)
    target = changed
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return changed


MANY = {f"a{i}": {"int": i} for i in range(33)}
CASES = [
    ("duplicate device", _with(SLICE, ("spec", "devices"), [{"name": "gpu-0"}, {"name": "gpu-0"}]),
     "spec.devices[1]", "FieldValueDuplicate"),
    ("duplicate counter set", _with(COUNTERS, ("spec", "sharedCounters"), [
        {"name": "gpu-0", "counters": {"memory": {"value": "1"}}},
        {"name": "gpu-0", "counters": {"m": {"value": "1"}}}]),
     "spec.sharedCounters[1]", "FieldValueDuplicate"),
    ("duplicate request", _with(CLAIM, ("spec", "devices", "requests"), [
        {"name": "gpu", "exactly": {"deviceClassName": "a"}}, {"name": "gpu", "exactly": {"deviceClassName": "b"}}]),
     "spec.devices.requests[1]", "FieldValueDuplicate"),
    ("duplicate subrequest", _with(CLAIM, ("spec", "devices", "requests"), [{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": "a"}, {"name": "big", "deviceClassName": "b"}]}]),
     "spec.devices.requests[0].firstAvailable[1]", "FieldValueDuplicate"),
    ("bad attribute key", _with(SLICE, ("spec", "devices", 0, "attributes"), {"gpu-model": {"string": "a"}}),
     "spec.devices[0].attributes", "FieldValueInvalid"),
    ("attribute key too long", _with(SLICE, ("spec", "devices", 0, "attributes"), {"a" * 33: {"string": "a"}}),
     "spec.devices[0].attributes", "FieldValueTooLong"),
    ("repeated constraint request", _with(CLAIM, ("spec", "devices", "constraints"), [
        {"requests": ["gpu", "gpu"], "matchAttribute": "gpu.example.com/numa"}]),
     "spec.devices.constraints[0].requests[1]", "FieldValueDuplicate"),
    ("bad capacity key", _with(SLICE, ("spec", "devices", 0, "capacity"), {"gpu-memory": {"value": "1"}}),
     "spec.devices[0].capacity", "FieldValueInvalid"),
    ("bad counter key", _with(COUNTERS, ("spec", "sharedCounters", 0, "counters"), {"Memory": {"value": "1"}}),
     "spec.sharedCounters[0].counters", "FieldValueInvalid"),
    ("too many attributes", _with(SLICE, ("spec", "devices", 0, "attributes"), MANY),
     "spec.devices[0]", "FieldValueInvalid"),
    ("device node without per-device selection", _with(SLICE, ("spec", "devices", 0, "nodeName"), "node-1"),
     "spec.devices[0]", "FieldValueInvalid"),
    ("bad label key", _with(CLAIM, ("metadata", "labels"), {"example.com/a/team": "x"}),
     "metadata.labels", "FieldValueInvalid"),
    ("binding failure conditions alone", _with(SLICE, ("spec", "devices", 0, "bindingFailureConditions"), ["failed"]),
     "spec.devices[0].bindingConditions", "FieldValueInvalid"),
]


@pytest.mark.parametrize(("obj", "field", "reason"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_validate_reports_where_kube_apiserver_does(obj: dict[str, Any], field: str, reason: str) -> None:
    problems = validate_manifest(obj, validate_gates({}, "1.37"))[1]
    found = [(p.field, p.reason) for p in problems if p.severity == "error"]
    assert (field, reason) in found, found


@pytest.mark.parametrize(("obj", "field", "reason"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_the_reference_store_refuses_with_that_cause(obj: dict[str, Any], field: str, reason: str) -> None:
    store = Store(FakeClock(), FeatureGates())
    install(store)
    with pytest.raises(ApiError) as refused:
        store.create(copy.deepcopy(obj))
    assert (field, reason) in [(c.field, c.error_type) for c in refused.value.causes], refused.value.causes


def test_a_malformed_quantity_is_a_decoding_refusal() -> None:
    """Go's decoder cannot read `lots` as a quantity: kube-apiserver answers 400 BadRequest, its message naming no
    field. The reference answers the same; in process its cause still says where and which rule (serve's Status
    leaves causes out of a 400, as kube-apiserver's does). `validate` names the field."""
    obj = _with(COUNTERS, ("spec", "sharedCounters", 0, "counters"), {"memory": {"value": "lots"}})
    store = Store(FakeClock(), FeatureGates())
    install(store)
    with pytest.raises(ApiError) as refused:
        store.create(copy.deepcopy(obj))
    assert refused.value.reason == "BadRequest"
    assert refused.value.message.startswith('ResourceSlice in version "v1" cannot be handled as a ResourceSlice: '
                                            "quantities must match the regular expression")
    assert [(c.field, c.rule) for c in refused.value.causes] == [
        ("spec.sharedCounters[0].counters[memory].value", "DRA-API/COUNTER-SET-COUNTERS")]
    problems = validate_manifest(obj, validate_gates({}, "1.37"))[1]
    assert [p.field for p in problems if p.decoding] == ["spec.sharedCounters[0].counters[memory].value"]


@pytest.mark.parametrize(("gate", "field"), [(True, "spec.devices.constraints[0]"),
                                             (False, "spec.devices.constraints[0].matchAttribute")])
def test_a_constraint_naming_no_attribute_is_reported_where_the_gates_put_it(gate: bool, field: str) -> None:
    """With DRAConsumableCapacity (on by default from 1.36) upstream names the constraint, without it its
    matchAttribute (distinctAttribute came with the gate)."""
    obj = _with(CLAIM, ("spec", "devices", "constraints"), [{"requests": ["gpu"]}])
    problems = validate_manifest(obj, validate_gates({"DRAConsumableCapacity": gate}, "1.37"))[1]
    assert [(p.field, p.reason) for p in problems] == [(field, "FieldValueRequired")]
