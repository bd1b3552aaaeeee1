"""One scheduling attempt over given objects, as `draconform allocate` makes it (KEP-4381): the claims of one pod
allocated together in kube-scheduler's Filter walk over the nodes (`walk`, the scheduler's `filter_walk`), the core
built over the objects exactly as given (`make_allocator`), and why each claim cannot be allocated (`explain`,
`classify`). The command reads and checks the input and prints; this module holds what the attempt decides."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.interface import AllocationError, Allocator, Feasibility, feasible_on
from draconform.reference.scheduler.framework import Code, Status
from draconform.reference.scheduler.scheduler import filter_walk
from draconform.sut import Obj

# per node: the claims to allocate there, and (pod, extended resource) pairs the node cannot serve
ClaimsFor = Callable[[Obj], tuple[list[Obj], list[tuple[str, str]]]]
_FITS, _DOES_NOT_FIT = Status(), Status(Code.UNSCHEDULABLE)  # a node's verdict in the walk; the reasons are kept


@dataclass
class Cycle:
    """What one scheduling cycle over the nodes found (see `walk`)."""

    chosen: tuple[Obj, list[Obj], list[Obj] | None] | None = None  # node, its claims, allocations (None: not made)
    error_node: str | None = None  # the node whose allocation error stopped the cycle
    error_message: str | None = None  # that error
    reasons: dict[tuple[str, str], list[str]] = dataclasses.field(default_factory=dict)  # (kind, shown) -> why

    @property
    def error(self) -> str | None:
        """"node N: allocation error: ...", where the cycle ended in an error."""
        return None if self.error_message is None else f"node {self.error_node}: allocation error: {self.error_message}"

    @property
    def verdict(self) -> str:
        """How kube-scheduler's cycle ends: allocated, does-not-fit (unschedulable) or error."""
        if self.error_message is not None:
            return "error"
        return "does-not-fit" if self.chosen is None else "allocated"


def walk(allocator: Allocator, nodes: list[Obj], claims_for: ClaimsFor, batch: bool) -> Cycle:
    """kube-scheduler's Filter walk over the nodes (`scheduler.filter_walk`, the scheduler's own), in name order:
    it stops once percentageOfNodesToScore's share of feasible nodes is found, and at the first node whose Filter
    fails with an error (an allocation error aborts the whole cycle, even when some node fits). The chosen node is
    the first feasible one by name (the DRA plugin scores nothing). With `batch`, the core judges many nodes at
    once where it can, as the DRA plugin asks it; a node it cannot judge is allocated on."""
    found = Cycle()

    def judge(low: int, high: int) -> list[Status]:
        group = nodes[low:high]
        verdicts: list[Feasibility | None] = [None] * len(group)
        if batch:
            with contextlib.suppress(AllocationError):  # else node by node: the first node asked reports it
                verdicts = feasible_on(allocator, group, claims_for(group[0])[0])
        statuses: list[Status] = []
        for node, verdict in zip(group, verdicts, strict=True):
            statuses.append(_judge_node(allocator, node, verdict, claims_for, found))
            if statuses[-1].code is Code.ERROR:
                break  # the walk ends here: no later node is tried
        return statuses

    filter_walk(len(nodes), judge)
    return found


def _judge_node(allocator: Allocator, node: Obj, verdict: Feasibility | None, claims_for: ClaimsFor,
                found: Cycle) -> Status:
    """One node's Filter verdict for the claims to allocate there (the core's `verdict` where it gave one, else
    an allocation), noting in `found` why it does not fit, the error, or the first node that fits."""
    name = node["metadata"]["name"]
    claims, unserved = claims_for(node)
    for pod_name, extended in unserved:
        found.reasons.setdefault(("Pod", pod_name), []).append(
            f"node {name}: Insufficient {extended} (the pod asks for more than the node advertises, and no "
            "DeviceClass serves it through DRA there)")
    if unserved:
        return _DOES_NOT_FIT
    allocations: list[Obj] | None = None
    if claims and (verdict is None or not verdict.fits):
        try:
            answer = allocator.allocate(node, claims) if verdict is None else verdict
        except AllocationError as error:
            found.error_node, found.error_message = name, str(error)
            return Status(Code.ERROR, str(error))
        if not answer.fits:
            for claim in claims:
                why = answer.reasons.get(claim["metadata"]["name"], "does not fit together with the other claims")
                found.reasons.setdefault(("ResourceClaim", display(claim)), []).append(f"node {name}: {why}")
            return _DOES_NOT_FIT
        allocations = getattr(answer, "allocations", None)
    if found.chosen is None:
        found.chosen = (node, claims, allocations)
    return _FITS


def attempt_message(found: Cycle, nodes: int) -> str:
    """What ended the attempt for all claims, as kube-scheduler's cycle ends."""
    if found.error is not None:
        return f"the scheduling cycle ended at {found.error}"
    return f"no node visited ({nodes} known) fits all claims together; the pod stays unschedulable"


def classify(claim: Obj, alone: Cycle, together: Cycle, missing: list[str]) -> tuple[str, str]:
    """Why a pending claim cannot be allocated, as (reason, message), from the attempt for it alone and the one for
    all claims: `missing-class` (a request names a DeviceClass the input lacks), `error` (its own allocation error,
    in an attempt that ended in an error), `own-error` (the same, where the attempt for all claims did not fit and
    so never met it: kube-scheduler stops at the first claim that fails), `shortage` (on its own it fits on no
    node), `together` (it fits on its own, not beside the other claims) or `attempt-error` (it fits on its own,
    but the one attempt for all claims stopped at another claim's error)."""
    shown = display(claim)
    if missing:
        return "missing-class", own_error(alone, together) or "; ".join(missing)
    if alone.error is not None and together.error is not None:
        return "error", alone.error
    if alone.error is not None:
        return "own-error", own_error(alone, together) or ""
    if alone.chosen is None:
        return "shortage", "; ".join(alone.reasons.get(("ResourceClaim", shown), ["no node fits it"]))
    if together.error is not None:
        return "attempt-error", (f"fits on its own (node {alone.chosen[0]['metadata']['name']}), but the attempt "
                                 f"for all claims failed: {together.error}")
    why = "; ".join(together.reasons.get(("ResourceClaim", shown), []))
    return "together", (f"fits on its own (node {alone.chosen[0]['metadata']['name']}), not together with the "
                        "other claims" + (f": {why}" if why else ""))


def explain(allocator: Allocator, nodes: list[Obj], pending: Sequence[Obj], classes: set[str],
            extended_pods: Sequence[Obj], together: Cycle) -> list[tuple[str, str, str, str]]:
    """Why each claim cannot be allocated, as (kind, namespace/name, reason, message) (see `classify` for the
    reasons). Each pending claim is tried on its own to tell these apart; pods and the claims made for their
    extended resources keep the reasons the attempt for all claims (`together`) gave. "error" is said only when
    that attempt ended in one."""
    out: list[tuple[str, str, str, str]] = []
    explained: set[tuple[str, str]] = set()
    for claim in pending:
        alone = walk(allocator, nodes, only(claim), len(nodes) > 1)
        reason, message = classify(claim, alone, together, missing_classes(claim, classes))
        explained.add(("ResourceClaim", display(claim)))
        out.append(("ResourceClaim", display(claim), reason, message))
    for (kind, shown), lines in together.reasons.items():
        if (kind, shown) not in explained:
            out.append((kind, shown, "shortage" if kind == "Pod" else "together", "; ".join(lines)))
    if together.error is not None and not any(reason in ("error", "missing-class", "attempt-error")
                                              for _, _, reason, _ in out):
        # only the attempt for all claims met the error (a claim made for a pod's extended resources, or a
        # device the search reached only beside the other claims): said once, at the first pod or claim
        kind, shown = ("Pod", display(extended_pods[0])) if extended_pods else ("ResourceClaim", display(pending[0]))
        out.append((kind, shown, "error", f"the attempt for all claims failed: {together.error}"))
    return out


def own_error(alone: Cycle, together: Cycle) -> str | None:
    """A claim's error on its own, worded as the attempt for all claims ended: an allocation error only when that
    attempt ended in one too."""
    if alone.error is None or together.error is not None:
        return alone.error
    return (f"the attempt for all claims does not fit (it stopped before reaching this claim); tried on its own, "
            f"this claim would end an attempt on node {alone.error_node} with: {alone.error_message}")


def only(claim: Obj) -> ClaimsFor:
    """The claims to allocate on any node when one claim is tried on its own."""
    def claims_for(node: Obj) -> tuple[list[Obj], list[tuple[str, str]]]:
        return [claim], []
    return claims_for


def missing_classes(claim: Obj, known: set[str]) -> list[str]:
    """`request R: device class C does not exist` for each request or alternative naming a class not given."""
    found: list[str] = []
    for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        subs = [(request.get("name", ""), request.get("exactly") or {})] if "exactly" in request else [
            (f"{request.get('name', '')}/{sub.get('name', '')}", sub) for sub in request.get("firstAvailable") or []]
        found.extend(f"request {name}: device class {spec.get('deviceClassName')} does not exist"
                     for name, spec in subs if spec.get("deviceClassName") not in known)
    return found


def allocator_class(kind: str) -> Callable[..., Allocator]:
    """The core `--allocator` names (importing it is most of the command's start-up: polars, the CEL runtime)."""
    if kind == "oracle":
        from draconform.reference.allocator.oracle import OracleAllocator

        return OracleAllocator
    from draconform.reference.allocator.columnar import ColumnarAllocator

    return ColumnarAllocator


def make_allocator(kind: str, stored: Sequence[Obj], gates: FeatureGates) -> Allocator:
    """A store holding the objects exactly as given, and an allocator over it."""
    from draconform.reference.apiserver.store import Store
    from draconform.reference.clock import FakeClock

    factory = allocator_class(kind)
    store = Store(FakeClock())
    if kind == "oracle":
        for obj in stored:
            store.load(obj)
        return factory(store, gates)
    # The columnar core reads the slices as they are: a dump of thousands of nodes is not copied into a store
    # (twice) for a core that never changes them and a command that watches nothing.
    slices = [obj for obj in stored if obj["kind"] == "ResourceSlice"]
    for obj in stored:
        if obj["kind"] != "ResourceSlice":
            store.load(obj)
    return factory(store, gates, slices)


def display(obj: Obj) -> str:
    """namespace/name, or the name of a cluster-scoped object."""
    meta = obj.get("metadata") or {}
    return f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
