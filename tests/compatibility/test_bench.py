"""The KEP-5963 bench workloads run end to end at tiny scale: every measured pod must be bound (with and
without groups), or the workload raises. Speed is `draconform bench`'s business, never asserted here."""

from __future__ import annotations

import pytest

from draconform.bench import compatibility
from draconform.bench.registry import WORKLOADS, BenchOptions, load_workloads


@pytest.mark.parametrize("name", ["PartitionableCompatibilityGroups/2000pods_100nodes",
                                  "PartitionableCompatibilityGroups/backtracking"])
def test_workload_reports_throughput_with_and_without_groups(name: str) -> None:
    results = WORKLOADS[name].run(BenchOptions(scale=0.01, allocators=("columnar", "oracle")))
    assert [m.unit for m in results] == ["pods/s", "pods/s", "x"] * 2
    assert [m.allocator for m in results] == ["columnar"] * 3 + ["oracle"] * 3
    assert all(m.value > 0 for m in results)
    assert "without groups" in results[0].detail and "with groups" in results[1].detail


def test_the_workloads_are_in_the_registry() -> None:
    assert compatibility.mixed is WORKLOADS["PartitionableCompatibilityGroups/2000pods_100nodes"].run
    assert "PartitionableCompatibilityGroups/backtracking" in load_workloads()
