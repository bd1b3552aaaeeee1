"""CEL device selectors as kube-apiserver compiles them and the DRA allocator evaluates them (KEP-4381 "CEL in
selectors", resource.k8s.io/v1 `CELDeviceSelector`), on Google's cel-cpp through cel-expr-python.

One declaration of the DRA CEL environment, in two forms. The *checking* form types the `device` variable as
upstream declares it: `driver` a string, `attributes` a map of domains to maps of attribute values of any type,
`capacity` a map of domains to maps of `kubernetes.Quantity`, `allowMultipleAllocations` a bool (only with
DRAConsumableCapacity), plus the Kubernetes `quantity()` and `semver()` libraries over their own opaque types and
`includes()` (upstream's 1.37 environment has it whatever DRAListTypeAttributes says, 1.36's only with that gate on:
`CelFeatures.includes`). cel-expr-python has no object types, so `device`'s fields are declared as the qualified
variables `device.driver`, `device.attributes`, ...; CEL's name resolution gives `device.driver` its type, and a
misspelt field is an undeclared name. The checker refuses what upstream's does: a result that is not bool (or dyn),
`quantity == string`, `quantity > int`, undeclared names. The *runtime* form declares the same functions over small
tagged maps (Python implementations cannot take opaque values); the checked program is handed to it as it is
(`serialize` / `deserialize`), so the allocator runs exactly the program the checker typed. A domain the device has
nothing in reads as an empty map, an unknown name is an evaluation error; a list-type attribute is a CEL list, and
`includes()` holds when a list attribute contains the value or a scalar one equals it. Each distinct expression is
compiled once per environment; results are cached per (expression, device).

What upstream accepts and cel-expr-python cannot do (ordering across int/uint/double, two-variable
comprehensions, the lists, sets, regex, URL, IP/CIDR and format libraries, `device` used as a value) is reported
as `CelUnsupported`: validation warns that it could not check it, the allocator treats it as a compile error."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from draconform.kube.featuregates import release_tuple
from draconform.kube.values import (
    LIST_KINDS,
    QUANTITY_TAG,
    SEMVER_TAG,
    SemVer,
    format_quantity,
    parse_quantity,
    parse_semver,
)

# Upstream's CELSelectorExpressionMaxLength: longer expressions are refused before compiling.
MAX_EXPRESSION_LENGTH = 10 * 1024

# cel-cpp stops runaway comprehensions itself (a fixed iteration budget), but nothing bounds the size of
# values: `cel.bind` doubling or chained `replace` grow a string exponentially in the expression's length.
# Expressions that use such amplifiers are evaluated in a sandbox process with a memory cap and a deadline.
AMPLIFIERS = re.compile(r"\bbind\s*\(|\.\s*(?:replace|join|format)\s*\(")
SANDBOX_SECONDS = 5.0  # per batch of devices; generous, a sane selector takes microseconds per device
SANDBOX_MEMORY = 1 << 30
MAX_COMPILED = 10_000  # distinct expressions kept compiled per environment


class CelError(Exception):
    """A selector failed to compile, evaluated to something other than a bool, or hit an evaluation error
    (unknown attribute, overflow, runaway comprehension). The allocator turns it into an AllocationError."""

    @property
    def reason(self) -> str:
        """The reason as kube-apiserver words it, without the "CEL compile error" this module adds."""
        return str(self).removeprefix(COMPILE_ERROR)


COMPILE_ERROR = "CEL compile error: "


class CelUnsupported(CelError):
    """A selector upstream's environment accepts but cel-expr-python cannot check or run (see the module
    docstring). Validation reports it as a warning; for the allocator it is a compile error like any other."""

    def __init__(self, reason: str) -> None:
        super().__init__(COMPILE_ERROR + reason)


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


# ----- the Kubernetes quantity and semver libraries, over tagged maps ------------------------------------------

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
DEVICE_FIELDS = ("driver", "attributes", "capacity", "allowMultipleAllocations")


def _functions(checking: bool, features: CelFeatures) -> list[Any]:
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


# Literal domains looked up in an expression: `device.attributes["gpu.example.com"]` and the capacity twin.
_DOMAIN_LOOKUP = re.compile(r"""\.\s*(attributes|capacity)\s*\[\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')\s*\]""")
# `has(device.driver)`: cel-cpp resolves the qualified name inside has() to the variable itself; a declared field
# of the device is always present, so the test is `true` (padded, so error columns stay where the user wrote them).
_HAS_FIELD = re.compile(r"\bhas\s*\(\s*device\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)")
# What upstream's environment has and cel-expr-python lacks (see CelUnsupported).
_TWO_VARIABLE_MACRO = re.compile(
    r"\.\s*(?:all|exists|existsOne|exists_one|transformList|transformMap|transformMapEntry)\s*\("
    r"\s*[A-Za-z_]\w*\s*,\s*[A-Za-z_]\w*\s*,")
UPSTREAM_ONLY_FUNCTIONS = frozenset({
    # Kubernetes' lists library (not cel-go's ext.Lists, which upstream does not load: slice() and the like are
    # refused there too), the sets extension (cel-cpp reports `sets` and the member as two undeclared names), the
    # regex, URL, IP, CIDR, format and image libraries
    "sum", "min", "max", "isSorted", "indexOf", "lastIndexOf",
    "sets", "sets.contains", "sets.equivalent", "sets.intersects", "contains", "equivalent", "intersects",
    "find", "findAll", "url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath",
    "getQuery", "ip", "isIP", "cidr", "isCIDR", "family", "isCanonical", "isLoopback", "isGlobalUnicast",
    "isLinkLocalMulticast", "isLinkLocalUnicast", "isUnspecified", "containsIP", "containsCIDR", "masked",
    "prefixLength", "format", "format.named", "named", "validate", "image", "isImage", "containsDigest",
    "registry", "repository", "identifier", "tag", "digest",
})
_UNDECLARED = re.compile(r"undeclared reference to '([^']*)'")
_NO_OVERLOAD = re.compile(r"found no matching overload for '([^']*)' applied to '\((.*)\)'")
_NUMBERS = {"int", "uint", "double"}
_ORDERING = {"_<_", "_<=_", "_>_", "_>=_"}


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


class _Environment:
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
                                   extensions=extensions, functions=_functions(checking, features)))
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
            raise _compile_error(str(exc), self.fields) from None
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


def _compile_error(message: str, fields: Sequence[str]) -> CelError:
    """Upstream's reason for a checker error; CelUnsupported where every issue is one upstream would have
    accepted (an expression with a real error as well is refused for that error)."""
    issues = [line.strip() for line in message.replace("[INVALID_ARGUMENT]", "").splitlines()
              if line.strip().startswith(("ERROR:", "INVALID_ARGUMENT: ERROR:"))]
    reasons: list[str] = []
    unsupported: list[str] = []
    for issue in issues or [message]:
        issue = issue.removeprefix("INVALID_ARGUMENT: ").removeprefix("ERROR: ")
        undeclared = _UNDECLARED.search(issue)
        overload = _NO_OVERLOAD.search(issue)
        if undeclared:
            name = undeclared.group(1)
            if name in UPSTREAM_ONLY_FUNCTIONS:
                unsupported.append(f"uses `{'sets' if name in ('contains', 'equivalent', 'intersects') else name}`, "
                                   "which upstream's environment has and draconform's CEL library (cel-expr-python) "
                                   "lacks")
                continue
            if name == "device":
                unsupported.append("uses `device` as a value; draconform's CEL library declares only its fields "
                                   f"({', '.join(f'device.{f}' for f in fields)})")
                continue
            if name.startswith("device."):
                field = name.split(".")[1]
                issue = issue.replace(undeclared.group(0), f"undefined field '{field}'")
            else:  # cel-cpp names the whole qualified name where cel-go names its first identifier
                issue = issue.replace(undeclared.group(0), f"undeclared reference to '{name.split('.')[0]}'")
            issue = issue.replace(" (in container '')", "")
        elif overload:
            function, arguments = overload.group(1), {a.strip() for a in overload.group(2).split(", ")}
            if function in UPSTREAM_ONLY_FUNCTIONS:
                unsupported.append(f"uses `{function}` as upstream's lists library declares it, which "
                                   "draconform's CEL library (cel-expr-python) lacks")
                continue
            if function in _ORDERING and len(arguments) > 1 and arguments <= _NUMBERS:
                unsupported.append(f"compares {' and '.join(sorted(arguments))} with {function.strip('_')}, which "
                                   "upstream allows and draconform's CEL library (cel-expr-python) cannot")
                continue
        reasons.append(issue)
    if unsupported and not reasons:
        return CelUnsupported("; ".join(dict.fromkeys(unsupported)))
    return CelError(f"{COMPILE_ERROR}compilation failed: " + "; ".join(f"ERROR: {reason}" for reason in reasons))


class SelectorEngine:
    """Compiles each distinct selector once and caches its verdict per device.

    A device is identified by any hashable key its caller chooses (driver, pool, device and the slice's
    resourceVersion in practice), so a republished slice is evaluated afresh. `features` are the gates of the
    environment (every one on by default, as the allocator of the current release has them)."""

    def __init__(self, features: CelFeatures | None = None) -> None:
        self.features = features or CelFeatures()
        self._compiled: dict[str, CompiledSelector | CelError] = {}
        self._verdicts: dict[tuple[str, Any], bool | CelError] = {}

    def compile(self, expression: str) -> CompiledSelector:
        """Compile once; a compile error is cached and raised again on every use."""
        cached = self._compiled.get(expression)
        if cached is None:
            try:
                cached = environment(self.features).compile(expression)
            except CelError as exc:
                cached = exc
            self._compiled[expression] = cached
        if isinstance(cached, CelError):
            raise cached
        return cached

    def matches(self, expression: str, device_key: Any, device: Callable[[], dict[str, Any]]) -> bool:
        """Whether the device satisfies the selector. `device` builds the CEL input lazily (only on a cache
        miss). Raises CelError on any evaluation error, which upstream treats as aborting the allocation."""
        verdict = self.evaluate_many(expression, [(device_key, device)])[0]
        if isinstance(verdict, CelError):
            raise verdict
        return verdict

    def evaluate_many(self, expression: str,
                      devices: Sequence[tuple[Any, Callable[[], dict[str, Any]]]]) -> list[bool | CelError]:
        """Verdicts for many devices at once (errors returned, not raised), evaluating only cache misses; a
        compile error is raised."""
        selector = self.compile(expression)
        missing = [(key, build) for key, build in devices if (expression, key) not in self._verdicts]
        if missing:
            inputs = [_with_domains(selector, build()) for _, build in missing]
            if selector.sandboxed:
                verdicts = _sandbox().evaluate(expression, inputs, self.features)
            else:
                verdicts = [_verdict(selector.program, item) for item in inputs]
            for (key, _), verdict in zip(missing, verdicts, strict=True):
                self._verdicts[(expression, key)] = verdict
        return [self._verdicts[(expression, key)] for key, _ in devices]


_ENVIRONMENTS: dict[CelFeatures, _Environment] = {}


def environment(features: CelFeatures) -> _Environment:
    """The environment of a feature set, built once per process (a few milliseconds each)."""
    built = _ENVIRONMENTS.get(features)
    if built is None:
        built = _ENVIRONMENTS[features] = _Environment(features)
    return built


def check(expression: str, features: CelFeatures | None = None, selector: bool = True) -> CompiledSelector:
    """Compile `expression` as kube-apiserver does on create (raises CelError with upstream's reason): a
    selector must yield a bool; another expression (a derived attribute's) may yield any type."""
    env = environment(features or CelFeatures())
    return env.compile(expression) if selector else env.compile_value(expression)


def _with_domains(selector: CompiledSelector, device: dict[str, Any]) -> dict[str, Any]:
    """Empty maps for the literal domains the expression looks up and the device lacks."""
    if not selector.domains:
        return device
    device = dict(device)
    for field_name, domain in selector.domains:
        present = device.get(field_name) or {}
        if domain not in present:
            device[field_name] = {**present, domain: {}}
    return device


def _verdict(program: Any, device: dict[str, Any]) -> bool | CelError:
    data = {f"device.{name}": value for name, value in device.items()}  # the qualified variables
    try:
        value = program.eval(data=data)
    except RuntimeError as exc:  # cel-cpp reports some limits (the iteration budget) by raising
        return _error(_clean(str(exc)))
    kind = value.type()
    if kind == cel.Type.BOOL:
        return bool(value.value())
    if kind == cel.Type.ERROR:
        return _error(_clean(str(value)))
    return CelError(f"CEL expression must evaluate to bool, got {kind.name()}")


def _error(message: str) -> CelError:
    if "budget" in message.lower():
        return CelError(f"CEL evaluation stopped: the expression exceeded its iteration budget ({message})")
    return CelError(f"CEL runtime error: {message}")


class _Sandbox:
    """A child Python process (`python -m ...cel_sandbox`) that evaluates amplifying expressions under a memory
    cap; killed and replaced when a batch overruns its deadline or the child dies, so a runaway selector
    yields an error, never a hang. Requests and answers are JSON lines over its stdin and stdout."""

    def __init__(self) -> None:
        self._process: Any = None  # a subprocess.Popen[bytes] once started

    def evaluate(self, expression: str, devices: list[dict[str, Any]],
                 features: CelFeatures) -> list[bool | CelError]:
        import select  # only a run that meets an amplifying selector pays for these
        import subprocess

        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "draconform.kube.cel_sandbox", str(SANDBOX_MEMORY)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        try:
            request = {"expression": expression, "devices": devices,
                       "features": [features.consumable_capacity, features.includes]}
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
            ready, _, _ = select.select([process.stdout], [], [], SANDBOX_SECONDS)
            line = process.stdout.readline() if ready else None
        except (BrokenPipeError, OSError):
            line = b""
        if line:
            return [value if ok else CelError(value) for ok, value in json.loads(line)]
        self._stop()
        if line is None:
            why = f"no result within {SANDBOX_SECONDS:g} s"
        else:
            why = f"it needed more than {SANDBOX_MEMORY >> 20} MiB"
        return [CelError(f"CEL evaluation stopped: {why} (runaway expression)")] * len(devices)

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
        self._process = None


_SANDBOX: _Sandbox | None = None


def _sandbox() -> _Sandbox:
    global _SANDBOX
    if _SANDBOX is None:
        _SANDBOX = _Sandbox()
    return _SANDBOX


def serve_sandbox(memory: int) -> None:  # pragma: no cover - runs in the child process
    """The child's loop: one JSON request per line in, one JSON answer per line out."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    for line in sys.stdin.buffer:
        request = json.loads(line)
        selector = SelectorEngine(CelFeatures(*request["features"])).compile(request["expression"])
        answers: list[tuple[bool, Any]] = []
        for device in request["devices"]:
            try:
                verdict = _verdict(selector.program, device)
            except MemoryError:
                verdict = CelError(f"CEL evaluation stopped: it needed more than {memory >> 20} MiB "
                                   "(runaway expression)")
            answers.append((False, str(verdict)) if isinstance(verdict, CelError) else (True, verdict))
        sys.stdout.write(json.dumps(answers) + "\n")
        sys.stdout.flush()


def abbreviate(expression: str, limit: int = 80) -> str:
    """An expression short enough for an error message."""
    flat = " ".join(expression.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")


def _clean(message: str) -> str:
    return " ".join(message.split())


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
