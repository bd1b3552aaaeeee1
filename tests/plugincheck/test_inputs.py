"""plugin-check's input files go through the one reader of input: the hardened loader and a JSON Schema (the
claims' own kind schema, or schemas/harness/plugin-support.schema.json), each problem naming file, line, object
and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from draconform.kubeletplugin.types import API_VERSIONS
from draconform.paths import SCHEMAS_DIR
from draconform.plugincheck.claims import load_support
from draconform.reference.claimfiles import CheckInputError, load_claims
from draconform.reference.claimfiles import TestClaim as Claim

CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one, namespace: default, uid: 0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6}
spec:
  devices:
    requests: [{name: device, exactly: {deviceClassName: gpu}}]
status:
  allocation:
    devices:
      results: [{request: device, driver: gpu.example.com, pool: worker-1, device: gpu-0}]
"""


def test_the_schema_lists_the_protocol_versions_plugin_check_speaks() -> None:
    schema = json.loads((SCHEMAS_DIR / "harness" / "plugin-support.schema.json").read_text())
    assert tuple(schema["properties"]["versions"]["items"]["enum"]) == API_VERSIONS


def test_claims_are_checked_against_their_kind_schema(tmp_path: Path) -> None:
    path = tmp_path / "claims.yaml"
    path.write_text(CLAIM)
    (claim,) = load_claims([path], "gpu.example.com")
    assert claim.ref.name == "one"
    path.write_text(CLAIM.replace("deviceClassName: gpu}", "deviceClassName: gpu, count: two}"))
    with pytest.raises(CheckInputError) as raised:
        load_claims([path], "gpu.example.com")
    assert str(raised.value) == (f'{path}:6: ResourceClaim/one: spec.devices.requests[0].exactly.count: Invalid '
                                 'value: "two": must be of type integer')
    path.write_text(CLAIM.replace("apiVersion: resource.k8s.io/v1\n", "apiVersion: resource.k8s.io/v1beta1\n")
                    .replace("exactly: {deviceClassName: gpu}", "deviceClassName: gpu"))
    (claim,) = load_claims([path], "gpu.example.com")  # an older served version, read as validate reads it
    assert claim.obj["spec"]["devices"]["requests"][0]["exactly"] == {"deviceClassName": "gpu"}


def test_the_support_declaration_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "supports.yaml"
    claims = [Claim({"metadata": {"name": "one", "uid": "u"}})]
    path.write_text("versions: [v1, v2]\npermanentErrors:\n  claim: [one]\n"
                    "compatibilityGroups:\n  incompatibleClaims: [[one]]\n")
    with pytest.raises(CheckInputError) as raised:
        load_support(path, claims)
    assert str(raised.value).splitlines() == [
        f"{path}:1: plugin-check support declaration: versions[1]: Unsupported value: 'v2': supported values: "
        "'v1', 'v1beta1'",
        f"{path}:3: plugin-check support declaration: permanentErrors.claim: unknown field; known: claims, config",
        f"{path}:5: plugin-check support declaration: compatibilityGroups.incompatibleClaims[0]: Required value: "
        "must have at least 2 items"]
    path.write_text("permanentErrors: {claims: [two]}\n")
    with pytest.raises(CheckInputError, match=r"permanentErrors\.claims: claims two are not among the claims passed"):
        load_support(path, claims)
    path.write_text("versions: [v1]\ncompatibilityGroups: {incompatibleClaims: [[one, one]]}\n")
    support = load_support(path, claims)
    assert (support.versions, support.incompatible_claims) == (("v1",), (("one", "one"),))
