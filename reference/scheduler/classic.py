"""The scheduler's DRA plugin for KEP-3063's classic protocol (seed "kube-scheduler": Pre-filter,
Filter, Post-filter, Pre-score, Reserve, Unreserve). It never allocates: it negotiates with each
claim's driver controller through the claim status (potentialNodes, selectedNode; the driver answers
with unsuitableNodes, availableOnNodes and phase Allocated), reserves allocated claims for the pod
within userLimit by optimistic concurrency, and asks for deallocation (phase Reallocate) when an
allocation keeps the pod off every node. Decisions: docs/decisions.md D-3063-1 to D-3063-5."""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime

from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.nodeselector import selector_matches
from draconform.reference.scheduler.framework import SUCCESS, Code, CycleState, Status, node_name
from draconform.sut import ApiError, Obj
from draconform.validation.classic import UNLIMITED_USERS, generated_claim_name

GATE = "DynamicResourceAllocation"
STATE_KEY = "classic-dra"


@dataclass
class PodClaims:
    """What one scheduling attempt knows about the pod's claims, from its Pre-filter read."""

    claims: list[Obj]
    excluded: dict[str, set[str]] = field(default_factory=dict)  # claim name -> nodes its allocation excluded
    reserved: list[str] = field(default_factory=list)  # claims this attempt added the pod to


def consumer_reference(pod: Obj) -> Obj:
    """A reservedFor entry: an OwnerReference to the pod (docs/decisions.md D-3063-5: matched by UID)."""
    return {"apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}


def distinct_users(claim: Obj) -> set[str]:
    return {entry.get("uid", "") for entry in (claim.get("status") or {}).get("reservedFor") or []}


def user_key(pod: Obj) -> str:
    """What a pod is known by among a claim's users (docs/decisions.md D-3063-5: its UID)."""
    return str(pod["metadata"]["uid"])


def is_allocated(claim: Obj) -> bool:
    return bool((claim.get("status") or {}).get("phase") == "Allocated")


def is_delayed(claim: Obj) -> bool:
    return bool((claim.get("spec") or {}).get("allocationMode", "Delayed") == "Delayed")


def claim_names(pod: Obj) -> list[tuple[str, str, bool]]:
    """(entry name, claim name, generated from a template) for each of the pod's claims."""
    names = []
    for entry in pod["spec"].get("resourceClaims") or []:
        if entry.get("resourceClaimName"):
            names.append((entry["name"], entry["resourceClaimName"], False))
        else:
            names.append((entry["name"], generated_claim_name(pod["metadata"]["name"], entry["name"]), True))
    return names


def _scheduling(claim: Obj) -> Obj:
    return (claim.get("status") or {}).get("scheduling") or {}


def _containers_using(pod: Obj, claim: Obj) -> int:
    entries = {entry for entry, name, _ in claim_names(pod) if name == claim["metadata"]["name"]}
    return sum(1 for container in pod["spec"].get("containers") or []
               if entries & set((container.get("resources") or {}).get("claims") or []))


def _owned_by(claim: Obj, pod: Obj) -> bool:
    return any(ref.get("uid") == pod["metadata"]["uid"] and ref.get("controller")
               for ref in claim["metadata"].get("ownerReferences") or [])


class ClassicDynamicResources:
    name = "DynamicResources"

    def __init__(self, store: ApiStore, gates: FeatureGates) -> None:
        self._store = store
        self._gates = gates

    def stop(self) -> None:
        """Nothing to stop: the plugin keeps no state outside one scheduling attempt."""

    def follow(self) -> None:
        """Nothing to follow: the plugin reads the store in each scheduling attempt."""

    def pre_enqueue(self, pod: Obj) -> str | None:
        return None  # the classic negotiation reports a claim not yet created in PreFilter

    # The KEP-5007 wait in PreBind does not exist in the classic protocol.
    def waiting_on(self, state: CycleState) -> frozenset[str]:
        return frozenset()

    def wait_deadline(self, state: CycleState) -> datetime | None:
        return None

    def recheck(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        return SUCCESS

    # --- Pre-filter ------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Obj) -> Status:
        gate = self._gates.enabled(GATE)
        if not pod["spec"].get("resourceClaims") or not gate:
            return Status(Code.SKIP)  # without the feature a scheduler does not know claims exist
        claims = []
        namespace = pod["metadata"]["namespace"]
        for entry, name, generated in claim_names(pod):
            claim = self._store.get("ResourceClaim", name, namespace)
            if claim is None:
                return Status(Code.UNSCHEDULABLE,
                              f'waiting for resource claim "{name}" (entry "{entry}") to be created')
            if generated and not _owned_by(claim, pod):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                              f'resource claim "{name}" was not created for this pod')
            if claim["metadata"].get("deletionTimestamp"):
                return Status(Code.UNSCHEDULABLE, f'resource claim "{name}" is being deleted')
            if not is_delayed(claim) and not is_allocated(claim):
                return Status(Code.UNSCHEDULABLE,
                              f'resource claim "{name}" with immediate allocation is not allocated yet')
            if (claim.get("status") or {}).get("phase") == "Reallocate":
                return Status(Code.UNSCHEDULABLE, f'resource claim "{name}" is being deallocated')
            if is_allocated(claim) and not self._has_room(claim, pod):
                return Status(Code.UNSCHEDULABLE, f'resource claim "{name}" is in use by as many users as it allows')
            claims.append(claim)
        state.data[STATE_KEY] = PodClaims(claims)
        return SUCCESS

    @staticmethod
    def _has_room(claim: Obj, pod: Obj) -> bool:
        users = distinct_users(claim)
        limit = (claim.get("status") or {}).get("userLimit", 1)
        return user_key(pod) in users or limit == UNLIMITED_USERS or len(users) < limit

    # --- Filter: a deny-list for pending claims, availableOnNodes for all ---------------------------
    def filter(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        pod_claims: PodClaims | None = state.data.get(STATE_KEY)
        if pod_claims is None:
            return SUCCESS  # Pre-filter skipped the pod: it uses no claims the plugin handles
        reasons = []
        for claim in pod_claims.claims:
            name = claim["metadata"]["name"]
            driver_status = _scheduling(claim).get("driver") or {}
            if not selector_matches(driver_status.get("availableOnNodes"), node):
                if is_allocated(claim):
                    pod_claims.excluded.setdefault(name, set()).add(node_name(node))
                reasons.append(f'resource claim "{name}" is not available on this node')
            elif (not is_allocated(claim) and node_name(node) in (driver_status.get("unsuitableNodes") or [])):
                reasons.append(f'resource claim "{name}" cannot be allocated on this node')
        if reasons:
            return Status(Code.UNSCHEDULABLE, "; ".join(reasons))
        return SUCCESS

    # --- Post-filter: free one allocation that keeps the pod off nodes ----------------------------
    def post_filter(self, state: CycleState, pod: Obj, rejections: dict[str, Status]) -> Status:
        pod_claims: PodClaims | None = state.data.get(STATE_KEY)
        if pod_claims is None:
            return Status(Code.UNSCHEDULABLE)
        for claim in pod_claims.claims:
            if not (is_delayed(claim) and is_allocated(claim)) or distinct_users(claim):
                continue
            if not pod_claims.excluded.get(claim["metadata"]["name"]):
                continue
            status = claim.setdefault("status", {})
            status["phase"] = "Reallocate"
            with suppress(ApiError):  # the claim changed meanwhile: the pod is retried on that change anyway
                self._store.update_status(claim)
            return Status(Code.UNSCHEDULABLE, f'deallocating resource claim "{claim["metadata"]["name"]}"')
        return Status(Code.UNSCHEDULABLE)

    # --- Pre-score: tell the drivers which nodes are candidates -----------------------------------
    def pre_score(self, state: CycleState, pod: Obj, nodes: list[Obj]) -> Status:
        pod_claims: PodClaims | None = state.data.get(STATE_KEY)
        if pod_claims is None:
            return SUCCESS  # Pre-filter skipped the pod: it uses no claims the plugin handles
        potential = sorted(node_name(node) for node in nodes)
        for index, claim in enumerate(pod_claims.claims):
            if not is_delayed(claim) or is_allocated(claim):
                continue
            scheduling = claim.setdefault("status", {}).setdefault("scheduling", {})
            scheduler = scheduling.setdefault("scheduler", {})
            if scheduler.get("potentialNodes") == potential:
                continue  # written only when it changes
            scheduler["potentialNodes"] = potential
            try:
                pod_claims.claims[index] = self._store.update_status(claim)
            except ApiError as error:
                return Status(Code.ERROR, f"updating potential nodes: {error}")
        return SUCCESS

    # --- Reserve / Unreserve -----------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        pod_claims: PodClaims | None = state.data.get(STATE_KEY)
        if pod_claims is None:
            return SUCCESS  # Pre-filter skipped the pod: it uses no claims the plugin handles
        pending = [claim for claim in pod_claims.claims if not is_allocated(claim)]
        if pending:
            return self._select_node(pod_claims, pending, node_name(node))
        for claim in pod_claims.claims:
            if user_key(pod) in distinct_users(claim):
                continue
            if not self._has_room(claim, pod):
                return Status(Code.UNSCHEDULABLE, f'resource claim "{claim["metadata"]["name"]}" is in use')
            claim["status"].setdefault("reservedFor", []).append(consumer_reference(pod))
            try:  # conditioned on the resourceVersion read in Pre-filter: another scheduler may have won
                self._store.update_status(claim)
            except ApiError as error:
                return Status(Code.ERROR, f'reserving resource claim "{claim["metadata"]["name"]}": {error.reason}')
            pod_claims.reserved.append(claim["metadata"]["name"])
        return SUCCESS

    def _select_node(self, pod_claims: PodClaims, pending: list[Obj], node: str) -> Status:
        for claim in pending:
            if not is_delayed(claim):
                continue  # only the driver picks a node for an Immediate claim
            scheduler = claim.setdefault("status", {}).setdefault("scheduling", {}).setdefault("scheduler", {})
            if scheduler.get("selectedNode") != node:
                scheduler["selectedNode"] = node
                try:
                    self._store.update_status(claim)
                except ApiError as error:
                    return Status(Code.ERROR, f"selecting node: {error}")
        names = ", ".join(f'"{claim["metadata"]["name"]}"' for claim in pending)
        return Status(Code.UNSCHEDULABLE, f"waiting for the driver to allocate resource claim {names} on node {node}")

    def unreserve(self, state: CycleState, pod: Obj, node: Obj) -> None:
        pod_claims: PodClaims | None = state.data.get(STATE_KEY)
        if pod_claims is None:
            return
        namespace, uid = pod["metadata"]["namespace"], pod["metadata"]["uid"]
        for name in pod_claims.reserved:
            claim = self._store.get("ResourceClaim", name, namespace)
            if claim is None:
                continue
            status = claim.get("status") or {}
            status["reservedFor"] = [entry for entry in status.get("reservedFor") or [] if entry.get("uid") != uid]
            with suppress(ApiError):  # gone or changed: the claim controller drops reservations of vanished pods
                self._store.update_status(claim)
        pod_claims.reserved.clear()
