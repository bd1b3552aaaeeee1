"""The scheduler's DRA plugin (KEP-3063 "kube-scheduler"; structured allocation as upstream runs it):
PreFilter gathers the pod's claims, Filter asks the allocation core whether the unallocated ones fit
on a node and whether the allocated ones are usable there, Reserve assumes the chosen allocation in
memory, PreBind writes allocation and reservation to the claims, Unreserve undoes both."""

from __future__ import annotations

from dataclasses import dataclass, field

from draconform.reference.allocator.interface import AllocationError, Allocator
from draconform.reference.apiserver.store import Store
from draconform.reference.nodeselector import selector_matches
from draconform.reference.podclaims import consumer_reference, is_reserved_for, pod_claims
from draconform.reference.scheduler.framework import (
    SUCCESS,
    Code,
    CycleState,
    Status,
    node_name,
)
from draconform.sut import ApiError, Obj

NAME = "DynamicResources"
DELETE_PROTECTION_FINALIZER = "resource.kubernetes.io/delete-protection"
RESERVED_FOR_MAX = 256
CONFLICT_RETRIES = 5


@dataclass
class PodClaimsState:
    """What PreFilter learned about the pod's claims, kept for the rest of the cycle."""

    claims: list[Obj]  # every claim of the pod, in spec order
    unallocated: list[Obj]  # those still without status.allocation
    allocations: dict[str, list[Obj]] = field(default_factory=dict)  # node -> allocation per unallocated


class DynamicResources:
    name = NAME

    def __init__(self, store: Store, allocator: Allocator) -> None:
        self._store = store
        self._allocator = allocator
        # Claims whose allocation the scheduler reserved but has not written yet, by claim UID: the
        # "assume cache" that stops two pods from getting the same device between Reserve and PreBind.
        self.assumed: dict[str, Obj] = {}

    # --- PreFilter -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Obj) -> Status:
        entries = pod_claims(pod)
        if not entries:
            return Status(Code.SKIP)
        claims: list[Obj] = []
        for entry in entries:
            if entry.claim is None:
                return Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"waiting for the ResourceClaim of entry {entry.entry!r} to be created from "
                    f"template {entry.template!r}",
                )
            claim = self._store.get("ResourceClaim", entry.claim, pod["metadata"]["namespace"])
            if claim is None:
                return Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"resourceclaim {entry.claim!r} not found"
                )
            if claim["metadata"].get("deletionTimestamp"):
                return Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"resourceclaim {entry.claim!r} is being deleted"
                )
            reserved = (claim.get("status") or {}).get("reservedFor") or []
            if len(reserved) >= RESERVED_FOR_MAX and not is_reserved_for(claim, pod["metadata"]["uid"]):
                return Status(
                    Code.UNSCHEDULABLE,
                    f"resourceclaim {entry.claim!r} already has {RESERVED_FOR_MAX} consumers",
                )
            claims.append(claim)
        unallocated = [claim for claim in claims if not self._allocation(claim)]
        state.data[NAME] = PodClaimsState(claims=claims, unallocated=unallocated)
        return SUCCESS

    # --- Filter --------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        claims_state: PodClaimsState = state.data[NAME]
        for claim in claims_state.claims:
            allocation = self._allocation(claim)
            if allocation and not selector_matches(allocation.get("nodeSelector"), node):
                return Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    f"resourceclaim {claim['metadata']['name']!r} is allocated on other nodes",
                )
        if not claims_state.unallocated:
            return SUCCESS
        try:
            outcome = self._allocator.allocate(node, claims_state.unallocated, list(self.assumed.values()))
        except AllocationError as error:
            return Status(Code.ERROR, str(error))
        if outcome.allocations is None:
            reasons = "; ".join(f"{claim}: {why}" for claim, why in sorted(outcome.reasons.items()))
            return Status(Code.UNSCHEDULABLE, f"cannot allocate all claims ({reasons or 'no devices'})")
        claims_state.allocations[node_name(node)] = outcome.allocations
        return SUCCESS

    # --- Reserve / Unreserve -------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        claims_state: PodClaimsState | None = state.data.get(NAME)
        if claims_state is None:
            return SUCCESS
        for claim, allocation in zip(
            claims_state.unallocated, claims_state.allocations.get(node_name(node), []), strict=True
        ):
            assumed = dict(claim)
            assumed["status"] = {**(claim.get("status") or {}), "allocation": allocation}
            self.assumed[claim["metadata"]["uid"]] = assumed
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Obj, node: Obj) -> None:
        claims_state: PodClaimsState | None = state.data.get(NAME)
        if claims_state is None:
            return
        for claim in claims_state.claims:
            self.assumed.pop(claim["metadata"]["uid"], None)
            self._drop_reservation(claim, pod)

    # --- PreBind -------------------------------------------------------------------------------
    def pre_bind(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        claims_state: PodClaimsState | None = state.data.get(NAME)
        if claims_state is None:
            return SUCCESS
        for claim in claims_state.claims:
            try:
                self._write_claim(claim, pod)
            except ApiError as error:
                return Status(Code.ERROR, f"resourceclaim {claim['metadata']['name']!r}: {error}")
        return SUCCESS

    def _write_claim(self, claim: Obj, pod: Obj) -> None:
        """Persist the assumed allocation (if any) and add the pod to reservedFor, in one status
        write, after protecting the claim with the delete-protection finalizer."""
        uid = claim["metadata"]["uid"]
        assumed = self.assumed.get(uid)
        if assumed is not None:
            self._add_finalizer(claim)
        for _ in range(CONFLICT_RETRIES):
            latest = self._store.get("ResourceClaim", claim["metadata"]["name"], claim["metadata"]["namespace"])
            if latest is None:
                raise ApiError("NotFound", "claim was deleted while the pod was being bound")
            status = latest.setdefault("status", {})
            if assumed is not None:
                if status.get("allocation"):
                    raise ApiError("Conflict", "claim was allocated by someone else meanwhile")
                status["allocation"] = assumed["status"]["allocation"]
            if not is_reserved_for(latest, pod["metadata"]["uid"]):
                status.setdefault("reservedFor", []).append(consumer_reference(pod))
            try:
                self._store.update_status(latest)
            except ApiError as error:
                if error.reason == "Conflict":
                    continue
                raise
            self.assumed.pop(uid, None)
            return
        raise ApiError("Conflict", f"gave up after {CONFLICT_RETRIES} conflicting updates")

    def _add_finalizer(self, claim: Obj) -> None:
        latest = self._store.get("ResourceClaim", claim["metadata"]["name"], claim["metadata"]["namespace"])
        if latest is None or DELETE_PROTECTION_FINALIZER in latest["metadata"].get("finalizers", []):
            return
        latest["metadata"].setdefault("finalizers", []).append(DELETE_PROTECTION_FINALIZER)
        self._store.update(latest)

    def _drop_reservation(self, claim: Obj, pod: Obj) -> None:
        latest = self._store.get("ResourceClaim", claim["metadata"]["name"], claim["metadata"]["namespace"])
        if latest is None or not is_reserved_for(latest, pod["metadata"]["uid"]):
            return
        latest["status"]["reservedFor"] = [
            entry for entry in latest["status"]["reservedFor"] if entry.get("uid") != pod["metadata"]["uid"]
        ]
        self._store.update_status(latest)

    @staticmethod
    def _allocation(claim: Obj) -> Obj | None:
        allocation: Obj | None = (claim.get("status") or {}).get("allocation")
        return allocation
