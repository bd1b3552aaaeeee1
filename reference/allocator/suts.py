"""The reference system with a chosen allocation core, for running the conformance suite against each core:
`draconform run --sut draconform.reference.allocator.suts:columnar_system` (the polars core) or
`...suts:oracle_system` (the readable oracle). The default SUT uses whatever `cluster.py` defaults to."""

from __future__ import annotations

from draconform.reference.allocator.columnar import ColumnarAllocator
from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.allocator.oracle import OracleAllocator
from draconform.reference.cluster import ReferenceCluster
from draconform.reference.sut import ReferenceSystem


def _with_core(core: AllocatorFactory) -> ReferenceSystem:
    """A reference system whose cluster exists from the start with the given core; configuring a component
    later restarts it with the new configuration, as on the default system."""
    system = ReferenceSystem()
    system._cluster = ReferenceCluster(system._configs, allocator_factory=core)
    return system


def columnar_system() -> ReferenceSystem:
    return _with_core(ColumnarAllocator)


def oracle_system() -> ReferenceSystem:
    return _with_core(OracleAllocator)
