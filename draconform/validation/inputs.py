"""The one way a command reads a file it is handed besides manifests (those go through `commands/manifests.py`'s
`read_inputs`): an options file, the live cluster and timeout configs, plugin-check's declaration and claims, a
submitted or compared report. Each is read by the hardened loader (`loader.py`) and checked against its JSON
Schema in `schemas/harness/` (or its kind's) by the same compiled schemas and messages `draconform validate`
uses (`schema.py`); a problem names the file, its line, the object and the field."""

from __future__ import annotations

from pathlib import Path as FilePath
from typing import Any

from draconform.validation.loader import MAX_BYTES, Document, load_documents
from draconform.validation.problems import Problem
from draconform.validation.schema import harness_schema, schema_problems
from draconform.validation.yamlscalars import LoadError


class InputError(ValueError):
    """A file is unreadable or invalid: one line per problem, `FILE:LINE: OBJECT: field: message`."""


def read_documents(path: FilePath | str, max_bytes: int = MAX_BYTES) -> list[Document]:
    """Every document of `path`, with the line of each field; InputError for what cannot be read."""
    try:
        with FilePath(path).open("rb") as stream:
            text = stream.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return list(load_documents(text, max_bytes=max_bytes))
    except LoadError as exc:
        raise InputError(f"{path}:{exc.line or 1}: {exc.message}") from None


def problems_of(document: Document, schema: str) -> list[Problem]:
    """What the JSON Schema `schemas/harness/<schema>.schema.json` finds in one document, with the problems of
    loading it (duplicate keys)."""
    return [*document.problems, *schema_problems(harness_schema(schema), document.data)]


def describe(path: FilePath | str, document: Document, what: str, problem: Problem, schema: str) -> str:
    message = problem.message
    if message == "unknown field":  # a hand-written file: say what the field could have been
        known = _known_fields(harness_schema(schema).schema, problem.path[:-1])
        message += f"; known: {', '.join(known)}" if known else ""
    return f"{path}:{document.line_of(problem.path)}: {what}: {problem.field}: {message}"


def _known_fields(schema: dict[str, Any], path: tuple[str | int, ...]) -> list[str]:
    """The properties the (self-contained) harness schema allows at `path`."""
    def resolve(node: Any) -> Any:
        while isinstance(node, dict) and str(node.get("$ref", "")).startswith("#/"):
            target: Any = schema
            for part in node["$ref"][2:].split("/"):
                target = target[part]
            node = target
        return node

    node = resolve(schema)
    for part in path:
        if not isinstance(node, dict):
            return []
        node = resolve(node.get("items") if isinstance(part, int) else
                       (node.get("properties") or {}).get(part, node.get("additionalProperties")))
    return sorted((node.get("properties") or {}) if isinstance(node, dict) else ())


def read_input(path: FilePath | str, schema: str, what: str, empty: Any = None) -> Any:
    """The one document of `path`, valid against `schemas/harness/<schema>.schema.json` (`empty` stands for a
    file without any); InputError lists every problem, each naming file, line, `what` and the field."""
    documents = read_documents(path)
    if not documents:
        documents = [Document(empty, 1)]
    if len(documents) > 1:
        raise InputError(f"{path}:{documents[1].line}: {what}: expected one YAML document, found {len(documents)}")
    (document,) = documents
    problems = sorted(problems_of(document, schema), key=lambda problem: document.line_of(problem.path))
    if problems:
        raise InputError("\n".join(describe(path, document, what, problem, schema) for problem in problems))
    return document.data
