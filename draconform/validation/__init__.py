"""Validation of DRA API objects: JSON Schemas for what a schema can say, rules in code for the rest,
and feature-gate field handling. Used by the reference API store's admission and by
`draconform validate`. The names below load their modules on first use, so a command that only reads
YAML (through `validation.loader`) does not pay for the schemas and the CEL environment."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from draconform.validation.core import (
        is_validated,
        validate_classic_manifest,
        validate_gates,
        validate_manifest,
        validate_object,
    )
    from draconform.validation.problems import Problem, errors, format_path

_WHERE = {"Problem": "problems", "errors": "problems", "format_path": "problems", "is_validated": "core",
          "validate_classic_manifest": "core", "validate_gates": "core", "validate_manifest": "core",
          "validate_object": "core"}

__all__ = ["Problem", "errors", "format_path", "is_validated", "validate_classic_manifest", "validate_gates",
           "validate_manifest", "validate_object"]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
