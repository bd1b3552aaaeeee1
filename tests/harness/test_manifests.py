"""Named manifests: objects several scenarios of a folder share, loaded from `<folder>/manifests/`."""

from __future__ import annotations

from pathlib import Path

import pytest

from draconform.paths import FEATURES_DIR
from draconform.steps.common import MANIFESTS, ScenarioContext, load_docstring, manifest


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
    assert load_docstring(path.read_text(encoding="utf-8"))
    folder = path.parent.parent
    users = [f for f in folder.glob("*.feature") if path.name in f.read_text(encoding="utf-8")]
    assert users, f"no feature file of {folder.name} loads {path.name}"
