"""The columnar core's reading of claims and devices, apart from its frames: claims into request plans (with the
structural checks that make a claim unallocatable anywhere), node selectors, taint tolerations, device parsing,
and assembling `status.allocation` from the chosen devices (KEP-4381 "Allocation result"; KEP-5007
binding-condition copies; KEP-5055 tolerations; KEP-5075 shares, with what allocated shares consume and the
ledger a search adds shares to and takes them back from). The oracle does not use it: it transcribes the same rules on
its own, so the differential tests can catch a mistake here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any
from uuid import uuid4

from draconform.kube.cel import device_input
from draconform.kube.featuregates import FeatureGates
from draconform.kube.values import AttributeValue, parse_attribute, parse_quantity
from draconform.reference.allocator.capacity import (
    Capacity,
    CapacityError,
    add_usage,
    fits,
    format_amount,
    parse_capacity,
    share_consumption,
)
from draconform.reference.allocator.compatibility import Declared, Mode, declared_groups, declares_groups, snapshot
from draconform.reference.allocator.interface import AllocationError
from draconform.reference.nodeselector import pinned_to, selector_matches
from draconform.sut import Obj

MAX_DEVICES_PER_CLAIM = 32  # AllocationResultsMaxSize: results of one claim


@dataclass(frozen=True)
class Gates:
    """The scheduler gates the allocator looks at, read once."""

    prioritized_list: bool
    admin_access: bool
    taints: bool
    taint_rules: bool  # DRADeviceTaints and DRADeviceTaintRules: DeviceTaintRules add taints
    partitionable: bool
    binding: bool  # DRADeviceBindingConditions and DRAResourceClaimDeviceStatus
    consumable_capacity: bool
    compatibility_groups: bool
    compatibility: Mode  # KEP-5963: ignore (older scheduler), skip (gate off) or enforce (gate on)
    # Upstream runs its oldest ("stable") allocator only when no gate needs a newer one; that one refuses
    # distinctAttribute. Any of consumable capacity, binding conditions with device status, list-type
    # attributes or compatibility groups selects a newer allocator, which enforces it. The stable allocator also
    # ignores capacity.requests and shows CEL allowMultipleAllocations as false (D-4381-8), and it alone keeps
    # pools with binding-condition devices in name order (D-5007-8).
    stable_allocator: bool = False
    # DRAListTypeAttributes: with it off, matchAttribute compares scalars only (D-4381-10)
    list_attributes: bool = True

    @classmethod
    def of(cls, gates: FeatureGates) -> Gates:
        return cls(
            prioritized_list=gates.enabled("DRAPrioritizedList"),
            admin_access=gates.enabled("DRAAdminAccess"),
            taints=gates.enabled("DRADeviceTaints"),
            taint_rules=gates.enabled("DRADeviceTaints", "DRADeviceTaintRules"),
            partitionable=gates.enabled("DRAPartitionableDevices"),
            binding=gates.enabled("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
            consumable_capacity=gates.enabled("DRAConsumableCapacity"),
            compatibility_groups=gates.enabled("DRADeviceCompatibilityGroups"),
            compatibility=Mode.of(gates),
            stable_allocator=not gates.enabled("DRAConsumableCapacity")
            and not gates.enabled("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")
            and not gates.enabled("DRAListTypeAttributes") and not gates.enabled("DRADeviceCompatibilityGroups"),
            list_attributes=gates.enabled("DRAListTypeAttributes"),
        )


# ----- claims -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Alternative:
    """One way to satisfy a request: the request itself (`exactly`) or one of its `firstAvailable` entries."""

    claim_index: int
    request: str  # top-level request name
    sub: str | None  # subrequest name for firstAvailable
    class_name: str
    selectors: tuple[str, ...]  # the class's selectors first, then the request's
    all_mode: bool
    count: int
    admin_access: bool
    tolerations: tuple[Obj, ...]
    capacity: tuple[tuple[str, Fraction], ...] = ()  # KEP-5075 capacity.requests, as parsed quantities

    @property
    def name(self) -> str:
        """The name results and constraints use: "req" or "req/sub"."""
        return f"{self.request}/{self.sub}" if self.sub else self.request


@dataclass(frozen=True)
class Constraint:
    kind: str  # "match" or "distinct"
    attribute: str
    requests: frozenset[str]  # empty: every request of the claim

    def applies(self, alt: Alternative) -> bool:
        return not self.requests or alt.request in self.requests or alt.name in self.requests


@dataclass
class ClaimPlan:
    claim: Obj
    requests: list[list[Alternative]]  # per request, its alternatives in order of preference
    constraints: list[Constraint]
    class_configs: dict[str, list[Obj]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.claim.get("metadata", {}).get("name", ""))


def plan_claims(claims: Sequence[Obj], classes: Mapping[str, Obj], gates: Gates) -> list[ClaimPlan]:
    """Read each claim's requests and constraints, refusing what no node could allocate (AllocationError):
    a missing DeviceClass, a selector without CEL, a gated feature whose gate is off, more than 32 devices."""
    plans = []
    for index, claim in enumerate(claims):
        name = claim.get("metadata", {}).get("name", "")
        devices = (claim.get("spec") or {}).get("devices") or {}
        plan = ClaimPlan(claim, [], [])
        for request in devices.get("requests") or []:
            req_name = request.get("name", "")
            where = f"claim {name}, request {req_name}"
            if request.get("firstAvailable"):
                if not gates.prioritized_list:
                    raise AllocationError(f"{where}: firstAvailable is not enabled (feature gate DRAPrioritizedList)")
                alts = [_alternative(index, req_name, sub.get("name", ""), sub, classes, gates, plan,
                                     f"{where}/{sub.get('name', '')}", allow_admin=False)
                        for sub in request["firstAvailable"]]
            else:
                alts = [_alternative(index, req_name, None, request.get("exactly") or {}, classes, gates, plan, where,
                                     allow_admin=True)]
            plan.requests.append(alts)
        for raw in devices.get("constraints") or []:
            if raw.get("matchAttribute"):
                plan.constraints.append(Constraint("match", raw["matchAttribute"],
                                                   frozenset(raw.get("requests") or ())))
            elif raw.get("distinctAttribute"):
                if gates.stable_allocator:
                    raise AllocationError(f"claim {name}: distinctAttribute constraints are not supported with "
                                          "DRAConsumableCapacity, DRADeviceBindingConditions, "
                                          "DRAListTypeAttributes and DRADeviceCompatibilityGroups all off")
                plan.constraints.append(Constraint("distinct", raw["distinctAttribute"],
                                                   frozenset(raw.get("requests") or ())))
            else:
                raise AllocationError(f"claim {name}: constraint with an unknown type")
        plans.append(plan)
    return plans


def _alternative(index: int, request: str, sub: str | None, spec: Obj, classes: Mapping[str, Obj], gates: Gates,
                 plan: ClaimPlan, where: str, allow_admin: bool) -> Alternative:
    # Grade D on purpose (radon): one flat check per field of a request, each with its own error, in the order
    # upstream reports them; splitting it would only scatter that list.
    class_name = spec.get("deviceClassName") or ""
    if not class_name:
        raise AllocationError(f"{where}: no device class name")
    device_class = classes.get(class_name)
    if device_class is None:
        raise AllocationError(f"{where}: device class {class_name} does not exist")
    selectors: list[str] = []
    class_selectors = (device_class.get("spec") or {}).get("selectors")
    for selector in list(class_selectors or []) + list(spec.get("selectors") or []):
        expression = (selector.get("cel") or {}).get("expression")
        if expression is None:
            raise AllocationError(f"{where}: a selector has no CEL expression (unknown selector type)")
        selectors.append(expression)
    admin = bool(spec.get("adminAccess")) and allow_admin
    if admin and not gates.admin_access:
        raise AllocationError(f"{where}: admin access is not enabled (feature gate DRAAdminAccess)")
    capacity: list[tuple[str, Fraction]] = []
    # D-4381-8: upstream's stable allocator has no capacity requests at all, so it ignores them.
    if (spec.get("capacity") or {}).get("requests") and not gates.stable_allocator:
        if not gates.consumable_capacity:
            raise AllocationError(f"{where}: capacity requests are not enabled (feature gate DRAConsumableCapacity)")
        for capacity_name, amount in sorted(spec["capacity"]["requests"].items()):
            try:
                capacity.append((str(capacity_name), parse_quantity(amount)))
            except ValueError as exc:
                raise AllocationError(f"{where}: capacity request {capacity_name}: {exc}") from exc
    mode = spec.get("allocationMode") or "ExactCount"
    if mode not in ("ExactCount", "All"):
        raise AllocationError(f"{where}: unsupported allocation mode {mode}")
    count = int(spec.get("count") or 1) if mode == "ExactCount" else 0
    plan.class_configs.setdefault(class_name, list((device_class.get("spec") or {}).get("config") or []))
    return Alternative(index, request, sub, class_name, tuple(selectors), mode == "All", count, admin,
                       tuple(spec.get("tolerations") or ()), tuple(capacity))


def check_claim_size(plan: ClaimPlan, all_counts: Mapping[tuple[int, str], int]) -> None:
    """The smallest number of devices the claim can need must not exceed 32 (each request at its cheapest
    alternative; All requests count the devices they would take on this node)."""
    least = 0
    for alts in plan.requests:
        least += min(all_counts.get((alt.claim_index, alt.name), 0) if alt.all_mode else alt.count for alt in alts)
    if least > MAX_DEVICES_PER_CLAIM:
        raise AllocationError(f"claim {plan.name}: needs at least {least} devices, which exceeds the claim limit "
                              f"of {MAX_DEVICES_PER_CLAIM}")


# ----- nodes, taints ------------------------------------------------------------------------------------------

def node_selector_matches(selector: Obj | None, node: Obj) -> bool:
    """A slice's or device's core/v1 NodeSelector against a node (absent: no node)."""
    return selector is not None and selector_matches(selector, node)


def tolerates(tolerations: Sequence[Obj], taint: Obj) -> bool:
    """Whether one of the request's tolerations matches a device taint (the node-taint matching rules)."""
    for toleration in tolerations:
        effect = toleration.get("effect") or ""
        if effect and effect != taint.get("effect"):
            continue
        key = toleration.get("key") or ""
        if key and key != taint.get("key"):
            continue  # an empty key matches every key
        operator = toleration.get("operator") or "Equal"
        if operator == "Exists" or (toleration.get("value") or "") == (taint.get("value") or ""):
            return True  # an empty key with Equal tolerates the taints without a value (upstream ToleratesTaint)
    return False


def blocking_taints(taints: Sequence[Obj], tolerations: Sequence[Obj]) -> list[Obj]:
    """Taints that keep a request off a device: NoSchedule and NoExecute ones it does not tolerate (None and
    unknown effects never block)."""
    blocking = ("NoSchedule", "NoExecute")
    return [t for t in taints if t.get("effect") in blocking and not tolerates(tolerations, t)]


# ----- devices ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DeviceFacts:
    """What the allocator needs of one published device, parsed once."""

    driver: str
    pool: str
    name: str
    slice_name: str
    slice_version: str
    index: int  # position in its slice
    attributes: dict[str, AttributeValue]
    capacity: dict[str, Fraction]
    consumes: tuple[tuple[str, tuple[tuple[str, Fraction], ...]], ...]  # (counter set, ((counter, amount), ...))
    taints: tuple[Obj, ...]
    binding_conditions: tuple[str, ...]
    binding_failure_conditions: tuple[str, ...]
    binds_to_node: bool
    has_compatibility_groups: bool
    node_name: str | None  # where the device is usable: exactly one of these three
    node_selector: Obj | None
    all_nodes: bool
    compatibility_groups: Declared = ()  # KEP-5963: (counter set, groups) per consumesCounters entry
    allow_multiple: bool = False  # KEP-5075 allowMultipleAllocations, as published
    capacities: dict[str, Capacity] = field(default_factory=dict)  # with their request policies

    @property
    def key(self) -> tuple[str, str, str]:
        return self.driver, self.pool, self.name

    @property
    def cel_key(self) -> tuple[str, str, str, str, str]:
        return self.driver, self.pool, self.slice_name, self.slice_version, self.name

    def cel_input(self, multiple_shown: bool = True) -> dict[str, Any]:
        """The CEL `device`; `multiple_shown` False for upstream's stable allocator, whose CEL input has no
        allowMultipleAllocations (it reads false, D-4381-8)."""
        built: dict[str, Any] = device_input(self.driver, self.attributes, self.capacity,
                                             self.allow_multiple and multiple_shown)
        return built


# ----- DeviceTaintRules ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DeviceTaints:
    """The effective taints of a device: those its driver published in the slice, then the taint of every
    DeviceTaintRule whose selector matches it (the same effect as if the driver had published it). Both cores
    ask this one place; with DRADeviceTaintRules off there are no rules."""

    rules: tuple[Obj, ...] = ()

    @classmethod
    def read(cls, store: Any, gates: Gates) -> DeviceTaints:
        return cls(tuple(store.list("DeviceTaintRule"))) if gates.taint_rules else cls()

    def of(self, device: DeviceFacts) -> tuple[Obj, ...]:
        added = tuple(spec["taint"] for spec in (rule.get("spec") or {} for rule in self.rules)
                      if isinstance(spec.get("taint"), dict) and _selects(spec.get("deviceSelector"), device))
        return device.taints + added if added else device.taints


def _selects(selector: Any, device: DeviceFacts) -> bool:
    """A rule without a selector matches no device; each field set must equal the device's."""
    if not isinstance(selector, dict):
        return False
    return all(not selector.get(field) or selector[field] == value
               for field, value in (("driver", device.driver), ("pool", device.pool), ("device", device.name)))


def parse_device(spec: Obj, slice_name: str, slice_version: str, index: int, raw: Obj) -> DeviceFacts:
    """One entry of `spec.devices`; node selection comes from the slice, or from the device itself when the
    slice sets perDeviceNodeSelection."""
    attributes: dict[str, AttributeValue] = {}
    for name, value in (raw.get("attributes") or {}).items():
        parsed = parse_attribute(value)
        if parsed is not None:
            attributes[name] = parsed
    capacity: dict[str, Fraction] = {}
    capacities: dict[str, Capacity] = {}
    for name, value in (raw.get("capacity") or {}).items():
        try:
            capacities[name] = parse_capacity(value)
        except CapacityError:
            continue
        capacity[name] = capacities[name].value
    consumes = []
    declared = declared_groups(raw.get("consumesCounters") or [])
    for consumption in raw.get("consumesCounters") or []:
        counters = tuple((c, _quantity((v or {}).get("value", 0)))
                         for c, v in (consumption.get("counters") or {}).items())
        consumes.append((str(consumption.get("counterSet", "")), counters))
    where = raw if spec.get("perDeviceNodeSelection") else spec
    return DeviceFacts(
        driver=str(spec.get("driver", "")),
        pool=str((spec.get("pool") or {}).get("name", "")),
        name=str(raw.get("name", "")),
        slice_name=slice_name,
        slice_version=slice_version,
        index=index,
        attributes=attributes,
        capacity=capacity,
        consumes=tuple(consumes),
        taints=tuple(raw.get("taints") or ()),
        binding_conditions=tuple(raw.get("bindingConditions") or ()),
        binding_failure_conditions=tuple(raw.get("bindingFailureConditions") or ()),
        binds_to_node=bool(raw.get("bindsToNode")),
        has_compatibility_groups=declares_groups(declared),
        compatibility_groups=declared,
        node_name=where.get("nodeName") or None,
        node_selector=where.get("nodeSelector") or None,
        all_nodes=bool(where.get("allNodes")),
        allow_multiple=raw.get("allowMultipleAllocations") is True,
        capacities=capacities,
    )


def _quantity(value: Any) -> Fraction:
    try:
        amount: Fraction = parse_quantity(value)
        return amount
    except ValueError:
        return Fraction(0)


# ----- results ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Pick:
    alt: Alternative
    device: DeviceFacts
    consumed: tuple[tuple[str, Fraction], ...] | None = None  # a share of a multi-allocatable device (KEP-5075)


def build_allocation(plan: ClaimPlan, picks: Sequence[Pick], node: Obj, gates: Gates) -> Obj:
    """`status.allocation` for one claim from its chosen devices, in the order they were chosen."""
    results = []
    for pick in picks:
        result: Obj = {"request": pick.alt.name, "driver": pick.device.driver, "pool": pick.device.pool,
                       "device": pick.device.name}
        if pick.alt.admin_access:
            result["adminAccess"] = pick.alt.admin_access
        if pick.alt.tolerations:
            result["tolerations"] = [dict(t) for t in pick.alt.tolerations]
        device = pick.device
        if gates.binding and device.binding_conditions:
            result["bindingConditions"] = list(device.binding_conditions)
            result["bindingFailureConditions"] = list(device.binding_failure_conditions)
        if pick.consumed is not None:  # KEP-5075: a fresh share of the device and what it consumes
            result["shareID"] = str(uuid4())
            result["consumedCapacity"] = {name: format_amount(amount, pick.device.capacities[name].binary)
                                          for name, amount in pick.consumed}
        taken = snapshot(pick.device.compatibility_groups) if gates.compatibility is Mode.ENFORCE else None
        if taken is not None:  # D-5963-2: the groups as declared at allocation time
            result["compatibilityGroups"] = taken
        results.append(result)
    devices: Obj = {"results": results}
    config = _configs(plan, picks)
    if config:
        devices["config"] = config
    allocation: Obj = {"devices": devices}
    selector = allocation_node_selector(picks, node, gates)
    if selector is not None:
        allocation["nodeSelector"] = selector
    return allocation


def _configs(plan: ClaimPlan, picks: Sequence[Pick]) -> list[Obj]:
    """Class configs once per class (with the requests that use the class), then the claim's configs that
    apply to an allocated request or to all of them; `requests` is left out where it names them all."""
    claim_config = (plan.claim.get("spec", {}).get("devices") or {}).get("config") or []
    if not claim_config and not any(plan.class_configs.values()):
        return []
    used_by: dict[str, list[str]] = {}
    for pick in picks:
        names = used_by.setdefault(pick.alt.class_name, [])
        if pick.alt.name not in names:
            names.append(pick.alt.name)
    config: list[Obj] = []
    for class_name, requests in used_by.items():
        for entry in plan.class_configs.get(class_name, []):
            config.append({"source": "FromClass", "requests": list(requests), **_config_body(entry)})
    allocated = {pick.alt.name for pick in picks} | {pick.alt.request for pick in picks}
    for entry in claim_config:
        wanted = list(entry.get("requests") or [])
        if not wanted or any(name in allocated for name in wanted):
            item: Obj = {"source": "FromClaim", **_config_body(entry)}
            if wanted:
                item["requests"] = wanted
            config.append(item)
    return _omit_requests_covering_all(config, plan.claim, {pick.alt.request: pick.alt.name for pick in picks})


def _omit_requests_covering_all(config: list[Obj], claim: Obj, chosen: dict[str, str]) -> list[Obj]:
    """Upstream 1.37 leaves `requests` out of a config that covers every top-level request of the claim
    (empty means all): a request is covered by its own name or by the name of its chosen subrequest."""
    top_level = [str(r.get("name")) for r in (claim.get("spec", {}).get("devices") or {}).get("requests") or []]
    for item in config:
        names = set(item.get("requests") or ())
        reaches_all = all(r in names or chosen.get(r, r) in names for r in top_level)
        if names and top_level and reaches_all:
            del item["requests"]
    return config


def _config_body(entry: Obj) -> Obj:
    return {k: v for k, v in entry.items() if k not in ("requests", "source")}


def allocation_node_selector(picks: Sequence[Pick], node: Obj, gates: Gates) -> Obj | None:
    """Pinned to the node when any device is node-local (or binds to its node); otherwise the devices' selector
    terms merged into one; None when every device is usable everywhere."""
    node_name = str((node.get("metadata") or {}).get("name", ""))
    binds_to_node = gates.binding
    if any(
            p.device.node_name is not None or (binds_to_node and p.device.binds_to_node) for p in picks):
        pinned: Obj = pinned_to(node_name)
        return pinned
    expressions: list[Obj] = []
    fields: list[Obj] = []
    for pick in picks:
        if pick.device.node_selector is None:
            continue
        terms = pick.device.node_selector.get("nodeSelectorTerms") or []
        if len(terms) != 1:
            raise AllocationError(f"device {pick.device.driver}/{pick.device.pool}/{pick.device.name}: node selector "
                                  f"has {len(terms)} terms, exactly one is supported")
        for req in terms[0].get("matchExpressions") or []:
            if req not in expressions:
                expressions.append(req)
        for req in terms[0].get("matchFields") or []:
            if req not in fields:
                fields.append(req)
    if not expressions and not fields:
        return None
    term: Obj = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


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


def failure_reason(plan: ClaimPlan, candidates: Callable[[Alternative], int]) -> str:
    """Why a claim did not fit on a node: the first request without enough matching devices, else a summary.
    `candidates` counts the devices an alternative may take there (in use or not)."""
    for alts in plan.requests:
        counts = [candidates(alt) for alt in alts]
        if all(n == 0 or (not a.all_mode and n < a.count) for a, n in zip(alts, counts, strict=True)):
            alt = alts[0]
            need = "at least one" if alt.all_mode else str(alt.count)
            return (f"request {alt.request}: needs {need} matching device(s) of class {alt.class_name}, "
                    f"{counts[0]} match on this node")
    return ("cannot allocate all claims: matching devices are in use, their counters are exhausted, or the "
            "constraints cannot be met together")
