"""KEP-3063/SERVED-VERSIONS-ROUND-TRIP over the schemas: an object of each DRA kind with every field its v1
schema has (one entry per list and map, the first choice of each one-of), read through each older served
version (`from_v1`) and written back (`to_v1`), is the object it was, with no problem reported. A conversion
that forgets a field of a version's other shape (a request's field left beside `exactly`, a device's beside
`basic`) fails here whichever field it is, not only the ones a manifest happens to set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from draconform.validation.versions import SERVED, from_v1, to_v1

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
KIND_FILES = {"DeviceClass": "deviceclass", "ResourceSlice": "resourceslice", "ResourceClaim": "resourceclaim",
              "ResourceClaimTemplate": "resourceclaimtemplate", "DeviceTaintRule": "devicetaintrule"}
MAX_DEPTH = 40  # against a recursive schema; the DRA kinds nest (refs counted) less than half as deep


def _load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _resolve(ref: str, here: Path) -> tuple[dict[str, Any], Path]:
    file, _, pointer = ref.partition("#")
    path = (here.parent / file).resolve() if file else here
    node: Any = _load(path)
    for part in filter(None, pointer.split("/")):
        node = node[part]
    return node, path


def _every_field(schema: dict[str, Any], here: Path, depth: int = 0) -> Any:
    """One value with every property the schema allows, filled in depth first."""
    assert depth < MAX_DEPTH, f"schema nesting deeper than {MAX_DEPTH} at {here}"
    if "$ref" in schema:
        target, path = _resolve(schema["$ref"], here)
        return _every_field({**target, **{k: v for k, v in schema.items() if k != "$ref"}}, path, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for combinator in ("allOf", "anyOf", "oneOf"):
        if combinator in schema and "properties" not in schema and "type" not in schema:
            return _every_field(schema[combinator][0], here, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "object" or "properties" in schema:
        value = {name: _every_field(sub, here, depth + 1) for name, sub in (schema.get("properties") or {}).items()}
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            value["example.com/entry"] = _every_field(extra, here, depth + 1)
        return value
    if kind == "array":
        return [_every_field(schema.get("items") or {"type": "string"}, here, depth + 1)]
    return {"integer": 1, "number": 1, "boolean": True, "null": None}.get(str(kind), "text")


def _without(value: Any, drop: str, beside: str) -> Any:
    """A copy with `drop` left out of every mapping that also has `beside`."""
    if isinstance(value, dict):
        return {k: _without(v, drop, beside) for k, v in value.items() if not (k == drop and beside in value)}
    if isinstance(value, list):
        return [_without(item, drop, beside) for item in value]
    return value


def _objects(kind: str) -> list[dict[str, Any]]:
    path = SCHEMAS / "resource.k8s.io" / "v1" / f"{KIND_FILES[kind]}.schema.json"
    full = _every_field(_load(path), path)
    # A request is either `exactly` or `firstAvailable`; each shape converts on its own branch.
    return [full, _without(full, "firstAvailable", "exactly"), _without(full, "exactly", "firstAvailable")]


CASES = [(kind, version) for kind, versions in SERVED.items() for version in versions if version != "v1"]


@pytest.mark.parametrize(("kind", "version"), CASES, ids=[f"{k}-{v}" for k, v in CASES])
def test_every_field_survives_a_trip_through_an_older_version(kind: str, version: str) -> None:
    for obj in _objects(kind):
        assert obj["apiVersion"] == "resource.k8s.io/v1" and obj["kind"] == kind
        older = from_v1(obj, version)
        assert older["apiVersion"] == f"resource.k8s.io/{version}"
        back, problems = to_v1(older)
        assert problems == []
        assert back == obj


def test_the_generated_objects_have_the_fields_that_move() -> None:
    """The generator reaches the fields v1beta1 keeps elsewhere, so the trip above is not vacuous."""
    claim = _objects("ResourceClaim")[1]
    request = claim["spec"]["devices"]["requests"][0]
    assert set(request) == {"name", "exactly"} and {"tolerations", "capacity", "count"} <= set(request["exactly"])
    device = _objects("ResourceSlice")[0]["spec"]["devices"][0]
    assert {"attributes", "capacity", "taints", "bindsToNode"} <= set(device)
    assert "basic" in from_v1(_objects("ResourceSlice")[0], "v1beta1")["spec"]["devices"][0]
