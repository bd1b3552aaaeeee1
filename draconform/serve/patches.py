"""The patch types kube-apiserver accepts for built-in kinds: JSON merge patch (RFC 7386), JSON patch
(RFC 6902, through the `jsonpatch` library) and strategic merge patch, with the merge keys and patch
strategies upstream's Go types declare for the kinds serve stores (a list merged by its key, a list of
strings merged as a set, every other list replaced) and the directives kubectl sends ($patch,
$retainKeys, $deleteFromPrimitiveList, $setElementOrder)."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch

from draconform.sut import ApiError

Path = tuple[str, ...]  # field names from the object's root, list positions left out

# (kind or "*", path) -> merge key; a list not named here is replaced whole, as upstream's atomic lists.
MERGE_KEYS: dict[tuple[str, Path], str] = {
    ("*", ("metadata", "ownerReferences")): "uid",
    **{("Pod", (*base, field)): "name" for base in [("spec",), ("spec", "template", "spec")]
       for field in ("containers", "initContainers", "ephemeralContainers", "volumes", "imagePullSecrets",
                     "resourceClaims", "schedulingGates")},
    **{("Pod", ("spec", containers, field)): key for containers in ("containers", "initContainers",
                                                                    "ephemeralContainers")
       for field, key in (("env", "name"), ("ports", "containerPort"), ("volumeMounts", "mountPath"),
                          ("volumeDevices", "devicePath"))},
    ("Pod", ("spec", "hostAliases")): "ip",
    ("Pod", ("spec", "topologySpreadConstraints")): "topologyKey",
    ("Pod", ("status", "conditions")): "type",
    ("Pod", ("status", "podIPs")): "ip",
    ("Pod", ("status", "hostIPs")): "ip",
    ("Pod", ("status", "resourceClaimStatuses")): "name",
    ("Node", ("status", "conditions")): "type",
    ("Node", ("status", "addresses")): "type",
    ("Namespace", ("status", "conditions")): "type",
    ("ResourceClaim", ("status", "reservedFor")): "uid",
    ("ResourceClaim", ("status", "devices", "conditions")): "type",
}
# lists of strings merged as sets (patchStrategy "merge" on a primitive list)
SET_LISTS: set[tuple[str, Path]] = {("*", ("metadata", "finalizers")), ("Node", ("spec", "podCIDRs"))}


def merge_key(kind: str, path: Path) -> str | None:
    return MERGE_KEYS.get((kind, path)) or MERGE_KEYS.get(("*", path))


def is_set_list(kind: str, path: Path) -> bool:
    return (kind, path) in SET_LISTS or ("*", path) in SET_LISTS


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: maps merge, null deletes, everything else (lists too) replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902 through `jsonpatch`; a malformed patch is a 400, one that does not apply a 422."""
    if not isinstance(operations, list):
        raise ApiError("BadRequest", "json patch must be a list of operations")
    try:
        patch = jsonpatch.JsonPatch(operations)
        return patch.apply(copy.deepcopy(target))
    except jsonpatch.InvalidJsonPatch as error:
        raise ApiError("BadRequest", f"invalid JSON patch: {error}") from None
    except (jsonpatch.JsonPatchConflict, jsonpatch.JsonPatchTestFailed, jsonpatch.JsonPointerException,
            KeyError, IndexError, TypeError) as error:
        raise ApiError("Invalid", f"the JSON patch does not apply: {type(error).__name__}: {error}") from None


def strategic_merge_patch(kind: str, target: Any, patch: Any) -> Any:
    """A strategic merge patch of an object of `kind`."""
    if not isinstance(patch, dict):
        raise ApiError("BadRequest", "a strategic merge patch must be a JSON object")
    return _merge_map(kind, (), copy.deepcopy(target) if isinstance(target, dict) else {}, patch)


def _merge_map(kind: str, path: Path, target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """A map patched: its `$patch` directive, then `$deleteFromPrimitiveList`, the fields, `$setElementOrder`
    and `$retainKeys`, in the order upstream's strategic merge applies them."""
    # Grade D on purpose (radon): each directive is a short pass of its own, in upstream's order; apart they
    # would hide that order.
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: v for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return {}
    if directive is not None:
        raise ApiError("BadRequest", f"unknown patch directive {directive!r} at {'.'.join(path) or 'the root'}")
    for key, value in patch.items():
        field = key.removeprefix("$deleteFromPrimitiveList/")
        if field != key and isinstance(target.get(field), list) and isinstance(value, list):
            target[field] = [item for item in target[field] if item not in value]
    for key, value in patch.items():
        if not key.startswith("$"):
            _merge_field(kind, path, target, key, value)
    for key, order in patch.items():
        field = key.removeprefix("$setElementOrder/")
        if field != key and isinstance(order, list) and isinstance(target.get(field), list):
            target[field] = _ordered(target[field], order, merge_key(kind, (*path, field)))
    retain = patch.get("$retainKeys")
    return {k: v for k, v in target.items() if k in retain} if isinstance(retain, list) else target


def _merge_field(kind: str, path: Path, target: dict[str, Any], key: str, value: Any) -> None:
    """One field of a map patch into `target`: null deletes it, maps and lists merge, anything else replaces."""
    if value is None:
        target.pop(key, None)
    elif isinstance(value, dict):
        current = target.get(key)
        target[key] = _merge_map(kind, (*path, key), current if isinstance(current, dict) else {}, value)
    elif isinstance(value, list):
        target[key] = _merge_list(kind, (*path, key), target.get(key), value)
    else:
        target[key] = value


def _merge_list(kind: str, path: Path, target: Any, patch: list[Any]) -> list[Any]:
    """A list patched: replaced whole (`$patch: replace`), merged by its merge key, as a set, or replaced."""
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [item for item in patch if not (isinstance(item, dict) and item.get("$patch") == "replace")]
    key = merge_key(kind, path)
    current = list(target) if isinstance(target, list) else []
    if key is not None and all(isinstance(item, dict) for item in patch):
        return _merge_keyed(kind, path, current, patch, key)
    if is_set_list(kind, path):
        return current + [item for item in patch if item not in current]
    return [_merge_map(kind, path, {}, item) if isinstance(item, dict) else item for item in patch]


def _merge_keyed(kind: str, path: Path, current: list[Any], patch: list[dict[str, Any]], key: str) -> list[Any]:
    """Items matched by `key`: merged into the item with the same key, added, or deleted (`$patch: delete`)."""
    for item in patch:
        if key not in item:
            raise ApiError("BadRequest", f"map: {item} does not contain declared merge key: {key}")
        found = next((i for i, old in enumerate(current) if isinstance(old, dict) and old.get(key) == item[key]),
                     None)
        if item.get("$patch") == "delete":
            if found is not None:
                current.pop(found)
        elif found is None:
            current.append(_merge_map(kind, path, {}, item))
        else:
            current[found] = _merge_map(kind, path, current[found], item)
    return current


def _ordered(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    """`items` in the order `$setElementOrder` gives; items it does not name keep their place at the end."""
    def identity(item: Any) -> str:
        return json.dumps(item.get(key) if key and isinstance(item, dict) else item, sort_keys=True)
    wanted = [identity(entry) for entry in order]
    rank = {value: index for index, value in enumerate(wanted)}
    return sorted(items, key=lambda item: rank.get(identity(item), len(rank)))
