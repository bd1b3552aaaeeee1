"""Request references and fields behind DRAConsumableCapacity, read by the validation layer (found untested by
`.ci/unit-mutation validate`: docs/suite-power.md, "Unit-test power")."""

from __future__ import annotations

from typing import Any

from draconform.validation import validate_gates, validate_manifest


def claim(devices: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                           "metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": devices}}
    if status is not None:
        obj["status"] = status
    return obj


GPU = {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}


def found(obj: dict[str, Any], **gates: bool) -> list[tuple[tuple[Any, ...], str, str]]:
    return [(p.path, p.rule or "", p.severity) for p in validate_manifest(obj, validate_gates(gates, "1.37"))[1]]


def test_an_allocation_result_must_name_a_request_of_the_claim() -> None:
    def written(request: str) -> dict[str, Any]:
        return claim({"requests": [GPU]}, {"allocation": {"devices": {"results": [
            {"request": request, "driver": "gpu.example.com", "pool": "p", "device": "gpu-0"}]}}})

    where = ("status", "allocation", "devices", "results", 0, "request")
    assert (where, "DRA-API/ALLOCATION-RESULTS-REFERENCE-REQUESTS", "warning") in found(written("nosuch"))
    assert not [p for p in found(written("gpu")) if p[1] == "DRA-API/ALLOCATION-RESULTS-REFERENCE-REQUESTS"]


def test_a_constraint_must_name_requests_of_the_claim() -> None:
    devices = {"requests": [GPU],
               "constraints": [{"requests": ["gpu", "nosuch"], "matchAttribute": "gpu.example.com/numa"}]}
    assert found(claim(devices)) == [(("spec", "devices", "constraints", 0, "requests", 1),
                                      "DRA-API/REQUEST-REFERENCES-EXIST", "error")]


def test_capacity_of_a_subrequest_and_distinct_attribute_need_consumable_capacity() -> None:
    """Both are dropped, with a warning, by an API server with DRAConsumableCapacity off; kept with it on."""
    devices = {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": "a", "deviceClassName": "gpu", "capacity": {"requests": {"memory": "1Gi"}}}]}],
        "constraints": [{"requests": ["gpu"], "distinctAttribute": "gpu.example.com/numa"}]}
    stored, problems = validate_manifest(claim(devices), validate_gates({"DRAConsumableCapacity": False}, "1.37"))
    dropped = [p.path for p in problems if p.rule == "DRA-API/DISABLED-FIELDS-DROPPED"]
    assert dropped == [("spec", "devices", "requests", 0, "firstAvailable", 0, "capacity"),
                       ("spec", "devices", "constraints", 0, "distinctAttribute")]
    assert all("DRAConsumableCapacity" in p.message for p in problems if p.rule == "DRA-API/DISABLED-FIELDS-DROPPED")
    assert "capacity" not in stored["spec"]["devices"]["requests"][0]["firstAvailable"][0]
    assert "distinctAttribute" not in stored["spec"]["devices"]["constraints"][0]
    stored, problems = validate_manifest(claim(devices), validate_gates(None, "1.37"))
    assert problems == []
    assert stored["spec"]["devices"]["constraints"][0]["distinctAttribute"] == "gpu.example.com/numa"


def resource_slice(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                     **spec}}


def messages(obj: dict[str, Any]) -> list[tuple[tuple[Any, ...], str, str | None]]:
    return [(p.path, p.message, p.rule) for p in validate_manifest(obj, validate_gates(None, "1.37"))[1]
            if p.severity == "error"]


def test_each_device_names_exactly_one_node_field_with_per_device_node_selection() -> None:
    one_of = "exactly one of `nodeName`, `nodeSelector`, `allNodes` is required when `perDeviceNodeSelection` is true"
    devices = [{"name": "none"}, {"name": "two", "nodeName": "n1", "allNodes": True}, {"name": "all", "allNodes": True}]
    assert messages(resource_slice({"perDeviceNodeSelection": True, "devices": devices})) == [
        (("spec", "devices", 0), f"Required value: {one_of}", "DRA-API/DEVICE-NODE-SELECTION"),
        (("spec", "devices", 1), f"Invalid value: nodeName, allNodes are all set: {one_of}",
         "DRA-API/DEVICE-NODE-SELECTION")]
    assert messages(resource_slice({"nodeName": "n1", "devices": [{"name": "d", "allNodes": True}]})) == [
        (("spec", "devices", 0), "Invalid value: allNodes: only allowed when `spec.perDeviceNodeSelection` is true",
         "DRA-API/DEVICE-NODE-SELECTION")]


def test_a_node_allocatable_mapping_by_capacity_multiplier_excludes_a_device_multiplier() -> None:
    device = {"name": "d", "capacity": {"mem": {"value": "1Gi"}},
              "nodeAllocatableResources": {"memory": {"mapping": {"capacityMultiplier": "1", "deviceMultiplier": "1"}}}}
    where = ("spec", "devices", 0, "nodeAllocatableResources", "memory", "mapping")
    found = messages(resource_slice({"nodeName": "n1", "devices": [device]}))
    assert (where, "Invalid value: `deviceMultiplier` may not be set together with `capacityKey` and "
                   "`capacityMultiplier`", "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF") in found
