"""`draconform validate PATH...`: check DRA manifests (files, directories, `-` for stdin; multi-document
YAML or JSON) the way kube-apiserver would on create, through the same validation layer as the
reference API store. Exit status: 0 all valid, 1 any object invalid, 2 any input unreadable."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draconform.kube.featuregates import CURRENT_RELEASE, parse_gate_settings
from draconform.validation import Problem, validate_gates, validate_manifest
from draconform.validation.loader import MAX_BYTES, Document, LoadError, load_documents

SUFFIXES = (".yaml", ".yml", ".json")
RELEASES = ("1.34", "1.35", "1.36", "1.37")


@dataclass
class Finding:
    file: str
    line: int
    kind: str | None  # None: the finding is about the input, not an object in it
    name: str
    field: str
    message: str
    rule: str | None
    severity: str

    def text(self) -> str:
        rule = f" ({self.rule})" if self.rule else ""
        prefix = "warning: " if self.severity == "warning" else ""
        subject = "" if self.object is None else f"{self.object}: "
        where = f"{self.field}: " if self.field else ""
        return f"{self.file}:{self.line}: {prefix}{subject}{where}{self.message}{rule}"

    @property
    def object(self) -> str | None:
        """KIND/NAME, `?` for what is missing; None for input that holds no object at all."""
        if self.kind is None:
            return None
        return f"{self.kind or '?'}/{self.name or '?'}"


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    objects: int = 0
    invalid_objects: int = 0
    unreadable: list[Finding] = field(default_factory=list)

    @property
    def status(self) -> int:
        return 2 if self.unreadable else 1 if self.invalid_objects else 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="validate DRA manifests as kube-apiserver would",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory (searched for *.yaml, *.yml, "
                                                                   "*.json) or - for standard input")
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    parser.add_argument("--kubernetes-version", default=CURRENT_RELEASE, choices=RELEASES, metavar="X.Y",
                        help=f"release whose rules and gate defaults apply ({', '.join(RELEASES)}; "
                             f"default {CURRENT_RELEASE})")
    parser.add_argument("--feature-gates", default="", metavar="NAME=BOOL,...",
                        help="override gates; by default every DRA gate the release has is on, so gated fields "
                             "are checked (a warning names gates that are off by default)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        overrides = parse_gate_settings(args.feature_gates)
    except ValueError as exc:
        print(f"draconform validate: --feature-gates: {exc}", file=sys.stderr)
        return 2
    try:
        gates = validate_gates(overrides, args.kubernetes_version)
    except ValueError as exc:
        print(f"draconform validate: {exc}", file=sys.stderr)
        return 2
    report = Report()
    for name, read in _inputs(args.paths):
        validate_source(name, read, gates, report)
    if args.output == "json":
        json.dump(_as_json(report, args.kubernetes_version), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for finding in report.unreadable + report.findings:
            print(finding.text())
        print(f"{report.objects} object{'s' if report.objects != 1 else ''} checked, "
              f"{report.invalid_objects} invalid, {len(report.unreadable)} unreadable input"
              f"{'s' if len(report.unreadable) != 1 else ''}", file=sys.stderr)
    return report.status


def _inputs(paths: list[str]) -> Iterator[tuple[str, Any]]:
    """(display name, reader) per input; a reader returns bytes or raises OSError/LoadError."""
    for raw in paths:
        if raw == "-":
            yield "<stdin>", lambda: _read_limited(sys.stdin.buffer)
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
            if not found:
                yield raw, lambda raw=raw: _fail(f"no {', '.join(SUFFIXES)} files under this directory")
            for file in found:
                yield str(file), lambda file=file: _read_file(file)
        else:
            yield raw, lambda path=path: _read_file(path)


def _fail(message: str) -> bytes:
    raise LoadError(message)


def _read_file(path: Path) -> bytes:
    with path.open("rb") as stream:
        return _read_limited(stream)


def _read_limited(stream: Any) -> bytes:
    data: bytes = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise LoadError(f"input is larger than {MAX_BYTES // (1024 * 1024)} MiB")
    return data


def validate_source(name: str, read: Any, gates: Any, report: Report) -> None:
    """Validate every object of one input, adding findings to `report`."""
    try:
        data = read()
        for document in load_documents(data):
            for obj, base, line in _objects(document):
                _check(name, document, obj, base, line, gates, report)
    except LoadError as exc:
        report.unreadable.append(Finding(name, exc.line or 1, None, "", "", exc.message, None, "error"))
    except OSError as exc:
        report.unreadable.append(Finding(name, 1, None, "", "", f"cannot read: {exc.strerror or exc}", None, "error"))


def _objects(document: Document) -> Iterator[tuple[Any, tuple[Any, ...], int]]:
    """The objects of a document: itself, or each item of a `kind: List`."""
    data = document.data
    if isinstance(data, dict) and data.get("kind") == "List" and isinstance(data.get("items"), list):
        for index, item in enumerate(data["items"]):
            yield item, ("items", index), document.line_of(("items", index))
    else:
        yield data, (), document.line


def _check(name: str, document: Document, obj: Any, base: tuple[Any, ...], line: int, gates: Any,
           report: Report) -> None:
    report.objects += 1
    if not isinstance(obj, dict):
        report.invalid_objects += 1
        report.findings.append(Finding(name, line, None, "", "", f"not an object but a {_type_name(obj)}; a manifest "
                                       "document must be a mapping with apiVersion and kind", None, "error"))
        return
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else ""
    meta: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
    object_name = meta.get("name") if isinstance(meta.get("name"), str) else meta.get("generateName", "")
    problems: list[Problem] = [p for p in document.problems if p.path[: len(base)] == base]
    problems = [Problem(p.path[len(base):], p.message, p.rule, p.severity) for p in problems]
    missing = [key for key in ("apiVersion", "kind") if not isinstance(obj.get(key), str) or not obj.get(key)]
    if missing:
        problems += [Problem((key,), "Required value: every manifest needs apiVersion and kind") for key in missing]
    else:
        problems += validate_manifest(obj, gates)[1]
    if any(p.severity == "error" for p in problems):
        report.invalid_objects += 1
    findings = [Finding(name, document.line_of(base + problem.path) if problem.path else line, kind,
                        str(object_name or ""), problem.field if problem.path else "", problem.message, problem.rule,
                        problem.severity) for problem in problems]
    report.findings.extend(sorted(findings, key=lambda finding: finding.line))


def _type_name(value: Any) -> str:
    return {str: "string", int: "number", float: "number", bool: "boolean", list: "list"}.get(type(value), "value")


def _as_json(report: Report, release: str) -> dict[str, Any]:
    return {
        "kubernetesVersion": release,
        "objects": report.objects,
        "invalid": report.invalid_objects,
        "unreadable": len(report.unreadable),
        "exitStatus": report.status,
        "findings": [vars(f) for f in report.unreadable + report.findings],
    }
