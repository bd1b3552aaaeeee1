"""The scheduler's DRA plugin (KEP-3063 "kube-scheduler"; structured allocation as upstream runs it):
PreFilter gathers the pod's claims, Filter asks the allocation core whether the unallocated ones fit
on a node and whether the allocated ones are usable there, Score prefers nodes whose new devices need
no binding conditions, Reserve assumes the chosen allocation in memory, PreBind writes allocation and
reservation to the claims, Unreserve undoes both.

KEP-5007 (both DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on): PreBind stamps a new
allocation with allocationTimestamp in the same write, then, if any allocated device has binding
conditions, answers Pending; the scheduler parks the pod and asks `recheck` again whenever one of its
claims changes or its deadline passes. A failed or timed-out wait clears the claim (bindingconditions.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from draconform.kube.featuregates import FeatureGates
from draconform.kube.kinds import DELETE_PROTECTION_FINALIZER
from draconform.reference.allocator.interface import (
    AllocationError,
    Allocator,
    Distinct,
    Feasibility,
    NodeAllocation,
    distinct_of,
    feasible_on,
    node_names,
    only_one,
)
from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.clock import Clock, format_time
from draconform.reference.events import EventRecorder
from draconform.reference.metrics import MetricsRegistry
from draconform.reference.nodeselector import selector_matches
from draconform.reference.podclaims import consumer_reference, is_reserved_for, pod_claims
from draconform.reference.scheduler.bindingconditions import (
    Outcome,
    Verdict,
    claim_verdict,
    cleared_status,
    parse_binding_timeout,
    pod_verdict,
    requires_binding_conditions,
)
from draconform.reference.scheduler.extendedresources import (
    RequestMapping,
    backed_requests,
    build_requests,
    is_extended_claim_of,
    pod_requests,
    special_claim,
    via_dra_on,
)
from draconform.reference.scheduler.framework import (
    SUCCESS,
    Code,
    CycleState,
    Status,
    node_name,
)
from draconform.reference.scheduler.metrics import BindingConditionMetrics
from draconform.sut import ApiError, Obj, copy_object

NAME = "DynamicResources"
RESERVED_FOR_MAX = 256
CONFLICT_RETRIES = 5
BINDING_GATES = ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")
PENDING_REASON = "BindingConditionsPending"
WAIT = NAME + "/binding-wait"  # CycleState key of a pod's BindingWait


@dataclass
class ExtendedClaim:
    """KEP-5004: the pod's extended resources that DeviceClasses stand for, and the claim the scheduler
    builds for those a node serves through DRA (one per set of such resources, shared by the nodes)."""

    requests: dict[str, int]
    classes: list[Obj]
    stale: Obj | None  # a claim written for the pod by an earlier cycle: deleted in PostFilter, then retried
    built: dict[frozenset[str], tuple[Obj, list[RequestMapping]]] = field(default_factory=dict)
    on_node: dict[str, tuple[Obj, list[RequestMapping]]] = field(default_factory=dict)
    written: Obj | None = None  # the claim as created in PreBind


@dataclass
class PodClaimsState:
    """What PreFilter learned about the pod's claims, kept for the rest of the cycle."""

    claims: list[Obj]  # every claim of the pod, in spec order
    unallocated: list[Obj]  # those still without status.allocation
    # node -> allocation per unallocated claim; None where the core settled the node without allocating (its
    # allocations need no device with binding conditions), so the allocation is made only if the node is chosen
    allocations: dict[str, list[Obj] | None] = field(default_factory=dict)
    extended: ExtendedClaim | None = None
    # Batches of nodes the core settled without a search: the batch's names and each node's answer (None where
    # every node of the batch fits, Filter's most common batch); a node that fits there counts as a None in
    # `allocations`, kept with its batch rather than as an entry per node
    settled: list[tuple[list[str], list[Feasibility | None] | None]] = field(default_factory=list)


@dataclass(frozen=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str


@dataclass
class BindingWait:
    """One pod's wait in PreBind: when it entered PreBind and the claims it waits on."""

    entered: datetime
    claims: list[ClaimRef]
    deadline: datetime | None = None  # while waiting: when the earliest claim times out


class DynamicResources:
    name = NAME

    def __init__(
        self,
        store: ApiStore,
        allocator: Allocator,
        clock: Clock,
        events: EventRecorder,
        gates: FeatureGates,
        args: Mapping[str, Any],
        metrics: MetricsRegistry,
    ) -> None:
        self._store = store
        self._allocator = allocator
        self._clock = clock
        self._events = events
        self.binding = gates.enabled(*BINDING_GATES)
        self.extended_resources = gates.enabled("DRAExtendedResource")
        self.binding_timeout = parse_binding_timeout(args)
        self.metrics = BindingConditionMetrics(metrics) if self.binding else None
        # Claims whose allocation the scheduler reserved but has not written yet, by claim UID: the
        # "assume cache" that stops two pods from getting the same device between Reserve and PreBind.
        self.assumed: dict[str, Obj] = {}

    @property
    def allocator(self) -> Allocator:
        """The allocation core (read for the work it counts)."""
        return self._allocator

    def stop(self) -> None:
        self._allocator.close()
        if self.metrics is not None:
            self.metrics.unregister()

    def follow(self) -> None:
        follow = getattr(self._allocator, "follow", None)  # a core that keeps state may take changes in now
        if follow is not None:
            follow()

    # --- PreEnqueue ----------------------------------------------------------------------------
    def pre_enqueue(self, pod: Obj) -> str | None:
        """Upstream's PreEnqueue: why a pod is held back before any scheduling attempt, None to try it. A
        claim from a template whose name the pod's status does not give yet, a claim that does not exist or is
        being deleted, a generated claim the pod does not own: the pod is not tried at all (no event, no
        PodScheduled condition), and the claim or pod change that lifts the cause brings it back. A status
        entry without a claim name means no claim is needed for that entry."""
        named = {status["name"]: status for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []}
        namespace = pod["metadata"]["namespace"]
        for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
            name = entry.get("resourceClaimName")
            generated = not name
            if generated:
                if entry["name"] not in named:
                    return f"pod has no claim status for entry {entry['name']!r} yet"
                name = named[entry["name"]].get("resourceClaimName")
                if not name:
                    continue
            claim = self._store.peek("ResourceClaim", name, namespace)
            if claim is None:
                return f"resourceclaim {name!r} not found"
            if claim["metadata"].get("deletionTimestamp"):
                return f"resourceclaim {name!r} is being deleted"
            if generated and not any(ref.get("controller") and ref.get("uid") == pod["metadata"].get("uid")
                                     for ref in claim["metadata"].get("ownerReferences") or []):
                return f"resourceclaim {name!r} was not created for the pod"
        return None

    # --- PreFilter -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Obj) -> Status:
        entries = pod_claims(pod)
        extended = self._extended_claim(pod) if self.extended_resources else None
        if not entries and extended is None:
            return Status(Code.SKIP)
        claims: list[Obj] = []
        for entry in entries:
            if entry.claim is None:  # PreEnqueue let it through: the pod's status says no claim is needed
                continue
            claim = self._store.peek("ResourceClaim", entry.claim, pod["metadata"]["namespace"])  # read only
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
        unallocated = [claim for claim in claims if not _allocation(claim)]
        state.data[NAME] = PodClaimsState(claims=claims, unallocated=unallocated, extended=extended)
        return SUCCESS

    def _extended_claim(self, pod: Obj) -> ExtendedClaim | None:
        if not pod_requests(pod):  # no extended resource asked for: no class to look up
            return None
        classes = self._store.view("DeviceClass")  # read only
        requests = backed_requests(pod, classes)
        if not requests:
            return None
        stale = next((claim for claim in self._store.view("ResourceClaim", pod["metadata"]["namespace"])
                      if is_extended_claim_of(claim, pod)), None)
        return ExtendedClaim(requests, classes, stale)

    def _node_extended_claim(self, extended: ExtendedClaim, pod: Obj, node: Obj) -> tuple[Obj | None, Status]:
        """The special claim this node needs (None when the device plugin serves everything here)."""
        if extended.stale is not None:
            name = extended.stale["metadata"]["name"]
            return None, Status(Code.UNSCHEDULABLE,
                                f"cannot schedule extended resource claim {name!r} left by an earlier attempt")
        through_dra, missing = via_dra_on(node, extended.requests, extended.classes)
        if missing is not None:
            return None, Status(Code.UNSCHEDULABLE, f"cannot fit resource {missing}")
        if not through_dra:
            return None, SUCCESS
        key = frozenset(through_dra)
        if key not in extended.built:
            requests, mappings = build_requests(pod, through_dra, extended.classes)
            extended.built[key] = (special_claim(pod, requests), mappings)
        extended.on_node[node_name(node)] = extended.built[key]
        return extended.built[key][0], SUCCESS

    def post_filter(self, state: CycleState, pod: Obj, rejections: Mapping[str, Status]) -> Status:
        """A special claim left by an earlier attempt is deleted, so the next attempt starts afresh."""
        claims_state: PodClaimsState | None = state.data.get(NAME)
        stale = claims_state.extended.stale if claims_state and claims_state.extended else None
        if stale is not None:
            self._delete_claim(stale)
        return Status(Code.UNSCHEDULABLE)

    def _delete_claim(self, claim: Obj) -> None:
        """Delete a claim the scheduler wrote, its finalizer first (nobody else would remove it)."""
        meta = claim["metadata"]
        latest = self._store.get("ResourceClaim", meta["name"], meta["namespace"])
        if latest is None:
            return
        if DELETE_PROTECTION_FINALIZER in latest["metadata"].get("finalizers", []):
            latest["metadata"]["finalizers"] = [f for f in latest["metadata"]["finalizers"]
                                                if f != DELETE_PROTECTION_FINALIZER]
            self._store.update(latest)
        try:
            self._store.delete("ResourceClaim", meta["name"], meta["namespace"])
        except ApiError as error:
            if error.reason != "NotFound":
                raise

    # --- Filter --------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        claims_state: PodClaimsState | None = state.data.get(NAME)
        if claims_state is None:  # PreFilter skipped: nothing of DRA in this pod
            return SUCCESS
        elsewhere = _allocated_elsewhere(claims_state, node)
        if elsewhere is not None:
            return elsewhere
        unallocated = claims_state.unallocated
        if claims_state.extended is not None:
            special, status = self._node_extended_claim(claims_state.extended, pod, node)
            if not status.ok:
                return status
            if special is not None:
                unallocated = [*unallocated, special]
        if not unallocated:
            return SUCCESS
        assumed = list(self.assumed.values())
        try:
            verdict = self._allocator.feasible(node, unallocated, assumed)
        except AllocationError as error:
            return Status(Code.ERROR, str(error))
        return self._judge(claims_state, node, unallocated, assumed, verdict)

    def filter_nodes(self, state: CycleState, pod: Obj, nodes: list[Obj]) -> list[Status]:
        """Filter for many nodes: the core is asked once for all of them (`feasible_on`), the exact search
        runs only on the nodes its verdict leaves open. Each answer is what `filter` gives for the node."""
        claims_state: PodClaimsState | None = state.data.get(NAME)
        if claims_state is None:
            return [SUCCESS] * len(nodes)
        if claims_state.extended is not None:  # KEP-5004: the claims to allocate differ per node
            return [self.filter(state, pod, node) for node in nodes]
        verdicts, asked = _decided_by_allocations(claims_state, nodes)
        unallocated = claims_state.unallocated
        if not unallocated or not asked:
            return [verdict or SUCCESS for verdict in verdicts]
        assumed = list(self.assumed.values())
        asked_nodes = nodes if len(asked) == len(nodes) else [nodes[i] for i in asked]
        try:
            answers = feasible_on(self._allocator, asked_nodes, unallocated, assumed)
        except AllocationError:  # nothing judged yet: node by node, the first node asked reports it
            return [verdict or self.filter(state, pod, node) for verdict, node in zip(verdicts, nodes, strict=True)]
        judged = self._judge_answers(claims_state, asked_nodes, answers, unallocated, assumed)
        if asked_nodes is nodes:
            return judged
        for i, status in zip(asked, judged, strict=True):
            verdicts[i] = status
        return [verdict or SUCCESS for verdict in verdicts]

    def _judge_answers(self, claims_state: PodClaimsState, nodes: Sequence[Obj], answers: list[Feasibility | None],
                       unallocated: list[Obj], assumed: list[Obj]) -> list[Status]:
        """`filter_nodes`' statuses from the core's answers for `nodes`."""
        statuses: dict[int, Status] = {}  # a core gives many nodes the same verdict: one status for each
        first = only_one(answers)
        if first is not None:
            # one verdict for the whole batch (every node fits, or every one is full): no pass per answer
            if not first.fits:
                rejection = _not_fitting(first.reasons)
                return Distinct([rejection] * len(answers), (rejection,))
            claims_state.settled.append((node_names(nodes), None))  # as below, without an entry per node
            return Distinct([SUCCESS] * len(answers), (SUCCESS,))
        distinct = distinct_of(answers)
        if any(answer is None for answer in distinct):
            return self._judge_each(claims_state, nodes, answers, unallocated, assumed, statuses)
        # Every node settled by the core (the usual case): no node-by-node Python.
        for settled_answer in distinct:
            assert settled_answer is not None
            statuses[id(settled_answer)] = SUCCESS if settled_answer.fits else _not_fitting(settled_answer.reasons)
        # as `_judge`: settled without a search, the allocation is made if the node is chosen; the batch is kept
        # whole with its answers (looked up for the chosen node only), not as an entry per node
        claims_state.settled.append((node_names(nodes), answers))
        return Distinct(map(statuses.__getitem__, map(id, answers)), statuses.values())

    def _judge_each(self, claims_state: PodClaimsState, nodes: Sequence[Obj], answers: list[Feasibility | None],
                    unallocated: list[Obj], assumed: list[Obj], statuses: dict[int, Status]) -> list[Status]:
        """`filter_nodes`' statuses node by node, where the core left some node to the search."""
        settled = claims_state.allocations
        judged: list[Status] = []
        for node, answer in zip(nodes, answers, strict=True):
            if answer is None:  # the core cannot tell without a search
                judged.append(self._judge(claims_state, node, unallocated, assumed, None))
                continue
            status = statuses.get(id(answer))
            if status is None:
                status = statuses[id(answer)] = SUCCESS if answer.fits else _not_fitting(answer.reasons)
            if answer.fits:  # as `_judge`: settled without a search, the allocation is made if the node is chosen
                settled[node["metadata"]["name"]] = None
            judged.append(status)
        return judged

    def _judge(self, claims_state: PodClaimsState, node: Obj, unallocated: list[Obj], assumed: list[Obj],
               verdict: Feasibility | None) -> Status:
        """Filter's answer from the core's verdict on the node, the exact search where the verdict is None."""
        if verdict is not None and verdict.fits:
            claims_state.allocations[node_name(node)] = None
            return SUCCESS
        try:
            outcome = (NodeAllocation(None, verdict.reasons) if verdict is not None
                       else self._allocator.allocate(node, unallocated, assumed))
        except AllocationError as error:
            return Status(Code.ERROR, str(error))
        if outcome.allocations is None:
            return _not_fitting(outcome.reasons)
        claims_state.allocations[node_name(node)] = outcome.allocations
        return SUCCESS

    def _allocations_on(self, claims_state: PodClaimsState, node: Obj) -> list[Obj]:
        """The allocations Filter found for this node, made now where Filter only learned that they exist."""
        name = node_name(node)
        found = claims_state.allocations.get(name)
        if found is None and name not in claims_state.allocations:  # not judged one by one: settled, or nothing
            found = None if any(_settled_here(name, names, answers) for names, answers in claims_state.settled) else []
        if found is not None:
            return found
        outcome = self._allocator.allocate(node, self._unallocated_on(claims_state, node), list(self.assumed.values()))
        if outcome.allocations is None:
            raise RuntimeError(f"node {node_name(node)}: the allocation core said the claims fit, then found no "
                               f"allocation ({outcome.reasons})")
        claims_state.allocations[node_name(node)] = outcome.allocations
        return outcome.allocations

    # --- Score ---------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: Obj, node: Obj) -> int:
        """KEP-5007 Goal 3 across nodes: a node where the pod's new devices need no preparation beats
        one where they do, so an attached node-local device wins over a fabric one elsewhere. Upstream
        has no such score (it only orders pools within one node's allocation)."""
        return self.score_nodes(state, pod, [node])[0]

    def score_nodes(self, state: CycleState, pod: Obj, nodes: list[Obj]) -> list[int]:
        claims_state: PodClaimsState | None = state.data.get(NAME)
        if not self.binding or claims_state is None:
            return [0] * len(nodes)
        # None (settled without allocating) or nothing found: no device with binding conditions is needed
        if not claims_state.allocations:  # every node settled by the core in its batch: nothing to look up
            return [1] * len(nodes)
        found = list(map(claims_state.allocations.get, node_names(nodes)))
        if not any(found):
            return [1] * len(nodes)
        return [1 if not allocations or not any(map(_needs_conditions, allocations)) else 0 for allocations in found]

    # --- Reserve / Unreserve -------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        claims_state: PodClaimsState | None = state.data.get(NAME)
        if claims_state is None:
            return SUCCESS
        for claim, allocation in zip(
            self._unallocated_on(claims_state, node), self._allocations_on(claims_state, node), strict=True
        ):
            assumed = dict(claim)
            assumed["status"] = {**(claim.get("status") or {}), "allocation": allocation}
            self.assumed[claim["metadata"]["uid"]] = assumed
        return SUCCESS

    @staticmethod
    def _unallocated_on(claims_state: PodClaimsState, node: Obj) -> list[Obj]:
        """The claims allocated on this node in Filter: the pod's unallocated ones, then its special claim."""
        extended = claims_state.extended
        special = extended.on_node.get(node_name(node)) if extended is not None else None
        return [*claims_state.unallocated, special[0]] if special is not None else list(claims_state.unallocated)

    def unreserve(self, state: CycleState, pod: Obj, node: Obj) -> None:
        claims_state: PodClaimsState | None = state.data.get(NAME)
        if claims_state is None:
            return
        for claim in claims_state.claims:
            self.assumed.pop(claim["metadata"]["uid"], None)
            self._drop_reservation(claim, pod)
        extended = claims_state.extended
        if extended is not None:
            for special, _ in extended.built.values():
                self.assumed.pop(special["metadata"]["uid"], None)
            if extended.written is not None:
                self.assumed.pop(extended.written["metadata"]["uid"], None)
                self._delete_claim(extended.written)
                extended.written = None

    # --- PreBind -------------------------------------------------------------------------------
    def pre_bind(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        claims_state: PodClaimsState | None = state.data.get(NAME)
        if claims_state is None:
            return SUCCESS
        entered = self._clock.now()
        written: list[Obj] = []
        for claim in claims_state.claims:
            try:
                written.append(self._write_claim(claim, pod))
            except ApiError as error:
                self._observe("failure", any(map(requires_binding_conditions, written)), entered)
                return Status(Code.ERROR, f"resourceclaim {claim['metadata']['name']!r}: {error}")
        special = claims_state.extended.on_node.get(node_name(node)) if claims_state.extended else None
        if claims_state.extended is not None and special is not None:
            try:
                written.append(self._write_extended_claim(claims_state.extended, special[0], special[1], pod))
            except ApiError as error:
                return Status(Code.ERROR, f"extended resource claim: {error}")
        if not self.binding:
            return SUCCESS
        if not any(map(requires_binding_conditions, written)):
            self._observe("success", False, entered)
            return SUCCESS
        wait = BindingWait(entered, [_ref(claim) for claim in written])
        state.data[WAIT] = wait
        status = self._decide(wait, pod, written)
        if status.code == Code.PENDING:
            self._events.record(
                pod, "Normal", PENDING_REASON,
                f"waiting for the binding conditions of its devices before binding to node {node_name(node)}",
            )
        return status

    def waiting_on(self, state: CycleState) -> frozenset[str]:
        """The UIDs of the claims a pod parked in PreBind waits on."""
        wait: BindingWait = state.data[WAIT]
        return frozenset(ref.uid for ref in wait.claims)

    def wait_deadline(self, state: CycleState) -> datetime | None:
        wait: BindingWait = state.data[WAIT]
        return wait.deadline

    def recheck(self, state: CycleState, pod: Obj, node: Obj) -> Status:
        """A parked pod, again: Success to bind, Pending to keep waiting, Error after clearing."""
        wait: BindingWait = state.data[WAIT]
        claims = [self._store.get("ResourceClaim", ref.name, ref.namespace) for ref in wait.claims]
        return self._decide(wait, pod, claims)

    def _decide(self, wait: BindingWait, pod: Obj, claims: Sequence[Obj | None]) -> Status:
        now = self._clock.now()
        uid = pod["metadata"]["uid"]
        verdicts: list[Verdict] = []
        for ref, claim in zip(wait.claims, claims, strict=True):
            if (claim is None or claim["metadata"]["uid"] != ref.uid or not _allocation(claim)
                    or not is_reserved_for(claim, uid)):
                verdicts.append(Verdict(Outcome.FAILURE, f"claim {ref.name} is no longer allocated for the pod"))
            else:
                verdicts.append(claim_verdict(claim, now, self.binding_timeout, wait.entered))
        overall = pod_verdict(verdicts)
        if overall.outcome == Outcome.READY:
            self._observe("success", True, wait.entered)
            return SUCCESS
        if overall.outcome == Outcome.WAITING:
            wait.deadline = overall.deadline
            return Status(Code.PENDING, overall.message)
        for claim, verdict in zip(claims, verdicts, strict=True):
            if claim is not None and verdict.outcome in (Outcome.FAILURE, Outcome.TIMEOUT):
                self._clear(claim, pod)
        self._observe(overall.outcome.value, True, wait.entered)
        return Status(Code.ERROR, overall.message)

    def _observe(self, status: str, requires: bool, entered: datetime) -> None:
        if self.metrics is not None:
            seconds = (self._clock.now() - entered).total_seconds()
            self.metrics.observe(status, requires, seconds)

    def _clear(self, claim: Obj, pod: Obj) -> None:
        """D-5007-4, written with the usual conflict retries; a claim gone meanwhile needs nothing."""
        for _ in range(CONFLICT_RETRIES):
            latest = self._store.get("ResourceClaim", claim["metadata"]["name"], claim["metadata"]["namespace"])
            if latest is None or latest["metadata"]["uid"] != claim["metadata"]["uid"] or not (
                is_reserved_for(latest, pod["metadata"]["uid"])
            ):
                return
            latest["status"] = cleared_status(latest, pod["metadata"]["uid"])
            try:
                self._store.update_status(latest, copy_result=False)
                return
            except ApiError as error:
                if error.reason != "Conflict":
                    raise

    def _write_claim(self, claim: Obj, pod: Obj) -> Obj:
        """Persist the assumed allocation (if any) and add the pod to reservedFor, in one status
        write, after protecting the claim with the delete-protection finalizer. A new allocation gets
        its allocationTimestamp in that same write (D-5007-5); an existing one keeps its own."""
        uid = claim["metadata"]["uid"]
        assumed = self.assumed.get(uid)
        # The finalizer write hands back the claim as now stored: the first status write starts from it. The claims
        # read here are the store's own (only read): the status written is a new dict.
        protected = self._add_finalizer(claim) if assumed is not None else None
        for _ in range(CONFLICT_RETRIES):
            latest: Obj | None
            if protected is not None:
                latest, protected = protected, None
            else:
                latest = self._store.peek("ResourceClaim", claim["metadata"]["name"], claim["metadata"]["namespace"])
            if latest is None:
                raise ApiError("NotFound", "claim was deleted while the pod was being bound")
            status = dict(latest.get("status") or {})
            changed = False
            if assumed is not None:
                if status.get("allocation"):
                    raise ApiError("Conflict", "claim was allocated by someone else meanwhile")
                allocation = copy_object(assumed["status"]["allocation"])
                if self.binding and not allocation.get("allocationTimestamp"):
                    allocation["allocationTimestamp"] = format_time(self._clock.now())
                status["allocation"] = allocation
                changed = True
            if not is_reserved_for(latest, pod["metadata"]["uid"]):
                status["reservedFor"] = [*(status.get("reservedFor") or []), consumer_reference(pod)]
                changed = True
            if not changed:
                return latest
            try:
                # the answer is only read (binding conditions)
                written = self._store.update_status({**latest, "status": status}, copy_result=False,
                                                    copy_status=False)
            except ApiError as error:
                if error.reason == "Conflict":
                    continue
                raise
            self.assumed.pop(uid, None)
            return written
        raise ApiError("Conflict", f"gave up after {CONFLICT_RETRIES} conflicting updates")

    def _write_extended_claim(self, extended: ExtendedClaim, special: Obj, mappings: list[RequestMapping],
                              pod: Obj) -> Obj:
        """KEP-5004 PreBind: create the special claim under a generated name, write its allocation and the
        pod's reservation like any claim's, then tell the pod which request serves which container."""
        body = copy_object(special)
        for key in ("name", "uid"):
            body["metadata"].pop(key)
        created = self._store.create(body)
        extended.written = created
        assumed = self.assumed.pop(special["metadata"]["uid"])
        self.assumed[created["metadata"]["uid"]] = {**created, "status": assumed["status"]}
        written = self._write_claim(created, pod)
        latest = self._store.get("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
        if latest is not None:
            latest.setdefault("status", {})["extendedResourceClaimStatus"] = {
                "requestMappings": [mapping.as_obj() for mapping in mappings],
                "resourceClaimName": created["metadata"]["name"],
            }
            self._store.update_status(latest, copy_result=False)
        return written

    def _add_finalizer(self, claim: Obj) -> Obj | None:
        """The claim with the delete-protection finalizer, as stored now (None when it is gone)."""
        # read only (the store's own object), as is the answer: the write is a new object
        latest = self._store.peek("ResourceClaim", claim["metadata"]["name"], claim["metadata"]["namespace"])
        if latest is None or DELETE_PROTECTION_FINALIZER in latest["metadata"].get("finalizers", []):
            return latest
        finalizers = [*(latest["metadata"].get("finalizers") or []), DELETE_PROTECTION_FINALIZER]
        return self._store.update({**latest, "metadata": {**latest["metadata"], "finalizers": finalizers}},
                                  copy_result=False)

    def _drop_reservation(self, claim: Obj, pod: Obj) -> None:
        latest = self._store.get("ResourceClaim", claim["metadata"]["name"], claim["metadata"]["namespace"])
        if latest is None or not is_reserved_for(latest, pod["metadata"]["uid"]):
            return
        latest["status"]["reservedFor"] = [
            entry for entry in latest["status"]["reservedFor"] if entry.get("uid") != pod["metadata"]["uid"]
        ]
        self._store.update_status(latest, copy_result=False)


def _not_fitting(reasons: Mapping[str, str]) -> Status:
    # named as the framework names it, so that a batch of these verdicts is taken as it is (filter_nodes)
    why = "; ".join(f"{claim}: {reason}" for claim, reason in sorted(reasons.items()))
    return Status(Code.UNSCHEDULABLE, f"cannot allocate all claims ({why or 'no devices'})", NAME)


def _settled_here(name: str, names: list[str], answers: list[Feasibility | None] | None) -> bool:
    """Whether a settled batch (`PodClaimsState.settled`) holds `name` as a node that fits."""
    if name not in names:
        return False
    if answers is None:
        return True
    answer = answers[names.index(name)]
    return answer is not None and answer.fits


def _decided_by_allocations(claims_state: PodClaimsState,
                            nodes: list[Obj]) -> tuple[list[Status | None], Sequence[int]]:
    """Per node the status the pod's allocated claims decide (None: still open), and the open nodes' indexes."""
    if not any(_allocation(claim) for claim in claims_state.claims):
        return [None] * len(nodes), range(len(nodes))
    verdicts = [_allocated_elsewhere(claims_state, node) for node in nodes]
    return verdicts, [i for i, verdict in enumerate(verdicts) if verdict is None]


def _allocated_elsewhere(claims_state: PodClaimsState, node: Obj) -> Status | None:
    """The rejection of a node that an already allocated claim of the pod cannot be used on, or None."""
    for claim in claims_state.claims:
        allocation = _allocation(claim)
        if allocation and not selector_matches(allocation.get("nodeSelector"), node):
            return Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"resourceclaim {claim['metadata']['name']!r} is allocated on other nodes",
            )
    return None


def _allocation(claim: Obj) -> Obj | None:
    allocation: Obj | None = (claim.get("status") or {}).get("allocation")
    return allocation


def _needs_conditions(allocation: Obj) -> bool:
    return any(result.get("bindingConditions") for result in (allocation.get("devices") or {}).get("results") or [])


def _ref(claim: Obj) -> ClaimRef:
    meta = claim["metadata"]
    return ClaimRef(meta["namespace"], meta["name"], meta["uid"])
