"""Safe, line-tracking loading of YAML and JSON manifests for `draconform validate`.

Objects are built straight from the event stream of libyaml's C parser (`yaml.CSafeLoader`), without
the C node composer: the composer recurses and crashes the interpreter on deeply nested input, and
libyaml's flow-collection handling is quadratic in nesting depth. Building from events, iteratively,
lets us record the line of every field, reject duplicate keys, budget alias expansion and bound
nesting before any of that can hurt."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path as FilePath
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from draconform.sut import copy_object
from draconform.validation.problems import Path, Problem

MAX_BYTES = 64 * 1024 * 1024  # default input limit: a large cluster's `kubectl get -o yaml` dump, not one request
MAX_DEPTH = 64  # API objects nest about 15 deep
MAX_ALIASES = 100  # alias references per document
MAX_ALIAS_NODES = 10_000  # nodes an alias expansion may copy, per document

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_FLOW_BRACKETS = re.compile(rb"[\[\]{}]")


def too_large(max_bytes: int) -> str:
    return f"input is larger than {format_size(max_bytes)} (raise the limit with --max-input-size)"


def format_size(size: int) -> str:
    for unit, factor in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}B"
    return f"{size} bytes"


class LoadError(Exception):
    """The input cannot be read or parsed: reported with exit status 2."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class Document:
    """One object from a manifest stream, with the 1-based line of every field path in it."""

    data: Any
    line: int  # where the document (or the List item) starts
    lines: dict[Path, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)  # duplicate keys found while loading

    def line_of(self, path: Path) -> int:
        """Line of the deepest recorded prefix of `path` (a missing field reports its parent)."""
        for end in range(len(path), 0, -1):
            found = self.lines.get(path[:end])
            if found is not None:
                return found
        return self.line


class _Scalars(SafeConstructor):
    """PyYAML's safe scalar rules (YAML 1.1 ints, floats, bools), but timestamps and binary stay text,
    as they do when kubectl turns YAML into JSON."""

    def scalar(self, tag: str, value: str, line: int) -> Any:
        if tag == _STR or tag in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary"):
            return value
        if tag == "tag:yaml.org,2002:null":
            return None
        node = yaml.ScalarNode(tag, value)
        if tag == "tag:yaml.org,2002:bool":
            return self.construct_yaml_bool(node)
        if tag == "tag:yaml.org,2002:int":
            return self.construct_yaml_int(node)
        if tag == "tag:yaml.org,2002:float":
            return self.construct_yaml_float(node)
        raise LoadError(f"unsupported YAML tag {tag!r}", line)


_SCALARS = _Scalars()
_RESOLVER = Resolver()


class _Frame:
    __slots__ = ("anchor", "container", "explicit", "key", "key_line", "line", "merges", "path", "size")

    def __init__(self, container: dict[str, Any] | list[Any], path: Path, anchor: str | None, line: int) -> None:
        self.container = container
        self.path = path
        self.key: str | None = None  # pending mapping key
        self.key_line = 0
        self.anchor = anchor
        self.size = 1
        self.merges: list[dict[str, Any]] = []
        self.explicit: set[str] = set()
        self.line = line


def _check_flow_depth(text: bytes | str) -> None:
    """libyaml slows down quadratically with flow nesting, so refuse deep `[[[[...` before parsing.
    Brackets inside strings count too; the bound is far above what any API object needs."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    depth = 0
    for match in _FLOW_BRACKETS.finditer(raw):
        if match.group() in (b"[", b"{"):
            depth += 1
            if depth > MAX_DEPTH:
                line = raw.count(b"\n", 0, match.start()) + 1
                raise LoadError(f"flow collections nested deeper than {MAX_DEPTH} levels", line)
        elif depth:
            depth -= 1


def load_documents(text: bytes | str, track_lines: bool = True, max_bytes: int = MAX_BYTES) -> Iterator[Document]:
    """Yield every non-empty document; raise LoadError at the first thing that cannot be parsed
    (documents before it have been yielded already). A `kind: List` is not expanded here."""
    if len(text) > max_bytes:
        raise LoadError(too_large(max_bytes))
    _check_flow_depth(text)
    events = yaml.parse(text, Loader=yaml.CSafeLoader)
    try:
        yield from _build(events, track_lines)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise LoadError(f"not valid YAML: {problem or exc}", mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:  # reader errors: binary input, bad encodings
        raise LoadError(f"not valid YAML: {' '.join(str(exc).split())}") from None


def load_file(path: FilePath | str, max_bytes: int = MAX_BYTES) -> list[Any]:
    """The documents of a file a command is handed besides manifests (an options file, a report, claims,
    a driver's declaration), through the same hardened loader; LoadError names the line where it can."""
    try:
        with FilePath(path).open("rb") as stream:
            text = stream.read(max_bytes + 1)
    except OSError as exc:
        raise LoadError(f"cannot read: {exc.strerror or exc}") from None
    return [document.data for document in load_documents(text, track_lines=False, max_bytes=max_bytes)]


def _build(events: Iterator[yaml.Event], track_lines: bool) -> Iterator[Document]:
    stack: list[_Frame] = []
    doc: Document | None = None
    root: Any = None
    anchors: dict[str, tuple[Any, int]] = {}
    alias_count = alias_nodes = 0

    def attach(value: Any, size: int, line: int, anchor: str | None, fresh: bool) -> None:
        """Put a finished value into its parent (or make it the document root)."""
        nonlocal root
        if anchor:
            anchors[anchor] = (value, size)
        if not stack:
            root = value
            return
        parent = stack[-1]
        parent.size += size
        container = parent.container
        if isinstance(container, list):
            if track_lines and fresh:
                doc_lines[(*parent.path, len(container))] = line
            container.append(value)
            return
        key = parent.key
        parent.key = None
        if key is None:  # the value is a mapping key
            if isinstance(value, (dict, list)):
                raise LoadError("a mapping key must be a scalar", line)
            parent.key = _MERGE if value is _MERGE_KEY else ("" if value is None else str(value))
            parent.key_line = line
            return
        if key == _MERGE:
            merged = value if isinstance(value, list) else [value]
            if not all(isinstance(item, dict) for item in merged):
                raise LoadError("a merge key `<<` needs a mapping or a list of mappings", line)
            parent.merges.extend(merged)
            return
        if key in parent.explicit and doc is not None:
            doc.problems.append(Problem((*parent.path, key), f"duplicate key {key!r}", None))
        parent.explicit.add(key)
        if track_lines:
            doc_lines[(*parent.path, key)] = parent.key_line
        container[key] = value

    doc_lines: dict[Path, int] = {}
    for event in events:
        line = event.start_mark.line + 1 if event.start_mark is not None else 0
        if isinstance(event, yaml.ScalarEvent):
            tag = event.tag
            if tag is None or tag == "!":
                if not event.implicit[0]:  # quoted or block text: always a string
                    attach(event.value, 1, line, event.anchor, True)
                    continue
                tag = _RESOLVER.resolve(yaml.ScalarNode, event.value, event.implicit)
            if tag == _STR:
                attach(event.value, 1, line, event.anchor, True)
                continue
            in_key = bool(stack) and isinstance(stack[-1].container, dict) and stack[-1].key is None
            value = _MERGE_KEY if (in_key and tag == _MERGE) else _SCALARS.scalar(tag, event.value, line)
            if not stack and doc is not None:
                doc.line = line
            attach(value, 1, line, event.anchor, True)
        elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if len(stack) >= MAX_DEPTH:
                raise LoadError(f"collections nested deeper than {MAX_DEPTH} levels", line)
            if event.tag not in (None, "!", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"):
                raise LoadError(f"unsupported YAML tag {event.tag!r}", line)
            if stack and isinstance(stack[-1].container, dict) and stack[-1].key is None:
                raise LoadError("a mapping key must be a scalar", line)
            path: Path = ()
            if stack:
                parent = stack[-1]
                if isinstance(parent.container, list):
                    path = (*parent.path, len(parent.container))
                elif parent.key not in (None, _MERGE):
                    path = (*parent.path, parent.key)
                else:
                    path = (*parent.path, "<<")
            if not stack and doc is not None:
                doc.line = line  # the document starts where its content does, after comments and `---`
            container: dict[str, Any] | list[Any] = {} if isinstance(event, yaml.MappingStartEvent) else []
            stack.append(_Frame(container, path, event.anchor, line))
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            frame = stack.pop()
            if frame.merges and isinstance(frame.container, dict):
                for merged in frame.merges:
                    for key, value in merged.items():
                        if key not in frame.container:
                            frame.container[key] = copy_object(value)
            attach(frame.container, frame.size, frame.line, frame.anchor, True)
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in anchors:
                raise LoadError(f"alias *{event.anchor} refers to no (or an unfinished) anchor", line)
            alias_count += 1
            value, size = anchors[event.anchor]
            alias_nodes += size
            if alias_count > MAX_ALIASES or alias_nodes > MAX_ALIAS_NODES:
                raise LoadError(
                    f"refusing to expand YAML aliases beyond {MAX_ALIASES} references or "
                    f"{MAX_ALIAS_NODES} copied nodes (an alias-expansion bomb?)",
                    line,
                )
            attach(copy_object(value), size, line, None, True)
        elif isinstance(event, yaml.DocumentStartEvent):
            doc = Document(None, line)
            doc_lines = doc.lines
            root, anchors, alias_count, alias_nodes = None, {}, 0, 0
        elif isinstance(event, yaml.DocumentEndEvent):
            if doc is not None and root is not None:
                doc.data = root
                yield doc
            doc = None


class _MergeKey:
    """Marker for the YAML merge key `<<` while it waits for its value."""


_MERGE_KEY = _MergeKey()
