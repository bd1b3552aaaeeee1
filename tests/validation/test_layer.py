"""The validation layer itself: the store's admission and `validate` agree, the two schema engines
agree, the loader's lines and limits, the gated-field table, and the catalogue covers every rule ID."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from draconform.bench.validation import corpus, validation_throughput
from draconform.catalogue import load_catalogue
from draconform.cli import main
from draconform.kube.featuregates import GATE_HISTORY, FeatureGates
from draconform.paths import SCHEMAS_DIR
from draconform.reference.apiserver.admission import install
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.sut import ApiError
from draconform.validation import validate_gates, validate_manifest
from draconform.validation.gates import GATED_FIELDS
from draconform.validation.loader import LoadError, load_documents
from draconform.validation.schema import kind_schema

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples" / "gpu-driver"


def store(**gates: bool) -> Store:
    result = Store(FakeClock(), FeatureGates(gates))
    install(result)
    return result


def manifests(path: Path) -> Iterator[dict[str, Any]]:
    for file in sorted(path.glob("*.yaml")):
        for document in load_documents(file.read_bytes()):
            yield document.data


# --- examples ------------------------------------------------------------------------------------
def test_the_gpu_driver_examples_validate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(EXAMPLES)]) == 0
    out = capsys.readouterr().out
    assert " warning: " in out  # compatibilityGroups needs a gate that is off by default in 1.37
    assert "DRA-API/DISABLED-FIELDS-DROPPED" in out


def test_the_store_accepts_the_examples_as_validate_does() -> None:
    api = store(DRADeviceCompatibilityGroups=True)
    for obj in manifests(EXAMPLES):
        status = obj.pop("status", None)
        created = api.create(obj)
        if status is not None:
            api.update_status({**created, "status": status})
    claim = api.get("ResourceClaim", "trainer-gpu", "default")
    assert claim is not None and claim["status"]["allocation"]["devices"]["results"][0]["device"] == "fabric-gpu-0"


# --- admission and validate share one path ---------------------------------------------------------
SLICE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
    "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
             "nodeName": "n", "devices": [{"name": "d", "consumesCounters": [
                 {"counterSet": "c", "compatibilityGroups": ["mig"], "counters": {"x": {"value": "1"}}}]}]},
}


def test_the_store_refuses_with_every_cause_and_its_rule() -> None:
    bad = json.loads(json.dumps(SLICE))
    bad["spec"]["allNodes"] = True
    bad["spec"]["devices"].append({"name": "d", "bindingConditions": ["a"]})
    with pytest.raises(ApiError) as refused:
        store().create(bad)
    causes = {(c.field, c.rule) for c in refused.value.causes}
    assert causes == {
        ("spec", "DRA-API/SLICE-NODE-SELECTION-ONE-OF"),
        ("spec.devices[1]", "DRA-API/SLICE-DEVICE-NAMES-UNIQUE"),
        ("spec.devices[1].bindingFailureConditions", "DRA-API/BINDING-CONDITIONS-TOGETHER"),
    }
    problems = validate_manifest(bad, validate_gates(None, "1.37"))[1]
    assert {(p.field, p.rule) for p in problems if p.severity == "error"} == causes


def test_gated_fields_are_dropped_on_create_and_kept_on_update_only_if_stored() -> None:
    groups = ("spec", "devices", 0, "consumesCounters", 0)
    api = store(DRADeviceCompatibilityGroups=True)
    api.create(json.loads(json.dumps(SLICE)))
    api.gates = FeatureGates({"DRADeviceCompatibilityGroups": False})  # an API server restart
    kept = api.update(api.get("ResourceSlice", "s") or {})
    assert _at(kept, groups)["compatibilityGroups"] == ["mig"]

    other = store(DRADeviceCompatibilityGroups=False)
    created = other.create(json.loads(json.dumps(SLICE)))
    assert "compatibilityGroups" not in _at(created, groups)
    again = json.loads(json.dumps(SLICE))
    again["metadata"] = created["metadata"]
    assert "compatibilityGroups" not in _at(other.update(again), groups)


def _at(obj: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        obj = obj[part]
    return obj


def test_unserved_versions_are_not_found_and_served_ones_are_stored_as_v1() -> None:
    with pytest.raises(ApiError) as refused:
        store().create({"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceSlice", "metadata": {"name": "x"}})
    assert refused.value.reason == "NotFound"
    stored = store().create({"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceClass",
                             "metadata": {"name": "gpu.example.com"}, "spec": {}})
    assert stored["apiVersion"] == "resource.k8s.io/v1"


# --- the two schema engines agree ------------------------------------------------------------------
BAD_VALUES: tuple[Any, ...] = ("Not Valid!", -1, None, [], {}, "x" * 300, True)


def _mutations(obj: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _mutations(value, (*path, key))
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            yield from _mutations(value, (*path, index))
    for value in BAD_VALUES:
        if path and value != obj:
            yield path, value


def _replaced(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(obj))
    _at(copy, path[:-1])[path[-1]] = value
    return copy


def test_the_fast_and_the_reporting_schema_engines_agree() -> None:
    """jsonschema-rs decides "valid?"; python-jsonschema lists the errors. They must never disagree."""
    checked = 0
    one_of_each = {obj["kind"]: obj for obj in corpus(10)}
    for obj in [*one_of_each.values(), *manifests(EXAMPLES)]:
        schema = kind_schema(obj["apiVersion"], obj["kind"])
        assert schema is not None
        for number, (path, value) in enumerate(_mutations(obj)):
            if number % 4:
                continue  # a deterministic quarter of the mutations keeps the test fast
            mutated = _replaced(obj, path, value)
            fast = schema.fast.is_valid(mutated)
            slow = next(iter(schema.validator.iter_errors(mutated)), None) is None
            assert fast == slow, (path, value)
            checked += 1
    assert checked > 500


# --- loader ----------------------------------------------------------------------------------------
def test_the_loader_reads_what_pyyaml_reads_and_knows_every_line() -> None:
    text = yaml.dump_all(corpus(20), Dumper=yaml.CSafeDumper)
    documents = list(load_documents(text))
    assert [d.data for d in documents] == list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    lines = text.splitlines()
    for document in documents:
        for path, line in document.lines.items():
            key = path[-1]
            assert isinstance(key, int) or lines[line - 1].lstrip(" -").startswith(f"{key}:"), (path, line)


def test_loader_limits() -> None:
    with pytest.raises(LoadError, match="refusing to expand"):
        list(load_documents("a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n" + "".join(
            f"k{i}: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" for i in range(10))))
    with pytest.raises(LoadError, match="a mapping key must be a scalar"):
        list(load_documents("? [a]\n: b\n"))
    assert [d.data for d in load_documents("a: &x {b: 1}\nc: *x\n")] == [{"a": {"b": 1}, "c": {"b": 1}}]
    assert [d.data for d in load_documents("---\n---\n# only a comment\n")] == []
    assert [d.data for d in load_documents("t: 2026-01-01T00:00:00Z\nb: yes\nn: ~\n")] == [
        {"t": "2026-01-01T00:00:00Z", "b": True, "n": None}]


# --- tables and catalogue --------------------------------------------------------------------------
def test_every_gated_field_exists_in_its_schema_and_names_known_gates() -> None:
    for gated in GATED_FIELDS:
        assert set(gated.gates) <= set(GATE_HISTORY), gated
        schema = kind_schema("v1" if gated.kind == "Pod" else "resource.k8s.io/v1", gated.kind)
        assert schema is not None
        resolver = schema.validator._resolver
        node: Any = schema.schema
        for step in gated.path.split("."):
            while "$ref" in node or "allOf" in node:
                if "$ref" in node:
                    resolved = resolver.lookup(node["$ref"])
                    node, resolver = resolved.contents, resolved.resolver
                else:
                    node = node["allOf"][0]
            node = node["items"] if step == "*" and "items" in node else (
                node["additionalProperties"] if step == "*" else node["properties"][step])


def test_every_rule_id_in_schemas_and_code_is_catalogued() -> None:
    catalogue = load_catalogue()
    cited: set[str] = set()
    for path in list((SCHEMAS_DIR / "resource.k8s.io").rglob("*.json")) + list((SCHEMAS_DIR / "core").rglob("*.json")):
        cited |= set(re.findall(r'"(DRA-API/[A-Z0-9-]+)"', path.read_text()))
    for path in (ROOT / "draconform" / "validation").glob("*.py"):
        cited |= set(re.findall(r'"(DRA-API/[A-Z0-9-]+)"', path.read_text()))
    assert cited - set(catalogue.rules) == set()
    assert {rule for rule in catalogue.rules if rule.startswith("DRA-API/")} - cited == set()


def test_validation_throughput_is_measured() -> None:
    measurements = validation_throughput(50)
    assert [m.unit for m in measurements] == ["objects/s", "objects/s"]
    assert all(m.value > 0 for m in measurements)


def test_requests_are_stored_with_kube_apiservers_defaults() -> None:
    """ExactCount and a count of one are filled in (a count of 0 too: Go cannot tell it from unset), All keeps
    no count, subrequests and templates alike; an update that writes the defaults back is no spec change."""
    claim = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": [
            {"name": "plain", "exactly": {"deviceClassName": "gpu"}},
            {"name": "zero", "exactly": {"deviceClassName": "gpu", "count": 0}},
            {"name": "all", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}},
            {"name": "alt", "firstAvailable": [{"name": "big", "deviceClassName": "gpu", "count": 2},
                                               {"name": "small", "deviceClassName": "gpu"}]}]}},
    }
    api = store()
    created = api.create(json.loads(json.dumps(claim)))
    requests = created["spec"]["devices"]["requests"]
    assert [r["exactly"] for r in requests[:3]] == [
        {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1},
        {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1},
        {"deviceClassName": "gpu", "allocationMode": "All"},
    ]
    assert [(s["allocationMode"], s["count"]) for s in requests[3]["firstAvailable"]] == [("ExactCount", 2),
                                                                                         ("ExactCount", 1)]
    api.update(json.loads(json.dumps(created)))  # the defaults written back change nothing

    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "t", "namespace": "default"}, "spec": {"spec": claim["spec"]}}
    stored = api.create(json.loads(json.dumps(template)))
    assert stored["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
