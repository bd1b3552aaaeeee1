"""The binding-conditions bench workload runs end to end at tiny scale (it raises if a pod is not
bound after its condition turns True); its speed is `draconform bench`'s business, never asserted."""

from __future__ import annotations

from draconform.bench import bindingconditions  # noqa: F401  (registers the workload)
from draconform.bench.prebind_latency import _percentile, binding_conditions_latency
from draconform.bench.registry import WORKLOADS, BenchOptions


def test_the_workload_reports_latencies_total_setup_and_memory() -> None:
    measurements = WORKLOADS["binding-conditions"].run(BenchOptions(scale=0.01))
    assert [m.unit for m in measurements] == ["µs", "µs", "µs", "µs", "ms", "ms", "MiB"]
    assert all(m.value > 0 for m in measurements)


def test_every_waiting_pod_is_bound_in_the_seeded_order() -> None:
    figures = binding_conditions_latency(pods=30, measure_memory=False)
    assert figures.pods == 30 and figures.peak_bytes is None
    assert figures.p99_latency >= figures.median_latency > 0


def test_nearest_rank_percentile() -> None:
    values = [float(v) for v in range(1, 101)]
    assert _percentile(values, 0.99) == 99.0
    assert _percentile(values, 0.5) == 50.0
    assert _percentile([7.0], 0.99) == 7.0
