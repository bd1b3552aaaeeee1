"""Validation rules a JSON Schema cannot express: one-of choices across fields, uniqueness by name,
limits that depend on other fields or on the Kubernetes release, cross-references between requests,
CEL compilation, and rules about updates. Each problem carries its catalogue rule ID
(features/api-validation/rules.yaml). Schemas have already checked types, so every accessor here is
defensive: a wrongly typed field is skipped, never crashes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator, Iterator
from fractions import Fraction
from functools import cache
from typing import Any

from draconform.kube.featuregates import FeatureGates, release_tuple
from draconform.kube.values import parse_quantity
from draconform.validation.celcost import MAX_COST as MAX_CEL_COST
from draconform.validation.celcost import CostError, checked_cost
from draconform.validation.pod import TEMPLATES, pod_rules
from draconform.validation.pod import template_rules as workload_rules
from draconform.validation.problems import MapKey, Path, Problem

Obj = dict[str, Any]
MAX_DEVICES_ADVANCED = 64
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUES = 48  # from 1.36, when list-type attributes arrived; a list counts each of its items
LIST_FORMS = ("ints", "bools", "strings", "versions")
MAX_OPAQUE_BYTES = 10 * 1024
MAX_COUNTER_SETS = 8
MAX_CONSUMPTIONS = 2
# Kubernetes 1.34's partitionable-device limits, replaced in 1.35
MAX_COUNTERS_PER_SLICE_1_34 = 32
MAX_COUNTERS_PER_DEVICE_1_34 = 32
MAX_CONSUMED_COUNTERS_PER_SLICE_1_34 = 1024
MAX_TAINTS_1_34 = 4


def _dicts(value: Any) -> Iterator[tuple[int, Obj]]:
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield index, item


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _set(obj: Obj, field: str) -> bool:
    return obj.get(field) is not None


def _from_1_35(gates: FeatureGates) -> bool:
    return release_tuple(gates.release) >= (1, 35)


@cache
def compile_selector(expression: str, consumable_capacity: bool = True,
                     selector: bool = True, includes: bool = True) -> tuple[str | None, bool, int | None]:
    """How kube-apiserver compiles a selector in the DRA CEL environment of the given gates: (why it does not
    compile or None, whether that reason is only draconform's CEL library lacking what upstream has, the estimated
    worst-case cost of the checked expression). The allocator compiles with the same environment
    (draconform/kube/cel/), so what validation accepts the allocator can evaluate."""
    from draconform.kube.cel import CelError, CelFeatures, CelUnsupported, check

    try:
        compiled = check(expression, CelFeatures(consumable_capacity, includes), selector)
    except CelUnsupported as exc:
        return exc.reason, True, None
    except CelError as exc:
        return exc.reason, False, None
    try:
        return None, False, checked_cost(compiled.checked)
    except CostError:
        return None, False, None


def _duplicates(items: list[tuple[Path, Any]], rule: str) -> Iterator[Problem]:
    """Each repeated key at the path given with it: for a list of keyed items kube-apiserver's validateSet names
    the repeated item (`spec.devices[1]`), not the key field in it."""
    seen: set[Any] = set()
    for path, key in items:
        if not isinstance(key, (str, int, tuple)):
            continue  # missing or mistyped: the schema reports it
        if key in seen:
            yield Problem(path, f"Duplicate value: {json.dumps(key) if isinstance(key, str) else key}", rule)
        seen.add(key)


# --- shared pieces ---------------------------------------------------------------------------------
def _binding_conditions(entry: Obj, path: Path) -> Iterator[Problem]:
    """KEP-5007 lists on a device or an allocation result: disjoint, and set together or not at all."""
    conditions = entry.get("bindingConditions")
    failures = entry.get("bindingFailureConditions")
    if isinstance(conditions, list) and isinstance(failures, list):
        overlap = set(map(str, conditions)) & set(map(str, failures))
        for index, item in enumerate(failures):
            if str(item) in overlap:
                yield Problem((*path, "bindingFailureConditions", index),
                              f"Invalid value: {json.dumps(item)}: must not also be a binding condition",
                              "DRA-API/BINDING-CONDITIONS-DISJOINT")
    if bool(conditions) != bool(failures):
        present, missing = ("bindingConditions", "bindingFailureConditions") if conditions else (
            "bindingFailureConditions", "bindingConditions")
        yield Problem((*path, missing), f"Invalid value: null: required when `{present}` is set",
                      "DRA-API/BINDING-CONDITIONS-TOGETHER")


def _selectors(selectors: Any, path: Path, gates: FeatureGates) -> Iterator[Problem]:
    from draconform.kube.cel import has_includes

    consumable_capacity = gates.enabled("DRAConsumableCapacity")
    includes = has_includes(gates)  # 1.36 declares includes() only with DRAListTypeAttributes on
    for index, selector in _dicts(selectors):
        cel = selector.get("cel")
        expression = cel.get("expression") if isinstance(cel, dict) else None
        if not isinstance(expression, str) or not expression:
            continue
        where = (*path, index, "cel", "expression")
        error, unsupported, cost = compile_selector(expression, consumable_capacity, includes=includes)
        if unsupported:
            yield Problem(where, f"not checked: {error}; kube-apiserver accepts it", "DRA-API/CEL-COMPILES", "warning")
        elif error:
            yield Problem(where, f"Invalid value: {json.dumps(expression)}: {error}", "DRA-API/CEL-COMPILES")
        elif cost is not None and cost > MAX_CEL_COST:
            yield Problem(where, f"Forbidden: too complex: estimated worst-case cost {cost:,} exceeds the limit of "
                                 f"{MAX_CEL_COST:,}", "DRA-API/CEL-COST")


def _derived_attributes(entries: Any, path: Path, gates: FeatureGates) -> Iterator[Problem]:
    """Each derived attribute's expression compiles in the DRA CEL environment (to a value of any type)."""
    rule = "DRA-API/DERIVED-ATTRIBUTES"
    for index, entry in _dicts(entries):
        expression = entry.get("expression")
        if not isinstance(expression, str) or not expression:
            continue
        where = (*path, index, "expression")
        error, unsupported, _ = compile_selector(expression, gates.enabled("DRAConsumableCapacity"), False)
        if unsupported:
            yield Problem(where, f"not checked: {error}; kube-apiserver accepts it", rule, "warning")
        elif error:
            yield Problem(where, f"Invalid value: {json.dumps(expression)}: {error}", rule)


def _opaque(config: Any, path: Path) -> Iterator[Problem]:
    for index, entry in _dicts(config):
        opaque = entry.get("opaque")
        parameters = opaque.get("parameters") if isinstance(opaque, dict) else None
        if isinstance(parameters, dict):
            size = len(json.dumps(parameters, separators=(",", ":")).encode("utf-8"))
            if size > MAX_OPAQUE_BYTES:
                yield Problem((*path, index, "opaque", "parameters"),
                              f"Too long: {size} bytes: may not be more than {MAX_OPAQUE_BYTES} bytes",
                              "DRA-API/CONFIG-OPAQUE")


def _skipped_operations(entry: Obj, path: Path) -> Iterator[Problem]:
    """KEP-5945 on a slice or an allocation result: the kubelet may skip unprepare alone, never prepare
    alone (a prepared device must be unprepared)."""
    operations = entry.get("skipNodeOperations")
    if not isinstance(operations, list):
        return
    named = {item for item in operations if isinstance(item, str)}
    if "NodePrepareResources" in named and not named & {"NodeUnprepareResources", "*"}:
        yield Problem((*path, "skipNodeOperations"),
                      'Invalid value: "NodePrepareResources" may only be skipped together with '
                      '"NodeUnprepareResources" (or "*")', "DRA-API/SKIP-NODE-OPERATIONS-PREPARE-WITH-UNPREPARE")


# --- ResourceSlice ---------------------------------------------------------------------------------
_NODE_FIELDS = ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")


def slice_rules(obj: Obj, old: Obj | None, gates: FeatureGates) -> Iterator[Problem]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    path: Path = ("spec",)
    yield from _slice_identity(spec, (old or {}).get("spec"))
    chosen = [field for field in _NODE_FIELDS if _set(spec, field)]
    if len(chosen) != 1:
        what = "Required value" if not chosen else f"Invalid value: {', '.join(chosen)} are all set"
        yield Problem(path, f"{what}: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                            "`perDeviceNodeSelection` is required", "DRA-API/SLICE-NODE-SELECTION-ONE-OF")
    devices = _list(spec.get("devices"))
    counter_sets = _list(spec.get("sharedCounters"))
    if devices and counter_sets and _from_1_35(gates):
        yield Problem(path, "Invalid value: only one of `devices` and `sharedCounters` may be set "
                            "(Kubernetes 1.35 and later)", "DRA-API/SLICE-DEVICES-OR-COUNTERS")
    yield from _duplicates([((*path, "devices", i), d.get("name")) for i, d in _dicts(devices)],
                           "DRA-API/SLICE-DEVICE-NAMES-UNIQUE")
    advanced = any(d.get("taints") or d.get("consumesCounters") or _has_list_attribute(d) for _, d in _dicts(devices))
    if advanced and len(devices) > MAX_DEVICES_ADVANCED and _from_1_35(gates):
        yield Problem((*path, "devices"), f"Too many: {len(devices)}: must have at most {MAX_DEVICES_ADVANCED} "
                                           "items when any device has taints, consumes counters or has list-type "
                                           "attributes", "DRA-API/SLICE-MAX-DEVICES")
    per_device = spec.get("perDeviceNodeSelection") is True
    consumed_total = 0
    for index, device in _dicts(devices):
        consumed_total += yield from _device_rules(device, (*path, "devices", index), gates, per_device)
    if not _from_1_35(gates) and consumed_total > MAX_CONSUMED_COUNTERS_PER_SLICE_1_34:
        yield Problem((*path, "devices"), f"Too many: {consumed_total}: the devices of a slice may consume at "
                                           f"most {MAX_CONSUMED_COUNTERS_PER_SLICE_1_34} counters in total "
                                           "(Kubernetes 1.34)", "DRA-API/DEVICE-CONSUMED-COUNTERS")
    yield from _counter_set_rules(counter_sets, (*path, "sharedCounters"), gates)
    yield from _partition_type(spec, devices, path)
    yield from _skipped_operations(spec, path)


def _has_list_attribute(device: Obj) -> bool:
    return any(isinstance(value, dict) and any(form in value for form in LIST_FORMS)
               for value in _dict(device.get("attributes")).values())


def _attribute_key(attributes: dict[str, Any], driver: Any, full_name: str) -> str | None:
    """Where a device holds the fully qualified attribute `full_name`: under that name, or under the bare
    name when the domain is the slice's driver (as constraints look attributes up)."""
    if full_name in attributes:
        return full_name
    domain, _, ident = full_name.rpartition("/")
    return ident if domain == driver and ident in attributes else None


def _partition_type(spec: Obj, devices: list[Any], path: Path) -> Iterator[Problem]:
    """partitionTypeAttribute names the string attribute that tells the partition types of the devices
    sharing counters apart: it makes sense only beside such devices, and each of them carries it."""
    name = spec.get("partitionTypeAttribute")
    if not isinstance(name, str) or not name:
        return
    consuming = [(index, device) for index, device in _dicts(devices) if device.get("consumesCounters")]
    if not consuming:
        yield Problem((*path, "partitionTypeAttribute"),
                      f"Invalid value: {json.dumps(name)}: only allowed when a device of the slice consumes counters",
                      "DRA-API/PARTITION-TYPE-ATTRIBUTE-NEEDS-COUNTERS")
        return
    for index, device in consuming:
        attributes = _dict(device.get("attributes"))
        key = _attribute_key(attributes, spec.get("driver"), name)
        if key is None:
            yield Problem((*path, "devices", index, "attributes", MapKey(name)),
                          "Required value: a device that consumes counters must have the attribute "
                          "`spec.partitionTypeAttribute` names", "DRA-API/PARTITION-TYPE-ATTRIBUTE-ON-DEVICES")
        elif not isinstance(_dict(attributes[key]).get("string"), str):  # named by its full name, as upstream does
            yield Problem((*path, "devices", index, "attributes", MapKey(name)),
                          "Invalid value: must be a string attribute, as `spec.partitionTypeAttribute` names it",
                          "DRA-API/PARTITION-TYPE-ATTRIBUTE-ON-DEVICES")


def _counter_set_rules(counter_sets: list[Any], path: Path, gates: FeatureGates) -> Iterator[Problem]:
    if _from_1_35(gates):
        if len(counter_sets) > MAX_COUNTER_SETS:
            yield Problem(path, f"Too many: {len(counter_sets)}: must have at most {MAX_COUNTER_SETS} items",
                          "DRA-API/SLICE-MAX-COUNTER-SETS")
    else:
        total = sum(len(s["counters"]) for _, s in _dicts(counter_sets) if isinstance(s.get("counters"), dict))
        if total > MAX_COUNTERS_PER_SLICE_1_34:
            yield Problem(path, f"Too many: {total}: the counter sets of a slice may hold at most "
                                f"{MAX_COUNTERS_PER_SLICE_1_34} counters in total (Kubernetes 1.34)",
                          "DRA-API/SLICE-MAX-COUNTER-SETS")
    yield from _duplicates([((*path, i), s.get("name")) for i, s in _dicts(counter_sets)],
                           "DRA-API/COUNTER-SET-NAMES")


def _device_rules(device: Obj, path: Path, gates: FeatureGates,
                  per_device: bool) -> Generator[Problem, None, int]:
    """Returns (as the generator's value) how many counters the device consumes, for 1.34's slice total."""
    yield from _device_sizes(device, path)
    yield from _node_allocatable(device, path)
    yield from _node_allocatable_mappings(device, path)
    yield from _capacity_policies(device, path, gates)
    consumed = yield from _counter_consumptions(device, path, gates)
    taints = device.get("taints")
    if not _from_1_35(gates) and isinstance(taints, list) and len(taints) > MAX_TAINTS_1_34:
        yield Problem((*path, "taints"), f"Too many: {len(taints)}: must have at most {MAX_TAINTS_1_34} items "
                                          "(Kubernetes 1.34)", "DRA-API/DEVICE-MAX-TAINTS")
    yield from _binding_conditions(device, path)
    yield from _device_node_selection(device, path, per_device)
    return consumed


def _device_sizes(device: Obj, path: Path) -> Iterator[Problem]:
    """The device's bounds on attributes and capacities together, and on attribute values."""
    attributes = _dict(device.get("attributes"))
    capacity = _dict(device.get("capacity"))
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITIES:
        yield Problem(path, f"Invalid value: {len(attributes) + len(capacity)}: the total number of attributes and "
                            f"capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}",
                      "DRA-API/DEVICE-MAX-ATTRIBUTES-CAPACITIES")
    values = sum(len(value) if form in LIST_FORMS and isinstance(value, list) else 1
                 for entry in attributes.values() if isinstance(entry, dict) for form, value in entry.items())
    if values > MAX_ATTRIBUTE_VALUES:
        yield Problem(path, f"Invalid value: {values}: the total number of attribute values (every item of a "
                            f"list-type attribute counting) must not exceed {MAX_ATTRIBUTE_VALUES}",
                      "DRA-API/DEVICE-MAX-ATTRIBUTE-VALUES")


def _capacity_policies(device: Obj, path: Path, gates: FeatureGates) -> Iterator[Problem]:
    """A capacity's request policy (KEP-5075): only on a device allowing multiple allocations, then well formed."""
    for name, entry in _dict(device.get("capacity")).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("requestPolicy"), dict):
            continue
        where = (*path, "capacity", MapKey(name), "requestPolicy")
        if device.get("allowMultipleAllocations") is not True:
            yield Problem(where, "Forbidden: only allowed when `allowMultipleAllocations` is true",
                          "DRA-API/CAPACITY-REQUEST-POLICY")
        else:
            yield from _request_policy(entry, where, gates)


def _counter_consumptions(device: Obj, path: Path, gates: FeatureGates) -> Generator[Problem, None, int]:
    """The bound on `consumesCounters` (its items from 1.35, the counters in them before) and distinct counter
    sets; returns how many counters the device consumes."""
    consumptions = _list(device.get("consumesCounters"))
    consumed = sum(len(c["counters"]) for _, c in _dicts(consumptions) if isinstance(c.get("counters"), dict))
    if _from_1_35(gates):
        if len(consumptions) > MAX_CONSUMPTIONS:
            yield Problem((*path, "consumesCounters"),
                          f"Too many: {len(consumptions)}: must have at most {MAX_CONSUMPTIONS} items",
                          "DRA-API/DEVICE-COUNTER-CONSUMPTIONS")
    elif consumed > MAX_COUNTERS_PER_DEVICE_1_34:
        yield Problem((*path, "consumesCounters"),
                      f"Too many: {consumed}: a device may consume at most {MAX_COUNTERS_PER_DEVICE_1_34} counters "
                      "in total (Kubernetes 1.34)", "DRA-API/DEVICE-CONSUMED-COUNTERS")
    yield from _duplicates([((*path, "consumesCounters", i), c.get("counterSet"))
                            for i, c in _dicts(consumptions)], "DRA-API/DEVICE-COUNTER-CONSUMPTIONS")
    return consumed


def _device_node_selection(device: Obj, path: Path, per_device: bool) -> Iterator[Problem]:
    """Exactly one of the device's node fields with `perDeviceNodeSelection`, none without it."""
    chosen = [field for field in ("nodeName", "nodeSelector", "allNodes") if _set(device, field)]
    if per_device and len(chosen) != 1:
        yield Problem(path, ("Required value" if not chosen else f"Invalid value: {', '.join(chosen)} are all set")
                      + ": exactly one of `nodeName`, `nodeSelector`, `allNodes` is required when "
                        "`perDeviceNodeSelection` is true", "DRA-API/DEVICE-NODE-SELECTION")
    if not per_device and chosen:  # kube-apiserver names the device, whichever of the fields is set
        yield Problem(path, f"Invalid value: {', '.join(chosen)}: only allowed when `spec.perDeviceNodeSelection` is "
                            "true", "DRA-API/DEVICE-NODE-SELECTION")


def _quantity(value: Any) -> Fraction | None:
    try:
        return parse_quantity(value) if value is not None else None
    except ValueError:
        return None  # the schema reports a malformed quantity


def _request_policy(capacity: Obj, path: Path, gates: FeatureGates) -> Iterator[Problem]:
    """KEP-5075: one kind of policy; a default that the policy allows; every bound within the capacity;
    validValues sorted and unique; a range's default and max on its step grid."""
    policy, total = capacity["requestPolicy"], _quantity(capacity.get("value"))
    values, valid_range = policy.get("validValues"), policy.get("validRange")
    default = _quantity(policy.get("default"))
    if values and valid_range is not None:
        yield Problem(path, "Forbidden: exactly one policy can be specified, not both `validValues` and "
                            "`validRange`", "DRA-API/CAPACITY-REQUEST-POLICY-ONE-OF")
        return
    if (values or isinstance(valid_range, dict)) and not _set(policy, "default"):
        yield Problem((*path, "default"), "Required value: required when `validValues` or `validRange` is set",
                      "DRA-API/CAPACITY-REQUEST-POLICY-ONE-OF")
    if total is None:
        return
    if isinstance(values, list) and values:
        rule = "DRA-API/CAPACITY-REQUEST-POLICY-VALUES"
        amounts = [_quantity(v) for v in values]
        for index, amount in enumerate(amounts):
            where = (*path, "validValues", index)
            if amount is None:
                continue
            if index and amounts[index - 1] is not None and amounts[index - 1] > amount:  # type: ignore[operator]
                yield Problem(where, f"Invalid value: {values[index]}: values must be sorted in ascending order", rule)
            if amount in amounts[:index]:
                yield Problem(where, f"Duplicate value: {values[index]}", rule)
            if amount > total:
                yield Problem(where, f"Invalid value: {values[index]}: larger than the capacity value "
                                     f"{capacity.get('value')}", rule)
        if default is not None and default not in amounts:
            yield Problem((*path, "validValues"), f"Invalid value: the default {policy.get('default')} is not "
                                                  "one of the valid values", rule)
    if isinstance(valid_range, dict):
        yield from _request_range(valid_range, default, total, (*path, "validRange"), gates)


def _request_range(valid_range: Obj, default: Fraction | None, total: Fraction, path: Path,
                   gates: FeatureGates) -> Iterator[Problem]:
    """A default outside the range is reported at the bound it crosses until 1.36, at `validRange.default` from
    1.37 (kube-apiserver moved it there)."""
    rule = "DRA-API/CAPACITY-REQUEST-POLICY-RANGE"
    outside = "default" if release_tuple(gates.release) >= (1, 37) else None
    low, high, step = (_quantity(valid_range.get(k)) for k in ("min", "max", "step"))
    if low is None:
        return
    bounds: list[tuple[str, bool, str]] = [
        ("min", low > total, "min is larger than the capacity value"),
        (outside or "min", default is not None and default < low, "the default is less than min"),
    ]
    if high is not None:
        bounds += [("max", low > high, "min is larger than max"),
                   ("max", high > total, "max is larger than the capacity value"),
                   (outside or "max", default is not None and default > high, "the default is more than max")]
    if step is not None and step > 0:
        bounds += [("step", low + step > total, "min plus one step is larger than the capacity value"),
                   ("step", default is not None and (default - low) % step != 0,
                    "the default is not min plus a whole number of steps"),
                   ("step", high is not None and (high - low) % step != 0,
                    "max is not min plus a whole number of steps")]
    for field, broken, message in bounds:
        if broken:
            yield Problem((*path, field), f"Invalid value: {message}", rule)


def _node_allocatable_mappings(device: Obj, path: Path) -> Iterator[Problem]:
    """Kubernetes 1.36's alpha form (`nodeAllocatableResourceMappings`, a release that has it only; newer ones
    drop it first): keyed by a native resource name (no domain, or a kubernetes.io one; upstream reports a bad
    one at the entry), each entry with a positive `allocationMultiplier`, a `capacityKey` naming one of the
    device's capacities, or both. An entry with neither cannot reach validation: 1.36 defaults the multiplier to
    1 (`apply_device_defaults`)."""
    capacity = _dict(device.get("capacity"))
    for name, entry in _dict(device.get("nodeAllocatableResourceMappings")).items():
        if not isinstance(entry, dict):
            continue
        where = (*path, "nodeAllocatableResourceMappings", MapKey(name))
        if "/" in name and "kubernetes.io/" not in name:
            yield Problem(where, f"Invalid value: {name!r}: must be a node allocatable resource name",
                          "DRA-API/NODE-ALLOCATABLE-RESOURCE-NAMES")
        multiplier = _quantity(entry.get("allocationMultiplier"))
        if multiplier is not None and multiplier <= 0:
            yield Problem((*where, "allocationMultiplier"), "Invalid value: must be positive",
                          "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF")
        key = entry.get("capacityKey")
        if isinstance(key, str) and key == "":
            yield Problem((*where, "capacityKey"), "Invalid value: capacityKey must not be an empty string",
                          "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF")
        elif isinstance(key, str) and key not in capacity:
            yield Problem((*where, "capacityKey"), f"Not found: {key!r}", "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF")


def _node_allocatable(device: Obj, path: Path) -> Iterator[Problem]:
    """Each node-allocatable resource a device stands for says how: a mapping (by consumed capacity, or by
    device count) or an overhead, or both."""
    for name, entry in _dict(device.get("nodeAllocatableResources")).items():
        if not isinstance(entry, dict):
            continue
        where = (*path, "nodeAllocatableResources", MapKey(name))
        if not _set(entry, "mapping") and not _set(entry, "overhead"):
            yield Problem(where, "Required value: at least one of `mapping` and `overhead` is required",
                          "DRA-API/NODE-ALLOCATABLE-MAPPING-OR-OVERHEAD")
        mapping = entry.get("mapping")
        if not isinstance(mapping, dict):
            continue
        rule = "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF"
        by_capacity = _set(mapping, "capacityKey") or _set(mapping, "capacityMultiplier")
        if by_capacity and _set(mapping, "deviceMultiplier"):
            yield Problem((*where, "mapping"), "Invalid value: `deviceMultiplier` may not be set together with "
                                               "`capacityKey` and `capacityMultiplier`", rule)
        elif not by_capacity and not _set(mapping, "deviceMultiplier"):
            yield Problem((*where, "mapping"), "Required value: exactly one of `deviceMultiplier`, or `capacityKey` "
                                               "with `capacityMultiplier`, is required", rule)
        for present, needed in (("capacityKey", "capacityMultiplier"), ("capacityMultiplier", "capacityKey")):
            if _set(mapping, present) and not _set(mapping, needed):
                yield Problem((*where, "mapping", needed), f"Required value: required when `{present}` is set", rule)


# --- DeviceClass -------------------------------------------------------------------------------------
def _slice_identity(spec: Obj, old_spec: Any) -> Iterator[Problem]:
    """On update: the fields that say whose and where a slice is never change."""
    if not isinstance(old_spec, dict):
        return
    for field_path in (("driver",), ("pool", "name"), ("nodeName",)):
        before, after = _dig(old_spec, field_path), _dig(spec, field_path)
        if before != after:
            yield Problem(("spec", *field_path), "Invalid value: field is immutable",
                          "DRA-API/SLICE-IDENTITY-IMMUTABLE")


def _dig(obj: Any, field_path: tuple[str, ...]) -> Any:
    for key in field_path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def class_rules(obj: Obj, old: Obj | None, gates: FeatureGates) -> Iterator[Problem]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    old_spec = (old or {}).get("spec")
    if not isinstance(old_spec, dict) or old_spec.get("selectors") != spec.get("selectors"):
        yield from _selectors(spec.get("selectors"), ("spec", "selectors"), gates)  # re-checked only when changed
    yield from _opaque(spec.get("config"), ("spec", "config"))
    name = spec.get("extendedResourceName")
    if isinstance(name, str):
        error = extended_resource_name_error(name)
        if error:
            yield Problem(("spec", "extendedResourceName"), f"Invalid value: {json.dumps(name)}: {error}",
                          "DRA-API/CLASS-EXTENDED-RESOURCE-NAME")


_QUALIFIED_NAME = re.compile(r"^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                             r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


def extended_resource_name_error(name: str) -> str | None:
    """Why `name` is not an extended resource name (core/v1 IsExtendedResourceName): it needs a domain
    outside kubernetes.io, must not start with "requests.", and "requests." + name must be a qualified name."""
    domain, slash, _ = name.partition("/")
    if not slash:
        return "must have a domain prefix (an extended resource name is domain/name)"
    if domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        return "must not use the kubernetes.io domain, which native resources use"
    if name.startswith("requests."):
        return 'must not start with "requests."'
    quota_name = "requests." + name
    if len(quota_name.partition("/")[0]) > 253 or not _QUALIFIED_NAME.match(quota_name):
        return "must be a qualified name (a DNS subdomain, '/', then at most 63 letters, digits, '-', '_' or '.')"
    return None


# --- ResourceClaim and ResourceClaimTemplate ---------------------------------------------------------
def _request_names(spec: Any) -> dict[str, set[str] | None]:
    """Request name -> its subrequest names (None for an `exactly` request)."""
    devices = spec.get("devices") if isinstance(spec, dict) else None
    requests = devices.get("requests") if isinstance(devices, dict) else None
    names: dict[str, set[str] | None] = {}
    for _, request in _dicts(requests):
        name = request.get("name")
        if isinstance(name, str):
            subs = request.get("firstAvailable")
            names[name] = {str(s.get("name")) for _, s in _dicts(subs)} if isinstance(subs, list) else None
    return names


def _reference_error(reference: Any, names: dict[str, set[str] | None], result: bool) -> str | None:
    """Why `reference` ("req" or "req/sub") names nothing in the claim. A result must name the
    subrequest of a firstAvailable request; a constraint or config may name the whole request."""
    if not isinstance(reference, str):
        return None
    request, _, sub = reference.partition("/")
    if request not in names:
        return f"Invalid value: {json.dumps(reference)}: must be the name of a request in the claim"
    subs = names[request]
    if sub:
        if subs is None or sub not in subs:
            return f"Invalid value: {json.dumps(reference)}: request {request!r} has no subrequest {sub!r}"
    elif result and subs is not None:
        return f"Invalid value: {json.dumps(reference)}: must name one of the subrequests of request {request!r}"
    return None


def _count_rules(request: Obj, path: Path) -> Iterator[Problem]:
    mode = request.get("allocationMode") or "ExactCount"
    count = request.get("count")
    if not isinstance(count, int) or isinstance(count, bool):
        return
    # kube-apiserver defaults a count of 0 (Go cannot tell it from unset) to 1 before it validates
    if mode == "ExactCount" and count < 0:
        yield Problem((*path, "count"), f"Invalid value: {count}: must be greater than zero",
                      "DRA-API/REQUEST-ALLOCATION-MODE")
    if mode == "All" and count != 0:
        yield Problem((*path, "count"), f"Invalid value: {count}: must not be set when `allocationMode` is All",
                      "DRA-API/REQUEST-ALLOCATION-MODE")


def _tolerations(tolerations: Any, path: Path) -> Iterator[Problem]:
    for index, toleration in _dicts(tolerations):
        operator = toleration.get("operator") or "Equal"
        if operator == "Exists" and toleration.get("value"):
            yield Problem((*path, index, "value"), "Invalid value: must be empty when `operator` is Exists",
                          "DRA-API/TOLERATION-FORMAT")
        if not toleration.get("key") and operator != "Exists":
            # The doc comment asks for Exists; kube-apiserver's validation accepts it, so only warn.
            yield Problem((*path, index, "operator"),
                          f"{json.dumps(operator)} with an empty `key` matches only taints with an empty key; "
                          "the field's documentation asks for Exists (kube-apiserver accepts it)",
                          "DRA-API/TOLERATION-FORMAT", "warning")


def request_kind(request: Obj, where: Path) -> Iterator[Problem]:
    """A request is either `exactly` one kind of device or the `firstAvailable` of several: what a reader of the
    request (the allocator, `draconform allocate`) needs beyond the schema to know how to read it."""
    # an empty firstAvailable is no list at all, as kube-apiserver counts it (validateDeviceRequest)
    if _set(request, "exactly") == bool(request.get("firstAvailable")):
        yield Problem(where, ("Invalid value: both are set" if _set(request, "exactly") else "Required value")
                      + ": exactly one of `exactly` or `firstAvailable` is required",
                      "DRA-API/REQUEST-EXACTLY-OR-FIRST-AVAILABLE")


def claim_spec_rules(spec: Any, path: Path, gates: FeatureGates) -> Iterator[Problem]:
    devices = spec.get("devices") if isinstance(spec, dict) else None
    if not isinstance(devices, dict):
        return
    requests = devices.get("requests")
    yield from _duplicates([((*path, "devices", "requests", i), r.get("name")) for i, r in _dicts(requests)],
                           "DRA-API/CLAIM-REQUEST-NAMES")
    for index, request in _dicts(requests):
        where = (*path, "devices", "requests", index)
        yield from request_kind(request, where)
        exactly = request.get("exactly")
        if isinstance(exactly, dict):
            yield from _count_rules(exactly, (*where, "exactly"))
            yield from _selectors(exactly.get("selectors"), (*where, "exactly", "selectors"), gates)
            yield from _derived_attributes(exactly.get("derivedAttributes"), (*where, "exactly", "derivedAttributes"),
                                           gates)
            yield from _tolerations(exactly.get("tolerations"), (*where, "exactly", "tolerations"))
        subrequests = request.get("firstAvailable")
        yield from _duplicates([((*where, "firstAvailable", i), s.get("name")) for i, s in _dicts(subrequests)],
                               "DRA-API/FIRST-AVAILABLE-SUBREQUESTS")
        for sub_index, sub in _dicts(subrequests):
            sub_path = (*where, "firstAvailable", sub_index)
            yield from _count_rules(sub, sub_path)
            yield from _selectors(sub.get("selectors"), (*sub_path, "selectors"), gates)
            yield from _derived_attributes(sub.get("derivedAttributes"), (*sub_path, "derivedAttributes"), gates)
            yield from _tolerations(sub.get("tolerations"), (*sub_path, "tolerations"))
    names = _request_names(spec)
    for index, constraint in _dicts(devices.get("constraints")):
        where = (*path, "devices", "constraints", index)
        if _set(constraint, "matchAttribute") == _set(constraint, "distinctAttribute"):
            what = "Invalid value: both are set" if _set(constraint, "matchAttribute") else "Required value"
            # without DRAConsumableCapacity (which brought distinctAttribute) upstream names matchAttribute
            at = where if what != "Required value" or gates.enabled("DRAConsumableCapacity") else (
                *where, "matchAttribute")
            yield Problem(at, f"{what}: exactly one of `matchAttribute` or `distinctAttribute` is required",
                          "DRA-API/CONSTRAINT-ONE-OF")
        yield from _references(constraint.get("requests"), (*where, "requests"), names)
    for index, config in _dicts(devices.get("config")):
        yield from _references(config.get("requests"), (*path, "devices", "config", index, "requests"), names)
    yield from _opaque(devices.get("config"), (*path, "devices", "config"))


def _references(references: Any, path: Path, names: dict[str, set[str] | None]) -> Iterator[Problem]:
    if isinstance(references, list):
        for index, reference in enumerate(references):
            error = _reference_error(reference, names, result=False)
            if error:
                yield Problem((*path, index), error, "DRA-API/REQUEST-REFERENCES-EXIST")
        yield from _duplicates([((*path, index), reference) for index, reference in enumerate(references)],
                               "DRA-API/REQUEST-REFERENCES-EXIST")


def claim_rules(obj: Obj, old: Obj | None, gates: FeatureGates) -> Iterator[Problem]:
    spec = obj.get("spec")
    if old is None:
        yield from claim_spec_rules(spec, ("spec",), gates)
    elif old.get("spec") != spec:
        yield Problem(("spec",), "Invalid value: field is immutable", "DRA-API/CLAIM-SPEC-IMMUTABLE")
    status = obj.get("status")
    if isinstance(status, dict):
        old_status = (old or {}).get("status")
        yield from _status_rules(status, old_status if isinstance(old_status, dict) else None, spec)


def template_rules(obj: Obj, old: Obj | None, gates: FeatureGates) -> Iterator[Problem]:
    spec = obj.get("spec")
    if old is None:
        if isinstance(spec, dict):
            yield from claim_spec_rules(spec.get("spec"), ("spec", "spec"), gates)
    elif old.get("spec") != spec:
        yield Problem(("spec",), "Invalid value: field is immutable", "DRA-API/CLAIM-SPEC-IMMUTABLE")


def _status_rules(status: Obj, old_status: Obj | None, spec: Any) -> Iterator[Problem]:
    path: Path = ("status",)
    allocation = status.get("allocation")
    old_allocation = (old_status or {}).get("allocation")
    reserved = status.get("reservedFor")
    if reserved and not allocation:
        yield Problem((*path, "reservedFor"), "Forbidden: may not be set when `allocation` is not set",
                      "DRA-API/RESERVED-FOR-NEEDS-ALLOCATION")
    yield from _duplicates([((*path, "reservedFor", i), r.get("uid")) for i, r in _dicts(reserved)],
                           "DRA-API/RESERVED-FOR-LIMITS")
    if old_allocation is not None and allocation is not None and allocation != old_allocation:
        yield Problem((*path, "allocation"), "Invalid value: field is immutable once set; clear it first",
                      "DRA-API/ALLOCATION-IMMUTABLE")
    devices = allocation.get("devices") if isinstance(allocation, dict) else None
    results = devices.get("results") if isinstance(devices, dict) else None
    if allocation is not None and allocation != old_allocation:
        yield from _new_allocation(devices, results, spec, (*path, "allocation", "devices"))
    yield from _device_statuses(status.get("devices"), {_device_key(r) for _, r in _dicts(results)},
                                (*path, "devices"))


def _new_allocation(devices: Any, results: Any, spec: Any, path: Path) -> Iterator[Problem]:
    """An allocation being written: its results name the claim's requests, their binding conditions and
    skipped operations are well formed, and so is its opaque configuration."""
    names = _request_names(spec)
    for index, result in _dicts(results):
        error = _reference_error(result.get("request"), names, result=True)
        if error:
            yield Problem((*path, "results", index, "request"), error,
                          "DRA-API/ALLOCATION-RESULTS-REFERENCE-REQUESTS")
        yield from _binding_conditions(result, (*path, "results", index))
        yield from _skipped_operations(result, (*path, "results", index))
    yield from _opaque(devices.get("config") if isinstance(devices, dict) else None, (*path, "config"))


def _device_statuses(entries: Any, allocated: set[tuple[str | None, ...]], path: Path) -> Iterator[Problem]:
    """`status.devices`: one entry per allocated device, distinct condition types, data within its bound."""
    yield from _duplicates([((*path, i), _device_key(e)) for i, e in _dicts(entries)],
                           "DRA-API/DEVICE-STATUS-MATCHES-ALLOCATION")
    for index, entry in _dicts(entries):
        where = (*path, index)
        if _device_key(entry) not in allocated:
            yield Problem(where, "Invalid value: must be the driver, pool and device (and shareID) of an "
                                 "allocated device", "DRA-API/DEVICE-STATUS-MATCHES-ALLOCATION")
        yield from _duplicates([((*where, "conditions", i, "type"), c.get("type"))
                                for i, c in _dicts(entry.get("conditions"))], "DRA-API/DEVICE-STATUS-CONDITIONS")
        data = entry.get("data")
        if isinstance(data, dict):
            size = len(json.dumps(data, separators=(",", ":")).encode("utf-8"))
            if size > MAX_OPAQUE_BYTES:
                yield Problem((*where, "data"), f"Too long: {size} bytes: may not be more than "
                                                 f"{MAX_OPAQUE_BYTES} bytes", "DRA-API/DEVICE-STATUS-DATA")


def _device_key(entry: Obj) -> tuple[str | None, ...]:
    """Driver, pool, device and shareID; a mistyped part (a schema error already) still hashes."""
    parts = (entry.get("driver"), entry.get("pool"), entry.get("device"), entry.get("shareID"))
    return tuple(part if part is None or isinstance(part, str) else repr(part) for part in parts)


KindRules = Callable[[Obj, "Obj | None", FeatureGates], Iterator[Problem]]
RULES: dict[str, KindRules] = {
    "ResourceSlice": slice_rules,
    "DeviceClass": class_rules,
    "ResourceClaim": claim_rules,
    "ResourceClaimTemplate": template_rules,
    "Pod": pod_rules,
    **dict.fromkeys(TEMPLATES, workload_rules),
}
