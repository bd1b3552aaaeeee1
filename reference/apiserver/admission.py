"""kube-apiserver's validation, defaulting and disabled-field handling for the DRA kinds, installed into the
reference store: a mutator drops fields whose feature gate is off (kept on update when the stored object
already had them) and fills in the defaults of requests and taints and a pod's requests from its limits, then an
admission check refuses the write with every problem found, those needing the object's namespace (where admin
access may be asked for) included. All of it comes from `draconform.validation`, the layer `draconform validate`
uses."""

from __future__ import annotations

from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.store import Operation, Store
from draconform.reference.clock import format_time
from draconform.sut import ApiError, FieldCause, Obj
from draconform.validation import errors, is_validated, validate_object
from draconform.validation.adminaccess import admin_access_problems
from draconform.validation.core import RAW_FIELDS, decode_by_value, drop_nulls
from draconform.validation.defaults import (
    TAINTED_KINDS,
    apply_device_defaults,
    apply_pod_defaults,
    apply_request_defaults,
    apply_taint_defaults,
)
from draconform.validation.gates import strip_disabled


def drop_disabled_fields(operation: Operation, new: Obj, old: Obj | None, gates: FeatureGates) -> Obj:
    if is_validated(new):
        drop_nulls(new)
        decode_by_value(new)
        strip_disabled(new, old, gates)
        apply_request_defaults(new)
        apply_device_defaults(new)
        apply_pod_defaults(new)
    return new


def drop_disabled_fields_changed(operation: Operation, new: Obj, old: Obj, gates: FeatureGates) -> Obj:
    """`drop_disabled_fields` for an update of `old` as the store admitted it under `gates`: a top-level field
    (spec, status, metadata) equal to old's is left alone, as every step would leave it. It holds no null (old's
    had none, and equal values hold nulls at the same places); a disabled gated field in it was in old's too, so
    it is kept; and the defaults, filled in old's, find nothing to fill (they read spec only). So a status write
    walks the status it writes, not the whole object, as kube-apiserver's status strategy looks at the status.
    Validation is not shortened: it sees the whole object as before."""
    if not is_validated(new):
        return new
    changed = [key for key, value in new.items() if key not in old or old[key] != value]
    if not changed:
        return new
    for key in [key for key in changed if new[key] is None]:
        del new[key]
    for key in changed:
        if key in new and key not in RAW_FIELDS:
            drop_nulls(new[key], old.get(key))  # what the write shares with old is old's, without nulls
    decode_by_value(new)
    if any(key in new for key in changed if key not in ("metadata", "apiVersion", "kind")):
        # gated fields live under spec and status only: strip the changed ones (the shared dicts are changed in
        # place, so `new` loses what its part loses)
        part = {key: new[key] for key in changed if key in new}
        strip_disabled({"apiVersion": new.get("apiVersion"), "kind": new.get("kind"), **part}, old, gates)
    if "spec" in changed:
        apply_request_defaults(new)
        apply_device_defaults(new)
        apply_pod_defaults(new)
    return new


def install(store: Store) -> None:
    """Wire validation into `store`; it reads `store.gates` on every write, so an API server restart
    with other gates takes effect at once."""

    def validate(operation: Operation, new: Obj, old: Obj | None) -> list[FieldCause]:
        if not is_validated(new):
            return []  # the store itself refuses kinds it does not serve
        problems = validate_object(new, store.gates, old)
        namespace = (new.get("metadata") or {}).get("namespace")
        if namespace:  # what needs the namespace: where admin access may be asked for
            problems += admin_access_problems(new, old, store.namespace_labels(namespace))
        problems = errors(problems)
        undecodable = [p for p in problems if p.decoding]
        if undecodable:  # kube-apiserver's decoder refuses the body before validation: a 400 naming no field
            kind, version = new["kind"], str(new.get("apiVersion", "")).rpartition("/")[2]
            raise ApiError("BadRequest", f'{kind} in version "{version}" cannot be handled as a {kind}: '
                                         f"{undecodable[0].decoding}",
                           [FieldCause(p.field, p.message, p.rule) for p in undecodable])
        return [FieldCause(p.field, p.message, p.rule) for p in problems]

    def default_taints(operation: Operation, new: Obj, old: Obj | None, gates: FeatureGates) -> Obj:
        # only slices and taint rules have taints: the time is formatted for them alone
        if new.get("kind") in TAINTED_KINDS and is_validated(new):
            apply_taint_defaults(new, format_time(store.clock.now()))
        return new

    def drop_fields(operation: Operation, new: Obj, old: Obj | None, gates: FeatureGates) -> Obj:
        # counted (Store.work) so that tests can tell the writes that walk only what they change
        if old is not None and store.admitted(old):
            store.work["admitted-changed"] += 1
            return drop_disabled_fields_changed(operation, new, old, gates)
        store.work["admitted-whole"] += 1
        return drop_disabled_fields(operation, new, old, gates)

    store.add_mutator(drop_fields)
    store.add_mutator(default_taints)
    store.add_admission(validate)
