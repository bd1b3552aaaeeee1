"""Validation of DRA API objects: JSON Schemas for what a schema can say, rules in code for the rest,
and feature-gate field handling. Used by the reference API store's admission and by
`draconform validate`."""

from draconform.validation.core import (
    is_validated,
    validate_classic_manifest,
    validate_gates,
    validate_manifest,
    validate_object,
)
from draconform.validation.problems import Problem, errors, format_path

__all__ = ["Problem", "errors", "format_path", "is_validated", "validate_classic_manifest", "validate_gates",
           "validate_manifest", "validate_object"]
