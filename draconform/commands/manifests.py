"""The manifests a command reads (`validate`, `allocate`), through the hardened loader (`read_inputs`): files,
directories, `-` for stdin, YAML or JSON, multi-document, `kind: List`, with a size limit (`--max-input-size`) and
empty input refused unless `--allow-empty`; and the options of those commands (`add_input_options`,
`--feature-gates` through `parse_gate_overrides`). Problems are `Finding`s naming file, line and object.

New commands take their manifests through here rather than grow their own reader."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draconform.commands.findings import Finding, UsageError
from draconform.validation.loader import MAX_BYTES, Document, LoadError, format_size, load_documents, too_large
from draconform.validation.problems import Path as FieldPath
from draconform.validation.problems import format_path

SUFFIXES = (".yaml", ".yml", ".json")
_SIZE = re.compile(r"^\s*(\d+)\s*(|k|ki|m|mi|g|gi|kb|mb|gb|kib|mib|gib)\s*$", re.IGNORECASE)
_FACTORS = {"": 1, "k": 1000, "kb": 1000, "ki": 1 << 10, "kib": 1 << 10, "m": 1000**2, "mb": 1000**2,
            "mi": 1 << 20, "mib": 1 << 20, "g": 1000**3, "gb": 1000**3, "gi": 1 << 30, "gib": 1 << 30}


# ----- options ----------------------------------------------------------------------------------------------

def parse_size(text: str) -> int:
    """`--max-input-size`: bytes, or with a unit (64Mi, 1Gi, 500M)."""
    match = _SIZE.match(text)
    if not match or int(match[1]) <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive size such as 64Mi or 1Gi, got {text!r}")
    return int(match[1]) * _FACTORS[match[2].lower()]


def add_input_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-input-size", type=parse_size, default=MAX_BYTES, metavar="SIZE",
                        help=f"refuse an input file larger than this (default {format_size(MAX_BYTES)}; "
                             "units Ki, Mi, Gi)")
    parser.add_argument("--allow-empty", action="store_true",
                        help="accept an input holding no objects (by default that is unusable input)")


def parse_gate_overrides(text: str) -> dict[str, bool]:
    """`--feature-gates Name=true,Other=false`, read by the one gate-setting parser; a bad item is a usage
    error naming the flag."""
    from draconform.kube.featuregates import parse_gate_settings

    try:
        return parse_gate_settings(text)
    except ValueError as exc:
        raise UsageError(f"--feature-gates: {exc}") from exc


# ----- input ------------------------------------------------------------------------------------------------

@dataclass
class InputObject:
    """One object of an input: a document, or an item of a `kind: List` document (`base` is its path)."""

    file: str
    document: Document
    base: FieldPath
    data: Any

    @property
    def line(self) -> int:
        return self.document.line_of(self.base) if self.base else self.document.line

    def line_of(self, path: FieldPath) -> int:
        """The line of a field of this object (its parent's when the field is missing)."""
        return self.document.line_of(self.base + path) if path else self.line

    @property
    def kind(self) -> str:
        kind = self.data.get("kind") if isinstance(self.data, dict) else None
        return kind if isinstance(kind, str) else ""

    @property
    def api_version(self) -> str:
        version = self.data.get("apiVersion") if isinstance(self.data, dict) else None
        return version if isinstance(version, str) else ""

    @property
    def name(self) -> str:
        meta = self.data.get("metadata") if isinstance(self.data, dict) else None
        meta = meta if isinstance(meta, dict) else {}
        name = meta.get("name") if isinstance(meta.get("name"), str) else meta.get("generateName")
        return name if isinstance(name, str) else ""

    def finding(self, path: FieldPath, message: str, rule: str | None = None, severity: str = "error") -> Finding:
        return Finding(self.file, self.line_of(path), self.kind, self.name, format_path(path) if path else "",
                       message, rule, severity)


@dataclass
class Input:
    """What one file (or stdin) held: its objects, or why it is unusable (then `objects` holds those read
    before the problem, which are still checked)."""

    name: str
    objects: list[InputObject] = field(default_factory=list)
    error: Finding | None = None


def read_inputs(paths: list[str], max_bytes: int = MAX_BYTES, allow_empty: bool = False) -> Iterator[Input]:
    """Every input named on the command line, read through the hardened loader; a directory contributes
    its *.yaml, *.yml and *.json files, in name order."""
    for raw in paths:
        if raw == "-":
            yield _load("<stdin>", lambda: _read_limited(sys.stdin.buffer, max_bytes), max_bytes, allow_empty)
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
            if not found:
                yield Input(raw, error=Finding(raw, 1, None, "", "", f"no {', '.join(SUFFIXES)} files under this "
                                                                     "directory"))
            for file in found:
                yield _load(str(file), lambda file=file: _read_file(file, max_bytes), max_bytes, allow_empty)
        else:
            yield _load(raw, lambda path=path: _read_file(path, max_bytes), max_bytes, allow_empty)


def _read_file(path: Path, max_bytes: int) -> bytes:
    with path.open("rb") as stream:
        return _read_limited(stream, max_bytes)


def _read_limited(stream: Any, max_bytes: int) -> bytes:
    data: bytes = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise LoadError(too_large(max_bytes))
    return data


def _load(name: str, read: Any, max_bytes: int, allow_empty: bool) -> Input:
    found = Input(name)
    try:
        for document in load_documents(read(), max_bytes=max_bytes):
            found.objects.extend(_objects(name, document))
    except LoadError as exc:
        found.error = Finding(name, exc.line or 1, None, "", "", exc.message)
    except OSError as exc:
        found.error = Finding(name, 1, None, "", "", f"cannot read: {exc.strerror or exc}")
    else:
        if not found.objects and not allow_empty:
            found.error = Finding(name, 1, None, "", "", "no objects in this input (--allow-empty accepts that)")
    return found


def _objects(name: str, document: Document) -> Iterator[InputObject]:
    """The objects of a document: itself, or each item of a `kind: List`."""
    data = document.data
    if isinstance(data, dict) and data.get("kind") == "List" and isinstance(data.get("items"), list):
        for index, item in enumerate(data["items"]):
            yield InputObject(name, document, ("items", index), item)
    else:
        yield InputObject(name, document, (), data)
