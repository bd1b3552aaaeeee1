"""Every allocator test runs against both cores: the oracle and the polars one must behave alike."""

from __future__ import annotations

import pytest

from draconform.reference.allocator.columnar import ColumnarAllocator
from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.allocator.oracle import OracleAllocator

CORES: dict[str, AllocatorFactory] = {"oracle": OracleAllocator, "columnar": ColumnarAllocator}


@pytest.fixture(params=sorted(CORES))
def core(request: pytest.FixtureRequest) -> AllocatorFactory:
    """The allocator factory under test."""
    return CORES[request.param]
