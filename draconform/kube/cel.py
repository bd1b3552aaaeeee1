"""CEL device selectors as the DRA allocator evaluates them (KEP-4381 "CEL in selectors", resource.k8s.io/v1
`CELDeviceSelector`), on Google's cel-cpp through cel-expr-python.

The environment has one variable, `device`, with `driver`, `attributes[domain].name`, `capacity[domain].name`
and `allowMultipleAllocations`; a domain the device has nothing in reads as an empty map, an unknown name is an
evaluation error. A list-type attribute (DRAListTypeAttributes) is a CEL list of its values, so `in`, `size()`,
`exists()` and `all()` work on it, and upstream's `includes()` helper holds when a list attribute contains the value
or a scalar one equals it (whatever DRAListTypeAttributes says, as upstream's allocator answers). Quantities and
semantic versions cross into CEL as small tagged maps so that the Kubernetes `quantity()` / `semver()` libraries can be
provided as typed Python overloads. Each distinct expression is compiled once; results are cached per
(expression, device)."""

from __future__ import annotations

import json
import re
import select
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_strings

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


class CelError(Exception):
    """A selector failed to compile, evaluated to something other than a bool, or hit an evaluation error
    (unknown attribute, overflow, runaway comprehension). The allocator turns it into an AllocationError."""


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


def _functions() -> list[Any]:
    T = cel.Type
    tagged = T.Map(T.STRING, T.STRING)
    # includes(): one overload per attribute type, scalar and list, since cel-cpp matches overloads on the
    # runtime type and a dyn parameter would match nothing
    includes = [cel.Overload(f"{name}{'_list' if listed else ''}_includes", T.BOOL,
                             [T.List(kind) if listed else kind, kind], is_member=True, impl=_includes)
                for name, kind in (("int", T.INT), ("string", T.STRING), ("bool", T.BOOL), ("tagged", tagged))
                for listed in (False, True)]

    def member(name: str, overload_id: str, result: Any, params: list[Any], impl: Callable[..., Any]) -> Any:
        return cel.FunctionDecl(name, [cel.Overload(overload_id, result, params, is_member=True, impl=impl)])

    def sign(value: Any) -> int:
        amount = _quantity_of(value)
        return (amount > 0) - (amount < 0)

    return [
        cel.FunctionDecl("includes", includes),
        cel.FunctionDecl("quantity", [cel.Overload("quantity_string", tagged, [T.STRING],
                                                   impl=lambda s: quantity_value(parse_quantity(s)))]),
        cel.FunctionDecl("isQuantity", [cel.Overload("is_quantity_string", T.BOOL, [T.STRING], impl=_is_quantity)]),
        cel.FunctionDecl("semver", [
            cel.Overload("semver_string", tagged, [T.STRING], impl=lambda s: semver_value(parse_semver(s))),
            cel.Overload("semver_string_bool", tagged, [T.STRING, T.BOOL],
                         impl=lambda s, normalize: semver_value(parse_semver(s, normalize=normalize))),
        ]),
        cel.FunctionDecl("isSemver", [
            cel.Overload("is_semver_string", T.BOOL, [T.STRING], impl=_is_semver),
            cel.Overload("is_semver_string_bool", T.BOOL, [T.STRING, T.BOOL], impl=lambda s, n: _is_semver_n(s, n)),
        ]),
        member("isGreaterThan", "tagged_greater", T.BOOL, [tagged, tagged], lambda a, b: _compare(a, b) > 0),
        member("isLessThan", "tagged_less", T.BOOL, [tagged, tagged], lambda a, b: _compare(a, b) < 0),
        member("compareTo", "tagged_compare", T.INT, [tagged, tagged], _compare),
        member("sign", "quantity_sign", T.INT, [tagged], sign),
        member("isInteger", "quantity_is_integer", T.BOOL, [tagged], lambda v: _quantity_of(v).denominator == 1),
        member("asInteger", "quantity_as_integer", T.INT, [tagged], _as_integer),
        member("asApproximateFloat", "quantity_as_float", T.DOUBLE, [tagged], lambda v: float(_quantity_of(v))),
        cel.FunctionDecl("add", [
            cel.Overload("quantity_add", tagged, [tagged, tagged], is_member=True, impl=_add),
            cel.Overload("quantity_add_int", tagged, [tagged, T.INT], is_member=True, impl=_add),
        ]),
        cel.FunctionDecl("sub", [
            cel.Overload("quantity_sub", tagged, [tagged, tagged], is_member=True, impl=_sub),
            cel.Overload("quantity_sub_int", tagged, [tagged, T.INT], is_member=True, impl=_sub),
        ]),
        member("major", "semver_major", T.INT, [tagged], lambda v: _semver_of(v).major),
        member("minor", "semver_minor", T.INT, [tagged], lambda v: _semver_of(v).minor),
        member("patch", "semver_patch", T.INT, [tagged], lambda v: _semver_of(v).patch),
    ]


def _is_semver_n(text: str, normalize: bool) -> bool:
    try:
        parse_semver(text, normalize=normalize)
    except ValueError:
        return False
    return True


# Literal domains looked up in an expression: `device.attributes["gpu.example.com"]` and the capacity twin.
_DOMAIN_LOOKUP = re.compile(r"""\.\s*(attributes|capacity)\s*\[\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')\s*\]""")


@dataclass(frozen=True)
class CompiledSelector:
    expression: str
    program: Any
    sandboxed: bool
    # Domains the expression names literally; a device without them gets empty maps there, the way upstream's
    # lazily-filled domain maps behave. The driver's own domain is always there; any other domain computed at
    # run time that no device has is not covered: that lookup errors.
    domains: frozenset[tuple[str, str]]


class SelectorEngine:
    """Compiles each distinct selector once and caches its verdict per device.

    A device is identified by any hashable key its caller chooses (driver, pool, device and the slice's
    resourceVersion in practice), so a republished slice is evaluated afresh."""

    def __init__(self) -> None:
        self._env = cel.NewEnv(
            variables={"device": cel.Type.Map(cel.Type.STRING, cel.Type.DYN)},
            extensions=[ext_bindings.ExtBindings(), ext_strings.ExtStrings()],
            functions=_functions(),
        )
        self._compiled: dict[str, CompiledSelector | CelError] = {}
        self._verdicts: dict[tuple[str, Any], bool | CelError] = {}

    def compile(self, expression: str) -> CompiledSelector:
        """Compile once; a compile error is cached and raised again on every use."""
        cached = self._compiled.get(expression)
        if cached is None:
            cached = self._compile(expression)
            self._compiled[expression] = cached
        if isinstance(cached, CelError):
            raise cached
        return cached

    def _compile(self, expression: str) -> CompiledSelector | CelError:
        size = len(expression.encode("utf-8"))
        if size > MAX_EXPRESSION_LENGTH:
            return CelError(f"CEL expression is {size} bytes long; at most {MAX_EXPRESSION_LENGTH} are allowed")
        try:
            program = self._env.compile(expression)
        except RuntimeError as exc:
            return CelError(f"CEL compile error: {_clean(str(exc))}")
        result = program.return_type()
        if result != cel.Type.BOOL and result != cel.Type.DYN:
            return CelError(f"CEL expression must evaluate to bool, not {result.name()}")
        domains = frozenset(
            (m.group(1), m.group(2) if m.group(2) is not None else m.group(3) or "")
            for m in _DOMAIN_LOOKUP.finditer(expression)
        )
        return CompiledSelector(expression, program, bool(AMPLIFIERS.search(expression)), domains)

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
                verdicts = _sandbox().evaluate(expression, inputs)
            else:
                verdicts = [_verdict(selector.program, item) for item in inputs]
            for (key, _), verdict in zip(missing, verdicts, strict=True):
                self._verdicts[(expression, key)] = verdict
        return [self._verdicts[(expression, key)] for key, _ in devices]



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
    try:
        value = program.eval(data={"device": device})
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
        self._process: subprocess.Popen[bytes] | None = None

    def evaluate(self, expression: str, devices: list[dict[str, Any]]) -> list[bool | CelError]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "draconform.kube.cel_sandbox", str(SANDBOX_MEMORY)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps({"expression": expression, "devices": devices}).encode() + b"\n")
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
    engine = SelectorEngine()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        selector = engine.compile(request["expression"])
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
