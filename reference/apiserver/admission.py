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
from draconform.validation.core import decode_by_value, drop_nulls
from draconform.validation.defaults import (
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
        if is_validated(new):
            apply_taint_defaults(new, format_time(store.clock.now()))
        return new

    store.add_mutator(drop_disabled_fields)
    store.add_mutator(default_taints)
    store.add_admission(validate)
