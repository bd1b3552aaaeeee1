"""Device compatibility groups (KEP-5963 "Scheduler Changes", "Version Skew Strategy"): the pure rule
that decides whether a device may join the devices already allocated on a shared counter set, the
per-(driver, pool, counter set) state it reads, and the snapshot the scheduler writes into allocation
results. Implements docs/decisions.md D-5963-1 (three states, mixed admits nothing), D-5963-2 (snapshot shape,
snapshots not slices) and the scheduler half of #4 (gate off: skip grouped devices, block snapshotted
counter sets). The columnar core and the reference driver call into it; the oracle transcribes the rules on
its own."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from draconform.kube.featuregates import FeatureGates

GATE = "DRADeviceCompatibilityGroups"

CounterSetKey = tuple[str, str, str]  # driver, pool, counter set
DeviceKey = tuple[str, str, str]  # driver, pool, device
Groups = tuple[str, ...]  # a device's groups on one counter set, as declared (order kept for the snapshot)
Declared = tuple[tuple[str, Groups], ...]  # (counter set, groups) per consumesCounters entry, in order
Snapshot = dict[str, list[str]]  # DeviceRequestAllocationResult.compatibilityGroups
# What is published now for an allocated device: the counter sets its slice entry consumes, or None when
# the device is no longer published. Only consulted for results that carry no snapshot (D-5963-2).
Published = Callable[[DeviceKey], Iterable[str] | None]


class Mode(enum.Enum):
    """How a scheduler treats the field, from its gate (the KEP's version-skew table). An older scheduler,
    which does not know the field, needs no mode of its own: it reads the API without the field
    (reference/scheduler/releaseview.py), so it meets no groups and no snapshots and skips nothing."""

    SKIP = "skip"  # gate off: grouped devices are skipped, snapshotted counter sets take nothing new
    ENFORCE = "enforce"  # gate on: the rolling intersection is enforced and snapshots are written

    @classmethod
    def of(cls, gates: FeatureGates) -> Mode:
        return cls.ENFORCE if gates.enabled(GATE) else cls.SKIP


# ----- what a device declares ---------------------------------------------------------------------------------

def groups_of(consumption: Mapping[str, Any]) -> Groups:
    """One consumesCounters entry's groups; unset, null and [] all mean "no groups" (the KEP's nil rule).
    A repeated name counts once, which is what set semantics make of it anyway."""
    raw = consumption.get("compatibilityGroups") or ()
    return tuple(dict.fromkeys(str(group) for group in raw))


def declared_groups(consumes_counters: Sequence[Mapping[str, Any]]) -> Declared:
    """A device's groups per counter set it consumes, in consumesCounters order."""
    return tuple((str(entry.get("counterSet", "")), groups_of(entry)) for entry in consumes_counters)


def declares_groups(declared: Declared) -> bool:
    """Whether the device declares at least one group on some counter set: what a gate-off scheduler skips
    and what makes the scheduler write a snapshot."""
    return any(groups for _, groups in declared)


def snapshot(declared: Declared) -> Snapshot | None:
    """The result's `compatibilityGroups` (D-5963-2): when the device declares a group anywhere, an entry
    for every counter set it consumes, `[]` where it declares none; otherwise no snapshot at all."""
    if not declares_groups(declared):
        return None
    return {counter_set: list(groups) for counter_set, groups in declared}


# ----- the state of one counter set ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SetState:
    """What the allocated devices of one (driver, pool, counter set) say about the next one (D-5963-1).

    `grouped` and `groupless` count allocated devices with and without groups there; `groups` is the
    rolling intersection of the grouped ones' groups. Immutable, so undoing a step of the search is
    restoring the previous value: an intersection cannot be "un-narrowed" by arithmetic."""

    grouped: int = 0
    groupless: int = 0
    groups: frozenset[str] = frozenset()

    @property
    def kind(self) -> str:
        """empty, group-less, groups or mixed: the names docs/decisions.md D-5963-1 uses."""
        if self.grouped and self.groupless:
            return "mixed"
        if self.grouped:
            return "groups"
        return "group-less" if self.groupless else "empty"

    def admits(self, groups: Groups) -> bool:
        """Empty admits anything; group-less admits only devices without groups; groups G admits a device
        whose groups meet G; mixed (only reachable through version skew) admits nothing."""
        if self.grouped:
            if self.groupless:
                return False
            if not groups:
                return False
            return not self.groups.isdisjoint(groups)
        if self.groupless:
            return not groups
        return True

    def add(self, groups: Groups) -> SetState:
        """The state once a device with `groups` is allocated here: the intersection narrows."""
        if not groups:
            return SetState(self.grouped, self.groupless + 1, self.groups)
        narrowed = self.groups.intersection(groups) if self.grouped else frozenset(groups)
        return SetState(self.grouped + 1, self.groupless, narrowed)


EMPTY = SetState()


def admits(allocated: Iterable[Groups], candidate: Groups) -> bool:
    """The predicate over plain group lists: may `candidate` join the devices allocated on one counter set?"""
    state = EMPTY
    for groups in allocated:
        state = state.add(groups)
    return state.admits(candidate)


# ----- state from what is allocated ---------------------------------------------------------------------------

def result_holdings(result: Mapping[str, Any], published: Published) -> list[tuple[CounterSetKey, Groups]]:
    """What one allocation result contributes per counter set: its snapshot when it has one (snapshots, not
    slices); otherwise group-less on each counter set its published slice entry consumes; nothing when the
    device is gone and has no snapshot (D-5963-2)."""
    driver, pool = str(result.get("driver", "")), str(result.get("pool", ""))
    taken: Mapping[str, Any] | None = result.get("compatibilityGroups")
    if taken:
        return [((driver, pool, str(counter_set)), tuple(dict.fromkeys(str(g) for g in groups or ())))
                for counter_set, groups in taken.items()]
    sets = published((driver, pool, str(result.get("device", ""))))
    return [((driver, pool, counter_set), ()) for counter_set in sets or ()]


def allocated_states(results: Iterable[Mapping[str, Any]], published: Published) -> dict[CounterSetKey, SetState]:
    """The state of every counter set touched by the given allocation results (whatever claim or pod they
    belong to; callers pass only results that hold their device, i.e. not admin-access ones)."""
    states: dict[CounterSetKey, SetState] = {}
    for result in results:
        for key, groups in result_holdings(result, published):
            states[key] = states.get(key, EMPTY).add(groups)
    return states


# ----- the search's view --------------------------------------------------------------------------------------

class Tracker:
    """Compatibility during one allocation search: check a device before it is added, add it, and undo the
    most recent additions on backtrack, like counters. Additions and undos must nest (last in, first out),
    which a depth-first search gives for free. The base states are shared, never copied: a search on one
    node changes only its own overlay, so seeding a tracker per node costs nothing."""

    def __init__(self, mode: Mode, base: Mapping[CounterSetKey, SetState] | None = None) -> None:
        self.mode = mode
        self._base: Mapping[CounterSetKey, SetState] = base if base is not None else {}
        self._overlay: dict[CounterSetKey, SetState] = {}
        self._undo: list[list[tuple[CounterSetKey, SetState | None]]] = []

    def state(self, key: CounterSetKey) -> SetState:
        found = self._overlay.get(key)
        return found if found is not None else self._base.get(key, EMPTY)

    def admits(self, driver: str, pool: str, declared: Declared) -> bool:
        """Admitted on every counter set the device consumes, each judged on its own."""
        if not declared:
            return True
        if self.mode is Mode.SKIP:  # grouped devices never get here; snapshotted groups block the set
            return all(
                self.state((driver, pool, s)).grouped == 0 for s, _ in declared)
        verdict = all(self.state((driver, pool, s)).admits(groups) for s, groups in declared)
        return verdict

    def add(self, driver: str, pool: str, declared: Declared) -> None:
        record: list[tuple[CounterSetKey, SetState | None]] = []
        if self.mode is Mode.ENFORCE:
            for counter_set, groups in declared:
                key = (driver, pool, counter_set)
                record.append((key, self._overlay.get(key)))
                self._overlay[key] = self.state(key).add(groups)
        self._undo.append(record)

    def undo(self) -> None:
        for key, before in reversed(self._undo.pop()):
            if before is None:
                del self._overlay[key]
            else:
                self._overlay[key] = before


class ClaimResults:
    """Allocation results per claim, kept up to date from claim events, so that a core following the store
    through a watch can seed trackers without listing every claim again. A claim's results are kept as the store
    published them (it replaces an object on every write, never changes one) and sorted out only when trackers
    are seeded: a new list counts as a change."""

    def __init__(self) -> None:
        self._by_claim: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        self.version = 0

    def put(self, key: tuple[str, str], claim: Mapping[str, Any]) -> None:
        allocation = (claim.get("status") or {}).get("allocation") or {}
        results = (allocation.get("devices") or {}).get("results") or []
        if results is self._by_claim.get(key) or (not results and key not in self._by_claim):
            return
        if results:
            self._by_claim[key] = results
        else:
            del self._by_claim[key]
        self.version += 1

    def drop(self, key: tuple[str, str]) -> None:
        if self._by_claim.pop(key, None) is not None:
            self.version += 1

    def results(self) -> Iterable[Mapping[str, Any]]:
        """The results that hold their device (see `holding_results`)."""
        for results in self._by_claim.values():
            yield from (result for result in results if not result.get("adminAccess"))


def holding_results(claims: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Results of allocated claims that hold their device: admin access shares a device without taking it,
    so it neither consumes counters nor joins a counter set's compatibility state."""
    held: list[Mapping[str, Any]] = []
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation") or {}
        held.extend(r for r in (allocation.get("devices") or {}).get("results") or [] if not r.get("adminAccess"))
    return held
