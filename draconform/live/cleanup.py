"""What closing a live scenario removes, and how what is left is named.

A scenario's objects must all go whatever the scenario did, or they stay in the cluster for every later scenario:
a pod bound to a node no kubelet serves (or to another scenario's node) stays Terminating after a graceful
delete, an object carrying a finalizer nobody removes (one the scenario wrote, or a claim's delete protection a
controller keeps while the claim looks reserved) stays for ever, and its namespace with it. So clean-up deletes
every pod of the scenario's namespace at once (grace 0, wherever bound), deletes the namespace's other objects
that can hold a finalizer or program a component, and the scenario's labelled cluster-scoped objects, and then
removes the finalizers of whatever is still there; the namespace itself is then deleted and left to the
cluster's namespace controller, checked later (see `LiveSystem.close`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from draconform.sut import Obj

# The namespaced kinds clean-up deletes itself, in this order: the programs' ConfigMaps first (the programmed
# driver and controllers stop writing), then the pods (nothing then consumes a claim), then the claims.
NAMESPACED = ("ConfigMap", "Pod", "ResourceClaim", "ResourceClaimTemplate")


@dataclass(frozen=True)
class Removal:
    """One object to remove: delete it (`grace_period_seconds` 0 for a pod: gone at once, as the pod garbage
    collector removes the pods of a node without a kubelet), then take off the finalizers it still carries."""

    kind: str
    name: str
    namespace: str | None = None
    grace_period_seconds: int | None = None
    finalizers: tuple[str, ...] = ()
    deleting: bool = False  # the deletion already began (a deletionTimestamp)

    def describe(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        held = f" (finalizers {', '.join(self.finalizers)})" if self.finalizers else ""
        state = " marked for deletion" if self.deleting else ""
        return f"{self.kind}/{where}{self.name}{state}{held}"


def _removal(kind: str, obj: Obj) -> Removal:
    meta = obj.get("metadata") or {}
    return Removal(kind, str(meta.get("name", "")), meta.get("namespace"), 0 if kind == "Pod" else None,
                   tuple(meta.get("finalizers") or ()), bool(meta.get("deletionTimestamp")))


def plan(namespaced: Mapping[str, Sequence[Obj]], cluster_scoped: Mapping[str, Sequence[Obj]]) -> list[Removal]:
    """What is left to remove: every object of the scenario's namespace of the NAMESPACED kinds (each pod with
    grace 0, whichever node it is bound to or none), then every cluster-scoped object labelled as the
    scenario's. An empty plan: nothing of the scenario is left but its namespace."""
    removals = [_removal(kind, obj) for kind in NAMESPACED for obj in namespaced.get(kind, ())]
    removals += [_removal(kind, obj) for kind in sorted(cluster_scoped) for obj in cluster_scoped[kind]]
    return removals


def left_over(removals: Sequence[Removal], refused: Mapping[Removal, str]) -> str:
    """The objects a clean-up could not remove, named (with the API server's refusal, if it refused), for the
    error that stops a run from carrying on."""
    return ", ".join(removal.describe() + (f" (refused: {refused[removal]})" if removal in refused else "")
                     for removal in removals)
