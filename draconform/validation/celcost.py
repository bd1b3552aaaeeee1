"""The worst-case cost of a DRA CEL selector, estimated before it ever runs, the way kube-apiserver does (KEP-4381
"CEL in selectors": a selector over `CELSelectorExpressionMaxCost`, 1,000,000 in 1.34-1.37, is refused on create;
the scheduler also stops any evaluation at that cost, here the allocator's iteration budget). Upstream runs
cel-go's static cost estimator over the checked expression, with the sizes the DRA environment declares:
`device.attributes` and `device.capacity` map at most 32 domains (63 characters each) to at most 32 names (32
characters each), an attribute value is at most 64 long, the driver name at most 63 characters. cel-expr-python
has no cost estimator, so this module restates cel-go's model over the *checked* AST that the library's type
checker produced (`CompiledSelector.checked`, a serialized `cel.expr.CheckedExpr`, read with the message classes
generated from draconform/kube/cel/checked.proto): the macros are already expanded into comprehensions, `cel.bind`
into a comprehension over an empty range, and every node carries its checked type. Each identifier, field
selection, index and function call costs 1 (a qualified `device.driver` counts its selection too); creating a list
costs 10 and a map 30; comparing, concatenating or searching strings costs 0.1 per character of the operands'
largest size; `in` on a list one comparison per element; a comprehension costs its range, its initial accumulator,
per element of the largest possible range its loop condition and step, then its result. On the shapes selectors
take it agrees with cel-go; it remains an estimate of an estimate, so near the limit it may differ from
kube-apiserver by a few percent."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.any_pb2 import Any as AnyMessage
from google.protobuf.message import DecodeError

from draconform.kube.cel.checked_pb2 import CheckedExpr, Constant, Expr, Type

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
_STRING_LIKE = {Type.STRING, Type.BYTES}


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
        ast = _CheckedExpr(CheckedExpr.FromString(AnyMessage.FromString(checked).value))
        cost, _ = ast.estimate(ast.root, {})
    except (DecodeError, RecursionError) as exc:
        raise CostError(f"unreadable checked expression: {exc}") from None
    return math.ceil(cost)


@dataclass
class _CheckedExpr:
    """The checked AST with what the estimate needs of its tables: the variable each identifier resolved to, and
    the nodes whose checked type is string, bytes or dyn (their comparisons traverse characters)."""

    checked: CheckedExpr
    root: Expr = field(init=False)
    names: dict[int, str] = field(default_factory=dict)  # node id -> the variable an identifier resolved to
    stringy: set[int] = field(default_factory=set)  # node ids whose checked type is string, bytes or dyn

    def __post_init__(self) -> None:
        self.root = self.checked.expr
        self.names = {node: reference.name for node, reference in self.checked.reference_map.items()
                      if reference.name}
        self.stringy = {node for node, kind in self.checked.type_map.items()
                        if kind.primitive in _STRING_LIKE or kind.WhichOneof("type_kind") == "dyn"}

    def estimate(self, expr: Expr, scope: dict[str, Shape]) -> tuple[float, Shape]:
        """(cost, shape) of one node."""
        kind = expr.WhichOneof("expr_kind")
        if kind == "const_expr":
            return 0, self._constant(expr.const_expr)
        if kind == "ident_expr":
            return self._ident(expr.id, expr.ident_expr.name, scope)
        if kind == "select_expr":
            return self._select(expr.select_expr, scope)
        if kind == "call_expr":
            return self._call(expr.call_expr, scope)
        if kind == "list_expr":
            items = [self.estimate(item, scope) for item in expr.list_expr.elements]
            biggest = max((shape for _, shape in items), key=lambda s: s.size, default=Shape(0))
            return LIST_CREATE + sum(cost for cost, _ in items), Shape(len(items), biggest)
        if kind == "struct_expr":
            entries = [self.estimate(getattr(entry, part), scope) for entry in expr.struct_expr.entries
                       for part in ("map_key", "value") if entry.HasField(part)]
            biggest = max((shape for _, shape in entries), key=lambda s: s.size, default=Shape(0))
            return MAP_CREATE + sum(cost for cost, _ in entries), Shape(len(entries) // 2, biggest, biggest)
        if kind == "comprehension_expr":
            return self._comprehension(expr.comprehension_expr, scope)
        return 0, Shape(0)

    @staticmethod
    def _constant(value: Constant) -> Shape:
        kind = value.WhichOneof("constant_kind")
        if kind == "string_value":
            return Shape(len(value.string_value))
        if kind == "bytes_value":
            return Shape(len(value.bytes_value))
        return Shape(1)

    def _ident(self, node: int, name: str, scope: dict[str, Shape]) -> tuple[float, Shape]:
        resolved = self.names.get(node, name)
        if resolved in DEVICE_SHAPES:  # `device.driver`: the variable and the field selected from it
            return 1 + resolved.count("."), DEVICE_SHAPES[resolved]
        return 1, scope.get(name, Shape(MAX_VALUE_SIZE))

    def _select(self, value: Expr.Select, scope: dict[str, Shape]) -> tuple[float, Shape]:
        cost, shape = self.estimate(value.operand, scope)
        if value.test_only:  # has(): the presence test itself is free (PresenceTestHasCost(false))
            return cost, Shape(1)
        return cost + 1, shape.element or Shape(MAX_VALUE_SIZE)

    def _call(self, value: Expr.Call, scope: dict[str, Shape]) -> tuple[float, Shape]:
        # One case per CEL function family, each with the cost CEL's estimator gives it: a table of cases, kept
        # in one function so the costs can be compared side by side.
        function = value.function
        parts = ([value.target] if value.HasField("target") else []) + list(value.args)
        ids = [part.id for part in parts]
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

    def _comprehension(self, value: Expr.Comprehension, scope: dict[str, Shape]) -> tuple[float, Shape]:
        iteration, accumulator = value.iter_var, value.accu_var
        range_cost, over = self.estimate(value.iter_range, scope)
        init_cost, init = self.estimate(value.accu_init, scope)
        element = (over.key or over.element) or Shape(MAX_VALUE_SIZE)  # a map is iterated by its keys
        # map() and filter() build a list as long as the range; all(), exists() a bool; cel.bind the value bound
        accumulated = Shape(over.size, element) if init.size == 0 and over.size else init
        inner = {**scope, iteration: element, accumulator: accumulated}
        condition, _ = self.estimate(value.loop_condition, inner)
        step, _ = self.estimate(value.loop_step, inner)
        result_cost, result = self.estimate(value.result, inner)
        return range_cost + init_cost + over.size * (condition + step) + result_cost, result
