"""The project's JSON Schemas (schemas/) against upstream's published API schema of every release validate serves
(1.34-1.37), in each served version with the v1 shapes (v1, v1beta2), so drift shows up here rather than as a
user's false finding: every field upstream has is in our schema with the same type, every field our schema has is
upstream's in that release or one the gated-field table (draconform/validation/gates.py) says the release does not
know yet, and the required lists agree. The upstream side is the compact extract in tests/validation/openapi/
(see extract.py there for its source). That source carries no enums (the 1.33 OpenAPI read while writing this
declared none on these types' fields either: allowed values live in descriptions and validation code), so enums
are not compared here; our schemas' enums are checked by the rules' scenarios."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from draconform.kube.featuregates import FeatureGates
from draconform.validation.gates import unknown_fields
from draconform.validation.schema import kind_schema

OPENAPI = Path(__file__).parent / "openapi"
RELEASES = ("1.34", "1.35", "1.36", "1.37")
# Our one schema per kind (v1) against each served version with the v1 shapes: kind -> (apiVersion of our
# schema, upstream version -> first release serving it). v1beta1 keeps other shapes (a device's `basic`, flat
# requests); draconform converts it (draconform/validation/versions.py) and tests that conversion on its own.
KINDS = {
    **{kind: ("resource.k8s.io/v1", {"v1": "1.34", "v1beta2": "1.34"})
       for kind in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")},
    "DeviceTaintRule": ("resource.k8s.io/v1", {"v1": "1.37", "v1beta2": "1.36"}),
}
# The value type of each map field (the extract's source types maps only as `dict`); a new map field upstream
# fails the test until it is named here.
MAP_VALUES = {
    ("Device", "attributes"): "DeviceAttribute",
    ("Device", "capacity"): "DeviceCapacity",
    ("Device", "nodeAllocatableResources"): "NodeAllocatableResource",
    ("Device", "nodeAllocatableResourceMappings"): "NodeAllocatableResourceMapping",
    ("CounterSet", "counters"): "Counter",
    ("DeviceCounterConsumption", "counters"): "Counter",
    ("CapacityRequirements", "requests"): "quantity",
    ("DeviceRequestAllocationResult", "consumedCapacity"): "quantity",
}
# Known, explained differences, by (upstream type, field). A difference not listed fails the test.
ZERO_VALUE = "kube-apiserver decodes a missing field to its zero value, which validation accepts (the decoder does " \
             "not enforce OpenAPI's required list)"
ONE_OF = "the only member of a one-of: validation requires it although the OpenAPI lists it as optional"
REQUIRED_DIFFERENCES = {
    ("DeviceClass", "spec"): ZERO_VALUE,
    ("ResourceClaim", "spec"): ZERO_VALUE,
    ("ResourceClaimTemplate", "spec"): ZERO_VALUE,
    ("ResourceClaimTemplateSpec", "spec"): ZERO_VALUE,
    ("ResourcePool", "generation"): ZERO_VALUE,
    ("DeviceSelector", "cel"): ONE_OF,
    ("DeviceClassConfiguration", "opaque"): ONE_OF,
    ("DeviceClaimConfiguration", "opaque"): ONE_OF,
    ("DeviceAllocationConfiguration", "opaque"): ONE_OF,
}
FIELD_DIFFERENCES = {
    ("DeviceRequestAllocationResult", "compatibilityGroups"):
        "KEP-5963's snapshot of a device's groups in the allocation result (docs/decisions.md D-5963-2), which "
        "upstream's 1.37 API does not carry",
    ("Device", "nodeAllocatableResourceMappings"):
        "1.36's alpha name of what 1.37 calls nodeAllocatableResources, of another shape: known to 1.36 only "
        "(draconform/validation/gates.py `until`), checked as 1.36 checks it; a live run carries the 1.37 field to "
        "it where both shapes say the same, draconform/live/releases.py",
    ("Device", "nodeAllocatableResources"):
        "1.37's name of 1.36's alpha nodeAllocatableResourceMappings",
}
# Our kind schemas require what a manifest must say; upstream's types leave apiVersion, kind and metadata optional
# because the server fills them in.
OURS_ONLY_REQUIRED = {"apiVersion", "kind", "metadata"}
JSON_TYPES = {"string": "string", "integer": "integer", "boolean": "boolean", "number": "number",
              "time": "string", "raw": "object", "condition": "object"}


@cache
def upstream(release: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((OPENAPI / f"kubernetes-{release}.json").read_text(encoding="utf-8"))
    return data


class Walker:
    """Walks an upstream type and our schema side by side, collecting differences as readable lines."""

    def __init__(self, release: str, kind: str) -> None:
        self.release, self.kind = release, kind
        self.types = upstream(release)["types"]
        schema = kind_schema(KINDS[kind][0], kind)
        assert schema is not None
        self.resolver = schema.validator._resolver
        self.root = schema.schema
        unknown = unknown_fields(FeatureGates(release=release))
        self.not_yet = {gated.path for gated in unknown if gated.kind == kind}
        self.seen: set[tuple[str, str]] = set()
        self.findings: list[str] = []

    def resolve(self, node: Any, resolver: Any) -> tuple[dict[str, Any], Any]:
        """Follow `$ref`s and merge `allOf` branches (dropping a `null` branch of anyOf/oneOf) into the one node
        that says the type, properties and required list."""
        while isinstance(node, dict) and "$ref" in node and "properties" not in node and "type" not in node:
            resolved = resolver.lookup(node["$ref"])
            node, resolver = {**resolved.contents, **{k: v for k, v in node.items() if k != "$ref"}}, \
                resolved.resolver
        if not isinstance(node, dict):
            return {}, resolver
        branches = [b for b in node.get("anyOf", []) + node.get("oneOf", [])
                    if not (isinstance(b, dict) and b.get("type") == "null")]
        parts = list(node.get("allOf", [])) + (branches if len(branches) == 1 else [])
        if not parts:
            return node, resolver
        merged: dict[str, Any] = {k: v for k, v in node.items() if k not in ("allOf", "anyOf", "oneOf")}
        for part in parts:
            part, resolver = self.resolve(part, resolver)
            for key, value in part.items():
                if key == "properties":
                    merged["properties"] = {**value, **merged.get("properties", {})}
                    for name, extra in (node.get("properties") or {}).items():
                        if name in value and isinstance(value[name], dict):  # a refinement of the same field
                            merged["properties"][name] = {"allOf": [value[name], extra]}
                elif key == "required":
                    merged["required"] = sorted(set(merged.get("required", [])) | set(value))
                else:
                    merged.setdefault(key, value)
        return merged, resolver

    def type_of(self, node: dict[str, Any]) -> set[str]:
        declared = node.get("type")
        if isinstance(declared, str):
            return {declared}
        if isinstance(declared, list):
            return set(declared)
        values = [node["const"]] if "const" in node else node.get("enum") or []
        if values:
            return {{str: "string", bool: "boolean", int: "integer", float: "number"}.get(type(v), "?")
                    for v in values}
        if "properties" in node or "additionalProperties" in node:
            return {"object"}
        return set()

    def compare(self, type_name: str, node: Any, resolver: Any, path: tuple[str, ...]) -> None:
        bare = type_name.rpartition(".")[2]
        node, resolver = self.resolve(node, resolver)
        key = (type_name, json.dumps(path))
        if key in self.seen:
            return
        self.seen.add(key)
        where = ".".join(path) or "<root>"
        entry = self.types[type_name]
        properties: dict[str, Any] = node.get("properties") or {}
        for field, field_type in entry["fields"].items():
            if field not in properties:
                if (bare, field) in FIELD_DIFFERENCES:
                    continue
                self.findings.append(f"{where}: upstream {type_name} has `{field}` ({field_type}); our schema lacks it")
                continue
            self.field(type_name, field, field_type, properties[field], resolver, (*path, field))
        for field in properties:
            if field not in entry["fields"] and ".".join((*path, field)) not in self.not_yet and \
                    (bare, field) not in FIELD_DIFFERENCES:
                self.findings.append(f"{where}: our schema has `{field}`; upstream {type_name} in {self.release} has "
                                     "no such field and the gated-field table does not say it comes later")
        explained = {field for owner, field in REQUIRED_DIFFERENCES if owner == bare}
        ours = set(node.get("required") or []) - (OURS_ONLY_REQUIRED if not path else set()) - explained
        theirs = set(entry["required"]) - (OURS_ONLY_REQUIRED if not path else set()) - explained
        if ours != theirs:
            self.findings.append(f"{where}: required {sorted(ours)} in our schema, {sorted(theirs)} upstream")

    def field(self, owner: str, field: str, field_type: str, node: Any, resolver: Any,
              path: tuple[str, ...]) -> None:
        node, resolver = self.resolve(node, resolver)
        where = ".".join(path)
        if field_type.startswith("[]"):
            if "array" not in self.type_of(node):
                self.findings.append(f"{where}: upstream a list of {field_type[2:]}; ours {self.type_of(node)}")
                return
            self.value(field_type[2:], node.get("items"), resolver, (*path, "*"))
        elif field_type == "map":
            value_type = MAP_VALUES.get((owner.rpartition(".")[2], field))
            if value_type is None:
                self.findings.append(f"{where}: upstream map {owner}.{field}: name its value type in MAP_VALUES")
                return
            if "object" not in self.type_of(node):
                self.findings.append(f"{where}: upstream a map; ours {self.type_of(node)}")
                return
            if value_type != "quantity":  # a type of the owner's own API version
                value_type = f"{owner.rpartition('.')[0]}.{value_type}"
            self.value(value_type, node.get("additionalProperties"), resolver, (*path, "*"))
        else:
            self.value(field_type, node, resolver, path)

    def value(self, value_type: str, node: Any, resolver: Any, path: tuple[str, ...]) -> None:
        node, resolver = self.resolve(node, resolver)
        where = ".".join(path)
        if value_type in ("objectmeta", "listmeta"):
            return  # ours is the lighter objectMeta every kind shares (checked by the metadata rules)
        if value_type == "quantity":
            if not {"string"} <= self.type_of(node) and "pattern" not in node:
                self.findings.append(f"{where}: upstream a quantity (a string); ours {self.type_of(node)}")
            return
        if value_type in JSON_TYPES:
            if JSON_TYPES[value_type] not in self.type_of(node):
                self.findings.append(f"{where}: upstream {value_type}; ours {self.type_of(node) or 'untyped'}")
            return
        if "object" not in self.type_of(node):
            self.findings.append(f"{where}: upstream {value_type}; ours {self.type_of(node) or 'untyped'}")
            return
        self.compare(value_type, node, resolver, path)


def served(release: str) -> Iterator[tuple[str, str]]:
    """(kind, upstream version) pairs the release serves."""
    for kind, (_, versions) in KINDS.items():
        for version, since in versions.items():
            if tuple(map(int, since.split("."))) <= tuple(map(int, release.split("."))):
                yield kind, version


@pytest.mark.parametrize(("release", "kind", "version"), [(r, *kv) for r in RELEASES for kv in served(r)])
def test_our_schema_matches_upstreams_published_one(release: str, kind: str, version: str) -> None:
    walker = Walker(release, kind)
    walker.compare(f"resource.{version}.{kind}", walker.root, walker.resolver, ())
    assert walker.findings == [], "\n".join(walker.findings)


@pytest.mark.parametrize("release", RELEASES)
def test_a_pods_claims_match_upstreams_published_ones(release: str) -> None:
    """Pod and every workload's template: spec.resourceClaims and the containers' resources.claims."""
    schema = kind_schema("v1", "Pod")
    assert schema is not None
    walker = Walker.__new__(Walker)
    walker.release, walker.kind, walker.types = release, "Pod", upstream(release)["types"]
    walker.resolver, walker.root, walker.not_yet = schema.validator._resolver, schema.schema, set()
    walker.seen, walker.findings = set(), []
    spec, resolver = walker.resolve(schema.schema["properties"]["spec"], walker.resolver)
    properties = spec["properties"]
    podspec = walker.types["core.v1.PodSpec"]["fields"]
    for field in ("resourceClaims", "containers", "initContainers", "ephemeralContainers"):
        walker.field("core.v1.PodSpec", field, podspec[field], properties[field], resolver, ("spec", field))
    # our pod schema types only the claims of a container; the rest of a container passes unchecked
    expected = {"core.v1.Container", "core.v1.EphemeralContainer"}
    findings = [f for f in walker.findings if not any(f"upstream {t} has `" in f for t in expected) or
                "`resources`" in f or "`name`" in f]
    assert findings == [], "\n".join(findings)


def test_the_extracts_say_where_they_come_from() -> None:
    for release in RELEASES:
        data = upstream(release)
        assert data["release"] == release and "lightkube-models" in data["source"]
        assert "resource.v1.ResourceClaim" in data["types"] and "core.v1.PodResourceClaim" in data["types"]


def test_every_explained_difference_is_still_a_difference() -> None:
    """An entry of the tables that upstream no longer differs on is stale: remove it."""
    for owner, field in REQUIRED_DIFFERENCES:
        assert any(f"resource.v1.{owner}" in upstream(r)["types"] and
                   field in upstream(r)["types"][f"resource.v1.{owner}"]["fields"] for r in RELEASES), (owner, field)
    for owner, field in FIELD_DIFFERENCES:
        assert any(f"resource.v1.{owner}" in upstream(r)["types"] for r in RELEASES), (owner, field)


def test_drift_is_caught() -> None:
    """The comparison fails on the drift it is there for: a field upstream adds, one it drops, a type it changes,
    a field it comes to require."""
    walker = Walker("1.37", "DeviceClass")
    walker.types = json.loads(json.dumps(walker.types))
    spec = walker.types["resource.v1.DeviceClassSpec"]
    spec["fields"]["newField"] = "string"
    del spec["fields"]["config"]
    spec["fields"]["extendedResourceName"] = "integer"
    spec["required"] = ["selectors"]
    walker.compare("resource.v1.DeviceClass", walker.root, walker.resolver, ())
    assert sorted(walker.findings) == sorted([
        "spec: upstream resource.v1.DeviceClassSpec has `newField` (string); our schema lacks it",
        "spec.extendedResourceName: upstream integer; ours {'string'}",
        "spec: our schema has `config`; upstream resource.v1.DeviceClassSpec in 1.37 has no such field and the "
        "gated-field table does not say it comes later",
        "spec: required [] in our schema, ['selectors'] upstream"])
