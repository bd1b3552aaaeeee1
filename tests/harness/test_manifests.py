"""Named manifests: objects several scenarios of a folder share, loaded from `<folder>/manifests/`, whole or
as a field variant (`the ResourceClaim "one-gpu" from the manifests with:` and a table of changes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from draconform.paths import FEATURES_DIR
from draconform.steps.manifests import (
    MANIFESTS,
    load_docstring,
    manifest,
    manifest_object,
    manifest_variant,
    set_fields,
)
from draconform.steps.scenario import ScenarioContext


def test_a_manifest_is_read_like_a_docstring_with_kinds_filled_in(tmp_path: Path) -> None:
    (tmp_path / MANIFESTS).mkdir()
    (tmp_path / MANIFESTS / "slice.yaml").write_text("metadata: {name: s}\nspec: {driver: d}\n", encoding="utf-8")
    (obj,) = manifest(ScenarioContext(feature_dir=tmp_path), "slice.yaml", kind="ResourceSlice")
    assert obj == {"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1", "metadata": {"name": "s"},
                   "spec": {"driver": "d"}}


def test_a_missing_manifest_names_the_folder_and_the_manifests_there(tmp_path: Path) -> None:
    (tmp_path / MANIFESTS).mkdir()
    (tmp_path / MANIFESTS / "classes.yaml").write_text("kind: DeviceClass\n", encoding="utf-8")
    with pytest.raises(FileNotFoundError, match=r"no manifest .clases.yaml. in .*\(there are: classes.yaml\)"):
        manifest(ScenarioContext(feature_dir=tmp_path), "clases.yaml")


def test_a_broken_manifest_names_its_file(tmp_path: Path) -> None:
    (tmp_path / MANIFESTS).mkdir()
    (tmp_path / MANIFESTS / "bad.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"manifest .*bad.yaml: a docstring document must be a mapping"):
        manifest(ScenarioContext(feature_dir=tmp_path), "bad.yaml")


@pytest.mark.parametrize("path", sorted(FEATURES_DIR.glob(f"*/{MANIFESTS}/*.yaml")), ids=lambda p: p.name)
def test_every_shipped_manifest_loads_and_is_used(path: Path) -> None:
    objects = load_docstring(path.read_text(encoding="utf-8"))
    assert objects
    texts = [f.read_text(encoding="utf-8") for f in path.parent.parent.glob("*.feature")]
    if any(path.name in text for text in texts):
        return
    unused = [f"{obj['kind']} {obj['metadata']['name']!r}" for obj in objects
              if not any(f'{obj["kind"]} "{obj["metadata"]["name"]}" from the manifests' in text for text in texts)]
    assert unused == [], f"{path.name}: no feature file of {path.parent.parent.name} uses these objects"


@pytest.fixture
def folder(tmp_path: Path) -> ScenarioContext:
    (tmp_path / MANIFESTS).mkdir()
    (tmp_path / MANIFESTS / "claims.yaml").write_text(
        "kind: ResourceClaim\nmetadata: {name: one-gpu}\nspec:\n  devices:\n    requests:\n"
        "    - {name: gpu, exactly: {deviceClassName: gpu, tolerations: [{key: k}]}}\n", encoding="utf-8")
    return ScenarioContext(feature_dir=tmp_path)


def _table(*rows: tuple[str, str]) -> list[list[str]]:
    return [["field", "value"], *map(list, rows)]


def test_a_field_variant_sets_adds_drops_grows_and_pads_fields(folder: ScenarioContext) -> None:
    obj = manifest_variant(folder, "ResourceClaim", "one-gpu", " with:", _table(
        ("spec.devices.requests[0].exactly.count", "2"),
        ("spec.devices.requests[0].exactly.allocationMode", "ExactCount"),
        ("spec.devices.requests[0].exactly.deviceClassName", '(padded with "x" to 5 characters)'),
        ("spec.devices.requests[0].exactly.tolerations", "(3 items)"),
        ("spec.devices.requests[0].name", '"1.2"'),
        ("spec.devices.constraints", "(absent)"),
        ("spec.devices.requests[0].exactly.selectors", "[{cel: {expression: 'true'}}]"),
    ))
    exactly = obj["spec"]["devices"]["requests"][0]["exactly"]
    assert exactly["count"] == 2 and exactly["allocationMode"] == "ExactCount"
    assert exactly["deviceClassName"] == "gpuxx"
    assert exactly["tolerations"] == [{"key": "k"}, {"key": "k"}, {"key": "k"}]
    assert exactly["selectors"] == [{"cel": {"expression": "true"}}]
    assert obj["spec"]["devices"]["requests"][0]["name"] == "1.2"
    assert obj["metadata"] == {"name": "one-gpu", "namespace": "default"}
    # Each use reads the manifest afresh: one scenario's variant does not leak into the next.
    assert "count" not in manifest_object(folder, "ResourceClaim", "one-gpu")[1]["spec"]["devices"]["requests"][0][
        "exactly"]


def test_an_unknown_object_names_the_folder_and_what_is_there(folder: ScenarioContext) -> None:
    with pytest.raises(LookupError, match=r"no ResourceClaim 'two-gpus' in the manifests of .*manifests "
                                          r"\(there are: ResourceClaim 'one-gpu' \(claims.yaml\)\)"):
        manifest_variant(folder, "ResourceClaim", "two-gpus", None, None)


@pytest.mark.parametrize(("path", "value", "problem"), [
    ("spec.devices.requests[1].name", "x", r"spec.devices.requests has 1 item\(s\), no \[1\]"),
    ("spec.device.requests[0]", "x", r"spec.device does not exist \(the keys there: devices\)"),
    ("spec.devices.requests[0].name.first", "x", r"cannot take 'first'"),
    ("spec.devices.requests[0].exactly.count", "", r"an empty value"),
    ("spec.devices.requests[0].exactly.deviceClassName", "(2 items)", r"needs a list or map"),
    ("spec.devices.requests", '(padded with "x" to 5 characters)', r"needs a string to pad"),
    ("spec.devices.requests[0].exactly.count", "[1, ", r"is not YAML"),
])
def test_a_bad_change_names_the_manifest_the_object_and_the_path(folder: ScenarioContext, path: str, value: str,
                                                                 problem: str) -> None:
    with pytest.raises(ValueError, match=rf"manifest .*claims.yaml: ResourceClaim 'one-gpu': {path.replace('[', '.')}"
                                         rf".*{problem}") as raised:
        manifest_variant(folder, "ResourceClaim", "one-gpu", " with:", _table((path, value)))
    assert path in str(raised.value)


def test_a_table_needs_its_header_and_the_step_its_colon(folder: ScenarioContext) -> None:
    with pytest.raises(ValueError, match=r"must start with the header \| field \| value \|"):
        set_fields({}, [["spec.x", "1"]], "where")
    with pytest.raises(ValueError, match=r"claims.yaml: ResourceClaim 'one-gpu': a step ending in 'with:' takes a "
                                         r"table"):
        manifest_variant(folder, "ResourceClaim", "one-gpu", None, _table(("spec.x", "1")))
