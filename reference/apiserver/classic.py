"""kube-apiserver serving KEP-3063's classic API (cdi.k8s.io/v1alpha1) instead of resource.k8s.io: the
kinds it serves, the defaults it applies on create (allocationMode Delayed, userLimit 1, phase
Pending) and its admission, all from `draconform.validation` like the structured API's. A cluster
serves one API or the other, never both (docs/decisions.md D-3063-1)."""

from __future__ import annotations

from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.store import Operation, Store
from draconform.sut import FieldCause, Obj
from draconform.validation import classic, errors, validate_object

GATE = "DynamicResourceAllocation"

DEFAULT_ALLOCATION_MODE = "Delayed"
DEFAULT_USER_LIMIT = 1


def _apply_defaults(operation: Operation, new: Obj, old: Obj | None, gates: FeatureGates) -> Obj:
    if new["kind"] == "ResourceClaim" and operation == "CREATE":
        spec = new.setdefault("spec", {})
        if isinstance(spec, dict):
            spec.setdefault("allocationMode", DEFAULT_ALLOCATION_MODE)
        new["status"] = {"phase": "Pending", "userLimit": DEFAULT_USER_LIMIT}
    if new["kind"] == "Pod" and not gates.enabled(GATE):
        _drop_pod_claims(new, old)
    return new


def _drop_pod_claims(pod: Obj, old: Obj | None) -> None:
    """With the feature off, a new pod loses its claim fields; an update keeps what the stored pod had
    (KEP-3063 Feature Enablement and Rollback: the fields survive updates while disabled)."""
    if old is not None and _uses_claims(old):
        return
    spec = pod.get("spec") or {}
    spec.pop("resourceClaims", None)
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or []:
            (container.get("resources") or {}).pop("claims", None)


def _uses_claims(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    return bool(spec.get("resourceClaims")) or any(
        (container.get("resources") or {}).get("claims")
        for field in ("initContainers", "containers")
        for container in spec.get(field) or []
    )


def install(store: Store) -> None:
    """Serve the classic kinds' checks from `store`; `store.gates` is read on every write."""

    def validate(operation: Operation, new: Obj, old: Obj | None) -> list[FieldCause]:
        if new["kind"] == "Pod":
            problems = classic.pod_problems(new) if operation == "CREATE" else []
        elif new["kind"] in ("ResourceClass", "ResourceClaim"):
            problems = validate_object(new, store.gates, old)
        else:
            return []
        return [FieldCause(p.field, p.message, p.rule) for p in errors(problems)]

    store.add_mutator(_apply_defaults)
    store.add_admission(validate)
