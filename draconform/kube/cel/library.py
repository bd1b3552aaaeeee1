"""The Kubernetes libraries of the DRA CEL environment (quantity, semver, `includes()`) and the `device` variable
as a CEL input. Quantities and versions travel as small tagged maps, since Python implementations of CEL
functions cannot take opaque values; the checking form declares them over upstream's opaque types instead."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from cel_expr_python import cel

from draconform.kube.values import (
    LIST_KINDS,
    QUANTITY_TAG,
    SEMVER_TAG,
    SemVer,
    format_quantity,
    parse_quantity,
    parse_semver,
)

if TYPE_CHECKING:
    from draconform.kube.cel.environments import CelFeatures

def _quantity_of(value: Any) -> Fraction:
    if isinstance(value, Mapping) and QUANTITY_TAG in value:
        return Fraction(str(value[QUANTITY_TAG]))
    raise ValueError(f"not a quantity: {value!r}")


def _semver_of(value: Any) -> SemVer:
    if isinstance(value, Mapping) and SEMVER_TAG in value:
        return parse_semver(str(value[SEMVER_TAG]))
    raise ValueError(f"not a semver: {value!r}")


def quantity_value(amount: Fraction) -> dict[str, str]:
    """How a quantity is handed to CEL: exact, canonical (so `==` on two quantities compares amounts)."""
    return {QUANTITY_TAG: format_quantity(amount)}


def semver_value(version: SemVer) -> dict[str, str]:
    return {SEMVER_TAG: str(version)}


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


def _is_semver(text: str) -> bool:
    try:
        parse_semver(text)
    except ValueError:
        return False
    return True


def _compare(left: Any, right: Any) -> int:
    """compareTo for either library: both sides must be the same kind."""
    if isinstance(left, Mapping) and QUANTITY_TAG in left:
        a, b = _quantity_of(left), _quantity_of(right)
        return (a > b) - (a < b)
    return int(_semver_of(left).compare(_semver_of(right)))


def _as_integer(value: Any) -> int:
    amount = _quantity_of(value)
    if amount.denominator != 1 or not -(2**63) <= amount <= 2**63 - 1:
        raise ValueError("quantity is not an int64 integer")
    return int(amount)


def _add(value: Any, other: Any) -> dict[str, str]:
    delta = Fraction(other) if isinstance(other, int) else _quantity_of(other)
    return quantity_value(_quantity_of(value) + delta)


def _sub(value: Any, other: Any) -> dict[str, str]:
    delta = Fraction(other) if isinstance(other, int) else _quantity_of(other)
    return quantity_value(_quantity_of(value) - delta)


def _includes(value: Any, wanted: Any) -> bool:
    items = value if isinstance(value, (list, tuple)) else [value]
    if isinstance(wanted, Mapping):  # versions are equal by precedence (build metadata aside), not by text
        return any(_compare(item, wanted) == 0 for item in items)
    return any(item == wanted for item in items)


QUANTITY = "kubernetes.Quantity"  # upstream's type names, as its compile errors print them
SEMVER = "kubernetes.Semver"


def functions(checking: bool, features: CelFeatures) -> list[Any]:
    """The Kubernetes quantity and semver libraries and `includes()`. Checking: over the opaque types
    `kubernetes.Quantity` and `kubernetes.Semver`, one overload per type, as upstream declares them. Runtime:
    over the tagged maps both types travel as, one overload each whose implementation tells them apart (cel-cpp
    dispatches on runtime types, and both are maps there)."""
    T = cel.Type
    tagged = T.Map(T.STRING, T.STRING)
    quantity, semver = (T.AbstractType(QUANTITY), T.AbstractType(SEMVER)) if checking else (tagged, tagged)
    both = ((("quantity", quantity), ("semver", semver)) if checking else (("tagged", tagged),))

    def overload(overload_id: str, result: Any, params: list[Any], impl: Callable[..., Any],
                 member: bool = True) -> Any:
        return cel.Overload(overload_id, result, params, is_member=member, impl=impl)

    def either(name: str, result: Any, impl: Callable[..., Any]) -> Any:
        """A member function of both libraries (isGreaterThan, isLessThan, compareTo)."""
        return cel.FunctionDecl(name, [overload(f"{kind}_{name}", result, [typ, typ], impl) for kind, typ in both])

    def member(name: str, result: Any, params: list[Any], impl: Callable[..., Any]) -> Any:
        return cel.FunctionDecl(name, [overload(f"{name}_{len(params)}", result, params, impl)])

    def sign(value: Any) -> int:
        amount = _quantity_of(value)
        return (amount > 0) - (amount < 0)

    declared = [
        cel.FunctionDecl("quantity", [overload("quantity_string", quantity, [T.STRING],
                                               lambda s: quantity_value(parse_quantity(s)), member=False)]),
        cel.FunctionDecl("isQuantity", [overload("is_quantity_string", T.BOOL, [T.STRING], _is_quantity,
                                                 member=False)]),
        cel.FunctionDecl("semver", [
            overload("semver_string", semver, [T.STRING], lambda s: semver_value(parse_semver(s)), member=False),
            overload("semver_string_bool", semver, [T.STRING, T.BOOL],
                     lambda s, normalize: semver_value(parse_semver(s, normalize=normalize)), member=False),
        ]),
        cel.FunctionDecl("isSemver", [
            overload("is_semver_string", T.BOOL, [T.STRING], _is_semver, member=False),
            overload("is_semver_string_bool", T.BOOL, [T.STRING, T.BOOL], lambda s, n: _is_semver_n(s, n),
                     member=False),
        ]),
        either("isGreaterThan", T.BOOL, lambda a, b: _compare(a, b) > 0),
        either("isLessThan", T.BOOL, lambda a, b: _compare(a, b) < 0),
        either("compareTo", T.INT, _compare),
        member("sign", T.INT, [quantity], sign),
        member("isInteger", T.BOOL, [quantity], lambda v: _quantity_of(v).denominator == 1),
        member("asInteger", T.INT, [quantity], _as_integer),
        member("asApproximateFloat", T.DOUBLE, [quantity], lambda v: float(_quantity_of(v))),
        cel.FunctionDecl("add", [overload("quantity_add", quantity, [quantity, quantity], _add),
                                 overload("quantity_add_int", quantity, [quantity, T.INT], _add)]),
        cel.FunctionDecl("sub", [overload("quantity_sub", quantity, [quantity, quantity], _sub),
                                 overload("quantity_sub_int", quantity, [quantity, T.INT], _sub)]),
        member("major", T.INT, [semver], lambda v: _semver_of(v).major),
        member("minor", T.INT, [semver], lambda v: _semver_of(v).minor),
        member("patch", T.INT, [semver], lambda v: _semver_of(v).patch),
    ]
    # includes(): one overload per attribute type, scalar and list (a dyn parameter would match nothing at run time)
    kinds = (("int", T.INT), ("string", T.STRING), ("bool", T.BOOL), *(() if checking else both),
             *((("semver", semver),) if checking else ()))
    if features.includes:
        declared.append(cel.FunctionDecl("includes", [
            overload(f"{name}{'_list' if listed else ''}_includes", T.BOOL, [T.List(kind) if listed else kind, kind],
                     _includes)
            for name, kind in kinds for listed in (False, True)]))
    return declared


def _is_semver_n(text: str, normalize: bool) -> bool:
    try:
        parse_semver(text, normalize=normalize)
    except ValueError:
        return False
    return True


def device_input(driver: str, attributes: Mapping[str, tuple[str, Any]], capacity: Mapping[str, Fraction],
                 allow_multiple: bool = False) -> dict[str, Any]:
    """The `device` variable: attributes and capacities grouped by domain; bare names belong to the driver's
    domain. Attribute values arrive as (type, value) pairs from `values.parse_attribute`; a list form becomes a
    CEL list (of tagged semver maps for `versions`)."""
    attrs: dict[str, dict[str, Any]] = {driver: {}}  # the driver's own domain exists even when empty
    for name, (kind, value) in attributes.items():
        domain, _, ident = name.rpartition("/")
        if kind == "version":
            value = semver_value(value)
        elif kind == "versions":
            value = [semver_value(item) for item in value]
        elif kind in LIST_KINDS:
            value = list(value)
        if not domain:
            domain = driver
        attrs.setdefault(domain, {})[ident] = value
    caps: dict[str, dict[str, Any]] = {driver: {}}
    for name, amount in capacity.items():
        domain, _, ident = name.rpartition("/")
        caps.setdefault(domain or driver, {})[ident] = quantity_value(amount)
    return {"driver": driver, "attributes": attrs, "capacity": caps, "allowMultipleAllocations": allow_multiple}
