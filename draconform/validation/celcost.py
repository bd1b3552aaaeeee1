"""The worst-case cost of a DRA CEL selector, estimated before it ever runs, the way kube-apiserver does
(KEP-4381 "CEL in selectors": a selector over `CELSelectorExpressionMaxCost`, 1,000,000 in 1.34-1.37, is refused
on create; the scheduler also stops any evaluation at that cost, here the allocator's iteration budget).

Upstream runs cel-go's static cost estimator over the checked expression, with the sizes the DRA environment
declares: `device.attributes` and `device.capacity` map at most 32 domains (63 characters each) to at most 32
names (32 characters each), an attribute value is at most 64 long, the driver name at most 63 characters.
cel-expr-python has no cost estimator, so this module restates cel-go's model over the *checked* AST that the
library's type checker produced (`CompiledSelector.checked`, a serialized `cel.expr.CheckedExpr`, decoded here
from its protobuf wire form): the macros are already expanded into comprehensions, `cel.bind` into a
comprehension over an empty range, and every node carries its checked type. Each identifier, field selection,
index and function call costs 1 (a qualified `device.driver` counts its selection too); creating a list costs 10
and a map 30; comparing, concatenating or searching strings costs 0.1 per character of the operands' largest
size; `in` on a list one comparison per element; a comprehension costs its range, its initial accumulator, per
element of the largest possible range its loop condition and step, then its result. On the shapes selectors
take it agrees with cel-go; it remains an estimate of an estimate, so near the limit it may differ from
kube-apiserver by a few percent."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost
MAX_MAP_ENTRIES = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice: domains, and names per domain
MAX_DOMAIN = 63  # DeviceMaxDomainLength
MAX_ID = 32  # DeviceMaxIDLength
MAX_VALUE_SIZE = 64  # DeviceAttributeMaxValueLength; also bounds a list attribute (at most 48 values)
MAX_DRIVER = 63  # DriverNameMaxLength
TRAVERSAL = 0.1  # cel-go's cost per character for string traversal
LIST_CREATE, MAP_CREATE = 10, 30  # cel-go's base costs of building a list or map literal
STRING_FUNCTIONS = {"contains", "startsWith", "endsWith", "matches", "lowerAscii", "upperAscii", "trim",
                    "replace", "split", "indexOf", "lastIndexOf", "substring", "charAt", "join", "format"}
COMPARISONS = {"_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"}


class CostError(ValueError):
    """The expression does not compile (the compiler's reason is the finding) or its AST could not be read."""


@dataclass(frozen=True)
class Shape:
    """The largest size a value can have (string length, list or map entries), with the shapes of its keys and
    elements where it is a collection."""

    size: float = 1
    element: Shape | None = None
    key: Shape | None = None


_VALUE = Shape(MAX_VALUE_SIZE, Shape(MAX_VALUE_SIZE))  # an attribute: a string, or a list of values
_DOMAINS = Shape(MAX_MAP_ENTRIES, Shape(MAX_MAP_ENTRIES, _VALUE, Shape(MAX_ID)), Shape(MAX_DOMAIN))
DEVICE_SHAPES = {"device.driver": Shape(MAX_DRIVER), "device.attributes": _DOMAINS, "device.capacity": _DOMAINS,
                 "device.allowMultipleAllocations": Shape(1)}


def estimate_cost(expression: str, features: Any = None) -> int:
    """The estimated worst-case cost of a selector, compiled in the DRA CEL environment (raises CostError when
    it does not compile)."""
    from draconform.kube.cel import CelError, check  # the one DRA CEL environment

    try:
        selector = check(expression, features)
    except CelError as exc:
        raise CostError(exc.reason) from None
    return checked_cost(selector.checked)


def checked_cost(checked: bytes) -> int:
    """The estimate for a serialized CheckedExpr (wrapped in a google.protobuf.Any, as cel-expr-python gives it)."""
    try:
        payload = _first(checked, 2)  # Any.value
        ast = _CheckedExpr(payload)
        cost, _ = ast.estimate(ast.root, {})
    except (IndexError, ValueError, KeyError, RecursionError) as exc:
        raise CostError(f"unreadable checked expression: {exc}") from None
    return math.ceil(cost)


# ----- the protobuf wire format, as far as cel.expr.CheckedExpr needs it -----------------------------------------

def _varint(data: bytes, index: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[index]
        index += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, index
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, Any]]:
    """(field number, value) pairs: an int for varints, bytes for length-delimited and fixed-size fields."""
    index = 0
    while index < len(data):
        key, index = _varint(data, index)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, index = _varint(data, index)
        elif wire == 2:
            length, index = _varint(data, index)
            value, index = data[index:index + length], index + length
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            value, index = data[index:index + width], index + width
        else:
            raise ValueError(f"unexpected wire type {wire}")
        yield number, value


def _first(data: bytes, number: int, default: Any = None) -> Any:
    return next((value for found, value in _fields(data) if found == number), default)


def _all(data: bytes, number: int) -> list[Any]:
    return [value for found, value in _fields(data) if found == number]


# cel.expr.Expr: id = 2; const_expr = 3, ident_expr = 4, select_expr = 5, call_expr = 6, list_expr = 7,
# struct_expr = 8, comprehension_expr = 9. cel.expr.Type: primitive = 3 (STRING = 5, BYTES = 6), list_type = 6,
# map_type = 7. CheckedExpr: reference_map = 2, type_map = 3, expr = 4.
_STRING_LIKE = {5, 6}


@dataclass
class _CheckedExpr:
    payload: bytes
    root: bytes = b""
    names: dict[int, str] = field(default_factory=dict)  # node id -> the variable an identifier resolved to
    stringy: set[int] = field(default_factory=set)  # node ids whose checked type is string, bytes or dyn

    def __post_init__(self) -> None:
        for number, value in _fields(self.payload):
            if number == 2:
                node, reference = _first(value, 1, 0), _first(value, 2, b"")
                name = _first(reference, 1)
                if name is not None:
                    self.names[node] = name.decode()
            elif number == 3:
                node, kind = _first(value, 1, 0), _first(value, 2, b"")
                primitive = _first(kind, 3)
                if primitive in _STRING_LIKE or _first(kind, 1) is not None:  # string, bytes or dyn
                    self.stringy.add(node)
            elif number == 4:
                self.root = value

    def estimate(self, expr: bytes, scope: dict[str, Shape]) -> tuple[float, Shape]:
        """(cost, shape) of one node."""
        node = _first(expr, 2, 0)
        for number, value in _fields(expr):
            if number == 3:
                return 0, self._constant(value)
            if number == 4:
                return self._ident(node, _first(value, 1, b"").decode(), scope)
            if number == 5:
                return self._select(value, scope)
            if number == 6:
                return self._call(node, value, scope)
            if number == 7:
                items = [self.estimate(item, scope) for item in _all(value, 1)]
                biggest = max((shape for _, shape in items), key=lambda s: s.size, default=Shape(0))
                return LIST_CREATE + sum(cost for cost, _ in items), Shape(len(items), biggest)
            if number == 8:
                entries = [self.estimate(part, scope) for entry in _all(value, 2)
                           for part in (_first(entry, 3), _first(entry, 4)) if part is not None]
                biggest = max((shape for _, shape in entries), key=lambda s: s.size, default=Shape(0))
                return MAP_CREATE + sum(cost for cost, _ in entries), Shape(len(entries) // 2, biggest, biggest)
            if number == 9:
                return self._comprehension(value, scope)
        return 0, Shape(0)

    @staticmethod
    def _constant(value: bytes) -> Shape:
        for number, item in _fields(value):
            if number in (6, 7):  # string, bytes
                return Shape(len(item.decode("utf-8", "replace")) if number == 6 else len(item))
        return Shape(1)

    def _ident(self, node: int, name: str, scope: dict[str, Shape]) -> tuple[float, Shape]:
        resolved = self.names.get(node, name)
        if resolved in DEVICE_SHAPES:  # `device.driver`: the variable and the field selected from it
            return 1 + resolved.count("."), DEVICE_SHAPES[resolved]
        return 1, scope.get(name, Shape(MAX_VALUE_SIZE))

    def _select(self, value: bytes, scope: dict[str, Shape]) -> tuple[float, Shape]:
        operand = _first(value, 1, b"")
        cost, shape = self.estimate(operand, scope)
        if _first(value, 3):  # has(): the presence test itself is free (PresenceTestHasCost(false))
            return cost, Shape(1)
        return cost + 1, shape.element or Shape(MAX_VALUE_SIZE)

    def _call(self, node: int, value: bytes, scope: dict[str, Shape]) -> tuple[float, Shape]:
        # One case per CEL function family, each with the cost CEL's estimator gives it: a table of cases, kept
        # in one function so the costs can be compared side by side.
        function = _first(value, 2, b"").decode()
        target = _first(value, 1)
        parts = ([target] if target is not None else []) + _all(value, 3)
        ids = [_first(part, 2, 0) for part in parts]
        estimates = [self.estimate(part, scope) for part in parts]
        costs, shapes = [cost for cost, _ in estimates], [shape for _, shape in estimates]
        total = sum(costs)
        if function in ("_&&_", "_||_", "@not_strictly_false"):
            return total, Shape(1)
        if function == "_?_:_":
            bigger = max(shapes[1:], key=lambda s: s.size)
            return costs[0] + max(costs[1:]), bigger
        if function == "_[_]":
            container = shapes[0]
            return total + 1, container.element or Shape(MAX_VALUE_SIZE)
        strings = all(i in self.stringy for i in ids)
        if function in COMPARISONS:
            extra = math.ceil(TRAVERSAL * min(s.size for s in shapes)) if strings else 0
            return total + 1 + extra, Shape(1)
        if function == "@in":
            if shapes[1].key is not None:  # a map: one lookup
                return total + 1, Shape(1)
            per_item = 1 + (math.ceil(TRAVERSAL * shapes[0].size) if ids[0] in self.stringy else 0)
            return total + 1 + shapes[1].size * per_item, Shape(1)
        if function == "_+_":
            size = shapes[0].size + shapes[1].size
            return total + 1 + math.ceil(TRAVERSAL * size), Shape(size, shapes[0].element or shapes[1].element)
        if function in STRING_FUNCTIONS:
            traversed = sum(shape.size for shape in shapes)
            return total + 1 + math.ceil(TRAVERSAL * traversed), Shape(traversed)
        if function == "size":
            return total + 1, Shape(1)
        return total + 1, Shape(MAX_VALUE_SIZE)

    def _comprehension(self, value: bytes, scope: dict[str, Shape]) -> tuple[float, Shape]:
        iteration = _first(value, 1, b"").decode()
        range_cost, over = self.estimate(_first(value, 2, b""), scope)
        accumulator = _first(value, 3, b"").decode()
        init_cost, init = self.estimate(_first(value, 4, b""), scope)
        element = (over.key or over.element) or Shape(MAX_VALUE_SIZE)  # a map is iterated by its keys
        # map() and filter() build a list as long as the range; all(), exists() a bool; cel.bind the value bound
        accumulated = Shape(over.size, element) if init.size == 0 and over.size else init
        inner = {**scope, iteration: element, accumulator: accumulated}
        condition, _ = self.estimate(_first(value, 5, b""), inner)
        step, _ = self.estimate(_first(value, 6, b""), inner)
        result_cost, result = self.estimate(_first(value, 7, b""), inner)
        return range_cost + init_cost + over.size * (condition + step) + result_cost, result
