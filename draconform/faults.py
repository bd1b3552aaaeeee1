"""Fault switches: named, deliberate bugs the reference implementation can be told to have, so that
`draconform mutants` can measure whether the conformance suite notices them (suite power).

A fault is read at the one place where the rule it breaks is implemented (`if faults.on("name"):`).
Faults are off unless the environment variable DRACONFORM_FAULTS names them (comma-separated) when
the process starts; with it unset the set below is empty, and a check costs one set lookup. The
catalogue of variants, each tied to the rule it breaks, is `draconform.mutation.catalogue`.

This module imports nothing of the project, so every layer (validation, reference) may read it."""

from __future__ import annotations

import os

ENV = "DRACONFORM_FAULTS"


def _from_environment() -> frozenset[str]:
    return frozenset(name.strip() for name in os.environ.get(ENV, "").split(",") if name.strip())


ACTIVE: frozenset[str] = _from_environment()


def on(name: str) -> bool:
    """Whether the named fault is switched on in this process."""
    return name in ACTIVE
