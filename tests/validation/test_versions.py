"""Served resource.k8s.io versions: which release serves what, the conversion to the stored v1 form and
back (v1beta1 -> v1 -> v1beta1 round-trips), and problems reported at the paths of the version written."""

from __future__ import annotations

from typing import Any

import pytest

from draconform.validation import validate_gates, validate_manifest
from draconform.validation.problems import Problem
from draconform.validation.versions import Checked, classify, from_v1, path_in, served_versions, to_v1

V1BETA1_SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice", "metadata": {"name": "node-1-gpus"},
    "spec": {"driver": "gpu.example.com", "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
             "nodeName": "node-1", "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}],
             "devices": [{"name": "gpu-0", "basic": {
                 "attributes": {"model": {"string": "a100"}}, "capacity": {"memory": {"value": "80Gi"}},
                 "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}],
                 "taints": [{"key": "example.com/broken", "effect": "NoSchedule"}]}}]},
}
V1BETA1_CLAIM: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ns"},
    "spec": {"devices": {"requests": [
        {"name": "one", "deviceClassName": "gpu.example.com", "count": 2, "allocationMode": "ExactCount",
         "selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
         "tolerations": [{"operator": "Exists"}], "adminAccess": False},
        {"name": "two", "firstAvailable": [{"name": "big", "deviceClassName": "gpu.example.com"}]},
    ], "constraints": [{"matchAttribute": "gpu.example.com/numa"}]}},
}


def test_each_release_serves_v1_and_the_betas_and_taint_rules_from_their_release() -> None:
    assert served_versions("ResourceClaim", "1.34") == ["v1", "v1beta2", "v1beta1"]
    assert served_versions("DeviceTaintRule", "1.35") == []
    assert served_versions("DeviceTaintRule", "1.36") == ["v1beta2"]
    assert served_versions("DeviceTaintRule", "1.37") == ["v1", "v1beta2"]


@pytest.mark.parametrize("obj", [V1BETA1_SLICE, V1BETA1_CLAIM])
def test_v1beta1_round_trips_through_v1(obj: dict[str, Any]) -> None:
    v1, problems = to_v1(obj)
    assert problems == []
    assert v1["apiVersion"] == "resource.k8s.io/v1" and v1 != obj
    assert from_v1(v1, "v1beta1") == obj


def test_the_conversion_moves_basic_and_flat_request_fields() -> None:
    slice_v1, _ = to_v1(V1BETA1_SLICE)
    assert slice_v1["spec"]["devices"][0]["taints"] == [{"key": "example.com/broken", "effect": "NoSchedule"}]
    assert "basic" not in slice_v1["spec"]["devices"][0]
    claim_v1, _ = to_v1(V1BETA1_CLAIM)
    one, two = claim_v1["spec"]["devices"]["requests"]
    assert one == {"name": "one", "exactly": {key: value for key, value in V1BETA1_CLAIM["spec"]["devices"][
        "requests"][0].items() if key != "name"}}
    assert two == V1BETA1_CLAIM["spec"]["devices"]["requests"][1]


def test_v1beta2_differs_from_v1_only_in_its_api_version() -> None:
    v1, _ = to_v1({**V1BETA1_CLAIM, "apiVersion": "resource.k8s.io/v1beta2", "spec": {"devices": {"requests": [
        {"name": "r", "exactly": {"deviceClassName": "x"}}]}}})
    assert v1["spec"]["devices"]["requests"] == [{"name": "r", "exactly": {"deviceClassName": "x"}}]
    assert from_v1(v1, "v1beta2")["apiVersion"] == "resource.k8s.io/v1beta2"


def test_problems_are_reported_at_the_paths_of_the_version_written() -> None:
    gates = validate_gates(None, "1.37")
    bad = {**V1BETA1_CLAIM, "spec": {"devices": {"requests": [{"name": "one", "count": -1}]}}}
    problems = validate_manifest(bad, gates)[1]
    fields = {(p.field, p.severity) for p in problems}
    assert ("spec.devices.requests[0].deviceClassName", "error") in fields
    assert ("spec.devices.requests[0].count", "error") in fields
    assert ("apiVersion", "warning") in fields  # served only when enabled
    slice_problems = validate_manifest({**V1BETA1_SLICE, "spec": {**V1BETA1_SLICE["spec"], "devices": [
        {"name": "gpu-0", "basic": {"attributes": {"model": {"string": "x" * 65}}}}]}}, gates)[1]
    assert "spec.devices[0].basic.attributes[model].string" in {p.field for p in slice_problems}
    assert path_in("v1", "ResourceSlice", ("spec", "devices", 0, "attributes")) == ("spec", "devices", 0, "attributes")


def test_an_unserved_version_names_the_served_ones() -> None:
    verdict = classify({"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim"}, "1.36")
    assert isinstance(verdict, Problem) and verdict.field == "apiVersion"
    assert "serves ResourceClaim as resource.k8s.io/v1, resource.k8s.io/v1beta2, resource.k8s.io/v1beta1" in \
        verdict.message
    taint_rule = classify({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule"}, "1.36")
    assert isinstance(taint_rule, Problem) and "resource.k8s.io/v1beta2" in taint_rule.message
    assert classify({"apiVersion": "apps/v1", "kind": "Deployment"}, "1.37") is Checked.CHECKED  # its pod template
    assert classify({"apiVersion": "example.com/v1", "kind": "Widget"}, "1.37") is Checked.NOT_CHECKED
    assert classify({"apiVersion": "v1", "kind": "Namespace"}, "1.37") is Checked.CHECKED
