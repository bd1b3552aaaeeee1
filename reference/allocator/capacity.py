"""Consumable capacity (KEP-5075, resource.k8s.io/v1 `DeviceCapacity.requestPolicy`,
`ExactDeviceRequest.capacity.requests`) as pure rules both allocation cores call: how much of a device's
capacity one allocation consumes, whether that amount is one the device's policy allows, and whether it
still fits beside what other allocations of the same device consume.

Rules, as upstream's structured allocator applies them:
- a request without an amount for a capacity consumes the policy's `default`, or the whole capacity when
  the capacity has no default (so an unqualified request takes a multi-allocatable device for itself);
- an amount without a policy is taken as it is;
- `validRange`: below `min` rounds up to `min`; otherwise, with a `step`, up to `min + n*step`; above `max`
  (after rounding) the device cannot serve the request;
- `validValues`: up to the first valid value at least as large; above the largest one, refused;
- the rounded amount is what is checked against the capacity and what `consumedCapacity` records;
- a request naming a capacity the device does not publish skips the device.

Arithmetic is exact (fractions). Upstream computes in int64 units (or milli units with
DRAFractionalCapacityRange), which gives the same answers for every whole or milli amount."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from math import ceil
from typing import Any

from draconform.kube.values import parse_quantity


@dataclass(frozen=True)
class RequestPolicy:
    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()
    minimum: Fraction | None = None  # validRange.min; set whenever the policy is a range
    maximum: Fraction | None = None
    step: Fraction | None = None


@dataclass(frozen=True)
class Capacity:
    """One published capacity: its total and, on a multi-allocatable device, its request policy."""

    value: Fraction
    policy: RequestPolicy | None = None
    binary: bool = False  # written with a binary suffix (Ki, Mi, Gi, ...): results are written the same way


class CapacityError(ValueError):
    """A capacity or a policy amount is not a quantity."""


def _amount(raw: Any) -> Fraction:
    try:
        amount: Fraction = parse_quantity(raw)
    except ValueError as exc:
        raise CapacityError(str(exc)) from exc
    return amount


def _optional(raw: Any) -> Fraction | None:
    return None if raw is None else _amount(raw)


def parse_capacity(raw: Any) -> Capacity:
    """A `DeviceCapacity` entry of a ResourceSlice device."""
    entry = raw if isinstance(raw, dict) else {}
    value_text = entry.get("value", 0)
    policy = entry.get("requestPolicy")
    parsed: RequestPolicy | None = None
    if isinstance(policy, dict):
        valid_range = policy.get("validRange") if isinstance(policy.get("validRange"), dict) else None
        parsed = RequestPolicy(
            default=_optional(policy.get("default")),
            valid_values=tuple(_amount(v) for v in policy.get("validValues") or ()),
            minimum=_optional(valid_range.get("min")) if valid_range else None,
            maximum=_optional(valid_range.get("max")) if valid_range else None,
            step=_optional(valid_range.get("step")) if valid_range else None,
        )
    return Capacity(_amount(value_text), parsed, isinstance(value_text, str) and "i" in value_text)


def qualified(name: str, driver: str) -> str:
    """Capacity names without a domain belong to the publishing driver's domain."""
    return name if "/" in name else f"{driver}/{name}"


def consumed_amount(requested: Fraction | None, capacity: Capacity) -> Fraction:
    """How much one allocation consumes of this capacity, rounded as the policy says."""
    policy = capacity.policy
    if requested is None:
        return policy.default if policy is not None and policy.default is not None else capacity.value
    if policy is None:
        return requested
    if policy.minimum is not None:
        if requested < policy.minimum:
            return policy.minimum
        if policy.step is None or policy.step <= 0:
            return requested
        return policy.minimum + ceil((requested - policy.minimum) / policy.step) * policy.step
    for valid in policy.valid_values:  # sorted ascending (API validation)
        if requested <= valid:
            return valid
    return requested


def violates_policy(amount: Fraction, policy: RequestPolicy | None) -> bool:
    """Whether a (rounded) amount is one the policy refuses: above validRange.max, off the step grid, or
    not among validValues. The policy's default is always allowed."""
    if policy is None or (policy.default is not None and amount == policy.default):
        return False
    if policy.minimum is not None:
        if policy.maximum is not None and amount > policy.maximum:
            return True
        return policy.step is not None and policy.step > 0 and (amount - policy.minimum) % policy.step != 0
    if policy.valid_values:
        return amount not in policy.valid_values
    return False


def share_consumption(requests: Mapping[str, Fraction], driver: str,
                      capacity: Mapping[str, Capacity]) -> dict[str, Fraction] | None:
    """What one allocation of a device with these capacities consumes, per capacity name as the device
    publishes it; None when the device cannot serve the request: it lacks a requested capacity, the request
    names one capacity twice (bare and qualified), or a rounded amount breaks the capacity's policy."""
    published = {qualified(name, driver): name for name in capacity}
    wanted: dict[str, Fraction] = {}
    for name, amount in requests.items():
        key = qualified(name, driver)
        if key not in published or key in wanted:
            return None
        wanted[key] = amount
    consumption: dict[str, Fraction] = {}
    for key, name in published.items():
        amount = consumed_amount(wanted.get(key), capacity[name])
        if amount < 0 or violates_policy(amount, capacity[name].policy):
            return None
        consumption[name] = amount
    return consumption


def fits(consumption: Mapping[str, Fraction], used: Mapping[str, Fraction], driver: str,
         capacity: Mapping[str, Capacity]) -> bool:
    """Whether `consumption` fits beside `used` (what other allocations of the device consume, keyed by
    qualified capacity name) within every capacity's value."""
    for name, amount in consumption.items():
        if used.get(qualified(name, driver), Fraction(0)) + amount > capacity[name].value:
            return False
    return True


def add_usage(used: dict[str, Fraction], consumption: Mapping[str, Any], driver: str, sign: int = 1) -> None:
    """Add (sign 1) or take back (sign -1) one allocation's consumedCapacity, keyed by qualified name.
    Amounts may be quantities as written in a claim's status."""
    for name, amount in consumption.items():
        try:
            value = amount if isinstance(amount, Fraction) else parse_quantity(amount)
        except ValueError:
            continue
        key = qualified(name, driver)
        total = used.get(key, Fraction(0)) + sign * value
        if total:
            used[key] = total
        else:
            used.pop(key, None)


_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))
_SMALL = (("m", Fraction(1, 10**3)), ("u", Fraction(1, 10**6)), ("n", Fraction(1, 10**9)))


def format_amount(amount: Fraction, binary: bool = False) -> str:
    """A quantity as Kubernetes writes it: the largest exact suffix (binary ones when `binary`)."""
    if amount.denominator == 1:
        whole = amount.numerator
        if whole:
            for suffix, unit in _BINARY if binary else ():
                if whole % unit == 0:
                    return f"{whole // unit}{suffix}"
            for suffix, unit in _DECIMAL:
                if whole % unit == 0 and not binary:
                    return f"{whole // unit}{suffix}"
        return str(whole)
    for suffix, small in _SMALL:
        scaled = amount / small
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    return str(float(amount))
