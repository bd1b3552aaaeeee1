"""The worst-case cost of a DRA CEL selector, estimated before it ever runs, the way kube-apiserver does.

Upstream compiles each selector with cel-go and runs cel-go's static cost estimator over the checked
expression, with the sizes the DRA environment declares: `device.attributes` and `device.capacity` map at
most 32 domains to at most 32 names each, an attribute value is at most 64 long (strings; with
DRAListTypeAttributes a list holds at most 48 values), the driver name at most 63 characters. A selector whose
estimated maximum exceeds `CELSelectorExpressionMaxCost` (1,000,000, the same in 1.34-1.37) is refused on
create as too complex; the scheduler also stops any evaluation at that cost at run time (here the allocator's
iteration budget is that second line of defence).

This module restates that estimator's model over its own small CEL parser: every identifier, field
selection, index and function call costs 1; string functions and comparisons traverse their strings at 0.1 per
character; a comprehension (`all`, `exists`, `exists_one`, `filter`, `map`) costs its range plus, per
element of the largest possible range, its body and its loop bookkeeping. It agrees with cel-go on the shapes
selectors take (lookups, comparisons, nested comprehensions over attributes); it is an estimate of an
estimate, so on expressions within a few percent of the limit it may differ from kube-apiserver."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost
MAX_MAP_ENTRIES = 32  # ResourceSliceMaxAttributesAndCapacitiesPerDevice: domains, and names per domain
MAX_VALUE_SIZE = 64  # DeviceAttributeMaxValueLength; also bounds a list attribute (at most 48 values)
MAX_DRIVER = 63  # DriverNameMaxLength
TRAVERSAL = 0.1  # cel-go's cost per character for string traversal
MACROS = {"all", "exists", "exists_one", "filter", "map"}
STRING_FUNCTIONS = {"contains", "startsWith", "endsWith", "matches", "lowerAscii", "upperAscii", "trim",
                    "replace", "split", "indexOf", "lastIndexOf", "substring", "charAt", "join", "format"}

_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>[rRbB]{0,2}(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
  | (?P<number>0x[0-9a-fA-F]+u?|\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?u?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|[<>+\-*/%!?:.,\[\](){}])
""", re.VERBOSE)


class CostError(ValueError):
    """The expression could not be parsed for estimation (the CEL compiler reports the real error)."""


@dataclass(frozen=True)
class Estimate:
    """Worst-case cost of a sub-expression and the largest size its value can have (string length, list or
    map entries), with the size of one element where the value is a collection."""

    cost: float
    size: float = 1
    element: Estimate | None = None


_DEVICE_VALUE = Estimate(0, MAX_VALUE_SIZE, Estimate(0, MAX_VALUE_SIZE))  # an attribute: string or list
_INNER_MAP = Estimate(0, MAX_MAP_ENTRIES, _DEVICE_VALUE)
_ATTRIBUTES = Estimate(0, MAX_MAP_ENTRIES, _INNER_MAP)
_DEVICE_FIELDS = {"driver": Estimate(0, MAX_DRIVER), "attributes": _ATTRIBUTES, "capacity": _ATTRIBUTES,
                  "allowMultipleAllocations": Estimate(0, 1)}
_DEVICE = Estimate(0, len(_DEVICE_FIELDS))
_DEVICE_REF = Estimate(1, len(_DEVICE_FIELDS))  # the `device` variable once read: its fields have known shapes


def estimate_cost(expression: str) -> int:
    """The estimated worst-case cost of a selector."""
    parser = _Parser(expression)
    found = parser.expression({"device": _DEVICE})
    if parser.peek() is not None:
        raise CostError(f"unexpected {parser.peek()!r}")
    return math.ceil(found.cost)


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise CostError(f"unexpected character {text[position]!r}")
        position = match.end()
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append((kind, match.group()))
    return tokens


class _Parser:
    """Recursive descent over CEL's grammar, estimating as it goes (scopes map names to estimates)."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.index = 0

    def peek(self) -> str | None:
        return self.tokens[self.index][1] if self.index < len(self.tokens) else None

    def take(self, wanted: str | None = None) -> tuple[str, str]:
        if self.index >= len(self.tokens):
            raise CostError("unexpected end of expression")
        token = self.tokens[self.index]
        if wanted is not None and token[1] != wanted:
            raise CostError(f"expected {wanted!r}, got {token[1]!r}")
        self.index += 1
        return token

    # expression := or ('?' expression ':' expression)?
    def expression(self, scope: dict[str, Estimate]) -> Estimate:
        condition = self.binary(scope, 0)
        if self.peek() != "?":
            return condition
        self.take("?")
        yes = self.expression(scope)
        self.take(":")
        no = self.expression(scope)
        bigger = yes if yes.size >= no.size else no
        return Estimate(condition.cost + max(yes.cost, no.cost), bigger.size, bigger.element)

    _LEVELS = (("||",), ("&&",), ("==", "!=", "<", "<=", ">", ">=", "in"), ("+", "-"), ("*", "/", "%"))

    def binary(self, scope: dict[str, Estimate], level: int) -> Estimate:
        if level == len(self._LEVELS):
            return self.unary(scope)
        left = self.binary(scope, level + 1)
        while self.peek() in self._LEVELS[level]:
            operator = self.take()[1]
            right = self.binary(scope, level + 1)
            left = _operator(operator, left, right)
        return left

    def unary(self, scope: dict[str, Estimate]) -> Estimate:
        if self.peek() in ("!", "-"):
            self.take()
            inner = self.unary(scope)
            return Estimate(inner.cost + 1, inner.size)
        return self.member(scope)

    def member(self, scope: dict[str, Estimate]) -> Estimate:
        value = self.primary(scope)
        while self.peek() in (".", "["):
            if self.take()[1] == "[":
                key = self.expression(scope)
                self.take("]")
                element = value.element or Estimate(0, MAX_VALUE_SIZE)
                value = Estimate(value.cost + key.cost + 1, element.size, element.element)
                continue
            name = self.take()[1]
            if self.peek() == "(":
                value = self.call(scope, name, value)
            else:
                field = _DEVICE_FIELDS.get(name) if value is _DEVICE_REF else None
                shape = field or value.element or Estimate(0, MAX_VALUE_SIZE)
                value = Estimate(value.cost + 1, shape.size, shape.element)
        return value

    def primary(self, scope: dict[str, Estimate]) -> Estimate:
        kind, text = self.take()
        if kind == "string":
            body = text.lstrip("rRbB")
            quote = 3 if body[:3] in ("'''", '"""') else 1
            return Estimate(0, max(len(body) - 2 * quote, 0))
        if kind == "number":
            return Estimate(0, 1)
        if text == "(":
            inner = self.expression(scope)
            self.take(")")
            return inner
        if text == "[":
            items = self.items(scope, "]")
            biggest = max(items, key=lambda e: e.size, default=Estimate(0, 0))
            return Estimate(sum(e.cost for e in items), len(items), Estimate(0, biggest.size, biggest.element))
        if text == "{":
            entries = self.items(scope, "}", pairs=True)
            biggest = max(entries, key=lambda e: e.size, default=Estimate(0, 0))
            return Estimate(sum(e.cost for e in entries), len(entries) // 2,
                            Estimate(0, biggest.size, biggest.element))
        if kind != "name":
            raise CostError(f"unexpected {text!r}")
        if text in ("true", "false", "null"):
            return Estimate(0, 1)
        if self.peek() == "(":
            return self.call(scope, text, None)
        if text == "cel" and self.peek() == ".":
            return self._qualified(scope)
        known = scope.get(text)
        if known is None:
            return Estimate(1, MAX_VALUE_SIZE)
        return Estimate(1, known.size, known.element) if known is not _DEVICE else _DEVICE_REF

    def _qualified(self, scope: dict[str, Estimate]) -> Estimate:
        """`cel.bind(name, init, body)`: the body sees the name with the init's shape."""
        self.take(".")
        name = self.take()[1]
        if name != "bind":
            return self.call(scope, f"cel.{name}", None)
        self.take("(")
        variable = self.take()[1]
        self.take(",")
        init = self.expression(scope)
        self.take(",")
        body = self.expression({**scope, variable: Estimate(0, init.size, init.element)})
        self.take(")")
        return Estimate(init.cost + body.cost, body.size, body.element)

    def items(self, scope: dict[str, Estimate], end: str, pairs: bool = False) -> list[Estimate]:
        found: list[Estimate] = []
        while self.peek() != end:
            found.append(self.expression(scope))
            if pairs:
                self.take(":")
                found.append(self.expression(scope))
            if self.peek() != ",":
                break
            self.take(",")
        self.take(end)
        return found

    def call(self, scope: dict[str, Estimate], name: str, target: Estimate | None) -> Estimate:
        self.take("(")
        if target is not None and name in MACROS:
            variable = self.take()[1]
            self.take(",")
            element = target.element or Estimate(0, MAX_VALUE_SIZE)
            body = self.expression({**scope, variable: element})
            self.take(")")
            return _comprehension(name, target, body)
        arguments = self.items(scope, ")")
        base = (target.cost if target else 0) + sum(a.cost for a in arguments) + 1
        if name == "has" and arguments:
            return Estimate(arguments[0].cost, 1)
        if name in STRING_FUNCTIONS:
            traversed = (target.size if target else 0) + sum(a.size for a in arguments)
            return Estimate(base + math.ceil(TRAVERSAL * traversed), traversed)
        return Estimate(base, MAX_VALUE_SIZE)


def _operator(operator: str, left: Estimate, right: Estimate) -> Estimate:
    cost = left.cost + right.cost + 1
    if operator in ("==", "!=", "<", "<=", ">", ">="):
        return Estimate(cost + math.ceil(TRAVERSAL * min(left.size, right.size)), 1)
    if operator == "in":  # membership: one comparison per element of the right side
        return Estimate(cost + right.size * (1 + math.ceil(TRAVERSAL * left.size)), 1)
    if operator == "+":
        size = left.size + right.size
        return Estimate(cost + math.ceil(TRAVERSAL * size), size, left.element or right.element)
    return Estimate(cost, max(left.size, right.size))


def _comprehension(name: str, target: Estimate, body: Estimate) -> Estimate:
    """Range cost, then per element: the body, the loop condition and the accumulator step."""
    count = target.size
    per_element = body.cost + 2
    if name in ("map", "filter"):  # the accumulated list grows by one element per step
        per_element += 1 + math.ceil(TRAVERSAL * count)
        element = Estimate(0, body.size, body.element) if name == "map" else target.element
        return Estimate(target.cost + 1 + count * per_element, count, element)
    return Estimate(target.cost + 1 + count * per_element, 1)
