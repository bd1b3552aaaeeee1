"""Conforming variants of the reference implementation: each makes another choice that a KEP or upstream
Kubernetes allows (a MAY or SHOULD, "any of", an order the KEP leaves open, a timing within its bounds, an
event's wording), tied to the rule it exercises and the sentence that allows it. The suite must pass every
one; docs/suite-power.md ("Freedoms per KEP") lists them beside the rules."""

from __future__ import annotations

from draconform.mutation.variant import CONFORMING as KIND
from draconform.mutation.variant import Patch, Variant


def conforming(name: str, rule: str, what: str, allows: str, *patches: Patch) -> Variant:
    return Variant(name=name, rule=rule, what=what, patches=patches, kind=KIND, allows=allows)


CONFORMING: tuple[Variant, ...] = (
    # --- KEP-3063 classic -------------------------------------------------------------------------------
    conforming(
        "classic-postfilter-picks-last-eligible", "KEP-3063-CLASSIC/POSTFILTER-ONE-IN-FLIGHT",
        "Post-filter deallocates the last eligible claim of the pod instead of the first",
        "KEP-3063 kube-scheduler Post-filter: the scheduler picks one of the eligible claims (at random); "
        "any of them may be chosen (docs/decisions.md, classic item 3)",
        Patch("reference/scheduler/classic.py",
              "        for claim in pod_claims.claims:\n"
              "            if not (is_delayed(claim) and is_allocated(claim)) or distinct_users(claim):",
              "        for claim in reversed(pod_claims.claims):\n"
              "            if not (is_delayed(claim) and is_allocated(claim)) or distinct_users(claim):"),
    ),
)
