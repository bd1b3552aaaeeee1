"""Server-side apply and field ownership, a simple subset of upstream's structured-merge-diff: every write
records in `metadata.managedFields` which fields its manager set (FieldsV1; Update for ordinary writes,
Apply for apply patches), an apply merges the applied configuration into the live object (lists by the merge
keys of patches.py, other lists whole), removes the fields its manager applied before and applies no more
(unless another manager owns them too), and refuses with 409 Conflict to change a field another manager
owns unless `force=true`, which takes the field over. Not modelled: unions, `x-kubernetes-list-type: set`
of non-string items, version conversion of managed fields (serve stores one version per kind), and ownership
of what a write through the status subresource changes (the store keeps the object's managed fields then)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

from draconform.serve.patches import Path, is_set_list, merge_key, strategic_merge_patch
from draconform.serve.resources import Resource
from draconform.sut import ApiError, FieldCause, Obj

Field = tuple[str, ...]  # "f:spec", "k:{\"name\":\"a\"}", "v:\"x\"": a FieldsV1 path, element by element
_SYSTEM_METADATA = {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                    "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink", "generateName"}


def fields_of(kind: str, obj: Any) -> set[Field]:
    """The leaf fields `obj` sets, as FieldsV1 paths (list items by their merge key; atomic lists whole)."""
    found: set[Field] = set()
    _collect(kind, obj, (), (), found, None)
    return found


def changed_fields(kind: str, old: Any, new: Any) -> set[Field]:
    """The leaf fields of `new` whose values differ from `old` (subtrees equal in both are skipped)."""
    found: set[Field] = set()
    _collect(kind, new, (), (), found, old if old is not None else {})
    return found


_ABSENT = object()


def _collect(kind: str, value: Any, path: Path, field: Field, found: set[Field], old: Any) -> None:
    """Add the leaves under `value` to `found`; with `old` (not None), only those that differ from it."""
    if old is not None and old is not _ABSENT and old == value:
        return
    if isinstance(value, dict) and value:
        _collect_map(kind, value, path, field, found, old)
        return
    key = merge_key(kind, path)
    if isinstance(value, list) and value and key and all(isinstance(i, dict) and key in i for i in value):
        _collect_keyed_list(kind, value, key, path, field, found, old)
        return
    if isinstance(value, list) and value and is_set_list(kind, path):
        before_items = old if isinstance(old, list) else []
        found.update((*field, "v:" + json.dumps(item)) for item in value if old is None or item not in before_items)
        return
    found.add(field)


def _collect_map(kind: str, value: Obj, path: Path, field: Field, found: set[Field], old: Any) -> None:
    """A map's fields, each against its value in `old` (absent there when `old` is no map)."""
    for key, element in value.items():
        if (not path and key in ("apiVersion", "kind")) or (path == ("metadata",) and key in _SYSTEM_METADATA):
            continue
        previous = old.get(key, _ABSENT) if isinstance(old, dict) else (_ABSENT if old is not None else None)
        _collect(kind, element, (*path, key), (*field, f"f:{key}"), found, previous)


def _collect_keyed_list(kind: str, value: list[Obj], key: str, path: Path, field: Field, found: set[Field],
                        old: Any) -> None:
    """A list merged by `key`: each item by its key (`k:{...}`), a new item also as itself (`.`)."""
    before = {json.dumps(i.get(key)): i for i in old if isinstance(i, dict)} if isinstance(old, list) else {}
    for item in value:
        identity = json.dumps(item[key])
        item_field = (*field, "k:" + json.dumps({key: item[key]}, separators=(",", ":")))
        if identity not in before:
            found.add((*item_field, "."))
        previous = before.get(identity, _ABSENT) if old is not None else None
        _collect(kind, item, path, item_field, found, previous)


def to_fields_v1(fields: set[Field]) -> Obj:
    tree: Obj = {}
    for path in sorted(fields):
        node = tree
        for element in path:
            if element == ".":
                node["."] = {}
                break
            node = node.setdefault(element, {})
    return tree


def from_fields_v1(tree: Any, prefix: Field = ()) -> set[Field]:
    fields: set[Field] = set()
    if not isinstance(tree, dict):
        return fields
    for element, child in tree.items():
        if element == ".":
            fields.add((*prefix, "."))
        elif isinstance(child, dict) and child:
            fields |= from_fields_v1(child, (*prefix, element))
        else:
            fields.add((*prefix, element))
    return fields


def _owners(obj: Obj | None) -> list[Obj]:
    entries = ((obj or {}).get("metadata") or {}).get("managedFields") or []
    return [e for e in entries if isinstance(e, dict) and e.get("manager")]


def _entry(manager: str, operation: str, resource: Resource, fields: set[Field], sub: str | None) -> Obj:
    entry: Obj = {"manager": manager, "operation": operation, "apiVersion": resource.api_version,
                  "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "fieldsType": "FieldsV1",
                  "fieldsV1": to_fields_v1(fields)}
    if sub:
        entry["subresource"] = sub
    return entry


def _same(entry: Obj, manager: str, operation: str, sub: str | None) -> bool:
    return (entry.get("manager"), entry.get("operation"), entry.get("subresource")) == (manager, operation, sub)


def _set_owners(obj: Obj, owners: list[tuple[Obj, set[Field]]]) -> None:
    entries = []
    for entry, fields in owners:
        if fields or entry.get("operation") == "Apply":
            entries.append({**entry, "fieldsV1": to_fields_v1(fields)})
    obj.setdefault("metadata", {})["managedFields"] = entries


def record_update(obj: Obj, stored: Obj | None, manager: str, resource: Resource, sub: str | None = None) -> None:
    """An ordinary write by `manager`: it owns the fields it changed, which no other manager owns any more;
    fields it removed are owned by nobody."""
    changed = changed_fields(resource.kind, stored, obj)
    present = fields_of(resource.kind, obj) if stored is not None else changed
    owners = [(e, from_fields_v1(e.get("fieldsV1"))) for e in _owners(stored)]
    kept: list[tuple[Obj, set[Field]]] = []
    mine: set[Field] = set()
    for entry, fields in owners:
        if _same(entry, manager, "Update", sub):
            mine = fields
            continue
        kept.append((entry, (fields - changed) & present if stored is not None else fields))
    mine = ((mine | changed) & present) if stored is not None else changed
    kept.append((_entry(manager, "Update", resource, mine, sub), mine))
    _set_owners(obj, kept)


def _value_at(obj: Any, field: Field) -> Any:
    node = obj
    for element in field:
        if element == "." or node is _ABSENT:
            return node
        kind, _, text = element.partition(":")
        if kind == "f":
            node = node.get(text, _ABSENT) if isinstance(node, dict) else _ABSENT
        elif kind == "k":
            wanted = json.loads(text)
            node = next((i for i in node if isinstance(i, dict) and all(i.get(k) == v for k, v in wanted.items())),
                        _ABSENT) if isinstance(node, list) else _ABSENT
        elif kind == "v":
            node = json.loads(text) if isinstance(node, list) and json.loads(text) in node else _ABSENT
    return node


def _remove(obj: Any, field: Field) -> None:
    """Remove one field (a map key, a keyed list item, a set member) from `obj`."""
    if field and field[-1] == ".":
        field = field[:-1]
    parent = _value_at(obj, field[:-1]) if field[:-1] else obj
    kind, _, text = field[-1].partition(":")
    if kind == "f" and isinstance(parent, dict):
        parent.pop(text, None)
    elif kind == "k" and isinstance(parent, list):
        wanted = json.loads(text)
        parent[:] = [i for i in parent if not (isinstance(i, dict) and all(i.get(k) == v for k, v in wanted.items()))]
    elif kind == "v" and isinstance(parent, list):
        value = json.loads(text)
        parent[:] = [i for i in parent if i != value]


def apply(resource: Resource, stored: Obj | None, config: Obj, manager: str, force: bool) -> Obj:
    """The object an apply patch of `config` by `manager` makes of `stored` (None: it creates the object)."""
    kind = resource.kind
    if (config.get("metadata") or {}).get("managedFields") is not None:  # an empty list too, as upstream
        raise ApiError("BadRequest", "metadata.managedFields must be nil")
    config = copy.deepcopy(config)
    config.setdefault("apiVersion", resource.api_version)
    config.setdefault("kind", kind)
    applied = fields_of(kind, config)
    live = copy.deepcopy(stored) if stored is not None else {}
    owners = [(e, from_fields_v1(e.get("fieldsV1"))) for e in _owners(stored)]
    previous = next((f for e, f in owners if _same(e, manager, "Apply", e.get("subresource"))), set())
    conflicts = _conflicts(owners, manager, applied, live, config)
    if conflicts and not force:
        raise _conflict_error(conflicts)
    others = set().union(*(f for e, f in owners if e.get("manager") != manager)) if owners else set()
    for field in sorted(previous - applied - others, key=len, reverse=True):
        _remove(live, field)
    merged = strategic_merge_patch(kind, live, config)
    if stored is not None:
        # The system metadata stays the stored object's, but for an applied resourceVersion: it stays in the
        # object kube-apiserver's storage writes, which refuses it with 409 Conflict unless it is the stored one,
        # a precondition as in a PUT (registry Store.Update). A creating apply's is replaced by the store's.
        applied_version = bool((config.get("metadata") or {}).get("resourceVersion"))
        merged.setdefault("metadata", {}).update({k: v for k, v in stored["metadata"].items()
                                                  if k in _SYSTEM_METADATA and k != "managedFields"
                                                  and not (k == "resourceVersion" and applied_version)})
    kept = _kept_owners(owners, manager, conflicts if force else [])
    kept.append((_entry(manager, "Apply", resource, applied, None), applied))
    _set_owners(merged, kept)
    return merged


def _conflict_error(conflicts: list[tuple[str, Field]]) -> ApiError:
    causes = [FieldCause(_readable(field), f'conflict with "{who}"') for who, field in conflicts]
    return ApiError("Conflict", f"Apply failed with {len(conflicts)} conflict{'s' if len(conflicts) > 1 else ''}: "
                    + "; ".join(f'conflict with "{c.message[15:-1]}": {c.field}' for c in causes), causes)


def _kept_owners(owners: list[tuple[Obj, set[Field]]], manager: str,
                 taken: list[tuple[str, Field]]) -> list[tuple[Obj, set[Field]]]:
    """The other managers' entries after an apply by `manager` (whose own Apply entry is replaced), less the
    fields a forced apply `taken` from them."""
    return [(entry, fields - {f for who, f in taken if who == entry.get("manager")}) for entry, fields in owners
            if not (entry.get("manager") == manager and entry.get("operation") == "Apply")]


def _conflicts(owners: list[tuple[Obj, set[Field]]], manager: str, applied: set[Field], live: Obj,
               config: Obj) -> list[tuple[str, Field]]:
    """(other manager, field) for each field `config` sets to another value than the live one that another
    manager owns."""
    conflicts: list[tuple[str, Field]] = []
    for entry, fields in owners:
        if entry.get("manager") == manager:
            continue
        for field in sorted(applied & fields):
            if field[-1] != "." and _value_at(live, field) != _value_at(config, field):  # a shared item: its fields
                conflicts.append((entry["manager"], field))
    return conflicts


def _readable(field: Field) -> str:
    text = ""
    for element in field:
        kind, _, value = element.partition(":")
        if kind == "f":
            text += f".{value}"
        elif kind == "k":
            text += f"[{','.join(f'{k}={json.dumps(v)}' for k, v in json.loads(value).items())}]"
        elif kind == "v":
            text += f"[{value}]"
    return text
