"""A line-by-line reader for the plain block YAML that `kubectl get -o yaml` and YAML dumpers write, used by
the loader before its event-by-event builder: on a 5,000-node ResourceSlice dump it is several times faster,
because it does a few string operations per line instead of a Python call per YAML event.

It reads only a narrow subset and gives up (returns None) on anything outside it, so the loader then reads
the input with the event builder as before, whose answer, errors and lines are the reference. The subset:
UTF-8 text of printable characters with `\\n` line ends (no tabs, no BOM); `---` lines between documents;
block mappings and sequences (including sequences at their key's indentation); plain scalars, also folded
over more indented lines; single-quoted scalars and double-quoted ones with only the escapes
`\\" \\\\ \\/ \\n \\t \\r`, on one line; `[]` and `{}`; comments. Anything else (anchors, aliases, tags, block
scalars, quoted scalars over several lines, flow collections with content, `?` keys, merge keys, directives,
`...`, a key or value where YAML would report an error, nesting
deeper than the loader allows) makes it give up. Plain scalars are resolved with the loader's own rules
(PyYAML's YAML 1.1 resolvers, timestamps kept as text), keys turned to text as the builder does, duplicate
keys reported as the builder reports them, and the line of every field recorded as the builder records it;
`tests/validation/test_blockyaml.py` holds both readers to the same documents, problems and lines."""

from __future__ import annotations

import re
from typing import Any

from draconform.validation.problems import Path, Problem
from draconform.validation.yamlscalars import SCALARS, LoadError, plain_tag

# Anything but printable characters and `\n`: tabs, `\r`, YAML's other line breaks (NEL, LS, PS), a BOM,
# control characters. Any of them sends the input to the event builder.
_ODD = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_DOUBLE = re.compile(r'"((?:[^"\\]|\\["\\/ntr])*)"')
_ESCAPE = re.compile(r'\\(["\\/ntr])')
_ESCAPED = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "\r"}
_MISSING = object()
_REMEMBERED = 65_536  # scalar values remembered by their text: a dump repeats the same few thousand
_MAX_KEY = 256  # YAML's implicit keys end at 1,024 characters; longer keys are left to the builder


class _Unsupported(Exception):
    """Outside the subset: the event builder reads the input."""


class _Frame:
    """An open block collection: its column, its container and path, and its open slot (a key waiting for
    its value, or a `-` waiting for its item)."""

    __slots__ = ("col", "container", "is_map", "key", "key_line", "line", "open", "path")

    def __init__(self, is_map: bool, col: int, path: Path, line: int) -> None:
        self.is_map = is_map
        self.col = col
        self.container: Any = {} if is_map else []
        self.path = path
        self.line = line  # where the collection starts (its first key or `-`)
        self.open = False
        self.key = ""
        self.key_line = 0  # the line of the waiting key, or of the waiting `-`


def read_block_yaml(text: bytes | str, track_lines: bool, max_depth: int) -> list[tuple[Any, int, dict[Path, int],
                                                                                      list[Problem]]] | None:
    """The documents of `text` as (data, line, lines, problems), or None when `text` is outside the subset."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if _ODD.search(text) is not None:
        return None
    try:
        return _Reader(track_lines, max_depth).read(text)
    except (_Unsupported, LoadError, ValueError):
        return None


def _plain(text: str) -> str:
    """A plain scalar's text without its comment and trailing spaces; gives up where YAML would not read a
    plain scalar (an indicator first, `: ` inside, `:` last)."""
    first = text[0]
    if first in _INDICATORS and not (first == "-" and len(text) > 1 and text[1] != " "):
        raise _Unsupported
    cut = text.find(" #")
    if cut >= 0:
        text = text[:cut]
    text = text.rstrip(" ")
    if ": " in text or text.endswith(":"):
        raise _Unsupported
    return text


def _quoted(text: str) -> tuple[str, int]:
    """A quoted scalar at the start of `text` on this line: its value and where it ends."""
    if text[0] == "'":
        start = 1
        while True:
            end = text.find("'", start)
            if end < 0:
                raise _Unsupported  # runs on to the next line
            if text.startswith("'", end + 1):
                start = end + 2
                continue
            return text[1:end].replace("''", "'"), end + 1
    match = _DOUBLE.match(text)
    if match is None:
        raise _Unsupported
    value = match.group(1)
    if "\\" in value:
        value = _ESCAPE.sub(lambda m: _ESCAPED[m.group(1)], value)
    return value, match.end()


def _plain_value(frame: _Frame, line: str, number: int) -> tuple[str | int, str] | None:
    """Where the value written last in `frame` is (its key, or its index) and its text, if it is a plain scalar
    written on line `number` (`line`) without a comment; else None."""
    if frame.key_line != number or (not frame.is_map and not frame.container):
        return None
    slot: str | int = frame.key if frame.is_map else len(frame.container) - 1
    if isinstance(frame.container[slot], (dict, list)):  # a collection (maybe one this very line closed)
        return None
    content = line.lstrip(" ")
    while content.startswith("- "):
        content = content[2:].lstrip(" ")
    if frame.is_map:
        if content[0] in "\"'":
            content = content[_quoted(content)[1]:]
            cut = 0
        else:
            cut = content.find(": ")
            if cut < 0:
                return None
        content = content[cut + 1:].lstrip(" ")
    if not content or content[0] in "\"'[{#" or " #" in content:
        return None
    return slot, content.rstrip(" ")


def _rest_is_blank(rest: str) -> None:
    stripped = rest.lstrip(" ")
    if stripped and (stripped[0] != "#" or stripped == rest):  # a comment needs a space before it
        raise _Unsupported


class _Reader:
    def __init__(self, track_lines: bool, max_depth: int) -> None:
        self.track = track_lines
        self.max_depth = max_depth
        self.plain_tag = plain_tag
        self.scalars = SCALARS
        self.stack: list[_Frame] = []
        self.docs: list[tuple[Any, int, dict[Path, int], list[Problem]]] = []
        self.root: Any = None
        self.has_root = False
        self.doc_line = 1
        self.lines: dict[Path, int] = {}
        self.problems: list[Problem] = []
        self.keys: dict[str, str] = {}  # a key's text as written -> the key (keys repeat in every object)
        self.values: dict[str, Any] = {}  # a scalar value's text as written -> its value, for values that repeat
        self.folding: tuple[_Frame, str | int, str, int] | None = None  # a folded plain scalar: where, text, last line

    # --- documents ----------------------------------------------------------------------------------------
    def read(self, text: str) -> list[tuple[Any, int, dict[Path, int], list[Problem]]]:
        lines = text.split("\n")
        for index, raw in enumerate(lines):
            content = raw.lstrip(" ")
            if not content or content[0] == "#":
                continue
            try:
                first = content[0]
                if first == "-" or first == ".":
                    self.dash_line(content, len(raw) - len(content), index + 1)
                else:
                    self.key_line(content, len(raw) - len(content), index + 1)
            except _Unsupported:
                if not self.continuation(lines, index, raw):  # a folded plain scalar's next line, or not YAML
                    raise
        self.end_document()
        return self.docs

    def dash_line(self, content: str, col: int, number: int) -> None:
        """A line starting with `-` or `.`: a document marker, or the `- `s of items and what follows them."""
        if col == 0 and (content.startswith("---") or content.startswith("...")):
            if content.rstrip(" ") != "---":
                raise _Unsupported
            self.end_document()
            return
        while content[0] == "-" and (len(content) == 1 or content[1] == " "):
            self.open_item(col, number)
            rest = content[1:].lstrip(" ")
            col += len(content) - len(rest)
            content = rest
            if not content or content[0] == "#":
                return  # a `-` alone: its item is on the lines below, or null
        self.entry(content, col, number)

    def key_line(self, content: str, col: int, number: int) -> None:
        """The common line, read with few string operations: `key: value` or `key:`, with a key seen before (keys
        repeat in every object), in the mapping open at this column, a new mapping in the slot open above it, or
        one further out. Any other line is read by `entry`."""
        stack = self.stack
        if content[0] == '"' or content[0] == "'" or not stack:
            self.entry(content, col, number)
            return
        cut = content.find(": ")
        if cut < 0 and content[-1] == ":":
            cut = len(content) - 1
        key = self.keys.get(content[:cut]) if cut > 0 else None
        if key is None:
            self.entry(content, col, number)
            return
        while stack[-1].col > col:  # the collections that end here
            self.close()
            if not stack:
                raise _Unsupported  # a key left of the document's first one
        top = stack[-1]
        if top.col == col and top.is_map:
            if top.open:
                self.attach(top, None, top.key_line)
        elif top.open and top.col < col:
            if len(stack) >= self.max_depth:
                raise _Unsupported
            top = _Frame(True, col, (*top.path, top.key if top.is_map else len(top.container)), number)
            stack.append(top)
        else:
            self.entry(content, col, number)  # a sequence at its key's indentation ending, or not YAML
            return
        value_text = content[cut + 1:].lstrip(" ")
        top.key, top.key_line = key, number
        if not value_text or value_text[0] == "#":
            top.open = True
            return
        value = self.values.get(value_text, _MISSING)
        self.attach_key(top, self.value(value_text, number) if value is _MISSING else value)

    def continuation(self, lines: list[str], index: int, raw: str) -> bool:
        """Whether line `index`, which the reader could not take as a node, continues the plain scalar written last
        (a dumper folds a long one over lines indented past its collection): if so, the value is folded anew as
        YAML folds it (one space per line break, a line break per empty line) and True is returned."""
        stack = self.stack
        content = raw.strip(" ")
        col = len(raw) - len(raw.lstrip(" "))
        if not stack or not content or col <= stack[-1].col or content[0] == "#" or " #" in content or (
                ": " in content or content.endswith(":")):
            return False
        top = stack[-1]
        previous = index - 1
        while previous >= 0 and not lines[previous].strip(" "):
            previous -= 1
        if previous < 0 or top.open:
            return False
        if self.folding is not None and self.folding[0] is top and self.folding[3] == previous:
            _, slot, text, _ = self.folding
        else:
            found = _plain_value(top, lines[previous], previous + 1)
            if found is None:
                return False
            slot, text = found
        blanks = index - 1 - previous
        text = f"{text}{chr(10) * blanks if blanks else ' '}{content}"
        top.container[slot] = self.scalar(text, index + 1)
        self.folding = (top, slot, text, index)
        return True

    def end_document(self) -> None:
        while self.stack:
            self.close()
        if self.has_root:
            self.docs.append((self.root, self.doc_line, self.lines, self.problems))
        self.root, self.has_root = None, False
        self.lines, self.problems = {}, []

    # --- collections --------------------------------------------------------------------------------------
    def new_frame(self, is_map: bool, col: int, line: int) -> _Frame:
        """A collection starting at `col` in the open slot of the innermost one (or as the document)."""
        stack = self.stack
        if not stack:
            if self.has_root:
                raise _Unsupported  # a second node at the top of a document
            frame = _Frame(is_map, col, (), line)
            self.doc_line = line
        else:
            if len(stack) >= self.max_depth:
                raise _Unsupported
            parent = stack[-1]
            frame = _Frame(is_map, col, (*parent.path, parent.key if parent.is_map else len(parent.container)),
                           line)
        stack.append(frame)
        return frame

    def close(self) -> None:
        """Close the innermost collection (an open slot in it is null) and put it in its parent's slot."""
        frame = self.stack[-1]
        if frame.open:
            self.attach(frame, None, frame.key_line)
        self.stack.pop()
        if self.stack:
            self.attach(self.stack[-1], frame.container, frame.line)
        else:
            self.root, self.has_root = frame.container, True

    def attach(self, parent: _Frame, value: Any, line: int) -> None:
        parent.open = False
        container = parent.container
        if parent.is_map:
            key = parent.key
            if key in container:
                self.problems.append(Problem((*parent.path, key), f"duplicate key {key!r}", None))
            if self.track:
                self.lines[(*parent.path, key)] = parent.key_line
            container[key] = value
        else:
            if self.track:
                self.lines[(*parent.path, len(container))] = line
            container.append(value)

    def attach_key(self, parent: _Frame, value: Any) -> None:
        """Put `value` at the mapping's waiting key (the key's line was recorded with it)."""
        key = parent.key
        container = parent.container
        if key in container:
            self.problems.append(Problem((*parent.path, key), f"duplicate key {key!r}", None))
        if self.track:
            self.lines[(*parent.path, key)] = parent.key_line
        container[key] = value
        parent.open = False

    def open_item(self, col: int, line: int) -> None:
        """A `-` at `col`: the next item of the sequence there, or a new sequence in the open slot."""
        stack = self.stack
        while stack and stack[-1].col > col:
            self.close()
        top = stack[-1] if stack else None
        if top is not None and not top.is_map and top.col == col:
            if top.open:
                self.attach(top, None, top.key_line)
        elif top is None or (top.open and (top.col < col or (top.is_map and top.col == col))):
            top = self.new_frame(False, col, line)
        else:
            raise _Unsupported
        top.open = True
        top.key_line = line

    def open_key(self, col: int, line: int) -> _Frame:
        """The mapping a key at `col` belongs to: the one there, or a new one in the open slot."""
        stack = self.stack
        while stack and stack[-1].col > col:
            self.close()
        top = stack[-1] if stack else None
        if (top is not None and not top.is_map and top.col == col and len(stack) > 1 and stack[-2].is_map
                and stack[-2].col == col):
            self.close()  # a sequence written at its key's indentation ends at the next key
            top = stack[-1]
        if top is not None and top.is_map and top.col == col:
            if top.open:
                self.attach(top, None, top.key_line)
            return top
        if top is None or (top.open and top.col < col):
            return self.new_frame(True, col, line)
        raise _Unsupported

    # --- one line's content after its `-`s --------------------------------------------------------------
    def scalar(self, text: str, line: int) -> Any:
        tag = self.plain_tag(text, (True, False))
        if tag == "tag:yaml.org,2002:str":
            return text
        if tag == "tag:yaml.org,2002:merge":
            raise _Unsupported
        return self.scalars.scalar(tag, text, line)

    def entry(self, content: str, col: int, line: int) -> None:
        first = content[0]
        if first == '"' or first == "'":
            key, end = _quoted(content)  # a quoted key, or a quoted item after `-`
            rest = content[end:]
            if not (rest.startswith(": ") or rest == ":"):
                _rest_is_blank(rest)
                self.item_value(key, line)
                return
            if end > _MAX_KEY:
                raise _Unsupported
            value_text = rest[1:].lstrip(" ")
        else:
            cut = content.find(": ")
            if cut < 0:
                if not content.endswith(":"):
                    value = self.values.get(content, _MISSING)
                    self.item_value(self.value(content, line) if value is _MISSING else value, line)
                    return
                cut = len(content) - 1
            written = content[:cut]
            remembered = self.keys.get(written)
            if remembered is not None:
                key = remembered
            else:
                plain = written.rstrip(" ")
                if not plain or len(plain) > _MAX_KEY or " #" in plain or (
                        plain[0] in _INDICATORS and not (plain[0] == "-" and len(plain) > 1 and plain[1] != " ")):
                    raise _Unsupported
                resolved = self.scalar(plain, line)
                key = "" if resolved is None else str(resolved)
                self.keys[written] = key
            value_text = content[cut + 1:].lstrip(" ")
        frame = self.open_key(col, line)
        frame.key = key
        frame.key_line = line
        frame.open = True
        if value_text and value_text[0] != "#":
            self.attach(frame, self.value(value_text, line), line)

    def value(self, text: str, line: int) -> Any:
        """A value written after its key or `-` on the line (not empty, not a comment)."""
        first = text[0]
        if first == '"' or first == "'":
            value, end = _quoted(text)
            _rest_is_blank(text[end:])
        elif first == "[" or first == "{":
            stripped = text[:2]
            _rest_is_blank(text[2:])
            if stripped not in ("[]", "{}"):
                raise _Unsupported
            return [] if stripped == "[]" else {}  # new each time: never remembered
        else:
            value = self.scalar(_plain(text), line)
        if len(self.values) < _REMEMBERED:
            self.values[text] = value
        return value

    def item_value(self, value: Any, line: int) -> None:
        """A scalar alone on its line: only the item of a `-` on the same line."""
        stack = self.stack
        top = stack[-1] if stack else None
        if top is None or top.is_map or not top.open or top.key_line != line:
            raise _Unsupported
        self.attach(top, value, line)
