"""The exact search of the columnar core (KEP-4381 allocation, KEP-5075 shares, KEP-5963 groups): first fit,
depth first, over each node's short candidate lists, checking use, counters, capacity, taints, groups and
constraints, and undoing each on backtracking."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from draconform.kube.values import LIST_KINDS, constraint_admits, lookup_attribute
from draconform.reference.allocator.columnar.model import Attempt, CounterKey, DeviceKey, Devices
from draconform.reference.allocator.common import (
    MAX_DEVICES_PER_CLAIM,
    Alternative,
    CapacityLedger,
    DeviceFacts,
    DeviceTaints,
    Gates,
    blocking_taints,
    is_shared,
)
from draconform.reference.allocator.compatibility import (
    Tracker,
)
from draconform.reference.allocator.interface import AllocationError


class Search:
    """The exact part: first fit, depth first, over the short per-node candidate lists (device ids)."""

    def __init__(self, attempt: Attempt, lists: dict[tuple[int, str], list[int]],
                 errors: dict[tuple[int, str], dict[int, str]], devices: Devices, compat: Tracker,
                 available: dict[CounterKey, Fraction], gates: Gates,
                 consumption_of: Callable[[Alternative, int], dict[str, Fraction] | None],
                 taints: DeviceTaints) -> None:
        self.plans = attempt.plans
        self.taints = taints  # a device's slice taints and those of the DeviceTaintRules selecting it
        self.held = attempt.held
        self.lists = lists
        self.errors = errors  # per alternative, the devices whose selectors fail: an error once reached
        self.devices = devices
        self.gates = gates
        self.consumption_of = consumption_of  # KEP-5075: what a share of a device consumes, cached
        self.left = dict(available)  # counters still free, updated as devices are picked
        # D-4381-14: pools with a counter that held devices over-commit: no device consuming counters fits there
        self.overcommitted = {(driver, pool) for (driver, pool, _, _), amount in available.items() if amount < 0}
        # per claim: (alternative, device id, what a share consumes or None, whether counters were taken)
        self.chosen: list[list[tuple[Alternative, int, tuple[tuple[str, Fraction], ...] | None]]] = [
            [] for _ in self.plans]
        self.counted: list[list[bool]] = [[] for _ in self.plans]
        # taken by this attempt, admin access too, counted per pick (several claims' admin picks of one device)
        self.busy: dict[DeviceKey, int] = {}
        self.ledger = CapacityLedger(attempt.shared)  # KEP-5075 shares of multi-allocatable devices
        self.compat = compat  # KEP-5963 groups, checked and undone like counters

    def run(self) -> bool:
        return self._next(0, 0)

    def _next(self, claim: int, request: int) -> bool:
        while claim < len(self.plans) and request == len(self.plans[claim].requests):
            claim, request = claim + 1, 0
        if claim == len(self.plans):
            return True
        for alt in self.plans[claim].requests[request]:
            ids = self.lists[(claim, alt.name)]
            if alt.all_mode:
                if ids and self._all(alt, ids, claim, request):
                    return True
            elif self._choose(alt, ids, claim, request, alt.count, 0):
                return True
        return False

    def _all(self, alt: Alternative, ids: list[int], claim: int, request: int) -> bool:
        taken = 0
        while taken < len(ids) and self._try(alt, ids[taken], claim, must=True):
            taken += 1
        if taken == len(ids) and self._next(claim, request + 1):
            return True
        for _ in range(taken):
            self._release(claim)
        return False

    def _choose(self, alt: Alternative, ids: list[int], claim: int, request: int, need: int, start: int) -> bool:
        if need == 0:
            return self._next(claim, request + 1)
        errors = self.errors.get((claim, alt.name), {})
        # Without errors in the list, stop once too few devices are left; with them, walk on so an error
        # further down is reached exactly where upstream's search would reach it.
        end = len(ids) - need + 1 if not errors else len(ids)
        for position in range(start, end):
            device_id = ids[position]
            if device_id in errors:
                if not self._in_use(alt, self.devices[device_id], claim):
                    raise AllocationError(f"claim request {alt.name}: {errors[device_id]}")
                continue
            if self._try(alt, device_id, claim):
                if self._choose(alt, ids, claim, request, need - 1, position + 1):
                    return True
                self._release(claim)
        return False

    def _in_use(self, alt: Alternative, device: DeviceFacts, claim: int) -> bool:
        """Skipped before its selectors are looked at: taken in this claim, or held (unless admin access). A
        multi-allocatable device (KEP-5075) is in use only when a result without a shareID holds it whole."""
        if is_shared(device, self.gates):
            return not alt.admin_access and device.key in self.held
        mine = any(self.devices[d].key == device.key for _, d, _ in self.chosen[claim])
        if mine:
            return True
        busy = device.key in self.busy
        return not alt.admin_access and (busy or device.key in self.held)

    def _try(self, alt: Alternative, device_id: int, claim: int, must: bool = False) -> bool:
        """Add the device if it fits: claim limit, exclusivity or capacity, counters, taints, groups,
        constraints. False leaves no trace; a constraint broken by a device an All request must take is an
        error."""
        # Grade D on purpose (radon): one guard per check, in the order upstream's allocateDevice makes them, none
        # taking anything (`_take` does, once all passed); the list reads best as one list. It is the hottest
        # function of the search, where a call per check would cost time.
        if len(self.chosen[claim]) == MAX_DEVICES_PER_CLAIM:
            return False
        if not alt.admin_access:  # in use whatever else holds: skipped before the device is parsed
            key, multiple = self.devices.key_of(device_id)
            if (key in self.busy or key in self.held) and not (multiple and self.gates.consumable_capacity):
                return False
        device = self.devices[device_id]
        if self._in_use(alt, device, claim):
            return False
        if device.consumes and not self.gates.partitionable:
            return False  # D-4381-17: refused only now, after its selectors ran
        shared = is_shared(device, self.gates)
        serves, consumption = self._capacity(alt, device_id, device, shared)
        if not serves:
            return False
        # D-4381-13: an admin-access pick takes counters like any other; a share only with its device's first
        counts = not (shared and self.ledger.in_use(device))
        needs = [((device.driver, device.pool, s, c), amount) for s, counters in device.consumes
                 for c, amount in counters] if counts else []
        if needs and (device.driver, device.pool) in self.overcommitted:
            return False
        if any(self.left.get(key, Fraction(0)) < amount for key, amount in needs):
            return False  # amounts of one device never repeat a counter, so checking each alone is exact
        if self.gates.taints and (device.taints or self.taints.rules) and blocking_taints(
                self.taints.of(device), alt.tolerations):
            return False
        if not alt.admin_access and not self.compat.admits(device.driver, device.pool, device.compatibility_groups):
            return False
        if not self._constraints_hold(alt, device, claim, must):
            return False
        self._take(alt, device_id, claim, shared, consumption, counts, needs)
        return True

    def _capacity(self, alt: Alternative, device_id: int, device: DeviceFacts,
                  shared: bool) -> tuple[bool, dict[str, Fraction] | None]:
        """KEP-5075: whether the device can serve the request's amounts, and what its share consumes (None for a
        device taken whole, which records no consumedCapacity)."""
        if not (self.gates.consumable_capacity and (alt.capacity or shared)):
            return True, None
        consumption = self.consumption_of(alt, device_id)
        if consumption is None:
            return False, None  # KEP-5075: the device cannot serve the amounts asked for
        if not shared:
            return True, None  # a device allocated whole records no consumedCapacity
        if not self.ledger.admits(device, consumption):
            return False, None  # several shares, even in one claim, while the capacity lasts (admin access too)
        return True, consumption

    def _take(self, alt: Alternative, device_id: int, claim: int, shared: bool,
              consumption: dict[str, Fraction] | None, counts: bool, needs: list[tuple[CounterKey, Fraction]]) -> None:
        """Record a pick `_try` admitted, so `_release` can undo it."""
        device = self.devices[device_id]
        self.chosen[claim].append((alt, device_id, tuple(consumption.items()) if consumption is not None else None))
        self.counted[claim].append(counts)
        if consumption is not None:
            self.ledger.add(device, consumption)
        if not shared:  # D-4381-7: in use for the rest of the attempt, an admin-access pick too
            self.busy[device.key] = self.busy.get(device.key, 0) + 1
        for key, amount in needs:
            self.left[key] = self.left.get(key, Fraction(0)) - amount
        if not alt.admin_access:
            self.compat.add(device.driver, device.pool, device.compatibility_groups)

    def _constraints_hold(self, alt: Alternative, device: DeviceFacts, claim: int, must: bool) -> bool:
        """Whether the device keeps every constraint of its claim that applies to the request; a constraint
        broken by a device an All request must take (`must`) is an error."""
        mine = self.chosen[claim]
        for constraint in self.plans[claim].constraints:
            if not constraint.applies(alt):
                continue
            value = lookup_attribute(device.attributes, device.driver, constraint.attribute)
            holds = value is not None
            if value is not None:
                chosen = [lookup_attribute(self.devices[other].attributes, self.devices[other].driver,
                                           constraint.attribute) for other_alt, other, _ in mine
                          if constraint.applies(other_alt)]
                present = [v for v in chosen if v is not None]
                if present and constraint.kind == "distinct" and not self.gates.list_attributes:
                    # D-4381-15: without the gate only scalars are compared; a list after the first device fails
                    holds = value[0] not in LIST_KINDS and constraint_admits(
                        "distinct", value, [v for v in present if v[0] not in LIST_KINDS])
                else:
                    holds = constraint_admits(constraint.kind, value, present)
                if holds and present and constraint.kind == "match" and not self.gates.list_attributes:
                    # D-4381-10: without the gate a list value is a type matchAttribute cannot compare
                    holds = not any(v[0] in LIST_KINDS for v in (value, *present))
            if not holds:
                if must:
                    raise AllocationError(f"claim {self.plans[claim].name}, request {alt.name}: device "
                                          f"{device.driver}/{device.pool}/{device.name} would break a constraint")
                return False
        return True

    def _release(self, claim: int) -> None:
        alt, device_id, consumed = self.chosen[claim].pop()
        counted = self.counted[claim].pop()
        device = self.devices[device_id]
        if consumed is not None:
            self.ledger.undo(device, dict(consumed))
        else:  # a device taken whole (a share records what it consumes)
            self.busy[device.key] -= 1
            if not self.busy[device.key]:
                del self.busy[device.key]
        for counter_set, counters in device.consumes if counted else ():
            for counter, amount in counters:
                key = (device.driver, device.pool, counter_set, counter)
                self.left[key] = self.left.get(key, Fraction(0)) + amount
        if not alt.admin_access:
            self.compat.undo()

