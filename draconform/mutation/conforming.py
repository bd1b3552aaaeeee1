"""Conforming variants of the reference implementation: each makes another choice a seed KEP or upstream
Kubernetes allows (a MAY, a SHOULD, "any of", wording, timing within the KEP's bounds), tied to the rule it
exercises a freedom of and to the sentence that allows it. The suite must pass every one: a failure is a
false failure of the suite, and `draconform mutants` exits non-zero on it."""

from __future__ import annotations

from draconform.mutation.variant import CONFORMING as KIND
from draconform.mutation.variant import Patch, Variant

CONFORMING: tuple[Variant, ...] = (
    Variant(
        "pending-event-other-wording", "KEP-5007/EVENT-PENDING",
        "the BindingConditionsPending event says in other words that the pod waits",
        (
            Patch("reference/scheduler/dynamicresources.py",
                  '                f"waiting for the binding conditions of its devices before binding to node '
                  '{node_name(node)}",\n',
                  '                f"pod is waiting for device binding conditions on {node_name(node)}",\n'),
        ),
        kind=KIND,
        allows="KEP-5007, 'How can someone using this feature know that it is working for their instance?': the "
               "event is named by its reason, BindingConditionsPending; its message is the implementation's own",
    ),
)
