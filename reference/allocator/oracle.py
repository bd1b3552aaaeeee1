"""The oracle allocator: a plain, slow transcription of how kube-scheduler's structured allocator decides,
written to be read and to share no allocation logic with the columnar core (only the seam's types, the CEL
environment, value parsing and node-selector matching). The property tests compare the two cores input by
input, so a mistake in either one shows up as a disagreement.

What it transcribes (KEP-4381 "Structured parameters", KEP-4816 firstAvailable, KEP-5018 admin access,
KEP-5055 taints, KEP-4815 counters, KEP-5007 binding conditions, KEP-5963 compatibility groups, KEP-5075
consumable capacity, list-type attributes under constraints), following
upstream k8s.io/dynamic-resource-allocation where the KEPs are silent (the project's decisions on structured
allocation and D-5007-8 in docs/decisions.md):

1. Gather the pools that reach the node: per (driver, pool) only the newest generation among the slices
   reaching the node (the stable allocator: and every slice with sharedCounters, D-4381-19). It is complete
   when those slices number resourceSliceCount, or else when all its slices in the cluster do, slices the gates
   leave out included (D-4381-17); a newer generation elsewhere then leaves the pool out on this node (being
   replaced). An incomplete pool is never checked further; a complete pool with duplicate device names among
   the slices reaching the node (D-4381-18), duplicate counter-set names, or a device consuming an unknown
   counter set or counter, is invalid. Pools are ordered by driver and name; unless the gates leave upstream's stable
   allocator running, a pool holding any device with binding conditions (in the slices that reach the node)
   comes after all others. Inside a pool: slices by name, devices in slice order; a slice with
   perDeviceNodeSelection reaching the node brings all its devices, each checked for the node after its
   selectors.
2. Check every claim's requests before searching (missing class, gates, modes). An allocationMode All
   request lists its devices now: every matching device on the node that can serve its capacity, or an
   error when a pool reaching the node is incomplete or invalid. A claim that needs more than 32 devices at
   the least is an error.
3. Search depth first: claims, requests (firstAvailable: alternatives in order), devices in pool order.
   For one device: skip it when in use (an earlier pick of the attempt, admin access too, counts);
   evaluate its selectors (class first, then request, cached; a CEL
   error stops the whole attempt, so selectors are only evaluated where the search reaches); then capacity
   (KEP-5075: with DRAConsumableCapacity a multi-allocatable device takes shares, several per claim, while
   what all its shares consume fits; it takes its counters with its first share, D-4381-16), counters (an
   admin-access pick too, D-4381-13; none while a counter of the pool is over-committed, D-4381-14; without
   DRAPartitionableDevices a counter consumer is refused here, after its selectors, D-4381-17), taints,
   compatibility groups, constraints. A constraint that a device of an All request breaks is an error;
   every other rejection only moves on. The first complete solution is the answer.
4. No solution: "does not fit", with the invalid pools as the reason when there were some."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any
from uuid import uuid4

from draconform.kube.cel import CelError, SelectorEngine, abbreviate, device_input
from draconform.kube.featuregates import FeatureGates
from draconform.kube.values import LIST_KINDS, AttributeValue, parse_attribute, parse_quantity
from draconform.reference.allocator.interface import AllocationError, Feasibility, NodeAllocation
from draconform.reference.apiserver.interface import ApiReader
from draconform.reference.nodeselector import pinned_to, selector_matches
from draconform.sut import Obj

MAX_RESULTS = 32  # AllocationResultsMaxSize
COMPATIBILITY_GATE = "DRADeviceCompatibilityGroups"
DeviceKey = tuple[str, str, str]  # driver, pool, device
CounterKey = tuple[str, str, str, str]  # driver, pool, counter set, counter
SetKey = tuple[str, str, str]  # driver, pool, counter set


@dataclass
class Device:
    """One published device of the generation of a pool the node sees, as its slice says it."""

    driver: str
    pool: str
    slice: Obj
    index: int
    raw: Obj

    @property
    def name(self) -> str:
        return str(self.raw.get("name", ""))

    @property
    def key(self) -> DeviceKey:
        return self.driver, self.pool, self.name

    @property
    def placement(self) -> Obj:
        """Where the device is usable: its own fields with perDeviceNodeSelection, else its slice's."""
        spec: Obj = self.slice["spec"]
        return self.raw if spec.get("perDeviceNodeSelection") else spec

    def consumes(self) -> list[tuple[str, dict[str, Fraction]]]:
        return [(str(entry.get("counterSet", "")),
                 {counter: _amount(value) for counter, value in (entry.get("counters") or {}).items()})
                for entry in self.raw.get("consumesCounters") or []]

    def groups(self) -> list[tuple[str, tuple[str, ...]]]:
        """KEP-5963: the groups declared per consumesCounters entry (unset, null and [] all mean none)."""
        return [(str(entry.get("counterSet", "")), tuple(dict.fromkeys(map(str, entry.get("compatibilityGroups")
                                                                             or ()))))
                for entry in self.raw.get("consumesCounters") or []]

    def attribute(self, full_name: str) -> AttributeValue | None:
        """A constraint's attribute: by its full name, or its bare name when the domain is the driver's."""
        attributes = self.raw.get("attributes") or {}
        raw = attributes.get(full_name)
        domain, _, ident = full_name.rpartition("/")
        if raw is None and domain == self.driver:
            raw = attributes.get(ident)
        return parse_attribute(raw) if raw is not None else None

    @property
    def multi(self) -> bool:
        """KEP-5075 allowMultipleAllocations, as published."""
        return self.raw.get("allowMultipleAllocations") is True

    def capacities(self) -> dict[str, Capacity]:
        """The published capacities whose amounts (value and request policy) all read as quantities; any other
        is not read at all."""
        found = {}
        for name, entry in (self.raw.get("capacity") or {}).items():
            entry = entry if isinstance(entry, dict) else {}
            try:
                found[str(name)] = Capacity.read(entry)
            except ValueError:
                continue
        return found


@dataclass(frozen=True)
class Capacity:
    """One published capacity (KEP-5075): its total, its request policy, and whether its value was written with
    a binary suffix (what an allocation consumes of it is written the same way)."""

    value: Fraction
    binary: bool
    default: Fraction | None
    valid_values: tuple[Fraction, ...]
    range_min: Fraction | None  # validRange (min is required there)
    range_max: Fraction | None
    range_step: Fraction | None

    @classmethod
    def read(cls, entry: Obj) -> Capacity:
        raw_policy = entry.get("requestPolicy")
        policy: Obj = raw_policy if isinstance(raw_policy, dict) else {}
        raw_range = policy.get("validRange")
        valid_range: Obj = raw_range if isinstance(raw_range, dict) else {}

        def amount(raw: Any) -> Fraction | None:
            return None if raw is None else parse_quantity(raw)

        value = entry.get("value", 0)
        return cls(parse_quantity(value), isinstance(value, str) and "i" in value, amount(policy.get("default")),
                   tuple(parse_quantity(v) for v in policy.get("validValues") or ()), amount(valid_range.get("min")),
                   amount(valid_range.get("max")), amount(valid_range.get("step")))

    def consumed(self, requested: Fraction | None) -> Fraction | None:
        """What one allocation takes of this capacity when it asks for `requested` (None: nothing said), or None
        when the policy refuses it. Not asked: the default, else all of it. Asked: as it is without a policy;
        in a range, at least min and then up to the next step; with valid values, up to the next one."""
        # Grade D on purpose (radon): the oracle transcribes the policy rules one case after another, to be read
        # against the KEP, not factored like the core it checks.
        if requested is None:
            taken = self.default if self.default is not None else self.value
        elif self.range_min is not None:
            taken = max(requested, self.range_min)
            if self.range_step is not None and self.range_step > 0:
                steps = (taken - self.range_min) / self.range_step
                taken = self.range_min + self.range_step * -(-steps.numerator // steps.denominator)
        elif self.valid_values:
            taken = min((v for v in self.valid_values if v >= requested), default=requested)
        else:
            taken = requested
        if taken < 0 or taken > self.value:
            return None
        if self.default is not None and taken == self.default:
            return taken  # the default is always allowed
        if self.range_min is not None:
            if self.range_max is not None and taken > self.range_max:
                return None
            if self.range_step is not None and self.range_step > 0 and (taken - self.range_min) % self.range_step:
                return None
        elif self.valid_values and taken not in self.valid_values:
            return None
        return taken


@dataclass
class Pool:
    driver: str
    name: str
    slices: list[Obj]  # the generation the node sees, all its slices in the cluster, by name
    incomplete: bool = False
    invalid: str | None = None
    devices: list[Device] = field(default_factory=list)  # every device of the generation
    counters: dict[str, dict[str, Fraction]] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Request:
    """One request, or one firstAvailable alternative of it."""

    claim: int
    name: str  # "req" or "req/sub"
    parent: str  # "req"
    spec: Obj
    device_class: Obj
    amounts: tuple[tuple[str, Fraction], ...] = ()  # KEP-5075 capacity.requests

    @property
    def all(self) -> bool:
        return self.spec.get("allocationMode") == "All"

    @property
    def count(self) -> int:
        return int(self.spec.get("count") or 1)

    @property
    def admin(self) -> bool:
        return bool(self.spec.get("adminAccess"))

    @property
    def tolerations(self) -> list[Obj]:
        return list(self.spec.get("tolerations") or [])

    @property
    def selectors(self) -> list[str]:
        raw = list((self.device_class.get("spec") or {}).get("selectors") or []) + list(self.spec.get("selectors")
                                                                                        or [])
        return [selector["cel"]["expression"] for selector in raw]


@dataclass
class Pick:
    request: Request
    device: Device
    consumed: dict[str, Fraction] | None = None  # a share of a multi-allocatable device: what it takes
    counted: bool = False  # whether this pick took the device's counters


class OracleAllocator:
    """Implements `Allocator` by reading everything from the store on every call."""

    def __init__(self, store: ApiReader, gates: FeatureGates) -> None:
        self.store = store
        self.gates = gates
        self.engine = SelectorEngine()

    def close(self) -> None:
        """Nothing to release: the oracle keeps no state between calls."""

    def feasible(self, node: Obj, claims: Sequence[Obj], assumed: Sequence[Obj] = ()) -> Feasibility | None:
        """The oracle has no shortcut: every answer is a search."""
        return None

    def allocate(self, node: Obj, claims: Sequence[Obj], assumed: Sequence[Obj] = ()) -> NodeAllocation:
        return Attempt(self, node, list(claims), list(assumed)).run()


class Attempt:
    """One call: the pools of one node, the claims' requests, and the search over them."""

    def __init__(self, owner: OracleAllocator, node: Obj, claims: list[Obj], assumed: list[Obj]) -> None:
        # Grade D on purpose (radon): the oracle reads the store step by step as upstream's allocator sets up,
        # in one place, so the transcription stays easy to compare with it.
        self.store, self.engine, gates = owner.store, owner.engine, owner.gates
        self.node = node
        self.claims = claims
        self.binding = gates.enabled("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")
        self.partitionable = gates.enabled("DRAPartitionableDevices")
        self.taints = gates.enabled("DRADeviceTaints")
        # KEP-5055: each DeviceTaintRule adds its taint to the devices its selector matches.
        self.rules = [spec for spec in ((rule.get("spec") or {}) for rule in self.store.list("DeviceTaintRule"))
                      if isinstance(spec.get("taint"), dict)] if gates.enabled("DRADeviceTaintRules") else []
        self.prioritized = gates.enabled("DRAPrioritizedList")
        self.admin_gate = gates.enabled("DRAAdminAccess")
        self.consumable = gates.enabled("DRAConsumableCapacity")
        # Upstream's oldest ("stable") allocator runs when none of these gates asks for a newer one: it has no
        # distinctAttribute, ignores capacity.requests, shows CEL allowMultipleAllocations as false (D-4381-8) and
        # keeps pools in name order (D-5007-8).
        self.list_attributes = gates.enabled("DRAListTypeAttributes")
        self.stable = not (self.consumable or self.binding or self.list_attributes
                           or gates.enabled(COMPATIBILITY_GATE))
        self.distinct = not self.stable
        # An older scheduler needs no case of its own: it reads the API without the field (releaseview).
        self.compatibility = "enforce" if gates.enabled(COMPATIBILITY_GATE) else "skip"
        allocated = [c for c in self.store.list("ResourceClaim") if (c.get("status") or {}).get("allocation")]
        self.held_results = [result for claim in allocated + assumed
                             for result in ((claim["status"]["allocation"].get("devices") or {}).get("results") or [])
                             if not result.get("adminAccess")]
        # Held whole, or (KEP-5075, gate on) shared: a result with a shareID is one share, and what the shares
        # of a device consume adds up, per capacity named with its domain.
        self.in_use: set[DeviceKey] = set()
        self.shares: dict[DeviceKey, dict[str, Fraction]] = {}
        for r in self.held_results:
            key = (str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", "")))
            if not (self.consumable and r.get("shareID")):
                self.in_use.add(key)
                continue
            used = self.shares.setdefault(key, {})
            for name, amount in (r.get("consumedCapacity") or {}).items():
                try:
                    value = parse_quantity(amount)
                except ValueError:
                    continue
                used[_qualified(name, key[0])] = used.get(_qualified(name, key[0]), Fraction(0)) + value
        self.node_pools = {key: pool for key, slices in self.gather_all_pools().items()
                           if (pool := self.pool_for_node(*key, slices)) is not None}
        self.pools = self.pools_for_node()
        self.picks: list[list[Pick]] = [[] for _ in claims]
        self.matches: dict[tuple[str, DeviceKey], bool] = {}
        self.capacity_cache: dict[tuple[DeviceKey, str], dict[str, Capacity]] = {}

    # --- 1. pools ----------------------------------------------------------------------------------------
    def gather_all_pools(self) -> dict[tuple[str, str], list[Obj]]:
        """Every slice, of every generation, by (driver, pool): those the gates leave out too, which still count
        when a pool's slices are counted (D-4381-17)."""
        by_pool: dict[tuple[str, str], list[Obj]] = {}
        for slice_ in self.store.list("ResourceSlice"):
            spec = slice_.get("spec") or {}
            if not any(spec.get(f) for f in ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")):
                continue  # a node selection this scheduler does not know
            by_pool.setdefault((str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", ""))),
                               []).append(slice_)
        return by_pool

    def pool_for_node(self, driver: str, name: str, slices: list[Obj]) -> Pool | None:
        """The pool as this node sees it (None: it does not reach the node, or is being replaced). The newest
        generation among the slices reaching the node counts. It is complete when the node's own slices of it
        number resourceSliceCount; failing that, when all its slices in the cluster do, unless a newer
        generation exists somewhere: then the driver is replacing this one and the pool is left out here."""
        mine = [s for s in slices if self.gathered(s)]
        if not mine:
            return None
        chosen = max(_generation(s) for s in mine)
        current = sorted((s for s in slices if _generation(s) == chosen), key=lambda s: s["metadata"]["name"])
        counts = {int((s["spec"].get("pool") or {}).get("resourceSliceCount", 0)) for s in current}
        wanted = counts.pop() if len(counts) == 1 else None
        if wanted is not None and sum(_generation(s) == chosen for s in mine) == wanted:
            incomplete = False
        elif any(_generation(s) > chosen for s in slices):
            return None
        else:
            incomplete = wanted is None or len(current) != wanted
        pool = Pool(driver, name, [s for s in current if self.understood(s)], incomplete)
        pool.devices = [Device(driver, name, s, i, raw) for s in current
                        for i, raw in enumerate(s["spec"].get("devices") or [])]
        if not pool.incomplete:  # an incomplete pool is never checked for validity
            pool.invalid = self.problems(pool)
        return pool

    def problems(self, pool: Pool) -> str | None:
        found: list[str] = []
        seen: set[str] = set()
        for slice_ in pool.slices if self.partitionable else ():  # without the gate no counter is looked at
            for counter_set in slice_["spec"].get("sharedCounters") or []:
                set_name = str(counter_set.get("name", ""))
                if set_name in pool.counters:
                    found.append(f"duplicate counter set {set_name}")
                pool.counters[set_name] = {c: _amount(v) for c, v in (counter_set.get("counters") or {}).items()}
        for device in pool.devices:
            if not self.slice_reaches(device.slice):
                continue  # D-4381-18: names are unique only among the slices gathered for this node
            if device.name in seen:
                found.append(f"duplicate device name {device.name}")
            seen.add(device.name)
        if self.partitionable:
            for device in pool.devices:
                for set_name, counters in device.consumes():
                    if set_name not in pool.counters:
                        found.append(f"device {device.name} consumes from unknown counter set {set_name}")
                        continue
                    found.extend(f"device {device.name} consumes unknown counter {set_name}/{counter}"
                                 for counter in counters if counter not in pool.counters[set_name])
        return ", ".join(found) or None

    def reaches(self, placement: Obj) -> bool:
        if placement.get("nodeName"):
            return bool(placement["nodeName"] == self.node["metadata"]["name"])
        if placement.get("nodeSelector"):
            return bool(selector_matches(placement["nodeSelector"], self.node))
        return bool(placement.get("allNodes"))

    def understood(self, slice_: Obj) -> bool:
        """Whether this scheduler's gates let it use the slice: counters and per-device node selection need
        DRAPartitionableDevices."""
        spec = slice_["spec"]
        return self.partitionable or not (spec.get("sharedCounters") or spec.get("perDeviceNodeSelection"))

    def gathered(self, slice_: Obj) -> bool:
        """Whether the slice joins this node's pools: one the gates let it use that reaches the node, or, in the
        stable allocator, any slice with shared counters, wherever it reaches (D-4381-19)."""
        if not self.understood(slice_):
            return False
        return (self.stable and bool(slice_["spec"].get("sharedCounters"))) or self.slice_reaches(slice_)

    def slice_reaches(self, slice_: Obj) -> bool:
        spec = slice_["spec"]
        if spec.get("perDeviceNodeSelection"):
            return any(self.reaches(raw) for raw in spec.get("devices") or [])
        return self.reaches(spec)

    def pools_for_node(self) -> list[Pool]:
        """The pools reaching the node, in search order (D-5007-8, in every allocator but the stable one,
        whatever the binding gates say: a pool with any device with binding conditions in a slice reaching the
        node goes last)."""
        here = [pool for _, pool in sorted(self.node_pools.items())]
        if not self.stable:
            def has_conditions(pool: Pool) -> bool:
                return any(raw.get("bindingConditions") for s in pool.slices if self.slice_reaches(s)
                           for raw in s["spec"].get("devices") or [])
            here = [p for p in here if not has_conditions(p)] + [p for p in here if has_conditions(p)]
        return here

    def devices_here(self, pool: Pool) -> list[Device]:
        """The devices of the pool's slices that reach the node: with perDeviceNodeSelection every device of
        such a slice, those of other nodes too (`selectable` checks a device's node after its selectors, D-4381-9)."""
        return [d for d in pool.devices if self.slice_reaches(d.slice)]

    # --- 2. requests ---------------------------------------------------------------------------------------
    def read_requests(self) -> list[list[list[Request]]]:
        """Per claim, per request, its alternatives (one, or the firstAvailable entries in order)."""
        classes = {c["metadata"]["name"]: c for c in self.store.list("DeviceClass")}
        claims = []
        for index, claim in enumerate(self.claims):
            name = claim["metadata"].get("name", "")
            requests = []
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
                where = f"claim {name}, request {request.get('name', '')}"
                if request.get("firstAvailable"):
                    if not self.prioritized:
                        raise AllocationError(f"{where}: firstAvailable is not enabled (feature gate "
                                              "DRAPrioritizedList)")
                    entries = [(f"{request['name']}/{sub.get('name', '')}", {**sub, "adminAccess": False})
                               for sub in request["firstAvailable"]]
                else:
                    entries = [(str(request.get("name", "")), request.get("exactly") or {})]
                requests.append([self.check_request(index, req_name, str(request.get("name", "")), spec, classes,
                                                    f"claim {name}, request {req_name}")
                                 for req_name, spec in entries])
            claims.append(requests)
        return claims

    def check_request(self, claim: int, name: str, parent: str, spec: Obj, classes: dict[str, Obj],
                      where: str) -> Request:
        class_name = spec.get("deviceClassName") or ""
        if not class_name:
            raise AllocationError(f"{where}: no device class name")
        if class_name not in classes:
            raise AllocationError(f"{where}: device class {class_name} does not exist")
        selectors = list((classes[class_name].get("spec") or {}).get("selectors") or []) + list(
            spec.get("selectors") or [])
        if any((s.get("cel") or {}).get("expression") is None for s in selectors):
            raise AllocationError(f"{where}: a selector has no CEL expression (unknown selector type)")
        if spec.get("adminAccess") and not self.admin_gate:
            raise AllocationError(f"{where}: admin access is not enabled (feature gate DRAAdminAccess)")
        amounts = []
        if (spec.get("capacity") or {}).get("requests") and not self.stable:  # D-4381-8: stable ignores them
            if not self.consumable:
                raise AllocationError(f"{where}: capacity requests are not enabled (feature gate "
                                      "DRAConsumableCapacity)")
            for capacity, amount in sorted(spec["capacity"]["requests"].items()):
                try:
                    amounts.append((str(capacity), parse_quantity(amount)))
                except ValueError as exc:
                    raise AllocationError(f"{where}: capacity request {capacity}: {exc}") from exc
        if (spec.get("allocationMode") or "ExactCount") not in ("ExactCount", "All"):
            raise AllocationError(f"{where}: unsupported allocation mode {spec.get('allocationMode')}")
        return Request(claim, name, parent, spec, classes[class_name], tuple(amounts))

    def all_devices(self, request: Request) -> list[Device]:
        """What an All request takes on this node, listed before the search (so its selectors run here)."""
        found: list[Device] = []
        for pool in self.pools:
            if pool.incomplete:
                raise AllocationError(f"claim {self.claim_name(request)}, request {request.name}: asks for all "
                                      f"devices, but pool {pool.driver}/{pool.name} is incomplete")
            if pool.invalid:
                raise AllocationError(f"claim {self.claim_name(request)}, request {request.name}: asks for all "
                                      f"devices, but pool {pool.driver}/{pool.name} is invalid: {pool.invalid}")
            found.extend(d for d in self.devices_here(pool) if self.selectable(request, d))
        # KEP-5075: leave out the devices that cannot serve the amounts asked for, and the shared ones whose
        # capacity allocated shares have used up.
        return [d for d in found if self.capacity_for(request, d) is not False]

    def claim_name(self, request: Request) -> str:
        return str(self.claims[request.claim]["metadata"].get("name", ""))

    # --- selectors -----------------------------------------------------------------------------------------
    def selectable(self, request: Request, device: Device) -> bool:
        """Gates first (devices this scheduler may not use are never looked at), then the class selectors and
        the request's, stopping at the first false one (a CEL error stops the attempt), and only then whether
        the device reaches the node (D-4381-9: a device of another node in a per-device slice is evaluated too).
        Cached per pair."""
        raw = device.raw
        if raw.get("bindingConditions") and not self.binding:
            return False
        if self.compatibility == "skip" and any(groups for _, groups in device.groups()):
            return False
        key = (f"{request.claim}/{request.name}", device.key)
        if key not in self.matches:
            self.matches[key] = all(self.selector_true(expression, request, device)
                                    for expression in request.selectors) and self.reaches(device.placement)
        return self.matches[key]

    def selector_true(self, expression: str, request: Request, device: Device) -> bool:
        def build() -> dict[str, Any]:
            attributes = {}
            for name, value in (device.raw.get("attributes") or {}).items():
                parsed = parse_attribute(value)
                if parsed is not None:
                    attributes[name] = parsed
            capacity = {name: entry.value for name, entry in device.capacities().items()}
            built: dict[str, Any] = device_input(device.driver, attributes, capacity, device.multi and not self.stable)
            return built

        cel_key = (device.driver, device.pool, device.slice["metadata"]["name"],
                   device.slice["metadata"].get("resourceVersion", ""), device.name)
        try:
            return self.engine.matches(expression, cel_key, build)
        except CelError as exc:
            raise AllocationError(f"claim request {request.name}: device {device.driver}/{device.pool}/"
                                  f"{device.name}: selector {abbreviate(expression)}: {exc}") from exc

    # --- 3. the search ---------------------------------------------------------------------------------------
    def run(self) -> NodeAllocation:
        self.requests = self.read_requests()
        self.listed: dict[Request, list[Device]] = {}
        self.constraints: list[list[tuple[str, str, list[str]]]] = []
        for index, claim in enumerate(self.claims):
            least = 0
            for alternatives in self.requests[index]:
                for request in alternatives:
                    if request.all:
                        self.listed[request] = self.all_devices(request)
                least += min(len(self.listed[r]) if r.all else r.count for r in alternatives)
            if least > MAX_RESULTS:
                raise AllocationError(f"claim {claim['metadata'].get('name', '')}: needs at least {least} devices, "
                                      f"which exceeds the claim limit of {MAX_RESULTS}")
            self.constraints.append(self.read_constraints(claim))
        if self.next_claim(0):
            return NodeAllocation([self.result(index) for index in range(len(self.claims))])
        invalid = [f"{pool.driver}/{pool.name}: {pool.invalid}" for pool in self.pools if pool.invalid]
        why = ("invalid resource pools were encountered: " + "; ".join(invalid) if invalid
               else "no devices on this node satisfy all requests together")
        return NodeAllocation(None, {str(claim["metadata"].get("name", "")): why for claim in self.claims})

    def read_constraints(self, claim: Obj) -> list[tuple[str, str, list[str]]]:
        found = []
        for raw in ((claim.get("spec") or {}).get("devices") or {}).get("constraints") or []:
            if raw.get("matchAttribute"):
                found.append(("match", str(raw["matchAttribute"]), list(raw.get("requests") or [])))
            elif raw.get("distinctAttribute"):
                if not self.distinct:
                    raise AllocationError(f"claim {claim['metadata'].get('name', '')}: distinctAttribute constraints "
                                          "are not supported with DRAConsumableCapacity, DRADeviceBindingConditions, "
                                          "DRAListTypeAttributes and DRADeviceCompatibilityGroups all off")
                found.append(("distinct", str(raw["distinctAttribute"]), list(raw.get("requests") or [])))
            else:
                raise AllocationError(f"claim {claim['metadata'].get('name', '')}: constraint with an unknown type")
        return found

    def next_claim(self, claim: int) -> bool:
        return claim == len(self.claims) or self.next_request(claim, 0)

    def next_request(self, claim: int, index: int) -> bool:
        if index == len(self.requests[claim]):
            return self.next_claim(claim + 1)
        for request in self.requests[claim][index]:  # firstAvailable: the first alternative that works wins
            if request.all:
                if self.listed[request] and self.take_all(request, claim, index):
                    return True
            elif self.take_some(request, claim, index, request.count, self.search_order()):
                return True
        return False

    def search_order(self) -> list[Device]:
        return [d for pool in self.pools if not pool.incomplete and not pool.invalid for d in self.devices_here(pool)]

    def take_all(self, request: Request, claim: int, index: int) -> bool:
        devices = self.listed[request]
        if len(self.picks[claim]) + len(devices) > MAX_RESULTS:
            return False
        added = 0
        for device in devices:
            if not self.try_add(request, device, claim, must=True):
                break
            added += 1
        if added == len(devices) and self.next_request(claim, index + 1):
            return True
        for _ in range(added):
            self.picks[claim].pop()
        return False

    def take_some(self, request: Request, claim: int, index: int, left: int, order: list[Device]) -> bool:
        """Choose `left` more devices from `order`, each after the one chosen before it (a set is tried once,
        not in every permutation: which sets work does not depend on the order they were added in)."""
        if left == 0:
            return self.next_request(claim, index + 1)
        if len(self.picks[claim]) + left > MAX_RESULTS:
            return False
        for position, device in enumerate(order):
            if self.busy(request, device, claim):
                continue
            if not self.selectable(request, device):
                continue
            if self.try_add(request, device, claim, must=False):
                if self.take_some(request, claim, index, left - 1, order[position + 1:]):
                    return True
                self.picks[claim].pop()
        return False

    def busy(self, request: Request, device: Device, claim: int) -> bool:
        """In use: held by an allocated or assumed claim or picked in this attempt; admin access only avoids
        taking one device twice in the same claim. A shared device (KEP-5075) is in use only when a result
        without a shareID holds it whole; its shares are a matter of capacity."""
        if self.shared(device):
            return not request.admin and device.key in self.in_use
        if any(p.device.key == device.key for p in self.picks[claim]):
            return True
        # D-4381-7: an earlier pick of this attempt holds the device for the rest of it, admin access too
        return not request.admin and (device.key in self.in_use or any(
            p.device.key == device.key for picks in self.picks for p in picks))

    def try_add(self, request: Request, device: Device, claim: int, must: bool) -> bool:
        if self.busy(request, device, claim):
            return False
        if device.raw.get("consumesCounters") and not self.partitionable:
            return False  # D-4381-17: refused only here, after its selectors ran (so their errors count)
        capacity = self.capacity_for(request, device)
        if capacity is False:
            return False
        # D-4381-13: admin access takes counters like any pick; a shared device takes them with its first share only.
        counted = not (self.shared(device) and self.has_share(device))
        if counted and not self.counters_left(device):
            return False
        if self.taints and self.blocked(request, device):
            return False
        if not request.admin and not self.compatible(device):
            return False
        for kind, attribute, names in self.constraints[claim]:
            if names and request.parent not in names and request.name not in names:
                continue
            if not self.constraint_holds(kind, attribute, names, device, claim):
                if must:
                    raise AllocationError(f"claim {self.claim_name(request)}, request {request.name}: device "
                                          f"{device.driver}/{device.pool}/{device.name} would break a constraint")
                return False
        self.picks[claim].append(Pick(request, device, capacity if isinstance(capacity, dict) else None, counted))
        return True

    # --- consumable capacity (KEP-5075) ------------------------------------------------------------------
    def shared(self, device: Device) -> bool:
        """Multi-allocatable for this scheduler: published so, with DRAConsumableCapacity on; otherwise a device
        like any other, allocated whole."""
        return self.consumable and device.multi

    def has_share(self, device: Device) -> bool:
        """Whether a new share takes no counters: the device has an allocated share (with or without
        consumedCapacity, D-4381-16), or this attempt chose a share already."""
        return device.key in self.shares or any(p.consumed is not None and p.device.key == device.key
                                                for picks in self.picks for p in picks)

    def capacity_for(self, request: Request, device: Device) -> dict[str, Fraction] | bool:
        """False when the device cannot take this request: a capacity asked for that it lacks or names twice, an
        amount its policy refuses or beyond its capacity, or (shared) not enough left beside the other shares.
        Else what a share consumes, or True for a device allocated whole."""
        if not self.consumable or (not request.amounts and not self.shared(device)):
            return True
        capacities = self.capacities_of(device)
        asked: dict[str, Fraction] = {}
        for name, amount in request.amounts:
            published = [own for own in capacities if _qualified(own, device.driver) == _qualified(name, device.driver)]
            if not published or published[0] in asked:
                return False
            asked[published[0]] = amount
        consumed: dict[str, Fraction] = {}
        for name, capacity in capacities.items():
            taken = capacity.consumed(asked.get(name))
            if taken is None:
                return False
            consumed[name] = taken
        if not self.shared(device):
            return True
        used: dict[str, Fraction] = dict(self.shares.get(device.key, {}))
        for picks in self.picks:
            for pick in picks:
                if pick.consumed is not None and pick.device.key == device.key:
                    for name, amount in pick.consumed.items():
                        qualified = _qualified(name, device.driver)
                        used[qualified] = used.get(qualified, Fraction(0)) + amount
        for name, amount in consumed.items():
            if used.get(_qualified(name, device.driver), Fraction(0)) + amount > capacities[name].value:
                return False
        return consumed

    def capacities_of(self, device: Device) -> dict[str, Capacity]:
        key = (device.key, device.slice["metadata"].get("resourceVersion", ""))
        if key not in self.capacity_cache:
            self.capacity_cache[key] = device.capacities()
        return self.capacity_cache[key]

    def constraint_holds(self, kind: str, attribute: str, names: list[str], device: Device, claim: int) -> bool:
        """A list-type attribute stands for the set of its items, a scalar for a set of one: matchAttribute
        needs one value every device under the constraint has, distinctAttribute no value two devices share."""
        mine = device.attribute(attribute)
        if mine is None:
            return False
        others = []
        raw_others = []
        lists = mine[0] in LIST_KINDS
        for pick in self.picks[claim]:
            if names and pick.request.parent not in names and pick.request.name not in names:
                continue
            theirs = pick.device.attribute(attribute)
            if theirs is not None:
                others.append(_items(theirs))
                raw_others.append(theirs)
                lists = lists or theirs[0] in LIST_KINDS
        if kind == "distinct" and not self.list_attributes and raw_others:
            # D-4381-15: without the gate distinctAttribute compares scalars of one type only; a list value
            # after the first device is a type it cannot compare, and a list taken earlier is never compared.
            if mine[0] in LIST_KINDS:
                return False
            return not any(_same_value(mine, theirs) for theirs in raw_others if theirs[0] not in LIST_KINDS)
        if kind == "match" and not self.list_attributes and others and lists:
            return False  # D-4381-10: without the gate a list value is a type matchAttribute cannot compare
        if kind == "match":
            return any(all(any(_same_value(value, other) for other in items) for items in others)
                       for value in _items(mine))
        return not any(_same_value(value, other) for items in others for other in items for value in _items(mine))

    def counters_left(self, device: Device) -> bool:
        """Every counter the device consumes minus what allocated devices of the pool and this attempt's picks
        consume stays at or above zero, and no counter of the pool is below zero already."""
        if not device.consumes():
            return True
        pool = self.node_pools[(device.driver, device.pool)]
        takers = [d for d in pool.devices if d.key in self.in_use or d.key in self.shares]
        takers += [p.device for picks in self.picks for p in picks
                   if p.counted and (p.device.driver, p.device.pool) == (device.driver, device.pool)]
        def left(set_name: str, counter: str) -> Fraction:
            return pool.counters.get(set_name, {}).get(counter, Fraction(0)) - sum(
                (used.get(counter, Fraction(0)) for taker in takers
                 for taken_set, used in taker.consumes() if taken_set == set_name), Fraction(0))

        # D-4381-14: a counter that held devices already over-commit blocks every device consuming counters in
        # the pool, whichever counter sets it consumes from.
        if any(left(set_name, counter) < 0 for set_name, counters in pool.counters.items() for counter in counters):
            return False
        return all(left(set_name, counter) >= amount
                   for set_name, counters in device.consumes() for counter, amount in counters.items())

    def blocked(self, request: Request, device: Device) -> bool:
        """An untolerated NoSchedule or NoExecute taint (None and unknown effects never block)."""
        taints = list(device.raw.get("taints") or [])
        taints += [rule["taint"] for rule in self.rules if _rule_selects(rule.get("deviceSelector"), device)]
        return any(taint.get("effect") in ("NoSchedule", "NoExecute")
                   and not any(_tolerates(t, taint) for t in request.tolerations)
                   for taint in taints)

    def compatible(self, device: Device) -> bool:
        """KEP-5963 (decisions #1, #2, #4): on every counter set the device consumes, the devices holding it
        (allocated ones by their snapshot, else group-less when still published; this attempt's picks by what
        they declare) must all have groups whose intersection meets the device's, or all have none when the
        device has none. Gate off: a set holding any grouped device takes nothing new."""
        for set_name, groups in device.groups():
            holding = self.holdings((device.driver, device.pool, set_name))
            grouped = [set(g) for g in holding if g]
            if self.compatibility == "skip":
                if grouped:
                    return False
                continue
            if grouped and len(grouped) != len(holding):
                return False  # mixed: only reachable through version skew; admits nothing
            if grouped and not set(groups).intersection(grouped[0].intersection(*grouped[1:])):
                return False
            if holding and not grouped and groups:
                return False
        return True

    def holdings(self, key: SetKey) -> list[tuple[str, ...]]:
        found: list[tuple[str, ...]] = []
        for result in self.held_results:
            driver, pool = str(result.get("driver", "")), str(result.get("pool", ""))
            if (driver, pool) != key[:2]:
                continue
            snapshot = result.get("compatibilityGroups")
            if snapshot:
                found.extend(tuple(map(str, groups or ())) for s, groups in snapshot.items() if s == key[2])
                continue
            published = [d for d in self.node_pools[key[:2]].devices if d.name == result.get("device")] \
                if key[:2] in self.node_pools else []
            if published:
                found.extend(() for s, _ in published[-1].consumes() if s == key[2])
        for picks in self.picks:
            for pick in picks:
                if not pick.request.admin and (pick.device.driver, pick.device.pool) == key[:2]:
                    found.extend(groups for s, groups in pick.device.groups() if s == key[2])
        return found

    # --- 4. the result ---------------------------------------------------------------------------------------
    def result(self, claim: int) -> Obj:
        results = []
        for pick in self.picks[claim]:
            entry: Obj = {"request": pick.request.name, "driver": pick.device.driver, "pool": pick.device.pool,
                          "device": pick.device.name}
            if pick.request.admin:
                entry["adminAccess"] = True
            if pick.consumed is not None:  # KEP-5075: a fresh share, and what it consumes
                capacities = self.capacities_of(pick.device)
                entry["shareID"] = str(uuid4())
                entry["consumedCapacity"] = {name: _quantity_text(amount, capacities[name].binary)
                                             for name, amount in pick.consumed.items()}
            if pick.request.tolerations:
                entry["tolerations"] = [dict(t) for t in pick.request.tolerations]
            if self.binding and pick.device.raw.get("bindingConditions"):
                entry["bindingConditions"] = list(pick.device.raw["bindingConditions"])
                entry["bindingFailureConditions"] = list(pick.device.raw.get("bindingFailureConditions") or [])
            declared = pick.device.groups()
            if self.compatibility == "enforce" and any(groups for _, groups in declared):
                entry["compatibilityGroups"] = {s: list(groups) for s, groups in declared}
            results.append(entry)
        devices: Obj = {"results": results}
        config = self.config(claim)
        if config:
            devices["config"] = config
        allocation: Obj = {"devices": devices}
        selector = self.node_selector(claim)
        if selector is not None:
            allocation["nodeSelector"] = selector
        return allocation

    def config(self, claim: int) -> list[Obj]:
        """Each used class's config once, naming the requests that used it, then the claim's configs that
        apply to an allocated request (or to all)."""
        # Grade D on purpose (radon): a plain transcription of how upstream assembles the config, kept in one piece.
        used: dict[str, tuple[Obj, list[str]]] = {}
        for pick in self.picks[claim]:
            class_name = pick.request.device_class["metadata"]["name"]
            names = used.setdefault(class_name, (pick.request.device_class, []))[1]
            if pick.request.name not in names:
                names.append(pick.request.name)
        config: list[Obj] = []
        for device_class, names in used.values():
            for entry in (device_class.get("spec") or {}).get("config") or []:
                config.append({"source": "FromClass", "requests": list(names), **_body(entry)})
        allocated = {p.request.name for p in self.picks[claim]} | {p.request.parent for p in self.picks[claim]}
        for entry in ((self.claims[claim].get("spec") or {}).get("devices") or {}).get("config") or []:
            wanted = list(entry.get("requests") or [])
            if wanted and not any(name in allocated for name in wanted):
                continue
            item: Obj = {"source": "FromClaim", **_body(entry)}
            if wanted:
                item["requests"] = wanted
            config.append(item)
        # As upstream 1.37: no `requests` on a config that reaches every top-level request, by the request's
        # own name or by the "req/sub" name of the alternative chosen for it.
        reaches: dict[str, set[str]] = {}
        for request in (self.claims[claim].get("spec") or {}).get("devices", {}).get("requests") or []:
            reaches[str(request["name"])] = {str(request["name"])}
        for p in self.picks[claim]:
            reaches.setdefault(p.request.parent, {p.request.parent}).add(p.request.name)
        for item in config:
            named = set(item.get("requests") or ())
            if named and all(names & named for names in reaches.values()):
                item.pop("requests")
        return config

    def node_selector(self, claim: int) -> Obj | None:
        """Pinned to the node for node-local devices (and bindsToNode with the binding gates); else the devices'
        selector terms merged into one; None when every device is usable everywhere."""
        picks = self.picks[claim]
        if any(p.device.placement.get("nodeName") or (self.binding and p.device.raw.get("bindsToNode"))
               for p in picks):
            pinned: Obj = pinned_to(str(self.node["metadata"]["name"]))
            return pinned
        expressions: list[Obj] = []
        fields: list[Obj] = []
        for pick in picks:
            selector = pick.device.placement.get("nodeSelector")
            if not selector:
                continue
            terms = selector.get("nodeSelectorTerms") or []
            if len(terms) != 1:
                raise AllocationError(f"device {pick.device.driver}/{pick.device.pool}/{pick.device.name}: node "
                                      f"selector has {len(terms)} terms, exactly one is supported")
            expressions.extend(r for r in terms[0].get("matchExpressions") or [] if r not in expressions)
            fields.extend(r for r in terms[0].get("matchFields") or [] if r not in fields)
        if not expressions and not fields:
            return None
        term: Obj = {}
        if expressions:
            term["matchExpressions"] = expressions
        if fields:
            term["matchFields"] = fields
        return {"nodeSelectorTerms": [term]}


def _generation(slice_: Obj) -> int:
    return int((slice_["spec"].get("pool") or {}).get("generation", 0))


def _amount(value: Any) -> Fraction:
    try:
        amount: Fraction = parse_quantity((value or {}).get("value", 0))
        return amount
    except ValueError:
        return Fraction(0)


def _same_value(left: AttributeValue, right: AttributeValue) -> bool:
    if left[0] != right[0]:
        return False
    if left[0] == "version":
        return bool(left[1].compare(right[1]) == 0)
    return bool(left[1] == right[1])


def _rule_selects(selector: object, device: Device) -> bool:
    """A DeviceTaintRule's selector: absent selects nothing, and each of driver, pool and device that is set
    must be the device's (so an empty selector selects every device)."""
    if not isinstance(selector, dict):
        return False
    wanted = {"driver": device.driver, "pool": device.pool, "device": device.name}
    return all(not selector.get(field) or selector[field] == value for field, value in wanted.items())


def _tolerates(toleration: Obj, taint: Obj) -> bool:
    """Node-taint matching as upstream's ToleratesTaint: effect (empty matches any), key (empty matches any),
    then Exists, or Equal with the same value (so an empty key with Equal tolerates taints without a value)."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    key, operator = toleration.get("key") or "", toleration.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    return operator == "Exists" or (toleration.get("value") or "") == (taint.get("value") or "")


def _items(value: AttributeValue) -> list[AttributeValue]:
    """The values of an attribute as constraints compare them: a list's items, or the scalar itself."""
    kind, raw = value
    return [(kind[:-1], item) for item in raw] if kind in LIST_KINDS else [value]


def _qualified(name: str, driver: str) -> str:
    """A capacity name with its domain: bare names belong to the publishing driver."""
    return name if "/" in name else f"{driver}/{name}"


def _quantity_text(amount: Fraction, binary: bool) -> str:
    """How Kubernetes writes an amount: whole numbers with the largest suffix that divides them exactly (binary
    suffixes only for a capacity written with one), fractions in milli, micro or nano units."""
    if amount.denominator != 1:
        for suffix, exponent in (("m", 3), ("u", 6), ("n", 9)):
            scaled = amount * 10**exponent
            if scaled.denominator == 1:
                return f"{scaled.numerator}{suffix}"
        return str(float(amount))
    whole = amount.numerator
    units = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)) if binary \
        else (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))
    for suffix, unit in units:
        if whole and whole % unit == 0:
            return f"{whole // unit}{suffix}"
    return str(whole)


def _body(entry: Obj) -> Obj:
    return {k: v for k, v in entry.items() if k not in ("requests", "source")}
