"""Rule IDs, messages and verdicts of `draconform validate` that no test pinned (found by `.ci/unit-mutation
validate`: docs/suite-power.md, "Unit-test power"): partitionTypeAttribute beside counter-consuming devices, the
bound on a device's counter consumptions, Kubernetes 1.36's node-allocatable mappings, an allocation changed on
update, a request policy without a default, CEL list literals in the cost estimate, the classic API's checks."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from draconform.validation import validate_gates, validate_manifest
from draconform.validation.celcost import estimate_cost
from draconform.validation.core import validate_object

Finding = tuple[tuple[Any, ...], str, str | None]


def errors(obj: dict[str, Any], release: str = "1.37") -> list[Finding]:
    return [(p.path, p.message, p.rule) for p in validate_manifest(obj, validate_gates(None, release))[1]
            if p.severity == "error"]


def resource_slice(spec: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "cpu.example.com", "nodeName": "n1",
                     "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, **spec}}




def consuming(name: str, attributes: dict[str, Any] | None = None) -> dict[str, Any]:
    device: dict[str, Any] = {"name": name, "consumesCounters": [{"counterSet": "cores",
                                                                   "counters": {"count": {"value": "1"}}}]}
    if attributes is not None:
        device["attributes"] = attributes
    return device


def test_partition_type_attribute_needs_counter_consuming_devices_that_carry_it() -> None:
    needs = errors(resource_slice({"partitionTypeAttribute": "cpu.example.com/kind", "devices": [{"name": "d"}]}))
    assert needs == [(("spec", "partitionTypeAttribute"), 'Invalid value: "cpu.example.com/kind": only allowed when a '
                      "device of the slice consumes counters", "DRA-API/PARTITION-TYPE-ATTRIBUTE-NEEDS-COUNTERS")]
    # every consuming device carries the string attribute, under its full name or (the driver's domain) bare
    # (since 1.35 the counter sets are written in a slice of their own)
    good = resource_slice({"partitionTypeAttribute": "cpu.example.com/kind",
                           "devices": [consuming("a", {"cpu.example.com/kind": {"string": "big"}}),
                                       consuming("b", {"kind": {"string": "little"}})]})
    assert errors(good) == []
    missing = copy.deepcopy(good)
    del missing["spec"]["devices"][1]["attributes"]
    (where, message, rule), = errors(missing)
    assert (where[:4], rule) == (("spec", "devices", 1, "attributes"), "DRA-API/PARTITION-TYPE-ATTRIBUTE-ON-DEVICES")
    assert message == ("Required value: a device that consumes counters must have the attribute "
                       "`spec.partitionTypeAttribute` names")


def test_a_device_consumes_from_at_most_two_counter_sets_since_1_35() -> None:
    device = consuming("d")
    device["consumesCounters"] = [{"counterSet": f"set-{i}", "counters": {"count": {"value": "1"}}} for i in range(3)]
    found = errors(resource_slice({"devices": [device]}))
    assert (("spec", "devices", 0, "consumesCounters"), "Too many: 3: must have at most 2 items",
            "DRA-API/DEVICE-COUNTER-CONSUMPTIONS") in found


def test_the_1_36_node_allocatable_mappings_are_checked_in_a_1_36_release() -> None:
    device = {"name": "d", "capacity": {"mem": {"value": "1Gi"}},
              "nodeAllocatableResourceMappings": {"memory": {"capacityKey": "nosuch"},
                                                  "example.com/thing": {"allocationMultiplier": "0"}}}
    where = ("spec", "devices", 0, "nodeAllocatableResourceMappings")
    found = errors(resource_slice({"devices": [device]}), "1.36")
    assert [(path[4:], rule) for path, _, rule in found if path[:4] == where] == [
        (("memory", "capacityKey"), "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF"),
        (("example.com/thing",), "DRA-API/NODE-ALLOCATABLE-RESOURCE-NAMES"),
        (("example.com/thing", "allocationMultiplier"), "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF")]


def test_an_allocation_changed_on_update_is_refused_and_the_same_one_kept() -> None:
    def claim(device: str) -> dict[str, Any]:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": "c", "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
                "status": {"allocation": {"devices": {"results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "p", "device": device}]}}}}

    gates = validate_gates(None, "1.37")
    changed = [(p.path, p.rule) for p in validate_object(claim("gpu-1"), gates, old=claim("gpu-0"))]
    assert changed == [(("status", "allocation"), "DRA-API/ALLOCATION-IMMUTABLE")]
    assert validate_object(claim("gpu-0"), gates, old=claim("gpu-0")) == []


def test_a_request_policy_with_valid_values_needs_a_default() -> None:
    device = {"name": "d", "allowMultipleAllocations": True,
              "capacity": {"mem": {"value": "8Gi", "requestPolicy": {"validValues": ["1Gi", "2Gi"]}}}}
    slice_ = resource_slice({"devices": [device]})
    slice_["spec"]["driver"] = "gpu.example.com"
    assert (("spec", "devices", 0, "capacity", "mem", "requestPolicy", "default"),
            "Required value: required when `validValues` or `validRange` is set",
            "DRA-API/CAPACITY-REQUEST-POLICY-ONE-OF") in errors(slice_)


def test_a_loop_over_a_list_literal_costs_as_a_loop_over_its_largest_element() -> None:
    """`[m].all(...)` walks what `m` holds: a list literal of the attribute map costs about what a loop over the
    map costs, a literal of two elements twice that in either order, and one of a small map little."""
    direct = estimate_cost("device.attributes.all(d, device.attributes[d].all(n, true))")
    wrapped = estimate_cost("[device.attributes].all(m, m.all(d, m[d].all(n, true)))")
    assert 0.9 * direct < wrapped < 1.1 * direct
    small_first = estimate_cost('[{"a": {"b": 1}}, device.attributes].all(m, m.all(d, m[d].all(n, true)))')
    large_first = estimate_cost('[device.attributes, {"a": {"b": 1}}].all(m, m.all(d, m[d].all(n, true)))')
    assert small_first == large_first
    assert 1.9 * wrapped < small_first < 2.1 * wrapped
    assert estimate_cost('[{"a": {"b": 1}}].all(m, m.all(d, m[d].all(n, true)))') < direct / 10


CLASSIC = "cdi.k8s.io/v1alpha1"


def classic_errors(obj: dict[str, Any]) -> list[tuple[str, str | None]]:
    from draconform.validation.core import validate_classic_manifest

    return [(p.field, p.rule) for p in validate_classic_manifest(obj, validate_gates(None, "1.37"))
            if p.severity == "error"]


def test_a_classic_claim_user_limit_is_unlimited_or_positive() -> None:
    def claim(limit: int) -> dict[str, Any]:
        return {"apiVersion": CLASSIC, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
                "spec": {"resourceClassName": "fpga.example.com"}, "status": {"userLimit": limit}}

    for limit in (0, -2):
        assert classic_errors(claim(limit)) == [("status.userLimit", "KEP-3063-CLASSIC/USER-LIMIT")], limit
    for limit in (-1, 1, 5):
        assert classic_errors(claim(limit)) == [], limit


def test_a_classic_pod_container_names_its_claims_among_the_pod_entries() -> None:
    from draconform.validation.classic import pod_problems

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"resourceClaims": [{"name": "fpga", "resourceClaimName": "c"}],
                    "containers": [{"name": "c", "resources": {"claims": ["fpga", "nosuch"]}}]}}
    assert [(p.path, p.rule) for p in pod_problems(pod)] == [
        (("spec", "containers", 0, "resources", "claims", 1), "KEP-3063-CLASSIC/CONTAINER-CLAIMS-NAMED")]


def test_an_unknown_field_of_a_hand_written_input_lists_the_fields_known_there(tmp_path: Path) -> None:
    """A harness input (here plugin-check's support declaration) with a misspelt field: the finding names the
    fields the schema allows at that place, so the user sees the spelling wanted."""
    from draconform.validation.inputs import InputError, read_input

    path = tmp_path / "supports.yaml"
    path.write_text("permanentErrors:\n  claim: [one]\n")
    with pytest.raises(InputError) as raised:
        read_input(path, "plugin-support", "plugin-check support declaration")
    assert str(raised.value) == (f"{path}:2: plugin-check support declaration: permanentErrors.claim: unknown field; "
                                 "known: claims, config")


def test_a_merge_key_brings_the_anchored_fields_and_explicit_keys_win() -> None:
    """YAML's `<<: *anchor` (as hand-written manifests use it): the merged mapping gets the anchor's fields, its
    own keys override them, and a merged nested value is its own copy (changing it leaves the anchor alone)."""
    from draconform.validation.loader import load_documents

    text = b"base: &gpu {driver: gpu.example.com, count: 1, selector: {model: a100}}\nclaim:\n  <<: *gpu\n  count: 2\n"
    (document,) = load_documents(text)
    data = document.data
    assert data["claim"] == {"driver": "gpu.example.com", "count": 2, "selector": {"model": "a100"}}
    data["claim"]["selector"]["model"] = "h100"
    assert data["base"]["selector"] == {"model": "a100"}


def test_a_value_on_its_own_line_that_begins_like_a_known_key_is_a_value() -> None:
    """`spec:` then `  names` on the next line is the string "names", not a key `name` seen before."""
    from draconform.validation.loader import load_documents

    for text, expected in ((b"name: x\nspec:\n  names\n", {"name": "x", "spec": "names"}),
                           (b"ab: 1\nc:\n  abc\n", {"ab": 1, "c": "abc"})):
        (document,) = load_documents(text)
        assert document.data == expected
