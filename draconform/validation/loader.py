"""Safe, line-tracking loading of YAML and JSON manifests for `draconform validate`.

Plain block YAML (a `kubectl get -o yaml` dump) is read line by line first (`blockyaml`); its lines are found
when first asked for. Anything else, and the line finding, goes the way described next, the reference.

Objects are built straight from the event stream of libyaml's C parser (`yaml.CSafeLoader`), without
the C node composer: the composer recurses and crashes the interpreter on deeply nested input, and
libyaml's flow-collection handling is quadratic in nesting depth. Building from events, iteratively,
lets us record the line of every field, reject duplicate keys, budget alias expansion and bound
nesting before any of that can hurt."""

from __future__ import annotations

import functools
import gc
import re
from collections.abc import Callable, Iterator
from typing import Any

import yaml

from draconform.sut import copy_object
from draconform.validation.blockyaml import read_block_yaml
from draconform.validation.problems import Path, Problem
from draconform.validation.yamlscalars import SCALARS, STR_TAG, LoadError, plain_tag

MAX_BYTES = 64 * 1024 * 1024  # default input limit: a large cluster's `kubectl get -o yaml` dump, not one request
MAX_DEPTH = 64  # API objects nest about 15 deep
MAX_ALIASES = 100  # alias references per document
MAX_ALIAS_NODES = 10_000  # nodes an alias expansion may copy, per document

_MERGE = "tag:yaml.org,2002:merge"
_FLOW_BRACKETS = re.compile(rb"[\[\]{}]")


def too_large(max_bytes: int) -> str:
    return f"input is larger than {format_size(max_bytes)} (raise the limit with --max-input-size)"


def format_size(size: int) -> str:
    for unit, factor in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}B"
    return f"{size} bytes"


class Document:
    """One object from a manifest stream, with the 1-based line of every field path in it.

    The lines of a document read line by line (`blockyaml`) are found when first asked for, by reading its
    text again with line tracking: a command that reports nothing about a large dump never builds them."""

    __slots__ = ("_lines", "_locate", "data", "line", "problems")

    def __init__(self, data: Any, line: int, lines: dict[Path, int] | None = None,
                 problems: list[Problem] | None = None, locate: Callable[[], dict[Path, int]] | None = None) -> None:
        self.data = data
        self.line = line  # where the document (or the List item) starts
        self._lines = lines if lines is not None or locate is not None else {}
        self._locate = locate
        self.problems: list[Problem] = problems if problems is not None else []  # duplicate keys found loading

    @property
    def lines(self) -> dict[Path, int]:
        if self._lines is None:
            assert self._locate is not None
            self._lines, self._locate = self._locate(), None
        return self._lines

    def line_of(self, path: Path) -> int:
        """Line of the deepest recorded prefix of `path` (a missing field reports its parent)."""
        lines = self.lines
        for end in range(len(path), 0, -1):
            found = lines.get(path[:end])
            if found is not None:
                return found
        return self.line


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
    read = _read_quickly(text)
    if read is not None:  # plain block YAML, read line by line: the same documents, problems and (later) lines
        located = functools.cache(lambda: read_block_yaml(text, True, MAX_DEPTH))
        for index, (data, line, _, problems) in enumerate(read):
            locate = functools.partial(_lines_of, located, index) if track_lines else None
            yield Document(data, line, None if track_lines else {}, problems, locate)
        return
    yield from build_documents(text, track_lines)


def _read_quickly(text: bytes | str) -> list[tuple[Any, int, dict[Path, int], list[Problem]]] | None:
    """`blockyaml`'s reading, without the garbage collector: the tree it builds holds no reference cycles,
    and on a large dump the collector would walk it again and again while it grows."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return read_block_yaml(text, False, MAX_DEPTH)
    finally:
        if enabled:
            gc.enable()


def build_documents(text: bytes | str, track_lines: bool = True) -> Iterator[Document]:
    """The documents of `text` from libyaml's events (what `load_documents` does with input `blockyaml` does
    not read), with LoadError for what cannot be parsed."""
    events = yaml.parse(text, Loader=yaml.CSafeLoader)
    try:
        yield from _build(events, track_lines)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise LoadError(f"not valid YAML: {problem or exc}", mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:  # reader errors: binary input, bad encodings
        raise LoadError(f"not valid YAML: {' '.join(str(exc).split())}") from None


def _lines_of(located: Callable[[], list[Any] | None], index: int) -> dict[Path, int]:
    """The lines of document `index`, from reading its text again, this time with line tracking."""
    again = located()
    assert again is not None  # the same text reads the same way
    lines: dict[Path, int] = again[index][2]
    return lines


def _build(events: Iterator[yaml.Event], track_lines: bool) -> Iterator[Document]:
    builder = _Builder(track_lines)
    for event in events:
        line = event.start_mark.line + 1 if event.start_mark is not None else 0
        handle = _HANDLERS.get(type(event))
        if handle is not None:
            handle(builder, event, line)
        if isinstance(event, yaml.DocumentEndEvent):
            finished = builder.finish_document()
            if finished is not None:
                yield finished


class _Builder:
    """Builds the objects of one stream from its events: a stack of open collections, the anchors of
    the current document and its alias budget. One method per kind of event."""

    def __init__(self, track_lines: bool) -> None:
        self.track_lines = track_lines
        self.stack: list[_Frame] = []
        self.doc: Document | None = None
        self.lines: dict[Path, int] = {}
        self.root: Any = None
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.alias_count = self.alias_nodes = 0

    def _expects_key(self) -> bool:
        return bool(self.stack) and isinstance(self.stack[-1].container, dict) and self.stack[-1].key is None

    def _at_root(self, line: int) -> None:
        if not self.stack and self.doc is not None:
            self.doc.line = line  # the document starts where its content does, after comments and `---`

    # --- events ------------------------------------------------------------------------------------
    def start_document(self, event: yaml.Event, line: int) -> None:
        self.doc = Document(None, line)
        self.lines = self.doc.lines
        self.root, self.anchors, self.alias_count, self.alias_nodes = None, {}, 0, 0

    def finish_document(self) -> Document | None:
        doc, self.doc = self.doc, None
        if doc is None or self.root is None:
            return None
        doc.data = self.root
        return doc

    def scalar(self, event: yaml.ScalarEvent, line: int) -> None:
        tag = event.tag
        if tag is None or tag == "!":
            if not event.implicit[0]:  # quoted or block text: always a string
                self._attach(event.value, 1, line, event.anchor)
                return
            tag = plain_tag(event.value, event.implicit)
        if tag == STR_TAG:
            self._attach(event.value, 1, line, event.anchor)
            return
        value = _MERGE_KEY if (self._expects_key() and tag == _MERGE) else SCALARS.scalar(tag, event.value, line)
        self._at_root(line)
        self._attach(value, 1, line, event.anchor)

    def start_collection(self, event: yaml.CollectionStartEvent, line: int) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise LoadError(f"collections nested deeper than {MAX_DEPTH} levels", line)
        if event.tag not in (None, "!", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"):
            raise LoadError(f"unsupported YAML tag {event.tag!r}", line)
        if self._expects_key():
            raise LoadError("a mapping key must be a scalar", line)
        self._at_root(line)
        container: dict[str, Any] | list[Any] = {} if isinstance(event, yaml.MappingStartEvent) else []
        self.stack.append(_Frame(container, self._child_path(), event.anchor, line))

    def _child_path(self) -> Path:
        if not self.stack:
            return ()
        parent = self.stack[-1]
        if isinstance(parent.container, list):
            return (*parent.path, len(parent.container))
        return (*parent.path, parent.key if parent.key not in (None, _MERGE) else "<<")

    def end_collection(self, event: yaml.Event, line: int) -> None:
        frame = self.stack.pop()
        if isinstance(frame.container, dict):
            for merged in frame.merges:  # explicit keys win over merged ones
                for key, value in merged.items():
                    frame.container.setdefault(key, copy_object(value))
        self._attach(frame.container, frame.size, frame.line, frame.anchor)

    def alias(self, event: yaml.AliasEvent, line: int) -> None:
        if event.anchor not in self.anchors:
            raise LoadError(f"alias *{event.anchor} refers to no (or an unfinished) anchor", line)
        value, size = self.anchors[event.anchor]
        self.alias_count += 1
        self.alias_nodes += size
        if self.alias_count > MAX_ALIASES or self.alias_nodes > MAX_ALIAS_NODES:
            raise LoadError(
                f"refusing to expand YAML aliases beyond {MAX_ALIASES} references or "
                f"{MAX_ALIAS_NODES} copied nodes (an alias-expansion bomb?)",
                line,
            )
        self._attach(copy_object(value), size, line, None)

    # --- putting a finished value in place ------------------------------------------------------------
    def _attach(self, value: Any, size: int, line: int, anchor: str | None) -> None:
        """Put a finished value into its parent (or make it the document root)."""
        if anchor:
            self.anchors[anchor] = (value, size)
        if not self.stack:
            self.root = value
            return
        parent = self.stack[-1]
        parent.size += size
        if isinstance(parent.container, list):
            if self.track_lines:
                self.lines[(*parent.path, len(parent.container))] = line
            parent.container.append(value)
        elif parent.key is None:
            self._set_key(parent, value, line)
        else:
            self._set_value(parent, parent.container, value, line)

    @staticmethod
    def _set_key(parent: _Frame, value: Any, line: int) -> None:
        if isinstance(value, (dict, list)):
            raise LoadError("a mapping key must be a scalar", line)
        parent.key = _MERGE if value is _MERGE_KEY else ("" if value is None else str(value))
        parent.key_line = line

    def _set_value(self, parent: _Frame, container: dict[str, Any], value: Any, line: int) -> None:
        key, parent.key = parent.key, None
        assert key is not None
        if key == _MERGE:
            merged = value if isinstance(value, list) else [value]
            if not all(isinstance(item, dict) for item in merged):
                raise LoadError("a merge key `<<` needs a mapping or a list of mappings", line)
            parent.merges.extend(merged)
            return
        if key in parent.explicit and self.doc is not None:
            self.doc.problems.append(Problem((*parent.path, key), f"duplicate key {key!r}", None))
        parent.explicit.add(key)
        if self.track_lines:
            self.lines[(*parent.path, key)] = parent.key_line
        container[key] = value


_HANDLERS: dict[type[yaml.Event], Callable[[_Builder, Any, int], None]] = {
    yaml.DocumentStartEvent: _Builder.start_document,
    yaml.ScalarEvent: _Builder.scalar,
    yaml.MappingStartEvent: _Builder.start_collection,
    yaml.SequenceStartEvent: _Builder.start_collection,
    yaml.MappingEndEvent: _Builder.end_collection,
    yaml.SequenceEndEvent: _Builder.end_collection,
    yaml.AliasEvent: _Builder.alias,
}


class _MergeKey:
    """Marker for the YAML merge key `<<` while it waits for its value."""


_MERGE_KEY = _MergeKey()
