"""Variants anchored to named functions: an `Override` swaps one function or method of the project's code, named
by module and qualified name, for its defective version written in draconform.mutation. Four forms:

- `Replace` gives the whole defective function;
- `Wrap` receives the original and changes what goes in or comes out;
- `Edit` changes a few lines inside the named function only: its source (read through inspect) with `old`
  replaced by `new`, compiled in the function's own module and installed in its place, for a defect that is one
  changed line of a long function;
- `Set` replaces a named module or class attribute (a constant, a table).

A refactor that keeps the function's name (and, for Replace and Wrap, its signature; for Edit, the lines it
edits) keeps the variant working; one that renames or re-shapes it is reported by `problems`, naming the variant
and the target, which tests/harness/test_mutation.py runs over every variant.

Overrides are installed in the process that runs the variant and in every process it starts: the runner puts
draconform/mutation/bootstrap (a `sitecustomize` module) first on PYTHONPATH and names the variant in
DRACONFORM_VARIANT; `install_from_environment` then swaps each target as its module finishes loading, before any
other module can import it. The code a normal run executes never sees either."""

from __future__ import annotations
import __future__

import ast
import functools
import importlib
import importlib.abc
import importlib.machinery
import inspect
import os
import pkgutil
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Edit:
    """Replace `old` by `new` in the source of the target function (decorators and all), `old` occurring there
    exactly once: the rest of the function stays the project's own. The edited function is compiled in the
    target's module, so it sees the module's names; `names` adds more (a helper, a table the defect keeps)
    visible to the edited function alone. Several edits of one target in a variant apply in order."""

    target: str
    old: str
    new: str
    names: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Set:
    """Give the target attribute (`module:NAME` or `module:Class.NAME`, which must exist) another value: a
    constant or table read when the code runs. (A value copied at import time into another name, a default
    argument or a dataclass field, is not reached: edit where it is read instead.)"""

    target: str
    value: Any


Override = Replace | Wrap | Edit | Set


def _split(target: str) -> tuple[str, list[str]]:
    module, _, qualname = target.partition(":")
    if not module or not qualname:
        raise OverrideError(f"override target {target!r}: expected module:Qualified.name")
    return module, qualname.split(".")


_MISSING = object()


def _attribute(module: ModuleType, target: str) -> tuple[object, str, Any]:
    """The object holding the target (its module or class), the attribute name, and what is there now."""
    _, parts = _split(target)
    owner: object = module
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
        if owner is None:
            raise OverrideError(f"override target {target}: {part} does not exist")
    current = inspect.getattr_static(owner, parts[-1], _MISSING)
    if current is _MISSING:
        raise OverrideError(f"override target {target}: no attribute of that name")
    return owner, parts[-1], current


def _owner(module: ModuleType, target: str) -> tuple[object, str, Callable[..., Any]]:
    """The object holding the target (its module or class), the attribute name, and the function now there."""
    owner, name, current = _attribute(module, target)
    if not inspect.isfunction(current):
        raise OverrideError(f"override target {target}: no function or method of that name")
    return owner, name, current


def _plain_function(target: str, current: Any) -> Callable[..., Any]:
    """The function under a staticmethod, classmethod, property or functools cache."""
    for attribute in ("__func__", "fget", "__wrapped__"):
        current = getattr(current, attribute, current)
    if not inspect.isfunction(current):
        raise OverrideError(f"override target {target}: no function or method of that name")
    return current


def _edited(module: ModuleType, target: str, edits: Sequence[Edit]) -> tuple[object, str, Any]:
    """(owner, name, the target compiled from its source with `edits` applied). Raises OverrideError naming the
    target and the text when an edit's `old` is not exactly once in the function's source, or the result does not
    compile."""
    owner, name, current = _attribute(module, target)
    function = _accessor(target, current, edits[0].old) if isinstance(current, property) else (
        _plain_function(target, current))
    lines, first = inspect.getsourcelines(function)
    source = "".join(lines)
    for edit in edits:
        count = source.count(edit.old)
        if count != 1:
            raise OverrideError(f"override target {target}: the text to edit occurs {count} times in the function, "
                                f"not once: {edit.old!r}")
        start = source.index(edit.old)
        if start > 0 and source[start - 1] != "\n" and edit.old[:1].isspace():
            # indentation matched inside a deeper line: the edit would land at the wrong depth
            raise OverrideError(f"override target {target}: the text to edit starts inside a line: {edit.old!r}")
        source = source.replace(edit.old, edit.new)
    names = {key: value for edit in edits for key, value in edit.names.items()}
    # an indented method parses as the body of an `if`, which leaves multi-line strings exactly as written
    indented = source[:1].isspace()
    filename = inspect.getsourcefile(function) or "<edited>"
    try:
        body = ast.parse(("if 1:\n" if indented else "") + source, filename).body
    except SyntaxError as error:
        raise OverrideError(f"override target {target}: the edited function does not compile: {error}") from None
    if indented and isinstance(body[0], ast.If):
        body = body[0].body
    node = body[0]
    if len(body) != 1 or not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        raise OverrideError(f"override target {target}: the edited source is not one function definition")
    ast.increment_lineno(node, first - 1 - indented)
    if isinstance(current, property):
        node.decorator_list = []  # a setter's `@name.setter` would look the name up in the module
    # compiled inside a function whose parameters are `__class__` (so that a method's bare super() works) and
    # the edit's own names, so that these reach the edited function alone
    maker = ast.parse(f"def _make(__class__, {', '.join(names)}):\n    return {node.name}").body[0]
    assert isinstance(maker, ast.FunctionDef)
    maker.body.insert(0, node)
    code = compile(ast.fix_missing_locations(ast.Module([maker], [])), filename, "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    scope: dict[str, Any] = {}
    exec(code, vars(module), scope)
    made = scope["_make"](owner if isinstance(owner, type) else None, *names.values())
    _plain_function(target, made).__qualname__ = function.__qualname__
    if isinstance(current, property):
        accessors: list[Any] = [made if accessor is function else accessor
                                 for accessor in (current.fget, current.fset, current.fdel)]
        made = property(accessors[0], accessors[1], accessors[2], current.__doc__)
    return owner, name, made


def _accessor(target: str, current: property, old: str) -> Callable[..., Any]:
    """The getter, setter or deleter of the property `current` whose source holds `old`."""
    holding = [accessor for accessor in (current.fget, current.fset, current.fdel)
               if accessor is not None and old in inspect.getsource(accessor)]
    if len(holding) != 1:
        raise OverrideError(f"override target {target}: the text to edit occurs in {len(holding)} of the property's "
                            f"functions, not one: {old!r}")
    return holding[0]


def _parameters(function: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(function).parameters)


def _moved_to(target: str) -> str:
    """A hint naming where the target's qualified name is defined now, when a refactor moved it to another module
    of the same package (draconform.reference, draconform.validation, ...; reference/allocator/common.py split
    into several, say): the variant is re-aimed by changing its target to that."""
    module_name, parts = _split(target)
    package = importlib.import_module(".".join(module_name.split(".")[:2]))
    found = []
    for info in pkgutil.walk_packages(getattr(package, "__path__", []), f"{package.__name__}."):
        if info.name == module_name:
            continue
        try:
            owner: object = importlib.import_module(info.name)
        except ImportError:
            continue
        for part in parts:
            owner = inspect.getattr_static(owner, part, None)
        if owner is not None and getattr(owner, "__module__", info.name) == info.name:
            found.append(f"{info.name}:{'.'.join(parts)}")
    return f" (defined now in {', '.join(found)})" if found else ""


def problems(variant_name: str, overrides: Iterable[Override]) -> list[str]:
    """What is wrong with `overrides` against the current code (empty when each target exists as a function and
    its defect takes the same parameters): the fast check that keeps variants true as the code moves."""
    found = []
    overrides = list(overrides)
    for target, edits in _edits_by_target(overrides).items():
        try:
            _edited(importlib.import_module(_split(target)[0]), target, edits)
        except (ImportError, OverrideError) as error:
            found.append(f"variant {variant_name}: {error}{_moved_to(target)}")
    for override in overrides:
        if isinstance(override, Edit):
            continue
        module_name, _ = _split(override.target)
        try:
            module = importlib.import_module(module_name)
            if isinstance(override, Set):
                _attribute(module, override.target)
                continue
            _, _, current = _owner(module, override.target)
        except (ImportError, OverrideError) as error:
            found.append(f"variant {variant_name}: {error}{_moved_to(override.target)}")
            continue
        given = _parameters(override.function)
        expected = _parameters(current) if isinstance(override, Replace) else ["original", *_parameters(current)]
        if given != expected:
            found.append(f"variant {variant_name}: override of {override.target} takes ({', '.join(given)}), "
                         f"the code now needs ({', '.join(expected)})")
    return found


def _edits_by_target(overrides: Iterable[Override]) -> dict[str, list[Edit]]:
    edits: dict[str, list[Edit]] = {}
    for override in overrides:
        if isinstance(override, Edit):
            edits.setdefault(override.target, []).append(override)
    return edits


def apply(module: ModuleType, overrides: Iterable[Override]) -> None:
    """Swap each target of `module` for its defect."""
    overrides = list(overrides)
    for target, edits in _edits_by_target(overrides).items():
        owner, name, made = _edited(module, target, edits)
        _swap(owner, name, made)
    for override in overrides:
        if isinstance(override, Edit):
            continue
        if isinstance(override, Set):
            owner, name, _ = _attribute(module, override.target)
            setattr(owner, name, override.value)
            continue
        owner, name, current = _owner(module, override.target)
        if isinstance(override, Replace):
            swapped = override.function
        else:
            swapped = functools.wraps(current)(_bind(override.function, current))
        _swap(owner, name, swapped)


def _swap(owner: object, name: str, swapped: Any) -> None:
    """Put `swapped` in place of the target, and of every name another loaded module imported it under (a module
    loaded before the overrides were installed, while the variant's own modules were imported, holds the
    original); the mutation package's own names stay, as a defect may call the original."""
    current = inspect.getattr_static(owner, name)
    setattr(owner, name, swapped)
    if not isinstance(owner, ModuleType) or not inspect.isfunction(current):
        return
    for module in list(sys.modules.values()):
        if module is None or module is owner or module.__name__.startswith("draconform.mutation"):
            continue
        for key, value in list(vars(module).items()):
            if value is current:
                setattr(module, key, swapped)


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
