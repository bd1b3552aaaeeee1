"""What validation reports: a problem at a field path, with the catalogue rule it breaks.

Paths are tuples of field names, list indices and map keys (`MapKey`), rendered the way
kube-apiserver renders field paths: `spec.devices[2].attributes[gpu.example.com/model]`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from draconform.sut import cause_reason

Severity = Literal["error", "warning"]


class MapKey(str):
    """A key of a map-valued field (attributes, counters, labels), rendered as `[key]`."""

    __slots__ = ()


Path = tuple[str | int, ...]


def format_path(path: Path) -> str:
    out: list[str] = []
    for part in path:
        if isinstance(part, (int, MapKey)):
            out.append(f"[{part}]")
        else:
            out.append(f".{part}" if out else part)
    return "".join(out) or "<root>"


@dataclass(frozen=True)
class Problem:
    """One finding. Errors make an object invalid; warnings (a field needing a feature gate that is
    off by default) do not."""

    path: Path
    message: str
    rule: str | None = None
    severity: Severity = "error"
    # What kube-apiserver's decoder says instead, for a value it cannot even decode (a malformed quantity): the
    # request is then a 400 naming no field, before any validation
    decoding: str | None = None

    @property
    def field(self) -> str:
        return format_path(self.path)

    @property
    def reason(self) -> str | None:
        """kube-apiserver's error type for it (FieldValueDuplicate, ...), as its message names it."""
        return cause_reason(self.message)


def errors(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]
