"""The reference system with a chosen allocation core, for running the conformance suite against each core:
`draconform run --sut draconform.reference.allocator.suts:ColumnarReferenceSystem` (the polars core) or
`...:OracleReferenceSystem` (the readable oracle). The default SUT uses whatever `cluster.py` defaults to."""

from __future__ import annotations

from draconform.reference.allocator.columnar import ColumnarAllocator
from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.allocator.oracle import OracleAllocator
from draconform.reference.cluster import ReferenceCluster
from draconform.reference.sut import ReferenceSystem


class _WithCore(ReferenceSystem):
    core: AllocatorFactory

    @property
    def cluster(self) -> ReferenceCluster:
        if self._cluster is None:
            self._cluster = ReferenceCluster(self._configs, allocator_factory=self.core)
        return self._cluster


class ColumnarReferenceSystem(_WithCore):
    core = ColumnarAllocator


class OracleReferenceSystem(_WithCore):
    core = OracleAllocator
