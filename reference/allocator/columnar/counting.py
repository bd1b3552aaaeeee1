"""The count-based verdicts of the columnar core (KEP-4381): where every request asks for a number of plain devices,
a node is settled by counting its free candidates, for all asked nodes in one pass, with per-node held counts kept
from the log of devices becoming held or free."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from itertools import repeat
from operator import add, sub
from typing import Any

from draconform.reference.allocator.columnar.frames import Frames
from draconform.reference.allocator.columnar.model import FITS, NOT_PLAIN, AltCandidates, Attempt, DeviceKey, HeldCounts
from draconform.reference.allocator.devices import DeviceTaints
from draconform.reference.allocator.interface import AllocationError, Distinct, Feasibility
from draconform.reference.allocator.plans import Alternative, check_claim_size, failure_reason

# The largest candidate count per node for which `_count_free` maps free counts to verdicts through a table
_TABLE_LIMIT = 256


class Counting:
    """Verdicts for many nodes at once by counting free candidates, where counting settles a node; it reads the
    devices and what is held from `frames`, and keeps its per-attempt results in the `Attempt` it is given."""

    def __init__(self, frames: Frames) -> None:
        self.frames = frames

    def count(self, attempt: Attempt, names: list[str]) -> list[Feasibility | None]:
        """The nodes' verdicts by counting their free candidates (see `feasible`): per node and request, how many
        candidates it has (NOT_PLAIN where one is not a plain device: the search decides) and how many of them
        are free; a request with too few free ones makes the node "does not fit", enough free ones for every
        request together make it "fits". One loop for one node or many, one request or several; the per-request
        look-ups are bound once, as this runs for every node the scheduler's Filter asks about."""
        if len(attempt.counting) == 1:
            found, need, _, assumed = attempt.counting[0]
            kept = self._free_counts(found)
            if kept is not None and not assumed:
                self.frames.work["nodes counted from kept free counts"] += len(names)  # tests/test_costs.py
                return self._count_free(attempt, names, found, need, kept)
        requests = [(self._plain_counts(found).get, need, allocated.get, assumed.get)
                    for found, need, allocated, assumed in attempt.counting]
        total = attempt.total
        if len(requests) == 1:
            return self._count_one(attempt, names, *requests[0])
        verdicts: list[Feasibility | None] = []
        append = verdicts.append
        for name in names:
            short, enough = False, True
            for count_of, need, allocated_of, assumed_of in requests:
                count = count_of(name, 0)
                if count == NOT_PLAIN:
                    append(None)
                    break
                free = count - allocated_of(name, 0) - assumed_of(name, 0)
                short = short or free < need
                enough = enough and free >= total
            else:
                if short:
                    append(self._short(attempt, tuple(count_of(name, 0) for count_of, _, _, _ in requests)))
                else:
                    append(FITS if enough else None)
        return verdicts

    def _count_free(self, attempt: Attempt, names: list[str], found: AltCandidates, need: int,
                    free: dict[str, int]) -> list[Feasibility | None]:
        """`_count_one` where every candidate is a plain device and no claim is only assumed: the free count of
        each node is kept (`HeldCounts.free`), so a batch where every node fits costs two C-level passes; a node
        without candidates has none free. The same verdicts as `_count_one`."""
        total = attempt.total
        frees = list(map(free.get, names, repeat(-1, len(names))))  # -1: a node without candidates
        if min(frees, default=0) >= max(need, total, 0):
            return Distinct([FITS] * len(names), (FITS,))
        assert found.plain is not None  # made with `free`
        table = self._verdict_table(attempt, found, need) if need >= max(total, 1) else None
        if table is not None:  # nodes alike: one look-up per node from its free count to its verdict
            try:
                return Distinct(map(table.__getitem__, frees), table.values())
            except KeyError:  # a count the table does not hold (none expected): node by node below
                pass
        frees = [max(left, 0) for left in frees]  # a node without candidates has none free
        counts = list(map(found.plain.get, names, repeat(0, len(names))))
        short = {count: self._short(attempt, (count,)) for count in set(counts)}
        return [short[count] if left < need else FITS if left >= total else None
                for count, left in zip(counts, frees, strict=True)]

    def _verdict_table(self, attempt: Attempt, found: AltCandidates, need: int) -> dict[int, Feasibility] | None:
        """Where every node with candidates has as many (`found.same`, nodes alike: the usual cluster) and the one
        request needs all the claims need: each node's verdict from its free count alone (-1 for a node without
        candidates, whose "does not fit" names none), as a table from every count that can occur; None otherwise."""
        if found.same is None:
            assert found.plain is not None
            counts = set(found.plain.values())
            found.same = counts.pop() if len(counts) == 1 and NOT_PLAIN not in counts else -1
        same = found.same
        if same < 0 or same > _TABLE_LIMIT:
            return None
        table: dict[int, Feasibility] = dict.fromkeys(range(need, same + 1), FITS)
        table.update(dict.fromkeys(range(min(need, same + 1)), self._short(attempt, (same,))))
        table[-1] = self._short(attempt, (0,))
        return table

    def _free_counts(self, found: AltCandidates) -> dict[str, int] | None:
        """Per node, its candidates no allocated claim holds, where every node's candidates are plain devices (else
        None: `_count_one` decides); made once per pool view, then kept by `held_counts` from the log."""
        plain = self._plain_counts(found)
        on_node = self.held_counts(found)
        held = found.held
        assert held is not None  # made by held_counts
        if held.free is None:
            if NOT_PLAIN in plain.values():
                return None
            held.free = {sys.intern(name): count - on_node.get(name, 0) for name, count in plain.items()}
        return held.free

    def _count_one(self, attempt: Attempt, names: list[str], count_of: Any, need: int, allocated_of: Any,
                   assumed_of: Any) -> list[Feasibility | None]:
        """`_count` for claims asking one request (the commonest pod): the same verdicts, with the look-ups made
        by C-level maps over the nodes rather than a Python loop, as this runs for every node a pod's Filter
        visits; the usual batch, where every node fits, costs no Python per node at all."""
        total, zeros = attempt.total, repeat(0, len(names))
        counts = list(map(count_of, names, zeros))
        held = map(add, map(allocated_of, names, repeat(0, len(names))), map(assumed_of, names, repeat(0, len(names))))
        frees = list(map(sub, counts, held))
        if NOT_PLAIN not in counts and min(frees, default=0) >= max(need, total):
            return [FITS] * len(names)
        # "does not fit" depends on the node's candidate count only: one verdict per distinct count (a handful)
        distinct = set(counts)
        short = {count: self._short(attempt, (count,)) for count in distinct if count != NOT_PLAIN}
        if need >= total and len(short) == len(distinct) == 1:
            # every node has as many candidates (nodes alike, the usual cluster) and enough for the request is
            # enough for all: a node fits or gets the one "does not fit", picked by C-level maps, not a Python loop
            verdict_of = {True: FITS, False: short[counts[0]]}
            return list(map(verdict_of.__getitem__, map(need.__le__, frees)))
        return [None if count == NOT_PLAIN else short[count] if free < need else FITS if free >= total
                else None for count, free in zip(counts, frees, strict=True)]

    def _plain_counts(self, found: AltCandidates) -> dict[str, int]:
        """Per node, how many candidates it has when they are all plain devices (else NOT_PLAIN); made once per pool
        view and selector list, as the candidates are."""
        if found.plain is None:
            found.plain = {name: len(ids) if self._plain(ids) else NOT_PLAIN for name, (_, ids) in found.local.items()}
        return found.plain

    def held_counts(self, found: AltCandidates) -> dict[str, int]:
        """Per node, how many of the alternative's local candidates allocated claims hold (see `HeldCounts`)."""
        counts = found.held
        if counts is None:
            node_of = found.node_of
            if node_of is None:
                keys = self.frames.keys
                node_of = found.node_of = {keys[d]: node for node, (_, ids) in found.local.items() for d in ids}
            on_node: dict[str, int] = {}
            for device in self.frames.held_count:
                node = node_of.get(device)
                if node is not None:
                    on_node[node] = on_node.get(node, 0) + 1
            counts = found.held = HeldCounts(node_of, on_node, len(self.frames.held_log))
        elif counts.seen < len(self.frames.held_log):
            free = counts.free
            for device, change in self.frames.held_log[counts.seen:]:
                node = counts.node_of.get(device)
                if node is not None:
                    counts.on_node[node] = counts.on_node.get(node, 0) + change
                    if free is not None:  # a local candidate's node has a plain count, so it is in `free`
                        free[node] -= change
            counts.seen = len(self.frames.held_log)
        return counts.on_node

    def _short(self, attempt: Attempt, counts: tuple[int, ...]) -> Feasibility:
        """"Does not fit" where a request has too few free candidates, with the reasons the search gives, from
        the number of candidates per request: one verdict per such count, shared by the nodes it is given to."""
        verdict = attempt.reasons.get(counts)
        if verdict is None:
            per_alt = iter(counts)
            found = {(alts[0].claim_index, alts[0].name): next(per_alt) for plan in attempt.plans
                     for alts in plan.requests}

            def count(alt: Alternative) -> int:
                return found[(alt.claim_index, alt.name)]

            verdict = attempt.reasons[counts] = Feasibility(False, {plan.name: failure_reason(plan, count)
                                                                    for plan in attempt.plans})
        return verdict

    def countable(self, attempt: Attempt) -> None:
        """Whether counting free candidates can settle a node for these claims (see `feasible`)."""
        attempt.countable = False
        for plan in attempt.plans:
            if plan.constraints:
                return
            for alts in plan.requests:
                if len(alts) != 1 or alts[0].all_mode or alts[0].admin_access or alts[0].capacity:
                    return
                found = attempt.candidates[(alts[0].claim_index, alts[0].name)]
                if found.errors or found.shared:
                    return
                attempt.total += alts[0].count
            try:
                check_claim_size(plan, {})
            except AllocationError:
                return
        problems = attempt.view.problem_slices
        if any(row["node_name"] is None for row in problems):
            return
        attempt.problem_nodes = frozenset(row["node_name"] for row in problems)
        only_assumed = [device for device in attempt.held.assumed if device not in attempt.held.allocated]
        for plan in attempt.plans:
            for (alt,) in plan.requests:
                attempt.counting.append(self._request_counts(attempt, alt, only_assumed))
        attempt.countable = True

    def _request_counts(self, attempt: Attempt, alt: Alternative, only_assumed: list[DeviceKey],
                        ) -> tuple[AltCandidates, int, dict[str, int], dict[str, int]]:
        """One request's row of `Attempt.counting`: its candidates, how many it asks for, and per node how many of
        its candidates allocated claims hold, and how many more only assumed claims hold."""
        found = attempt.candidates[(alt.claim_index, alt.name)]
        allocated = self.held_counts(found)
        assumed: dict[str, int] = {}
        for device in only_assumed:
            node = found.held.node_of.get(device) if found.held is not None else None
            if node is not None:
                assumed[node] = assumed.get(node, 0) + 1
        return found, alt.count, allocated, assumed

    def _plain(self, ids: Sequence[int]) -> bool:
        """Whether these devices' only question is whether they are free: no counters, share, taint (their own
        or a DeviceTaintRule's) or binding condition the search would look at."""
        if not self.frames.special.isdisjoint(ids):
            return False
        rules = tuple(self.frames.taint_rules.values()) if self.frames.gates.taint_rules else ()
        return not rules or not any(DeviceTaints(rules).of(self.frames.devices[d]) for d in ids)

