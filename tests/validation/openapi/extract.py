"""Writes the compact extracts of upstream's published API schema that test_openapi_drift.py compares
schemas/ with: for one Kubernetes release, every resource.k8s.io/v1 and v1beta2 type (v1beta2 has the v1
shapes) and the core/v1 types a Pod's resource claims need, each as its fields (name -> type) and its required
fields.

The source is lightkube-models X.Y.*, whose modules are generated from the release's published OpenAPI
(api/openapi-spec of kubernetes/kubernetes at the release tag): `lightkube/models/resource_v1.py` and
`core_v1.py` hold one dataclass per schema definition, a field without a default being required. Map fields
are typed only as `dict` there (their value type is lost); the drift test names their value types itself.

    pip download --no-deps 'lightkube-models==1.36.*' -d /tmp/lkm   # one wheel per release, unzipped
    python tests/validation/openapi/extract.py 1.36 /tmp/lkm/lightkube_models-1.36.3.8-py3-none-any

Not a test module: run by hand when a release is added."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
# core/v1 types a Pod's resource claims need, and the fields of each that DRA touches (None: all of them)
CORE: dict[str, tuple[str, ...] | None] = {
    "PodSpec": ("resourceClaims", "containers", "initContainers", "ephemeralContainers"),
    "PodTemplateSpec": ("metadata", "spec"),
    "Container": ("name", "resources"),
    "EphemeralContainer": ("name", "resources"),
    "ResourceRequirements": ("claims",),
    "ResourceClaim": None,
    "PodResourceClaim": None,
    "NodeSelector": None,
    "NodeSelectorTerm": None,
    "NodeSelectorRequirement": None,
}
SCALARS = {"str": "string", "int": "integer", "bool": "boolean", "float": "number", "dict": "map",
           "resource.Quantity": "quantity", "meta_v1.Time": "time", "meta_v1.MicroTime": "time",
           "runtime.RawExtension": "raw", "meta_v1.ObjectMeta": "objectmeta", "meta_v1.ListMeta": "listmeta",
           "meta_v1.Condition": "condition"}


def _type(annotation: str, module: str) -> tuple[str, bool]:
    """The extract's name of a lightkube annotation, and whether it is optional."""
    optional = annotation.startswith("Optional[")
    if optional:
        annotation = annotation[len("Optional["):-1]
    listed = re.fullmatch(r"List\[(.*)\]", annotation)
    inner = listed.group(1) if listed else annotation
    if inner in SCALARS:
        name = SCALARS[inner]
    elif "." in inner:
        prefix, _, cls = inner.partition(".")
        name = f"{prefix.replace('_', '.')}.{cls}"
    else:
        name = f"{module}.{inner}"
    return ("[]" if listed else "") + name, optional


def _classes(path: Path, module: str) -> dict[str, dict[str, Any]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, dict[str, Any]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        fields: dict[str, str] = {}
        required: list[str] = []
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and \
                    isinstance(item.annotation, ast.Constant):
                name, optional = _type(str(item.annotation.value), module)
                fields[item.target.id] = name
                if item.value is None and not optional:
                    required.append(item.target.id)
        found[f"{module}.{node.name}"] = {"fields": fields, "required": sorted(required)}
    return found


def extract(release: str, package: Path) -> dict[str, Any]:
    models = package / "lightkube" / "models"
    types = _classes(models / "resource_v1.py", "resource.v1")
    types.update(_classes(models / "resource_v1beta2.py", "resource.v1beta2"))  # the v1 shapes, served too
    core = _classes(models / "core_v1.py", "core.v1")
    for name, wanted in CORE.items():
        entry = core[f"core.v1.{name}"]
        if wanted is not None:
            entry = {"fields": {k: v for k, v in entry["fields"].items() if k in wanted},
                     "required": [k for k in entry["required"] if k in wanted]}
        types[f"core.v1.{name}"] = entry
    version = [*package.name.split("-"), "?"][1]
    return {"release": release,
            "source": f"lightkube-models {version} (generated from Kubernetes {release}'s published OpenAPI)",
            "types": dict(sorted(types.items()))}


if __name__ == "__main__":
    release, package = sys.argv[1], Path(sys.argv[2])
    out = HERE / f"kubernetes-{release}.json"
    out.write_text(json.dumps(extract(release, package), indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {out}")
