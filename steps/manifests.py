"""The objects a scenario writes, from its own words: YAML docstrings (`load_docstring`), the named manifests
beside a folder's feature files (`manifest`, `manifest_object`) and a table of the fields a scenario varies
(`manifest_variant`, `set_fields`), and bare objects by kind and name (`named`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from draconform.kube.kinds import NAMESPACED
from draconform.steps.scenario import ScenarioContext
from draconform.sut import (
    Obj,
)

NAMESPACE = "default"
API_VERSIONS = {
    "DeviceClass": "resource.k8s.io/v1",
    "ResourceSlice": "resource.k8s.io/v1",
    "ResourceClaim": "resource.k8s.io/v1",
    "ResourceClaimTemplate": "resource.k8s.io/v1",
    "DeviceTaintRule": "resource.k8s.io/v1",
    "Pod": "v1",
    "Node": "v1",
}


MANIFESTS = "manifests"  # beside the feature files of a folder: objects several scenarios share


def manifest(ctx: ScenarioContext, name: str, kind: str | None = None) -> list[Obj]:
    """The objects of a named manifest, `<feature folder>/manifests/<name>`, read as a docstring is."""
    assert ctx.feature_dir is not None, "the scenario's feature file is not known"
    path = ctx.feature_dir / MANIFESTS / name
    if not path.is_file():
        known = sorted(p.name for p in (ctx.feature_dir / MANIFESTS).glob("*.yaml"))
        raise FileNotFoundError(f"no manifest {name!r} in {path.parent} (there are: {', '.join(known) or 'none'})")
    try:
        return load_docstring(path.read_text(encoding="utf-8"), kind)
    except (yaml.YAMLError, ValueError) as exc:
        raise ValueError(f"manifest {path}: {exc}") from exc


def manifest_object(ctx: ScenarioContext, kind: str, name: str) -> tuple[Path, Obj]:
    """The one object of `kind` called `name` among the feature folder's manifests, and its file."""
    assert ctx.feature_dir is not None, "the scenario's feature file is not known"
    folder = ctx.feature_dir / MANIFESTS
    found: list[tuple[Path, Obj]] = []
    known: list[str] = []
    for path in sorted(folder.glob("*.yaml")):
        for obj in manifest(ctx, path.name):
            known.append(f"{obj.get('kind')} {(obj.get('metadata') or {}).get('name')!r} ({path.name})")
            if obj.get("kind") == kind and (obj.get("metadata") or {}).get("name") == name:
                found.append((path, obj))
    if len(found) != 1:
        problem = "no" if not found else f"{len(found)}"
        raise LookupError(f"{problem} {kind} {name!r} in the manifests of {folder} (there are: "
                          f"{', '.join(known) or 'none'})")
    return found[0]


def manifest_variant(ctx: ScenarioContext, kind: str, name: str, changes: str | None,
                     table: list[list[str]] | None) -> Obj:
    """A named object of the manifests, changed as the step's table says (`set_fields`); `changes` is the
    step's closing `with:` (or `and:`), which a table must follow and only then."""
    file, obj = manifest_object(ctx, kind, name)
    where = f"manifest {file}: {kind} {name!r}"
    if (changes is None) != (table is None):
        raise ValueError(f"{where}: a step ending in 'with:' takes a table of changes, and only such a step")
    if table is not None:
        set_fields(obj, table, where)
    if kind in NAMESPACED:
        obj.setdefault("metadata", {}).setdefault("namespace", NAMESPACE)
    return obj


def parse_path(text: str) -> list[str | int]:
    """`spec.devices[0].attributes[gpu.example.com/model]` -> ["spec", "devices", 0, "attributes", "gpu..."]."""
    parts: list[str | int] = []
    for name, index in re.findall(r"([^.\[\]]+)|\[([^\]]*)\]", text):
        parts.append(name if name else int(index) if index.isdigit() else index)
    return parts


# The values of a field-variant table (`set_fields`) that are not YAML: leave the field out; grow a list or
# map to N entries; pad a string to N characters.
ABSENT = "(absent)"
ITEMS = re.compile(r"\((?P<count>\d+) items\)")
PADDED = re.compile(r'\(padded with "(?P<fill>[^"]*)" to (?P<length>\d+) characters\)')


def set_fields(obj: Obj, table: list[list[str]], where: str) -> Obj:
    """Change `obj` as a step's table says, row after row: a header `| field | value |`, then a field path
    (`spec.devices[0].name`, as `parse_path` reads it) and its new value, written as YAML (`3`, `true`,
    `"1.2"`, `[a, b]`, `{key: k}`); or `(absent)` to leave the field out; or `(N items)` to grow the list or
    map there to N entries by repeating its last one (names made distinct); or `(padded with "x" to N
    characters)`. Every part of a path but the last must exist; the last may be a new key of a mapping. A
    problem names `where` (the manifest and object) and the path."""
    if not table or [cell.strip() for cell in table[0]] != ["field", "value"]:
        raise ValueError(f"{where}: the table of changes must start with the header | field | value |")
    for row in table[1:]:
        if len(row) != 2:
            raise ValueError(f"{where}: a row of changes has {len(row)} cells, expected 2: {row}")
        path, text = row[0].strip(), row[1].strip()
        parts = parse_path(path)
        if not parts:
            raise ValueError(f"{where}: an empty field path")
        parent: Any = obj
        for depth, part in enumerate(parts[:-1]):
            parent = _step_into(parent, part, where, path, parts[: depth + 1])
        last = parts[-1]
        if text == ABSENT and isinstance(parent, dict):
            parent.pop(last, None)
        elif text == ABSENT:
            _step_into(parent, last, where, path, parts)
            del parent[last]
        elif (items := ITEMS.fullmatch(text)) or (padded := PADDED.fullmatch(text)):
            target = _step_into(parent, last, where, path, parts)
            try:
                if items:
                    grow_to(target, int(items["count"]))
                elif padded:
                    parent[last] = pad_to(target, padded["fill"], int(padded["length"]))
            except ValueError as exc:
                raise ValueError(f"{where}: {path}: {exc}") from exc
        else:
            _check_parent(parent, last, where, path, parts)
            parent[last] = _value(text, where, path)
    return obj


def _value(text: str, where: str, path: str) -> Any:
    if not text:
        raise ValueError(f'{where}: {path}: an empty value (write "" for the empty string, {ABSENT} to leave the '
                         "field out)")
    try:
        return yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError as exc:
        raise ValueError(f"{where}: {path}: the value {text!r} is not YAML: {exc}") from exc


def _check_parent(parent: Any, last: str | int, where: str, path: str, parts: list[str | int]) -> None:
    if isinstance(parent, list):
        _step_into(parent, last, where, path, parts)
    elif not isinstance(parent, dict) or not isinstance(last, str):
        raise ValueError(f"{where}: {path}: {_shown(parts[:-1])} is a {type(parent).__name__}, cannot take "
                         f"{last!r}")


def _step_into(value: Any, part: str | int, where: str, path: str, so_far: list[str | int]) -> Any:
    """`value[part]`, or an error naming `where`, the path and how far it resolved."""
    if isinstance(value, list) and isinstance(part, int):
        if part < len(value):
            return value[part]
        raise ValueError(f"{where}: {path}: {_shown(so_far[:-1])} has {len(value)} item(s), no [{part}]")
    if isinstance(value, dict) and isinstance(part, str):
        if part in value:
            return value[part]
        keys = ", ".join(map(str, value)) or "none"
        raise ValueError(f"{where}: {path}: {_shown(so_far)} does not exist (the keys there: {keys})")
    raise ValueError(f"{where}: {path}: {_shown(so_far[:-1])} is a {type(value).__name__}, cannot take {part!r}")


def _shown(parts: list[str | int]) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) or "." in p or "/" in p else f".{p}" for p in parts)
    return text.lstrip(".") or "the object"


def _unique(value: Any, number: int, separator: str) -> Any:
    """The `number`th copy of a list item or map key, made distinct where names must differ."""
    if isinstance(value, str):
        return f"{value}{separator}{number}"
    if isinstance(value, dict):
        copy = dict(value)
        for key in ("name", "uid", "counterSet", "type"):
            if isinstance(copy.get(key), str):
                copy[key] = f"{copy[key]}-{number}"
        return copy
    return value


def grow_to(target: Any, count: int) -> None:
    """Grow a list or map to `count` entries by repeating its last one, names made distinct."""
    if not isinstance(target, list | dict) or not target:
        raise ValueError(f"needs a list or map with an entry to repeat, not {target!r}")
    if isinstance(target, list):
        template = target[-1]
        target.extend(_unique(template, number, "-") for number in range(1, count - len(target) + 1))
    else:
        key, value = list(target.items())[-1]
        for number in range(1, count - len(target) + 1):
            target[_unique(key, number, "")] = value


def pad_to(target: Any, fill: str, length: int) -> str:
    """A string padded with `fill` (a space if empty) to `length` characters."""
    if not isinstance(target, str):
        raise ValueError(f"needs a string to pad, not {target!r}")
    return (target + (fill or " ") * length)[:length]


def load_docstring(text: str, kind: str | None = None) -> list[Obj]:
    """Objects from a YAML docstring; `kind` fills in kind/apiVersion when the docstring omits them."""
    objects = []
    for document in yaml.load_all(text, Loader=yaml.CSafeLoader):
        if document is None:
            continue
        if not isinstance(document, dict):
            raise ValueError(f"a docstring document must be a mapping, got {type(document).__name__}")
        if kind is not None:
            document.setdefault("kind", kind)
        if document.get("kind") in API_VERSIONS:
            document.setdefault("apiVersion", API_VERSIONS[document["kind"]])
        objects.append(document)
    return objects


def named(kind: str, name: str, **body: Any) -> Obj:
    """A bare object of `kind` called `name` (in the default namespace when namespaced)."""
    metadata: dict[str, Any] = {"name": name}
    if kind in NAMESPACED:
        metadata["namespace"] = NAMESPACE
    return {"apiVersion": API_VERSIONS[kind], "kind": kind, "metadata": metadata, **body}
