"""The DRA CEL environment of a release's gates, in its checking and its runtime form (see the package
docstring), and the one compiler: `check` as kube-apiserver compiles a selector on create, `environment(features)`
for the allocator's engine, each distinct expression compiled once per process."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from draconform.kube.cel.errors import COMPILE_ERROR, CelError, CelUnsupported, compile_error
from draconform.kube.cel.library import QUANTITY, functions
from draconform.kube.featuregates import release_tuple

# Upstream's CELSelectorExpressionMaxLength: longer expressions are refused before compiling.
MAX_EXPRESSION_LENGTH = 10 * 1024

# cel-cpp stops runaway comprehensions itself (a fixed iteration budget), but nothing bounds the size of
# values: `cel.bind` doubling or chained `replace` grow a string exponentially in the expression's length.
# Expressions that use such amplifiers are evaluated in a sandbox process with a memory cap and a deadline.
AMPLIFIERS = re.compile(r"\bbind\s*\(|\.\s*(?:replace|join|format)\s*\(")
MAX_COMPILED = 10_000  # distinct expressions kept compiled per environment

DEVICE_FIELDS = ("driver", "attributes", "capacity", "allowMultipleAllocations")


@dataclass(frozen=True)
class CelFeatures:
    """The gates that change the DRA CEL environment: DRAConsumableCapacity declares
    `device.allowMultipleAllocations`; `includes()` is there from 1.37, and in 1.36 only with
    DRAListTypeAttributes on. 1.34-1.37 compile new expressions against the same base libraries (each release's
    compatibility version is 1.33 or later)."""

    consumable_capacity: bool = True
    includes: bool = True

    @classmethod
    def of(cls, gates: Any) -> CelFeatures:
        """The features a `FeatureGates` enables."""
        return cls(gates.enabled("DRAConsumableCapacity"), has_includes(gates))


def has_includes(gates: Any) -> bool:
    """Whether the CEL environment of `gates` (a `FeatureGates`: its release and values) declares `includes()`."""
    return release_tuple(gates.release) >= (1, 37) or bool(gates.enabled("DRAListTypeAttributes"))


# Literal domains looked up in an expression: `device.attributes["gpu.example.com"]` and the capacity twin.
_DOMAIN_LOOKUP = re.compile(r"""\.\s*(attributes|capacity)\s*\[\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')\s*\]""")
# `has(device.driver)`: cel-cpp resolves the qualified name inside has() to the variable itself; a declared field
# of the device is always present, so the test is `true` (padded, so error columns stay where the user wrote them).
_HAS_FIELD = re.compile(r"\bhas\s*\(\s*device\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)")
# What upstream's environment has and cel-expr-python lacks (see CelUnsupported).
_TWO_VARIABLE_MACRO = re.compile(
    r"\.\s*(?:all|exists|existsOne|exists_one|transformList|transformMap|transformMapEntry)\s*\("
    r"\s*[A-Za-z_]\w*\s*,\s*[A-Za-z_]\w*\s*,")


@dataclass(frozen=True)
class CompiledSelector:
    expression: str
    program: Any
    sandboxed: bool
    # Domains the expression names literally; a device without them gets empty maps there, the way upstream's
    # lazily-filled domain maps behave. The driver's own domain is always there; any other domain computed at
    # run time that no device has is not covered: that lookup errors.
    domains: frozenset[tuple[str, str]]
    # The checked expression (a serialized cel.expr.CheckedExpr in a google.protobuf.Any): its AST with every
    # node's type, for the cost estimate (draconform/validation/celcost.py).
    checked: bytes = b""
    result_type: str = "bool"


class Environment:
    """The checking and the runtime form of the DRA CEL environment for one set of features."""

    def __init__(self, features: CelFeatures) -> None:
        T = cel.Type
        self.features = features
        self.fields = DEVICE_FIELDS if features.consumable_capacity else DEVICE_FIELDS[:3]
        extensions = [ext_bindings.ExtBindings(), ext_strings.ExtStrings(version=2), ext_optional.ExtOptional()]
        envs = []
        for checking in (True, False):
            value = T.AbstractType(QUANTITY) if checking else T.Map(T.STRING, T.STRING)
            declared = {"device.driver": T.STRING,
                        "device.attributes": T.Map(T.STRING, T.Map(T.STRING, T.DYN)),
                        "device.capacity": T.Map(T.STRING, T.Map(T.STRING, value)),
                        "device.allowMultipleAllocations": T.BOOL}
            envs.append(cel.NewEnv(variables={f"device.{name}": declared[f"device.{name}"] for name in self.fields},
                                   extensions=extensions, functions=functions(checking, features)))
        self.checking, self.runtime = envs
        # expression -> its compiled selector or compile error, shared by every caller in the process (the API
        # server's validation and the allocator use the same programs); bounded, as input can be adversarial
        self._compiled: dict[str, CompiledSelector | CelError] = {}

    def compile(self, expression: str) -> CompiledSelector:
        """Type-check a selector and build its runtime program, once per process; raises CelError
        (CelUnsupported for what only the library lacks) with upstream's reason, also when the result is not a
        bool (or of unknown type)."""
        selector = self.compile_value(expression)
        if selector.result_type not in ("bool", "dyn"):
            raise CelError(f"{COMPILE_ERROR}must evaluate to bool or the unknown type, not {selector.result_type}")
        return selector

    def compile_value(self, expression: str) -> CompiledSelector:
        """Type-check an expression of any result type (a derived attribute's) and build its program."""
        found = self._compiled.get(expression)
        if found is None:
            try:
                found = self._compile(expression)
            except CelError as exc:
                found = exc
            if len(self._compiled) >= MAX_COMPILED:
                self._compiled.clear()
            self._compiled[expression] = found
        if isinstance(found, CelError):
            raise found
        return found

    def _compile(self, expression: str) -> CompiledSelector:
        try:
            size = len(expression.encode("utf-8"))
        except UnicodeEncodeError as exc:  # a lone surrogate, which no API object can carry
            raise CelError(f"{COMPILE_ERROR}not valid UTF-8 at character {exc.start}") from None
        if size > MAX_EXPRESSION_LENGTH:
            raise CelError(f"CEL expression is {size} bytes long; at most {MAX_EXPRESSION_LENGTH} are allowed")
        code = _mask_literals(expression)  # what is code, not inside a string literal or a comment
        source = expression
        for match in reversed(list(_HAS_FIELD.finditer(code))):
            source = source[:match.start()] + self._presence(match) + source[match.end():]
        if _TWO_VARIABLE_MACRO.search(code):
            raise CelUnsupported("uses a two-variable comprehension, which upstream's environment has and "
                                 "draconform's CEL library (cel-expr-python) lacks")
        try:
            checked = self.checking.compile(source)
        except RuntimeError as exc:
            raise compile_error(str(exc), self.fields) from None
        result = checked.return_type()
        serialized = checked.serialize()
        program = self.runtime.deserialize(serialized)
        domains = frozenset(
            (m.group(1), m.group(2) if m.group(2) is not None else m.group(3) or "")
            for m in _DOMAIN_LOOKUP.finditer(expression)
        )
        return CompiledSelector(expression, program, bool(AMPLIFIERS.search(expression)), domains, serialized,
                                _type_name(result))

    def _presence(self, match: re.Match[str]) -> str:
        if match.group(1) not in self.fields:
            return match.group(0)  # left to the checker: an undeclared name
        text = match.group(0)
        return "(true" + " " * (len(text) - 6) + ")"


_LITERAL = re.compile(r"""[rRbB]{0,2}(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")"""
                      r"|//[^\n]*")


def _mask_literals(expression: str) -> str:
    """`expression` with every string literal and comment blanked out (same length, so positions agree)."""
    return _LITERAL.sub(lambda m: " " * len(m.group(0)), expression)


def _type_name(kind: Any) -> str:
    name = str(kind.name())
    return {"BOOL": "bool", "INT": "int", "UINT": "uint", "DOUBLE": "double", "STRING": "string", "BYTES": "bytes",
            "DYN": "dyn", "NULL": "null_type"}.get(name, name.lower() if name.isupper() else name)


_ENVIRONMENTS: dict[CelFeatures, Environment] = {}


def environment(features: CelFeatures) -> Environment:
    """The environment of a feature set, built once per process (a few milliseconds each)."""
    built = _ENVIRONMENTS.get(features)
    if built is None:
        built = _ENVIRONMENTS[features] = Environment(features)
    return built


def check(expression: str, features: CelFeatures | None = None, selector: bool = True) -> CompiledSelector:
    """Compile `expression` as kube-apiserver does on create (raises CelError with upstream's reason): a
    selector must yield a bool; another expression (a derived attribute's) may yield any type."""
    env = environment(features or CelFeatures())
    return env.compile(expression) if selector else env.compile_value(expression)
