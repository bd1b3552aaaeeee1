"""What allocated claims hold (KEP-4381 "in use"): devices held whole, and with DRAConsumableCapacity the shares of
multi-allocatable devices and what they consume (KEP-5075); what one more share would consume, and the capacity
ledger a search adds shares to and takes them back from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from draconform.reference.allocator.capacity import add_usage, fits, share_consumption
from draconform.reference.allocator.devices import DeviceFacts
from draconform.reference.allocator.gates import Gates
from draconform.reference.allocator.plans import Alternative
from draconform.sut import Obj


@dataclass
class AllocatedState:
    """What allocated (and assumed) claims hold: devices held exclusively, and, with DRAConsumableCapacity on
    in the scheduler, what the shares of multi-allocatable devices consume. Admin-access results hold nothing.
    With the gate off a result with a shareID holds its device exclusively, as upstream's scheduler does."""

    exclusive: set[tuple[str, str, str]] = field(default_factory=set)
    shared: dict[tuple[str, str, str], dict[str, Fraction]] = field(default_factory=dict)

    @classmethod
    def of(cls, claims: Sequence[Obj], gates: Gates) -> AllocatedState:
        state = cls()
        for claim in claims:
            state.add_claim(claim, gates)
        return state

    def add_claim(self, claim: Obj, gates: Gates) -> None:
        allocation = (claim.get("status") or {}).get("allocation")
        for result in ((allocation or {}).get("devices") or {}).get("results") or []:
            if result.get("adminAccess"):
                continue
            key = (str(result.get("driver", "")), str(result.get("pool", "")), str(result.get("device", "")))
            if gates.consumable_capacity and result.get("shareID"):
                add_usage(self.shared.setdefault(key, {}), result.get("consumedCapacity") or {}, key[0])
            else:
                self.exclusive.add(key)

    @property
    def devices(self) -> set[tuple[str, str, str]]:
        """Every device in use, shared or not: each consumes its counters once."""
        return self.exclusive | set(self.shared)


def is_shared(device: DeviceFacts, gates: Gates) -> bool:
    """A device the scheduler may allocate to several requests and claims (KEP-5075): it publishes
    allowMultipleAllocations and the scheduler's DRAConsumableCapacity gate is on; otherwise it is an ordinary
    device allocated whole, as upstream's version-skew rule says."""
    return gates.consumable_capacity and device.allow_multiple


def capacity_consumption(alt: Alternative, device: DeviceFacts, gates: Gates) -> dict[str, Fraction] | None:
    """What one allocation of `device` for `alt` consumes (KEP-5075), or None when the device cannot serve the
    request's capacity at all: a capacity it lacks, a policy it breaks, or (for a device allocated whole) an
    amount beyond the capacity. With the gate off there is nothing to check: {}."""
    if not gates.consumable_capacity:
        return {}
    consumption = share_consumption(dict(alt.capacity), device.driver, device.capacities)
    if consumption is None or not fits(consumption, {}, device.driver, device.capacities):
        return None
    return consumption


class CapacityLedger:
    """The capacity of multi-allocatable devices during one search: what allocated shares consume plus the
    shares chosen so far, added and taken back exactly once each as the search goes and backtracks."""

    def __init__(self, allocated: dict[tuple[str, str, str], dict[str, Fraction]]) -> None:
        self.allocated = allocated
        self.pending: dict[tuple[str, str, str], dict[str, Fraction]] = {}
        self.shares: dict[tuple[str, str, str], int] = {}  # shares chosen in this search, per device

    def in_use(self, device: DeviceFacts) -> bool:
        """Whether the device already has a share, allocated (with or without consumedCapacity, D-4381-16) or
        chosen in this search: its counters are consumed already, so a new share takes none."""
        return device.key in self.allocated or self.shares.get(device.key, 0) > 0

    def admits(self, device: DeviceFacts, consumption: dict[str, Fraction]) -> bool:
        used = dict(self.allocated.get(device.key, {}))
        for key, amount in self.pending.get(device.key, {}).items():
            used[key] = used.get(key, Fraction(0)) + amount
        return fits(consumption, used, device.driver, device.capacities)

    def add(self, device: DeviceFacts, consumption: dict[str, Fraction]) -> None:
        add_usage(self.pending.setdefault(device.key, {}), consumption, device.driver)
        self.shares[device.key] = self.shares.get(device.key, 0) + 1

    def undo(self, device: DeviceFacts, consumption: dict[str, Fraction]) -> None:
        add_usage(self.pending.setdefault(device.key, {}), consumption, device.driver, -1)
        self.shares[device.key] -= 1
