"""The reference system with a chosen allocation core, for running the conformance suite against each core:
`draconform run --sut draconform.reference.allocator.suts:columnar_system` (the polars core, also the
default) or `...suts:oracle_system` (the readable oracle)."""

from __future__ import annotations

from draconform.reference.allocator.columnar import ColumnarAllocator
from draconform.reference.allocator.oracle import OracleAllocator
from draconform.reference.sut import ReferenceSystem


def columnar_system() -> ReferenceSystem:
    return ReferenceSystem(ColumnarAllocator)


def oracle_system() -> ReferenceSystem:
    return ReferenceSystem(OracleAllocator)
