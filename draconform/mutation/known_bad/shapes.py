"""Known-bad variants of the shapes walk (issue 39): a rule over a list read right for one form of the list and
wrong for another. Each is tied to the rule whose scenarios must hold every form the API allows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from draconform.mutation.overrides import Edit, Wrap
from draconform.mutation.variant import Variant
from draconform.reference.allocator.devices import DeviceFacts
from draconform.reference.allocator.plans import ClaimPlan, Constraint
from draconform.sut import Obj

Original = Callable[..., Any]


def constraint_binds_first_request(original: Original, claims: Sequence[Obj], classes: Mapping[str, Obj],
                                   gates: Any) -> list[ClaimPlan]:
    """A constraint that names no requests binds only the claim's first request, as if an empty list meant
    "the request it stands after" rather than every request of the claim."""
    plans: list[ClaimPlan] = original(claims, classes, gates)
    for plan in plans:
        first: Sequence[Any] = plan.requests[0] if plan.requests else ()
        if len(plan.requests) < 2 or not first:
            continue
        plan.constraints = [Constraint(c.kind, c.attribute, frozenset({first[0].request})) if not c.requests else c
                            for c in plan.constraints]
    return plans


def first_toleration_only(original: Original, taints: Sequence[Obj], tolerations: Sequence[Obj]) -> list[Obj]:
    """Of a request's tolerations only the first is matched against a device's taints."""
    result: list[Obj] = original(taints, list(tolerations)[:1])
    return result


def first_taint_only(original: Original, taints: Sequence[Obj], tolerations: Sequence[Obj]) -> list[Obj]:
    """Of a device's taints only the first is judged: a device whose first taint is tolerated is taken."""
    result: list[Obj] = original(list(taints)[:1], tolerations)
    return result


def constraint_binds_one_named_request(original: Original, claims: Sequence[Obj], classes: Mapping[str, Obj],
                                       gates: Any) -> list[ClaimPlan]:
    """A constraint naming several requests binds only one of them, as if `requests` held a single name."""
    plans: list[ClaimPlan] = original(claims, classes, gates)
    for plan in plans:
        plan.constraints = [Constraint(c.kind, c.attribute, frozenset({min(c.requests)})) if len(c.requests) > 1
                            else c for c in plan.constraints]
    return plans


def constraint_over_one_request_ignored(original: Original, claims: Sequence[Obj], classes: Mapping[str, Obj],
                                        gates: Any) -> list[ClaimPlan]:
    """A constraint naming a single request is taken to bind nothing, as if it compared across requests only."""
    plans: list[ClaimPlan] = original(claims, classes, gates)
    for plan in plans:
        plan.constraints = [c for c in plan.constraints if len(c.requests) != 1]
    return plans


def request_first_selector_only(original: Original, index: int, request: str, sub: str | None, spec: Obj,
                                classes: Mapping[str, Obj], gates: Any, plan: ClaimPlan, where: str,
                                allow_admin: bool) -> Any:
    """Of a request's selectors only the first is evaluated."""
    return original(index, request, sub, {**spec, "selectors": list(spec.get("selectors") or [])[:1]}, classes,
                    gates, plan, where, allow_admin)


def class_first_selector_only(original: Original, index: int, request: str, sub: str | None, spec: Obj,
                              classes: Mapping[str, Obj], gates: Any, plan: ClaimPlan, where: str,
                              allow_admin: bool) -> Any:
    """Of a DeviceClass's selectors only the first is evaluated."""
    cut = {name: {**obj, "spec": {**(obj.get("spec") or {}),
                                  "selectors": list((obj.get("spec") or {}).get("selectors") or [])[:1]}}
           for name, obj in classes.items()}
    return original(index, request, sub, spec, cut, gates, plan, where, allow_admin)


def first_counter_set_only(original: Original, spec: Obj, slice_name: str, slice_version: str, index: int,
                           raw: Obj) -> DeviceFacts:
    """Of the counter sets a device consumes from, only the first is counted."""
    facts: DeviceFacts = original(spec, slice_name, slice_version, index, raw)
    return replace(facts, consumes=facts.consumes[:1]) if len(facts.consumes) > 1 else facts


def first_counter_only(original: Original, spec: Obj, slice_name: str, slice_version: str, index: int,
                       raw: Obj) -> DeviceFacts:
    """Of the counters a device consumes in one set, only the first is counted."""
    facts: DeviceFacts = original(spec, slice_name, slice_version, index, raw)
    return replace(facts, consumes=tuple((name, counters[:1]) for name, counters in facts.consumes))


def _first_claim_of(pod: Obj, claim: Obj) -> bool:
    """Whether `claim` is the one the pod's first resourceClaims entry names (by name, or generated for it)."""
    entries = (pod.get("spec") or {}).get("resourceClaims") or []
    if not entries:
        return True
    first = entries[0]
    named = first.get("resourceClaimName")
    if named is None:
        statuses = (pod.get("status") or {}).get("resourceClaimStatuses") or []
        named = next((s.get("resourceClaimName") for s in statuses if s.get("name") == first.get("name")), None)
    return bool(claim["metadata"]["name"] == named)


def includes_first_item_only(original: Original, value: Any, wanted: Any) -> bool:
    """includes() over a list attribute looks at its first item only."""
    result: bool = original(value[:1] if isinstance(value, (list, tuple)) else value, wanted)
    return result


VARIANTS: tuple[Variant, ...] = (
    Variant(
        "constraint-without-requests-binds-first-only", "KEP-4381/MATCH-ATTRIBUTE",
        "a constraint naming no requests binds only the claim's first request, not all of them",
        overrides=(Wrap("draconform.reference.allocator.columnar.allocator:plan_claims",
                        constraint_binds_first_request),),
    ),
    Variant(
        "first-toleration-only", "KEP-4381/TAINTS",
        "of a request's several tolerations only the first is matched against a device's taints",
        overrides=(Wrap("draconform.reference.allocator.columnar.search:blocking_taints", first_toleration_only),),
    ),
    Variant(
        "first-taint-only", "KEP-4381/TAINTS",
        "of a device's several taints only the first is judged against the request's tolerations",
        overrides=(Wrap("draconform.reference.allocator.columnar.search:blocking_taints", first_taint_only),),
    ),
    Variant(
        "constraint-binds-one-named-request", "KEP-4381/MATCH-ATTRIBUTE",
        "a constraint naming several requests binds only one of them",
        overrides=(Wrap("draconform.reference.allocator.columnar.allocator:plan_claims",
                        constraint_binds_one_named_request),),
    ),
    Variant(
        "constraint-over-one-request-ignored", "KEP-4381/DISTINCT-ATTRIBUTE",
        "a constraint naming a single request binds nothing, as if it compared devices across requests only",
        overrides=(Wrap("draconform.reference.allocator.columnar.allocator:plan_claims",
                        constraint_over_one_request_ignored),),
    ),
    Variant(
        "request-first-selector-only", "KEP-4381/SELECTORS",
        "of a request's several selectors only the first is evaluated",
        overrides=(Wrap("draconform.reference.allocator.plans:_alternative", request_first_selector_only),),
    ),
    Variant(
        "class-first-selector-only", "KEP-4381/SELECTORS",
        "of a DeviceClass's several selectors only the first is evaluated",
        overrides=(Wrap("draconform.reference.allocator.plans:_alternative", class_first_selector_only),),
    ),
    Variant(
        "first-counter-set-only", "KEP-4381/COUNTERS",
        "a device consuming from two counter sets is checked against the first only",
        overrides=(Wrap("draconform.reference.allocator.devices:parse_device", first_counter_set_only),),
    ),
    Variant(
        "first-counter-only", "KEP-4381/COUNTERS",
        "a device consuming several counters of one set is checked against the first only",
        overrides=(Wrap("draconform.reference.allocator.devices:parse_device", first_counter_only),),
    ),
    Variant(
        "claim-config-without-requests-dropped", "KEP-4381/RESULT-CONFIG",
        "a claim config that names no requests is left out of the allocation, as if it applied to none",
        overrides=(Edit("draconform.reference.allocator.results:_configs",
                        "if not wanted or any(name in allocated for name in wanted):",
                        "if any(name in allocated for name in wanted):"),),
    ),
    Variant(
        "first-class-config-only", "KEP-4381/RESULT-CONFIG",
        "of a DeviceClass's several configs only the first is copied into the allocation",
        overrides=(Edit("draconform.reference.allocator.results:_configs",
                        "for entry in plan.class_configs.get(class_name, []):",
                        "for entry in plan.class_configs.get(class_name, [])[:1]:"),),
    ),
    Variant(
        "all-mode-without-match-fits", "KEP-4381/ALL-MODE",
        "an All request with no matching device on the node is satisfied with none",
        overrides=(Edit("draconform.reference.allocator.columnar.search:Search._next",
                        "if ids and self._all(alt, ids, claim, request):",
                        "if self._all(alt, ids, claim, request):"),),
    ),
    Variant(
        "pool-with-extra-slices-complete", "KEP-4381/POOL-INCOMPLETE",
        "a pool with more slices than resourceSliceCount counts as complete (only a missing slice is noticed)",
        overrides=(Edit("draconform.reference.allocator.columnar.pools:_pools",
                        "len(newest) == counts.pop()", "len(newest) >= counts.pop()"),),
    ),
    Variant(
        "pod-reserved-in-first-claim-only", "KEP-3063/RESERVED-FOR-POD",
        "a pod using several claims is added to reservedFor of its first claim only",
        overrides=(Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._write_claim",
                        'if not is_reserved_for(latest, pod["metadata"]["uid"]):',
                        'if not is_reserved_for(latest, pod["metadata"]["uid"]) and _first_claim_of(pod, latest):',
                        names={"_first_claim_of": _first_claim_of}),),
    ),
    Variant(
        "includes-first-item-only", "KEP-4381/CEL-ENVIRONMENT",
        "includes() over a list-type attribute looks at the list's first item only",
        overrides=(Wrap("draconform.kube.cel.library:_includes", includes_first_item_only),),
    ),
    Variant(
        "empty-first-available-is-a-list", "DRA-API/FIRST-AVAILABLE-SUBREQUESTS",
        "a request whose firstAvailable is an empty list counts as one with a list, and is accepted",
        overrides=(Edit("draconform.validation.rules:request_kind", 'bool(request.get("firstAvailable"))',
                        '_set(request, "firstAvailable")'),),
    ),
)

# variant -> (rule, subject, form) of the rule's `shapes:` it is aimed at: only a scenario showing that form kills
# it (draconform.mutation.shapewalk prints it beside the form).
FORMS: dict[str, tuple[str, str, str]] = {
    "constraint-without-requests-binds-first-only": ("KEP-4381/MATCH-ATTRIBUTE", "constraint-requests", "empty"),
    "first-toleration-only": ("KEP-4381/TAINTS", "tolerations", "several"),
    "first-taint-only": ("KEP-4381/TAINTS", "device-taints", "several"),
    "constraint-binds-one-named-request": ("KEP-4381/MATCH-ATTRIBUTE", "constraint-requests", "several"),
    "constraint-over-one-request-ignored": ("KEP-4381/DISTINCT-ATTRIBUTE", "constraint-requests", "one"),
    "request-first-selector-only": ("KEP-4381/SELECTORS", "request-selectors", "several"),
    "class-first-selector-only": ("KEP-4381/SELECTORS", "class-selectors", "several"),
    "first-counter-set-only": ("KEP-4381/COUNTERS", "counter-sets-consumed", "several"),
    "first-counter-only": ("KEP-4381/COUNTERS", "counters-consumed", "several"),
    "claim-config-without-requests-dropped": ("KEP-4381/RESULT-CONFIG", "config-requests", "empty"),
    "first-class-config-only": ("KEP-4381/RESULT-CONFIG", "class-configs", "several"),
    "all-mode-without-match-fits": ("KEP-4381/ALL-MODE", "matching-devices", "empty"),
    "pool-with-extra-slices-complete": ("KEP-4381/POOL-INCOMPLETE", "pool-slices", "more"),
    "pod-reserved-in-first-claim-only": ("KEP-3063/RESERVED-FOR-POD", "pod-claims", "several"),
    "includes-first-item-only": ("KEP-4381/CEL-ENVIRONMENT", "attribute", "list"),
    "empty-first-available-is-a-list": ("DRA-API/FIRST-AVAILABLE-SUBREQUESTS", "subrequests", "empty"),
}
