"""`draconform init-sut FILE`: write a vendor's starting point, a Python module holding a system under test that
supports nothing yet. Every seam method of `draconform.sut.SystemUnderTest` is there, with its docstring, raising
`Unsupported`, so a first `draconform run --sut MODULE:factory` skips every scenario with the method it needs;
implement the methods your components can do, one at a time, and run again."""

from __future__ import annotations

import argparse
import inspect
import keyword
import textwrap
from pathlib import Path

from draconform.commands.findings import EXIT_OK, EXIT_UNUSABLE, diagnostic
from draconform.sut import SEAM_METHODS, SystemUnderTest

HEADER = '''"""{title}: a system under test for draconform (written by `draconform init-sut`).

Run the conformance suite against it with
    PYTHONPATH={folder} draconform run --sut {module}:factory
Each method below raises `Unsupported` until you implement it; the scenarios that need it are skipped with its
name. Objects cross the seam as plain dicts shaped like Kubernetes API objects (see draconform/sut.py)."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from draconform.sut import (
    BaseSystem,
    ComponentConfig,
    Event,
    Obj,
    PluginCall,
    PluginFault,
    Unsupported,
)


class {cls}(BaseSystem):
    """{title}.

    `patience` is inherited: look once, right for a system whose settle() finishes all work;
    a live cluster should return a `draconform.sut.Patience` with a timeout per observation."""
'''

FOOTER = '''

def factory() -> {cls}:
    """A fresh system for every scenario (draconform calls it once per scenario; scenarios never share state)."""
    return {cls}()
'''


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("init-sut", help="write a system-under-test skeleton to start a vendor's SUT from",
                                   description=__doc__)
    parser.add_argument("file", type=Path, metavar="FILE", help="the Python module to write, e.g. my_sut.py")
    parser.add_argument("--class-name", default="MySystem", help="the class's name (default: MySystem)")
    parser.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    parser.set_defaults(handler=handle)


# What the seam's self-evident methods do, for the skeleton (the seam itself leaves them undocumented).
DOCS = {
    "create": "Create the API object `obj` (a dict shaped like a Kubernetes object) and return it as stored; a\n"
              "refusal raises `draconform.sut.ApiError` with the status reason (Invalid, AlreadyExists, ...).",
    "get": "The stored object of `kind` named `name` (in `namespace` for a namespaced kind), or None.",
    "list": "Every stored object of `kind` (in `namespace`, or in all namespaces when None).",
    "update": "Write `obj`'s spec and metadata (its resourceVersion must be current, else ApiError Conflict);\n"
              "return it as stored.",
    "update_status": "Write `obj`'s status through the status subresource; return it as stored.",
    "delete": "Delete the object (ApiError NotFound when there is none); finalizers may keep it a while.",
    "now": "The cluster's current time (the time `advance_clock` moves, for a fake clock).",
    "events": "Every Kubernetes Event recorded so far, as `draconform.sut.Event`s.",
}


def method_source(name: str) -> str:
    """One seam method: its signature as the seam declares it, its docstring, and `raise Unsupported`."""
    function = getattr(SystemUnderTest, name)
    signature = str(inspect.signature(function)).replace("'", "")
    doc = inspect.getdoc(function) or DOCS.get(name) or f"See draconform.sut.SystemUnderTest.{name}."
    body = textwrap.indent(f'"""{doc}"""\n', "        ")
    return (f"    def {name}{signature}:\n{body}"
            f"        raise Unsupported(\"{name}() is not implemented yet\")\n")


def skeleton(module: str, folder: str, cls: str) -> str:
    title = f"{cls} ({module})"
    methods = "\n".join(method_source(name) for name in SEAM_METHODS if name != "patience")
    return HEADER.format(title=title, folder=folder, module=module, cls=cls) + "\n" + methods + FOOTER.format(cls=cls)


def handle(args: argparse.Namespace) -> int:
    path: Path = args.file
    if path.suffix != ".py" or not path.stem.isidentifier() or keyword.iskeyword(path.stem):
        diagnostic("init-sut", f"{path}: the file must be a Python module name ending in .py, e.g. my_sut.py")
        return EXIT_UNUSABLE
    if not args.class_name.isidentifier():
        diagnostic("init-sut", f"--class-name {args.class_name!r} is not a Python identifier")
        return EXIT_UNUSABLE
    if path.exists() and not args.force:
        diagnostic("init-sut", f"{path} exists; --force overwrites it")
        return EXIT_UNUSABLE
    folder = str(path.parent.resolve())
    path.write_text(skeleton(path.stem, folder, args.class_name), encoding="utf-8")
    print(f"wrote {path}: {len(SEAM_METHODS) - 1} seam methods raising Unsupported, and factory()\n"
          f"run it: PYTHONPATH={folder} draconform run --sut {path.stem}:factory")
    return EXIT_OK
