"""The DRA bench workloads run end to end at tiny scale (every measured pod must be bound, or the workload
raises); speed itself is `draconform bench`'s business, never asserted here."""

from __future__ import annotations

import pytest

from draconform.bench import allocator, dra
from draconform.bench.registry import WORKLOADS, BenchOptions

DRA_WORKLOADS = sorted(name for name, item in WORKLOADS.items() if item.run.__module__ == dra.__name__)
CORE_WORKLOADS = sorted(name for name, item in WORKLOADS.items() if item.run.__module__ == allocator.__name__)


@pytest.mark.parametrize("name", DRA_WORKLOADS)
def test_workload_runs_and_reports_pods_per_second(name: str) -> None:
    results = WORKLOADS[name].run(BenchOptions(scale=0.01, allocators=("columnar",), oracle_pods=3))
    assert results
    assert all(m.value > 0 for m in results)
    assert {m.unit for m in results} <= {"pods/s", "x"}


def test_the_comparison_measures_both_cores_on_the_same_pods() -> None:
    results = WORKLOADS["AllocatorComparison/500nodes_half"].run(BenchOptions(scale=0.01, oracle_pods=3))
    assert [m.allocator for m in results] == ["columnar", "oracle", "columnar/oracle"]
    assert all("3 measured pods" in m.detail for m in results[:2])


@pytest.mark.parametrize("name", CORE_WORKLOADS)
def test_allocation_core_workload_runs(name: str) -> None:
    """Each raises when a measured claim is not allocated or a pod is not bound."""
    results = WORKLOADS[name].run(BenchOptions(scale=0.01, allocators=("columnar",)))
    assert results
    assert all(m.value > 0 for m in results)


def test_the_cost_curve_doubles_the_nodes() -> None:
    results = WORKLOADS["CostCurve/SchedulingWithResourceClaimTemplate"].run(BenchOptions(scale=0.04))
    points, spread = results[:-1], results[-1]
    assert [m.detail.split(" nodes")[0] for m in points] == ["10", "20", "40", "80", "200"]
    assert spread.unit == "x" and spread.value == max(m.value for m in points) / min(m.value for m in points)
    assert spread.at_most is None  # the curve's target is the full shape's


def test_the_big_node_is_judged_against_both_go_figures_and_issue_29s_targets() -> None:
    results = WORKLOADS["AllocatorAttempt/1node_2000devices"].run(BenchOptions(scale=0.01))
    versus = [m for m in results if m.allocator == "columnar/Go"]
    assert [m.detail.split(" / ")[1].split(" ")[0:2] for m in versus] == [["Go's", "repeated"], ["Go's", "first"],
                                                                          ["Go's", "first"]]
    assert all("CPU time" in m.detail and "target <= " in m.detail for m in versus)
    assert all(m.at_most is None for m in versus)  # checked only on the full shape


@pytest.mark.parametrize(("wall", "cpu", "verdict"), [
    (0.7, 0.6, "target <= 1x: met"),
    (1.4, 0.9, "target <= 1x: met in CPU time only"),
    (1.4, 1.2, "target <= 1x: NOT met"),
])
def test_a_target_is_met_on_the_wall_clock_in_cpu_time_only_or_not(wall: float, cpu: float, verdict: str) -> None:
    measured = allocator.versus_go("W", "attempt", wall, cpu, 1.0, "Go's repeated attempt", 1)
    assert verdict in measured.detail
    assert measured.value == wall


def test_without_a_target_only_the_ratios_are_given() -> None:
    measured = allocator.versus_go("W", "attempt", 45.0, 30.0, 90.0, "Go's repeated attempt", None)
    assert "0.50x wall clock, 0.33x CPU time" in measured.detail
    assert "target" not in measured.detail
