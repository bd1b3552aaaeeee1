"""How every `draconform` command speaks, so they all speak one way:

- exit status: 0 ok, 1 findings (something in the input is wrong or cannot be done), 2 unusable input or
  invocation (unreadable file, bad flag; `UsageError`);
- findings on stdout as `FILE:LINE: KIND/NAME: field: message (RULE)` (`Finding`), diagnostics about the
  run itself on stderr as `draconform COMMAND: message` (`diagnostic`).

New commands report through here rather than print their own way (manifests they read: `manifests.py`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2


class UsageError(Exception):
    """The invocation cannot be carried out (bad flag value, unknown gate): exit status 2."""


@dataclass(frozen=True)
class Finding:
    """One finding about the input. `kind` None: about the input itself (it holds no object to name)."""

    file: str
    line: int
    kind: str | None
    name: str
    field: str
    message: str
    rule: str | None = None
    severity: str = "error"  # "error" or "warning"

    @property
    def object(self) -> str | None:
        """KIND/NAME, `?` for what is missing; None for input that holds no object at all."""
        if self.kind is None:
            return None
        return f"{self.kind or '?'}/{self.name or '?'}"

    def text(self) -> str:
        rule = f" ({self.rule})" if self.rule else ""
        prefix = "warning: " if self.severity == "warning" else ""
        subject = "" if self.object is None else f"{self.object}: "
        where = f"{self.field}: " if self.field else ""
        return f"{self.file}:{self.line}: {prefix}{subject}{where}{self.message}{rule}"

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "kind": self.kind, "name": self.name, "field": self.field,
                "message": self.message, "rule": self.rule, "severity": self.severity}


def diagnostic(command: str, message: str) -> None:
    """A message about the run itself (not a finding about the input): stderr."""
    print(f"draconform {command}: {message}", file=sys.stderr)


def print_findings(findings: list[Finding]) -> None:
    for finding in findings:
        print(finding.text())
