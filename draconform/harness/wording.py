"""Failures in words: the text every report shows for an exception a step raised. A step's own message is
kept; pytest's assertion introspection (`where <built-in method get of dict object at 0x…>`, diff hints) is
dropped; a comparison pytest evaluated becomes `observed:` / `expected:` (the steps write `assert got ==
want`); Python literals inside the text become YAML, and Kubernetes conditions read `Type=Status (Reason)`."""

from __future__ import annotations

import ast
import re
from typing import Any

import yaml

FLOW_LIMIT = 100  # characters of a literal shown inline; a longer one becomes an indented YAML block
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_COMPARISON = re.compile(r"^assert (?P<left>.+?) (?P<op>==|!=|in|not in|<=|>=|<|>) (?P<right>.+)$")


def describe(exc: BaseException) -> str:
    """The message reports show for an exception, without a traceback: a failed assertion in words, anything
    else as its type and text."""
    text = str(exc).strip()
    if isinstance(exc, AssertionError):
        return failure_text(text) or "the check failed (the step gave no message)"
    return f"{type(exc).__name__}: {humanize(text)}" if text else type(exc).__name__


def failure_text(text: str) -> str:
    """A failed assertion's text as a person reads it: the step's message, then what pytest compared."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("assert ")), None)
    message = "\n".join(lines if start is None else lines[:start]).strip()
    parts = [humanize(message)] if message else []
    if start is not None:
        explanation = lines[start]
        compared = _comparison(explanation)
        if not message:
            parts.append(explanation if not _ADDRESS.search(explanation) else "the check failed")
        parts += compared
    # What a patient step adds after its last look (kept by the message above) needs nothing more.
    return "\n".join(parts).strip()


def _comparison(line: str) -> list[str]:
    """`observed:` and `expected:` for `assert A == B` with both sides literal values (pytest shortens long
    ones with `...`, which then stay out)."""
    match = _COMPARISON.match(line)
    if match is None or match["op"] != "==":
        return []
    try:
        left, right = ast.literal_eval(match["left"]), ast.literal_eval(match["right"])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    return [f"observed: {as_yaml(left)}", f"expected: {as_yaml(right)}"]


_REPR_START = re.compile(r"(?<![\w.])[A-Z]\w*\(")  # `PrepareResult(` : a dataclass's repr begins


def humanize(text: str) -> str:
    """Every Python literal list or dict, and every dataclass repr (`Name(field=value, ...)`), in `text` as YAML;
    the rest as it is."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        start = _REPR_START.match(text, index)
        if char in "[{" or start:
            bracket = start.end() - 1 if start else index
            end = _closing(text, bracket)
            value = _value(text[index : end + 1]) if end is not None else None
            if end is not None and isinstance(value, (list, dict, set, tuple)):
                out.append(as_yaml(value))
                index = end + 1
                continue
        out.append(char)
        index += 1
    return "".join(out)


def _value(source: str) -> Any:
    """A Python literal, or a dataclass repr as the dict of its fields; None when `source` is neither."""
    try:
        return _plain(ast.parse(source, mode="eval").body)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _plain(node: ast.expr) -> Any:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args:
        return {keyword.arg: _plain(keyword.value) for keyword in node.keywords if keyword.arg}
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_plain(item) for item in node.elts]
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {_plain(key): _plain(value) for key, value in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    return ast.literal_eval(node)


def _closing(text: str, start: int) -> int | None:
    """Where the bracket opened at `start` closes, skipping quoted strings; None when it never does."""
    depth, quote, index = 0, "", start
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def condition_text(value: Any) -> str | None:
    """A Kubernetes condition as `Type=Status (Reason: message)`; None for anything else."""
    if not (isinstance(value, dict) and "type" in value and "status" in value):
        return None
    text = f"{value['type']}={value['status']}"
    detail = ": ".join(str(value[key]) for key in ("reason", "message") if value.get(key))
    return text + (f" ({detail})" if detail else "")


def as_yaml(value: Any) -> str:
    """A value as YAML: conditions by type and reason, short values inline, objects as an indented block."""
    if isinstance(value, (set, tuple)):
        value = sorted(value, key=str) if isinstance(value, set) else list(value)
    conditions = [condition_text(item) for item in value] if isinstance(value, list) and value else []
    if conditions and all(conditions):
        return "; ".join(text for text in conditions if text)
    single = condition_text(value)
    if single:
        return single
    if not isinstance(value, (dict, list)):
        return _scalar(value)
    flow = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10_000).strip()
    if len(flow) <= FLOW_LIMIT and "\n" not in flow:
        return flow
    block = yaml.safe_dump(value, default_flow_style=False, sort_keys=False, width=100).rstrip()
    return "\n" + "\n".join("    " + line for line in block.splitlines()) + "\n"


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
