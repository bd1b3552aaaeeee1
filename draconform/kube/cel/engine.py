"""The allocator's side of CEL: `SelectorEngine` evaluates a compiled selector on many devices, each verdict
cached per (expression, device); expressions that can grow values without bound go to the sandbox process."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cel_expr_python import cel

from draconform.kube.cel.environments import CelFeatures, CompiledSelector, environment
from draconform.kube.cel.errors import CelError, runtime_error


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
                from draconform.kube.cel.sandbox import sandbox  # only a run meeting an amplifier starts one

                verdicts = sandbox().evaluate(expression, inputs, self.features)
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
    data = {f"device.{name}": value for name, value in device.items()}  # the qualified variables
    try:
        value = program.eval(data=data)
    except RuntimeError as exc:  # cel-cpp reports some limits (the iteration budget) by raising
        return runtime_error(str(exc))
    kind = value.type()
    if kind == cel.Type.BOOL:
        return bool(value.value())
    if kind == cel.Type.ERROR:
        return runtime_error(str(value))
    return CelError(f"CEL expression must evaluate to bool, got {kind.name()}")
