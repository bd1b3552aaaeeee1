"""Published devices as the allocation core reads them (KEP-4381 "ResourceSlice"): a device's facts parsed once
(`DeviceFacts`, `parse_device`: attributes, capacity, counters consumed, KEP-5007 binding conditions, KEP-5963
groups, where it is usable), node selectors, and taints (KEP-5055: published, added by DeviceTaintRules, and the
tolerations that let a request past them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from draconform.kube.cel import device_input
from draconform.kube.values import AttributeValue, parse_attribute, parse_quantity
from draconform.reference.allocator.capacity import Capacity, CapacityError, parse_capacity
from draconform.reference.allocator.compatibility import Declared, declared_groups, declares_groups
from draconform.reference.allocator.gates import Gates
from draconform.reference.nodeselector import selector_matches
from draconform.sut import Obj

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
