"""Variants anchored to named functions: an `Override` swaps one function or method of the project's code, named
by module and qualified name, for its defective version written in draconform.mutation (a `Replace` gives the
whole defective function, a `Wrap` receives the original and changes what goes in or comes out). A refactor
that keeps the function's name and signature keeps the variant working; one that renames or re-shapes it is
reported by `check_overrides`, naming the variant and the target.

Overrides are installed in the process that runs the variant and in every process it starts: the runner puts
draconform/mutation/bootstrap (a `sitecustomize` module) first on PYTHONPATH and names the variant in
DRACONFORM_VARIANT; `install_from_environment` then swaps each target as its module finishes loading, before any
other module can import it. The code a normal run executes never sees either."""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

VARIANT_ENV = "DRACONFORM_VARIANT"
BOOTSTRAP_DIR = Path(__file__).parent / "bootstrap"


class OverrideError(Exception):
    """An override whose target no longer exists, or no longer takes the arguments its defect expects."""


@dataclass(frozen=True)
class Replace:
    """Run `function` instead of the target: same parameters, the defect written out in full."""

    target: str  # "draconform.reference.drivers.plugin:NodePlugin._key"
    function: Callable[..., Any]


@dataclass(frozen=True)
class Wrap:
    """Run `function(original, *args, **kwargs)` instead of the target: the defect changes what the correct
    code is given or what it answers, and the rest stays the project's own."""

    target: str
    function: Callable[..., Any]


Override = Replace | Wrap


def _split(target: str) -> tuple[str, list[str]]:
    module, _, qualname = target.partition(":")
    if not module or not qualname:
        raise OverrideError(f"override target {target!r}: expected module:Qualified.name")
    return module, qualname.split(".")


def _owner(module: ModuleType, target: str) -> tuple[object, str, Callable[..., Any]]:
    """The object holding the target (its module or class), the attribute name, and the function now there."""
    _, parts = _split(target)
    owner: object = module
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
        if owner is None:
            raise OverrideError(f"override target {target}: {part} does not exist")
    current = inspect.getattr_static(owner, parts[-1], None)
    if not inspect.isfunction(current):
        raise OverrideError(f"override target {target}: no function or method of that name")
    return owner, parts[-1], current


def _parameters(function: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(function).parameters)


def problems(variant_name: str, overrides: Iterable[Override]) -> list[str]:
    """What is wrong with `overrides` against the current code (empty when each target exists as a function and
    its defect takes the same parameters): the fast check that keeps variants true as the code moves."""
    found = []
    for override in overrides:
        module_name, _ = _split(override.target)
        try:
            _, _, current = _owner(importlib.import_module(module_name), override.target)
        except (ImportError, OverrideError) as error:
            found.append(f"variant {variant_name}: {error}")
            continue
        given = _parameters(override.function)
        expected = _parameters(current) if isinstance(override, Replace) else ["original", *_parameters(current)]
        if given != expected:
            found.append(f"variant {variant_name}: override of {override.target} takes ({', '.join(given)}), "
                         f"the code now needs ({', '.join(expected)})")
    return found


def apply(module: ModuleType, overrides: Iterable[Override]) -> None:
    """Swap each target of `module` for its defect."""
    for override in overrides:
        owner, name, current = _owner(module, override.target)
        if isinstance(override, Replace):
            swapped = override.function
        else:
            swapped = functools.wraps(current)(_bind(override.function, current))
        setattr(owner, name, swapped)


def _bind(function: Callable[..., Any], original: Callable[..., Any]) -> Callable[..., Any]:
    # a plain function, not a partial, so that as a method it still receives self
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return function(original, *args, **kwargs)

    return wrapped


class _Loader(importlib.abc.Loader):
    """Runs the module's own loader, then swaps the module's targets before anyone else sees it."""

    def __init__(self, loader: importlib.abc.Loader, overrides: Sequence[Override]) -> None:
        self._loader = loader
        self._overrides = overrides

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        apply(module, self._overrides)

    def __getattr__(self, name: str) -> Any:
        # get_code, is_package, ... as the module's own loader answers them; a module run as __main__
        # (python -m) executes its code in a namespace of its own, so its targets are never swapped: keep
        # targets out of entry-point modules
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, pending: dict[str, list[Override]]) -> None:
        self._pending = pending

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        overrides = self._pending.pop(fullname, None)
        if overrides is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader, overrides)
                return spec
        return None


def install(overrides: Iterable[Override]) -> None:
    """Swap every target in this process: now for modules already loaded, else as each one loads."""
    pending: dict[str, list[Override]] = {}
    for override in overrides:
        pending.setdefault(_split(override.target)[0], []).append(override)
    for name in [name for name in pending if name in sys.modules]:
        apply(sys.modules[name], pending.pop(name))
    if pending:
        sys.meta_path.insert(0, _Finder(pending))


def install_from_environment() -> None:
    """Install the overrides of the variant DRACONFORM_VARIANT names, if any (called by bootstrap/sitecustomize)."""
    name = os.environ.get(VARIANT_ENV)
    if not name:
        return
    from draconform.mutation.catalogue import variant_named

    install(variant_named(name).overrides)


def environment(variant_name: str, env: dict[str, str]) -> dict[str, str]:
    """`env` for a child process (and all it starts) that runs with the overrides of `variant_name`."""
    path = os.pathsep.join(filter(None, [str(BOOTSTRAP_DIR), env.get("PYTHONPATH")]))
    return {**env, "PYTHONPATH": path, VARIANT_ENV: variant_name}
