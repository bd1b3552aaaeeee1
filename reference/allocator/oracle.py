"""The oracle allocator: a plain transcription of kube-scheduler's structured-parameters allocation
(KEP-4381 "Structured parameters", with KEP-4816 firstAvailable, KEP-5055 taints, KEP-4815 counters and
KEP-5007 binding-condition ordering), written to be read, not to be fast. The columnar core must agree
with it on every input; tests/allocator checks that they do."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from draconform.kube.cel import SelectorEngine
from draconform.kube.featuregates import FeatureGates
from draconform.kube.values import constraint_admits, lookup_attribute, parse_quantity
from draconform.reference.allocator.common import (
    MAX_DEVICES_PER_CLAIM,
    AllocatedState,
    Alternative,
    CapacityLedger,
    ClaimPlan,
    DeviceFacts,
    Gates,
    Pick,
    blocking_taints,
    build_allocation,
    capacity_consumption,
    check_claim_size,
    device_on_node,
    failure_reason,
    is_shared,
    node_selector_matches,
    parse_device,
    plan_claims,
    selectors_match,
)
from draconform.reference.allocator.compatibility import Mode, Tracker, holding_results, tracker_for
from draconform.reference.allocator.interface import AllocationError, NodeAllocation
from draconform.reference.apiserver.store import Store
from draconform.sut import Obj

PoolKey = tuple[str, str]  # driver, pool name
DeviceKey = tuple[str, str, str]  # driver, pool name, device name
CounterKey = tuple[str, str, str, str]  # driver, pool name, counter set, counter


@dataclass
class Pool:
    """The newest generation of one pool, as far as one node is concerned."""

    driver: str
    name: str
    generation: int
    incomplete: bool = False
    invalid: str | None = None
    devices_here: list[DeviceFacts] = field(default_factory=list)  # usable on the node, in search order
    all_devices: dict[str, DeviceFacts] = field(default_factory=dict)  # every device of the generation
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)


class OracleAllocator:
    """Implements `Allocator` by reading everything from the store on every call."""

    def __init__(self, store: Store, gates: FeatureGates) -> None:
        self.store = store
        self.gates = Gates.of(gates)
        self.engine = SelectorEngine()

    def close(self) -> None:
        """Nothing to release: the oracle keeps no state between calls."""

    # --- the seam ----------------------------------------------------------------------------------------
    def allocate(self, node: Obj, claims: Sequence[Obj], assumed: Sequence[Obj] = ()) -> NodeAllocation:
        classes = {c["metadata"]["name"]: c for c in self.store.list("DeviceClass")}
        plans = plan_claims(claims, classes, self.gates)
        pools = self.pools_for(node)
        allocated = [c for c in self.store.list("ResourceClaim") if (c.get("status") or {}).get("allocation")]
        state = AllocatedState.of(list(allocated) + list(assumed), self.gates)
        available = self.available_counters(pools, state.devices)
        candidates = self.candidates(plans, pools, node, state)
        for plan in plans:
            check_claim_size(plan, {key: len(devs) for key, devs in candidates.items()})
        compat = tracker_for(self.gates.compatibility, holding_results(list(allocated) + list(assumed)),
                             _published(pools))
        search = _Search(plans, candidates, state.exclusive, available, compat, self.gates,
                         CapacityLedger(state.shared))
        if search.run():
            return NodeAllocation([build_allocation(plan, search.picks[i], node, self.gates)
                                   for i, plan in enumerate(plans)])
        invalid = [f"{p.driver}/{p.name}: {p.invalid}" for p in pools if p.invalid]
        if invalid:
            raise AllocationError("invalid resource pools were encountered: " + "; ".join(invalid))
        def count(alt: Alternative) -> int:
            return len(candidates[(alt.claim_index, alt.name)])

        return NodeAllocation(None, {plan.name: failure_reason(plan, count)
                                     for plan in plans})

    # --- pools -------------------------------------------------------------------------------------------
    def pools_for(self, node: Obj) -> list[Pool]:
        """Pools with at least one slice of their newest generation relevant to the node, sorted by driver
        and pool name; each marked incomplete or invalid where it is."""
        groups: dict[PoolKey, list[Obj]] = {}
        for slice_ in self.store.list("ResourceSlice"):
            spec = slice_.get("spec") or {}
            if not self.gates.partitionable and (spec.get("sharedCounters") or spec.get("perDeviceNodeSelection")):
                continue  # without the gate such slices are not understood
            if not any(spec.get(f) for f in ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")):
                continue  # a node selection this allocator does not know
            key = (str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", "")))
            groups.setdefault(key, []).append(slice_)
        pools = []
        for (driver, pool_name), slices in sorted(groups.items()):
            newest = max(int((s["spec"].get("pool") or {}).get("generation", 0)) for s in slices)
            current = sorted((s for s in slices if int(s["spec"]["pool"].get("generation", 0)) == newest),
                             key=lambda s: s["metadata"]["name"])
            if not any(self._slice_relevant(s, node) for s in current):
                continue
            pool = Pool(driver, pool_name, newest)
            counts = {int(s["spec"]["pool"].get("resourceSliceCount", 0)) for s in current}
            pool.incomplete = len(counts) != 1 or len(current) != counts.pop()
            self._fill(pool, current, node)
            pools.append(pool)
        return pools

    @staticmethod
    def _slice_relevant(slice_: Obj, node: Obj) -> bool:
        spec = slice_["spec"]
        if spec.get("perDeviceNodeSelection"):
            return any(device_on_node(parse_device(spec, "", "", i, d), node)
                       for i, d in enumerate(spec.get("devices") or []))
        if spec.get("nodeName"):
            return bool(spec["nodeName"] == node["metadata"]["name"])
        if spec.get("nodeSelector"):
            return bool(node_selector_matches(spec["nodeSelector"], node))
        return bool(spec.get("allNodes"))

    def _fill(self, pool: Pool, slices: list[Obj], node: Obj) -> None:
        """Devices and counter sets of the generation, and whether the pool is invalid."""
        problems: list[str] = []
        for slice_ in slices:
            spec = slice_["spec"]
            for counter_set in spec.get("sharedCounters") or []:
                name = str(counter_set.get("name", ""))
                if name in pool.counter_sets:
                    problems.append(f"duplicate counter set {name}")
                pool.counter_sets[name] = {c: _amount(v) for c, v in (counter_set.get("counters") or {}).items()}
            for index, raw in enumerate(spec.get("devices") or []):
                device = parse_device(spec, slice_["metadata"]["name"], slice_["metadata"].get("resourceVersion", ""),
                                      index, raw)
                if device.name in pool.all_devices:
                    problems.append(f"duplicate device name {device.name}")
                pool.all_devices[device.name] = device
                if device_on_node(device, node):
                    pool.devices_here.append(device)
        if self.gates.partitionable:
            for device in pool.all_devices.values():
                for set_name, counters in device.consumes:
                    if set_name not in pool.counter_sets:
                        problems.append(f"device {device.name} consumes from unknown counter set {set_name}")
                        continue
                    for counter, _ in counters:
                        if counter not in pool.counter_sets[set_name]:
                            problems.append(f"device {device.name} consumes unknown counter {set_name}/{counter}")
        if problems:
            pool.invalid = ", ".join(problems)

    def available_counters(self, pools: list[Pool], in_use: set[DeviceKey]) -> dict[CounterKey, Fraction]:
        """Counter values minus what the pool's allocated devices consume."""
        available: dict[CounterKey, Fraction] = {}
        for pool in pools:
            if pool.incomplete or pool.invalid:
                continue
            for set_name, counters in pool.counter_sets.items():
                for counter, value in counters.items():
                    available[(pool.driver, pool.name, set_name, counter)] = value
            for device in pool.all_devices.values():
                if device.key in in_use:
                    for set_name, consumption in device.consumes:
                        for counter, amount in consumption:
                            key = (pool.driver, pool.name, set_name, counter)
                            if key in available:  # without the partitionable gate no counter set is known
                                available[key] -= amount
        return available

    # --- candidates --------------------------------------------------------------------------------------
    def candidates(self, plans: list[ClaimPlan], pools: list[Pool], node: Obj,
                   state: AllocatedState) -> dict[tuple[int, str], list[DeviceFacts]]:
        """Per (claim, alternative), the devices it may take on this node in search order, before looking at
        what is in use: complete and valid pools only, gates, untolerated taints, selectors and capacity
        requests applied. An All request leaves out the shared devices whose capacity is used up."""
        usable = [p for p in pools if not p.incomplete and not p.invalid]
        result: dict[tuple[int, str], list[DeviceFacts]] = {}
        for plan in plans:
            for alts in plan.requests:
                for alt in alts:
                    if alt.all_mode:
                        for pool in pools:
                            if pool.incomplete:
                                raise AllocationError(f"claim {plan.name}, request {alt.name}: asks for all devices, "
                                                      f"but pool {pool.driver}/{pool.name} is incomplete")
                            if pool.invalid:
                                raise AllocationError(f"claim {plan.name}, request {alt.name}: asks for all devices, "
                                                      f"but pool {pool.driver}/{pool.name} is invalid: {pool.invalid}")
                    found = [d for p in usable for d in p.devices_here if self.eligible(alt, d)]
                    if alt.all_mode:
                        found = [d for d in found if not is_shared(d, self.gates) or CapacityLedger(
                            state.shared).admits(d, capacity_consumption(alt, d, self.gates) or {})]
                    if self.gates.binding:  # D-5007-8: devices without binding conditions first
                        found = ([d for d in found if not d.binding_conditions]
                                 + [d for d in found if d.binding_conditions])
                    result[(alt.claim_index, alt.name)] = found
        return result

    def eligible(self, alt: Alternative, device: DeviceFacts) -> bool:
        if device.binding_conditions and not self.gates.binding:
            return False
        if device.consumes and not self.gates.partitionable:
            return False
        if device.has_compatibility_groups and self.gates.compatibility is Mode.SKIP:
            return False
        if self.gates.taints and blocking_taints(device.taints, alt.tolerations):
            return False
        if not selectors_match(self.engine, alt, device):
            return False
        return capacity_consumption(alt, device, self.gates) is not None


def _amount(value: Obj | None) -> Fraction:
    try:
        amount: Fraction = parse_quantity((value or {}).get("value", 0))
        return amount
    except ValueError:
        return Fraction(0)


def _published(pools: list[Pool]) -> Callable[[DeviceKey], list[str] | None]:
    """D-5963-2: the counter sets an allocated device's published slice entry consumes (None when
    it is not published), read only for results that carry no compatibility snapshot."""
    devices = {(pool.driver, pool.name): pool.all_devices for pool in pools}

    def lookup(key: DeviceKey) -> list[str] | None:
        device = devices.get((key[0], key[1]), {}).get(key[2])
        return None if device is None else [counter_set for counter_set, _ in device.consumes]

    return lookup


class _Search:
    """First-fit depth-first search with backtracking: claims in order, then requests, then devices."""

    def __init__(self, plans: list[ClaimPlan], candidates: dict[tuple[int, str], list[DeviceFacts]],
                 in_use: set[DeviceKey], available: dict[CounterKey, Fraction], compat: Tracker | None = None,
                 gates: Gates | None = None, ledger: CapacityLedger | None = None) -> None:
        self.plans = plans
        self.candidates = candidates
        self.in_use = in_use
        self.available = available
        self.gates = gates
        self.ledger = ledger or CapacityLedger({})  # KEP-5075 shares, added and taken back like counters
        self.picks: list[list[Pick]] = [[] for _ in plans]
        self.counted: list[list[bool]] = [[] for _ in plans]  # per pick: whether it consumed counters
        self.taken: dict[DeviceKey, int] = {}  # device -> how many picks of this attempt hold it exclusively
        self.consumed: dict[CounterKey, Fraction] = {}
        self.compat = compat or Tracker(Mode.IGNORE)  # KEP-5963 groups, checked and undone like counters

    def run(self) -> bool:
        return self.request(0, 0)

    def request(self, claim: int, index: int) -> bool:
        if claim == len(self.plans):
            return True
        if index == len(self.plans[claim].requests):
            return self.request(claim + 1, 0)
        for alt in self.plans[claim].requests[index]:  # firstAvailable: in order, first that works wins
            devices = self.candidates[(claim, alt.name)]
            if alt.all_mode:
                if devices and self.take_all(alt, devices, claim, index):
                    return True
            elif self.pick(alt, devices, claim, index, alt.count, 0):
                return True
        return False

    def take_all(self, alt: Alternative, devices: list[DeviceFacts], claim: int, index: int) -> bool:
        added = 0
        for device in devices:
            if not self.fits(alt, device, claim):
                break
            self.add(alt, device, claim)
            added += 1
        if added == len(devices) and self.request(claim, index + 1):
            return True
        for _ in range(added):
            self.undo(claim)
        return False

    def pick(self, alt: Alternative, devices: list[DeviceFacts], claim: int, index: int, left: int, start: int) -> bool:
        """Choose `left` more devices from devices[start:], each after the previous one (no permutations)."""
        if left == 0:
            return self.request(claim, index + 1)
        for position in range(start, len(devices)):
            device = devices[position]
            if self.fits(alt, device, claim):
                self.add(alt, device, claim)
                if self.pick(alt, devices, claim, index, left - 1, position + 1):
                    return True
                self.undo(claim)
        return False

    def shared(self, device: DeviceFacts) -> bool:
        return self.gates is not None and is_shared(device, self.gates)

    def consumption(self, alt: Alternative, device: DeviceFacts) -> dict[str, Fraction]:
        assert self.gates is not None
        return capacity_consumption(alt, device, self.gates) or {}

    def counts_counters(self, alt: Alternative, device: DeviceFacts) -> bool:
        """Admin access takes no counters; a shared device takes its counters with its first share only."""
        return not alt.admin_access and not (self.shared(device) and self.ledger.in_use(device))

    def fits(self, alt: Alternative, device: DeviceFacts, claim: int) -> bool:
        picks = self.picks[claim]
        if len(picks) >= MAX_DEVICES_PER_CLAIM:
            return False
        if self.shared(device):
            if not alt.admin_access and device.key in self.in_use:
                return False  # held whole by a result without a shareID (written while the gate was off)
            if not self.ledger.admits(device, self.consumption(alt, device)):
                return False  # admin access too: it asks for capacity like any share
        else:
            if any(p.device.key == device.key for p in picks):
                return False  # never twice in one claim, not even with admin access
            if not alt.admin_access and (device.key in self.in_use or self.taken.get(device.key, 0) > 0):
                return False
        for set_name, counters in device.consumes if self.counts_counters(alt, device) else ():
            for counter, amount in counters:
                key = (device.driver, device.pool, set_name, counter)
                if self.available[key] - self.consumed.get(key, Fraction(0)) - amount < 0:
                    return False
        if not alt.admin_access and not self.compat.admits(device.driver, device.pool, device.compatibility_groups):
            return False
        for constraint in self.plans[claim].constraints:
            if not constraint.applies(alt):
                continue
            value = lookup_attribute(device.attributes, device.driver, constraint.attribute)
            if value is None:
                return False
            chosen = [lookup_attribute(other.device.attributes, other.device.driver, constraint.attribute)
                      for other in picks if constraint.applies(other.alt)]
            if not constraint_admits(constraint.kind, value, [v for v in chosen if v is not None]):
                return False
        return True

    def add(self, alt: Alternative, device: DeviceFacts, claim: int) -> None:
        counted = self.counts_counters(alt, device)
        if self.shared(device):
            consumption = self.consumption(alt, device)
            self.ledger.add(device, consumption)
            self.picks[claim].append(Pick(alt, device, tuple(consumption.items())))
        else:
            self.picks[claim].append(Pick(alt, device))
        self.counted[claim].append(counted)
        if alt.admin_access:
            return  # admin access shares the device: it holds it no more than an allocated admin claim does
        if not self.shared(device):
            self.taken[device.key] = self.taken.get(device.key, 0) + 1
        self.compat.add(device.driver, device.pool, device.compatibility_groups)
        for set_name, counters in device.consumes if counted else ():
            for counter, amount in counters:
                key = (device.driver, device.pool, set_name, counter)
                self.consumed[key] = self.consumed.get(key, Fraction(0)) + amount

    def undo(self, claim: int) -> None:
        pick = self.picks[claim].pop()
        counted = self.counted[claim].pop()
        if pick.consumed is not None:
            self.ledger.undo(pick.device, dict(pick.consumed))
        if pick.alt.admin_access:
            return
        if not self.shared(pick.device):
            self.taken[pick.device.key] -= 1
        self.compat.undo()
        for set_name, counters in pick.device.consumes if counted else ():
            for counter, amount in counters:
                key = (pick.device.driver, pick.device.pool, set_name, counter)
                self.consumed[key] -= amount
