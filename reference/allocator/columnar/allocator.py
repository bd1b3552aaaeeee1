"""`ColumnarAllocator`, the production core behind the seam of `interface.py` (KEP-4381): one attempt per pod's
claims, the verdicts for many nodes (counting where it settles a node), and on a node the exact search and
the assembly of its results or of the reasons it does not fit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

import polars as pl

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.capacity import add_usage
from draconform.reference.allocator.columnar.counting import Counting
from draconform.reference.allocator.columnar.frames import Frames, held_devices
from draconform.reference.allocator.columnar.model import (
    HELD_SCHEMA,
    POOL_KEY,
    AltCandidates,
    Attempt,
    Choice,
    CounterKey,
    DeviceKey,
    Held,
    PoolView,
)
from draconform.reference.allocator.columnar.search import Search
from draconform.reference.allocator.columnar.selection import Selection
from draconform.reference.allocator.common import (
    AllocatedState,
    Alternative,
    CapacityLedger,
    ClaimPlan,
    DeviceTaints,
    Pick,
    build_allocation,
    capacity_consumption,
    check_claim_size,
    failure_reason,
    is_shared,
    plan_claims,
)
from draconform.reference.allocator.compatibility import (
    SetState,
    Tracker,
    allocated_states,
    holding_results,
)
from draconform.reference.allocator.interface import AllocationError, Feasibility, NodeAllocation, node_names
from draconform.reference.apiserver.interface import ApiReader
from draconform.sut import Obj

NODES_ONE_BY_ONE = 8  # allocate judges this many nodes' devices on their own before judging all nodes at once


class ColumnarAllocator:
    """Implements `Allocator`; build one per scheduler, it follows the store through a watch. Composed of the
    long-lived `Frames` (what the store publishes and holds), the `Selection` and `Counting` reading them, and per
    scheduling attempt an `Attempt` (model.py) that they fill in; a node's exact search is a `Search` fed from it."""

    def __init__(self, store: ApiReader, gates: FeatureGates, slices: Iterable[Obj] = ()) -> None:
        """`slices`: ResourceSlices published besides the store's, read as they are (never changed), for a
        one-shot reader such as `draconform allocate` that holds them parsed already and has nothing to watch."""
        self.frames = Frames(store, gates, slices)
        self.selection = Selection(self.frames)
        self.counting = Counting(self.frames)
        self.store, self.gates, self.work = store, self.frames.gates, self.frames.work
        self._consumption: dict[tuple[tuple[tuple[str, Fraction], ...], int], dict[str, Fraction] | None] = {}
        self._compat_base: tuple[tuple[Any, ...], dict[tuple[str, str, str], SetState]] | None = None
        self._compat_published: tuple[Any, dict[DeviceKey, list[str]]] | None = None
        self._attempt: Attempt | None = None
        self._attempt_key: tuple[Any, ...] = ()
        everything = self.frames.view().everything
        if everything is not None:  # per node, how many devices are held: kept like an informer's cache
            self.counting.held_counts(everything)

    def _begin(self, node: Obj, claims: Sequence[Obj], assumed: Sequence[Obj], whole: bool = True) -> Attempt:
        """The attempt for these claims: the scheduler asks node after node with the same claim objects, so
        they are recognised by identity (the attempt keeps them alive) and by the store's state. Nodes that see
        another generation of some pool (rare: while a driver republishes) get an attempt of their own. With
        `whole`, the candidates of every node are known (the columnar pass); otherwise they come node by node."""
        frames = self.frames
        choice = frames.choice(node)
        key = (frames.slice_version, frames.claim_version, choice, tuple(map(id, claims)), tuple(map(id, assumed)))
        if self._attempt is not None and key == self._attempt_key:
            if whole and not self._attempt.whole:
                self._complete(self._attempt)
            return self._attempt
        self._attempt = None
        view = self.frames.view(choice)
        plans = plan_claims(claims, self.frames.classes, self.gates)
        assumed_held = [d for claim in assumed for d in held_devices(claim, self.gates)]
        held = Held(self.frames.held_count, frozenset(assumed_held))
        shared = {device: dict(usage) for device, usage in self.frames.shared_total.items()}
        for device, usage in AllocatedState.of(assumed, self.gates).shared.items():
            add_usage(shared.setdefault(device, {}), usage, device[0])
        attempt = Attempt(plans, held, {}, view, shared=shared, keep=(tuple(claims), tuple(assumed)))
        if whole:
            self._complete(attempt)
        self._attempt, self._attempt_key = attempt, key
        return attempt

    def _complete(self, attempt: Attempt) -> None:
        """Every node's candidates at once. They depend on the published devices only (what is held is the
        search's business), so they are computed once per pool view and selector list: a new pod of the same
        kind costs no query."""
        attempt.candidates = {(alt.claim_index, alt.name): self.selection.alt_candidates(attempt.view, alt)
                              for plan in attempt.plans for alts in plan.requests for alt in alts}
        attempt.whole = True
        self._shortcut(attempt, attempt.view)

    def _shortcut(self, attempt: Attempt, view: PoolView) -> None:
        """Decide once per attempt which nodes need a look: the union of the per-node partitions. Nodes outside
        it have no candidate, no error and no problem pool, so they cannot fit, unless something shared (allNodes
        or node-selector devices, errors or problem pools) reaches them or a claim fits with no device at all."""
        if any(found.shared for found in attempt.candidates.values()):
            return
        if any(row["node_name"] is None for row in view.problem_slices):
            return
        if view.per_device and any(found.errors for found in attempt.candidates.values()):
            return  # D-4381-9: an error of a device of another node may count on a node the slice reaches
        if any(not plan.requests for plan in attempt.plans):
            return
        try:
            for plan in attempt.plans:
                check_claim_size(plan, {})
        except AllocationError:
            return

        def none(alt: Alternative) -> int:
            return 0

        selectors = tuple(sorted({alt.selectors for plan in attempt.plans for alts in plan.requests for alt in alts}))
        relevant = view.relevant.get(selectors)
        if relevant is None:  # the same for every pod asking with these selectors: made once per pool view
            nodes = {row["node_name"] for row in view.problem_slices}
            for found in attempt.candidates.values():
                nodes.update(found.local)
            relevant = view.relevant[selectors] = frozenset(nodes)
        attempt.relevant_nodes = relevant
        attempt.nothing_here = {plan.name: failure_reason(plan, none) for plan in attempt.plans}
        attempt.nowhere = Feasibility(False, attempt.nothing_here)

    def _all_capacity(self, alt: Alternative, ids: list[int], attempt: Attempt) -> list[int]:
        """KEP-5075: an All request leaves out the devices that cannot serve its amounts and the shared devices
        whose capacity allocated shares have used up."""
        if not self.gates.consumable_capacity:
            return ids
        ledger = CapacityLedger(attempt.shared)
        kept = []
        for device_id in ids:
            device = self.frames.devices[device_id]
            shared = is_shared(device, self.gates)
            consumption = self._consumption_of(alt, device_id) if alt.capacity or shared else {}
            if consumption is not None and (not shared or ledger.admits(device, consumption)):
                kept.append(device_id)
        return kept

    def _consumption_of(self, alt: Alternative, device_id: int) -> dict[str, Fraction] | None:
        """KEP-5075: what one allocation of the device consumes for these amounts, computed once."""
        key = (alt.capacity, device_id)
        if key not in self._consumption:
            self._consumption[key] = capacity_consumption(alt, self.frames.devices[device_id], self.gates)
        return self._consumption[key]

    def _available(self, attempt: Attempt) -> dict[CounterKey, Fraction]:
        """Counter values minus what allocated devices of the pool consume: a join and a group-by."""
        if attempt.available is None:
            view = attempt.view
            held = self.frames.held_devices_frame()
            extra = list(attempt.held.assumed) + list(attempt.shared)  # a shared device consumes its counters once
            if extra:
                held = pl.concat([held, pl.DataFrame(extra, schema=HELD_SCHEMA, orient="row")])
            used = (view.consumption.join(held, on=["driver", "pool", "name"], how="semi")
                    .group_by(*POOL_KEY, "counter_set", "counter").agg(pl.col("amount").sum().alias("used")))
            left = view.counters.join(used, on=[*POOL_KEY, "counter_set", "counter"], how="left").with_columns(
                (pl.col("value") - pl.col("used").fill_null(0)).alias("left"))
            attempt.available = {
                (driver, pool, counter_set, counter): Fraction(amount)
                for driver, pool, counter_set, counter, amount in left.select(
                    *POOL_KEY, "counter_set", "counter", "left").iter_rows()
            }
        return attempt.available

    # --- the seam ----------------------------------------------------------------------------------------
    def close(self) -> None:
        self.frames.close()

    def follow(self) -> None:
        self.frames.follow()

    def feasible(self, node: Obj, claims: Sequence[Obj], assumed: Sequence[Obj] = ()) -> Feasibility | None:
        """Whether `allocate` would fit these claims on this node, settled by counting where counting is exact:
        every request asks for a number of devices (no All, admin access, capacity, alternatives or
        constraints) and every candidate on the node is a plain device (no counters, shares, taints or
        binding conditions that count). Then a request with fewer free candidates than it asks for cannot be
        served (does not fit, with the reasons the search would give), and when every request has as many
        free candidates as all requests together ask for, any first fit succeeds. In between, or for anything
        else, None: only the exact search (`allocate`) can tell."""
        return self.feasible_nodes([node], claims, assumed)[0]

    def feasible_nodes(self, nodes: Sequence[Obj], claims: Sequence[Obj],
                       assumed: Sequence[Obj] = ()) -> list[Feasibility | None]:
        """`feasible` for many nodes in one pass: the attempt (plans, candidates, what is held) is set up once,
        then each node costs a few set lookups. Nodes that see another generation of some pool than the others
        (rare: while a driver republishes) each get their own attempt."""
        if not nodes:
            return [None] * len(nodes)
        self.work["nodes judged"] += len(nodes)
        self.frames.sync()
        if self.frames.mixed_pools():
            groups: dict[Choice, list[int]] = {}
            for i, node in enumerate(nodes):
                groups.setdefault(self.frames.choice(node), []).append(i)
        else:
            groups = {(): list(range(len(nodes)))}
        answers: list[Feasibility | None] = [None] * len(nodes)
        for indices in groups.values():
            attempt = self._begin(nodes[indices[0]], claims, assumed)
            if attempt.countable is None:
                self.counting.countable(attempt)
            names: list[str] = (node_names(nodes) if len(indices) == len(nodes)
                                else [nodes[i]["metadata"]["name"] for i in indices])
            found: list[Feasibility | None] = (self.counting.count(attempt, names) if attempt.countable
                                               else [None] * len(names))
            relevant, problems, nowhere = attempt.relevant_nodes, attempt.problem_nodes, attempt.nowhere
            if attempt.countable and problems:  # the search decides where a problem pool reaches
                found = [None if name in problems else answer for name, answer in zip(names, found, strict=True)]
            # Nodes no candidate reaches do not fit. Counting says so too when the claims ask for any device (none
            # counted, the same reasons), so only other verdicts need the look-up.
            if relevant is not None and not (attempt.countable and attempt.total > 0):
                found = [answer if name in relevant else nowhere for name, answer in zip(names, found, strict=True)]
            if len(indices) == len(nodes):
                return found
            for i, answer in zip(indices, found, strict=True):
                answers[i] = answer
        return answers

    def allocate(self, node: Obj, claims: Sequence[Obj], assumed: Sequence[Obj] = ()) -> NodeAllocation:
        self.work["nodes searched"] += 1
        self.frames.sync()
        attempt = self._begin(node, claims, assumed, whole=False)
        if not attempt.whole:
            attempt.asked += 1
            if attempt.asked > NODES_ONE_BY_ONE:  # many nodes asked: the columnar pass over all of them is cheaper
                self._complete(attempt)
        node_name = str(node["metadata"]["name"])
        if attempt.relevant_nodes is not None and node_name not in attempt.relevant_nodes:
            return NodeAllocation(None, dict(attempt.nothing_here))
        candidates = attempt.candidates if attempt.whole else self.selection.node_candidates(attempt, node)
        view = attempt.view
        problems = [p for p in view.problem_slices if self.frames.slice_on_node(p, node)]
        lists = self._lists(attempt, candidates, node, problems)
        for plan in attempt.plans:
            check_claim_size(plan, {key: len(ids) for key, ids in lists.items()})
        errors = {key: found.errors for key, found in candidates.items() if found.errors}
        available = self._available(attempt) if view.any_consumes else {}
        taints = DeviceTaints(tuple(self.frames.taint_rules.values()) if self.gates.taint_rules else ())
        devices = self.frames.devices
        search = Search(attempt, lists, errors, devices, self._compat_tracker(attempt, assumed), available,
                        self.gates, self._consumption_of, taints)
        fitted = search.run()
        if fitted:
            return NodeAllocation([
                build_allocation(plan, [Pick(alt, devices[d], consumed) for alt, d, consumed in search.chosen[i]],
                                 node, self.gates)
                for i, plan in enumerate(attempt.plans)])
        return self._no_fit(attempt, problems, lists)

    def _lists(self, attempt: Attempt, candidates: dict[tuple[int, str], AltCandidates], node: Obj,
               problems: list[dict[str, Any]]) -> dict[tuple[int, str], list[int]]:
        """Per alternative, the node's candidate list in search order. An All request lists its devices before the
        search, so a problem pool or a selector error on the node surfaces now, as an error."""
        view = attempt.view
        last = self.selection.pools_last(view, node)
        lists: dict[tuple[int, str], list[int]] = {}
        for plan in attempt.plans:
            for alts in plan.requests:
                for alt in alts:
                    found = candidates[(alt.claim_index, alt.name)]
                    ids = self.selection.merge(found, node, last, view)
                    if alt.all_mode:
                        ids = self._all_list(attempt, plan, alt, found, ids, problems)
                    lists[(alt.claim_index, alt.name)] = ids
        return lists

    def _all_list(self, attempt: Attempt, plan: ClaimPlan, alt: Alternative, found: AltCandidates, ids: list[int],
                  problems: list[dict[str, Any]]) -> list[int]:
        """An All request's devices on the node, or the error that stops it: a problem pool reaching the node, or
        a selector error on one of its devices."""
        if problems:
            pool = problems[0]
            what = "is incomplete" if not pool["complete"] else f"is invalid: {pool['invalid']}"
            raise AllocationError(f"claim {plan.name}, request {alt.name}: asks for all devices, "
                                  f"but pool {pool['driver']}/{pool['pool']} {what}")
        error = next((found.errors[d] for d in ids if d in found.errors), None)
        if error is not None:
            raise AllocationError(f"claim request {alt.name}: {error}")
        return self._all_capacity(alt, ids, attempt)

    def _no_fit(self, attempt: Attempt, problems: list[dict[str, Any]],
                lists: dict[tuple[int, str], list[int]]) -> NodeAllocation:
        """"Does not fit" with the reasons the search gives: invalid pools on the node, else per claim what fell
        short."""
        invalid = {(p["driver"], p["pool"]): p["invalid"] for p in problems if p["invalid"]}
        if invalid:  # upstream's ErrFailedAllocationOnNode: this node does not fit, others are still tried
            why = "invalid resource pools were encountered: " + "; ".join(
                f"{d}/{p}: {reason}" for (d, p), reason in sorted(invalid.items()))
            return NodeAllocation(None, {plan.name: why for plan in attempt.plans})

        def count(alt: Alternative) -> int:
            return len(lists[(alt.claim_index, alt.name)])

        return NodeAllocation(None, {plan.name: failure_reason(plan, count) for plan in attempt.plans})

    def _compat_tracker(self, attempt: Attempt, assumed: Sequence[Obj]) -> Tracker:
        """KEP-5963: every counter set's state from the allocated claims' snapshots (published slices only
        for results without one), computed once per attempt and shared, unchanged, by each node's search."""
        mode = self.gates.compatibility
        view = attempt.view
        if not view.any_consumes:  # no candidate consumes a counter set, so no candidate is ever judged
            return Tracker(mode)
        key = (attempt, view, self.frames.claim_results.version)
        base = self._compat_base
        if base is None or base[0][0] is not attempt or base[0][1] is not view or base[0][2] != key[2]:
            if self._compat_published is None or self._compat_published[0] is not view:
                consuming = view.newest_devices.filter(pl.col("consumes")).get_column("device_id").to_list()
                facts = (self.frames.devices[d] for d in consuming)
                self._compat_published = (view, {f.key: [s for s, _ in f.consumes] for f in facts if f.consumes})
            published = self._compat_published[1]
            results = [*self.frames.claim_results.results(), *holding_results(assumed)]
            base = (key, allocated_states(results, published.get))
            self._compat_base = base
        return Tracker(mode, base[1])

