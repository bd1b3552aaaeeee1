"""The one validation layer: schema checks, then the rules in code, for one object. The reference API
store's admission (reference/apiserver/admission.py) and `draconform validate` both come through
here, so what the store refuses on write is exactly what `validate` reports."""

from __future__ import annotations

from typing import Any

from draconform.kube.featuregates import GATE_HISTORY, FeatureGates
from draconform.kube.kinds import CLASSIC_API, KINDS
from draconform.sut import copy_object
from draconform.validation.adminaccess import admin_access_problems
from draconform.validation.gates import default_off_warnings, strip_disabled
from draconform.validation.pod import TEMPLATES
from draconform.validation.problems import Problem
from draconform.validation.rules import RULES
from draconform.validation.schema import kind_schema, schema_problems, supported_kinds
from draconform.validation.versions import classify, off_by_default, path_in, to_v1, version_of

Obj = dict[str, Any]
STATUS_RULE = "DRA-API/STATUS-ON-CREATE"


def is_validated(obj: Obj) -> bool:
    """Whether draconform has a schema for the object's apiVersion and kind."""
    return kind_schema(str(obj.get("apiVersion")), str(obj.get("kind"))) is not None


def validate_object(obj: Obj, gates: FeatureGates, old: Obj | None = None) -> list[Problem]:
    """Every problem with `obj` (`old` is the stored object on an update). Gated fields are taken
    as they are: strip them first (`strip_disabled`) where the gate is off."""
    schema = kind_schema(str(obj.get("apiVersion")), str(obj.get("kind")))
    if schema is None:
        kinds = ", ".join(f"{kind} ({version})" for version, kind in supported_kinds())
        return [Problem((), f"unsupported kind {obj.get('kind')!r} of apiVersion {obj.get('apiVersion')!r}; "
                            f"draconform validates {kinds}", None)]
    problems = schema_problems(schema, obj)
    if schema.api_version == CLASSIC_API:  # KEP-3063's classic API: no feature-gated fields
        from draconform.validation import classic  # only a classic object pays for its module

        classic_rules = classic.RULES.get(schema.kind)
        if classic_rules is not None:
            problems.extend(classic_rules(obj, old))
        return problems
    rules = RULES.get(schema.kind)
    if rules is not None:
        problems.extend(rules(obj, old, gates))
    return problems


# Raw JSON carried verbatim: a null there is data, not an unset field.
RAW_FIELDS = frozenset({"parameters", "data"})


def drop_nulls(value: Any, stored: Any = None) -> None:
    """Remove, in place, fields set to null, as the API server's decoder reads them as unset. It runs on every
    write the reference store admits, so it descends only into dicts and lists, not into each scalar. `stored` is
    the same place in an object stored already (so without nulls): a part of `value` that is that object's own
    part (the same object, shared by a write that changes something else) is not walked again."""
    if isinstance(value, dict):
        if None in value.values():  # rare: a C-level scan first, the keys only then
            for key in [k for k, v in value.items() if v is None]:
                del value[key]
        kept = stored if isinstance(stored, dict) else _NOTHING
        for key, item in value.items():
            if isinstance(item, (dict, list)) and key not in RAW_FIELDS:
                was = kept.get(key)
                if item is not was:
                    drop_nulls(item, was)
    elif isinstance(value, list):
        kept_items = stored if isinstance(stored, list) else ()
        for index, item in enumerate(value):
            if isinstance(item, (dict, list)):
                was = kept_items[index] if index < len(kept_items) else None
                if item is not was:
                    drop_nulls(item, was)


_NOTHING: dict[str, Any] = {}


# Structs kube-apiserver's types hold by value: a missing one decodes to its zero value, whose own required fields
# validation then names (a DeviceTaintRule without a taint is refused at spec.taint.key and spec.taint.effect).
_BY_VALUE: dict[str, tuple[tuple[str, ...], ...]] = {"DeviceTaintRule": (("spec", "taint"),)}


def decode_by_value(obj: Obj) -> None:
    """Fill in, in place, the structs upstream's decoder gives their zero value when missing (`_BY_VALUE`)."""
    for path in _BY_VALUE.get(str(obj.get("kind")), ()):
        parent: Any = obj
        for part in path[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
        if isinstance(parent, dict) and path[-1] not in parent:
            parent[path[-1]] = {}


def validate_manifest(obj: Obj, gates: FeatureGates) -> tuple[Obj, list[Problem]]:
    """What an API server with `gates` makes of `obj` on create: the object as stored (in v1, after gated
    fields are dropped), and every problem at the paths of the version `obj` is written in, with warnings
    for a version served only when enabled, for fields that need a gate off by default in the release and
    for fields that were dropped."""
    problem = classify(obj, gates.release) if isinstance(obj.get("apiVersion"), str) else None
    if isinstance(problem, Problem):
        return obj, [problem]
    version = version_of(obj)
    stored, problems = to_v1(obj)
    if not is_validated(stored):
        return obj, validate_object(stored, gates)
    stored = copy_object(stored) if stored is obj else stored
    drop_nulls(stored)
    decode_by_value(stored)
    dropped = _status_dropped(stored, gates)
    warning = off_by_default(obj, gates.release)
    problems += [warning] if warning else []
    found = default_off_warnings(stored, gates)
    found += strip_disabled(stored, None, gates)
    found += validate_object(stored, gates)
    kind = str(obj.get("kind"))
    problems += [Problem(path_in(version, kind, p.path), p.message, p.rule, p.severity, p.decoding) for p in found]
    return stored, problems + dropped + _admin_access_warnings(stored)


def _admin_access_warnings(obj: Obj) -> list[Problem]:
    """Admin access asked for: allowed only in a namespace labelled for it, which the object alone does not show,
    so a warning (at upstream's path, which is the same in every version)."""
    return [Problem(p.path, f"{p.message} (kube-apiserver refuses the object in a namespace without it)", p.rule,
                    "warning") for p in admin_access_problems(obj, None, {})]


def _status_dropped(obj: Obj, gates: FeatureGates) -> list[Problem]:
    """kube-apiserver clears the status of a kind with a status subresource on create and validates only
    metadata and spec (a status is written through the subresource), so a saved copy of a live object is valid
    to create: the status is removed from `obj` and a warning says so. What the status subresource would refuse
    in it is reported too, as warnings."""
    info = KINDS.get(str(obj.get("kind")))
    if info is None or not info.has_status or "status" not in obj:
        return []
    status = obj["status"]
    written = [p for p in validate_object(obj, gates) if p.path[:1] == ("status",) and p.severity == "error"]
    del obj["status"]
    if not status:
        return []
    return [Problem(("status",), "dropped: kube-apiserver clears status on create and validates only metadata and "
                                 "spec; status is written through the status subresource", STATUS_RULE, "warning"),
            *(Problem(p.path, f"{p.message} (the status subresource would refuse this)", p.rule, "warning")
              for p in written)]


def validate_classic_manifest(obj: Obj, gates: FeatureGates) -> list[Problem]:
    """What a cluster serving KEP-3063's classic API makes of `obj` on create, as the reference's classic
    API server admits it (reference/apiserver/classic.py): ResourceClass and ResourceClaim through their
    schemas and rules, a Pod by the classic checks of its resourceClaims (embedded templates, containers'
    claims as plain names) and nothing else of it. Other kinds as in `validate_manifest`."""
    from draconform.validation import classic

    if obj.get("apiVersion") == "v1" and obj.get("kind") == "Pod":
        return classic.pod_problems(obj)
    where = TEMPLATES.get(str(obj.get("kind")))
    if where is not None and is_validated(obj):  # a workload: its template's claims as a classic pod's
        template: Any = obj
        for field in where:
            template = template.get(field) if isinstance(template, dict) else None
        spec = template.get("spec") if isinstance(template, dict) else None
        if not isinstance(spec, dict):
            return validate_object(obj, gates)  # the schema says what is missing on the way
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "template"}, "spec": spec}
        return [Problem((*where, *p.path), p.message, p.rule, p.severity) for p in classic.pod_problems(pod)
                if p.path[:1] == ("spec",)]
    checked = copy_object(obj)
    drop_nulls(checked)
    return validate_object(checked, gates)


def validate_gates(overrides: dict[str, bool] | None, release: str) -> FeatureGates:
    """`draconform validate`'s gates: every DRA gate the release has is on (so gated fields are
    checked, not dropped), then the user's overrides."""
    return FeatureGates({**dict.fromkeys(GATE_HISTORY, True), **(overrides or {})}, release=release)
