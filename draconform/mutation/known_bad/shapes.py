"""Known-bad variants of the shapes walk (issue 39): a rule over a list read right for one form of the list and
wrong for another. Each is tied to the rule whose scenarios must hold every form the API allows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from draconform.mutation.overrides import Wrap
from draconform.mutation.variant import Variant
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
)
