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


def test_a_full_shape_carries_its_target_and_a_scaled_one_none() -> None:
    from draconform.bench import dra

    name = "SchedulingWithResourceClaimTemplate/5000pods_500nodes"
    scaled = dra._throughput(name, "columnar", 10, 1.0, "", BenchOptions(scale=0.1))
    full = dra._throughput(name, "columnar", 10, 1.0, "", BenchOptions(scale=1))
    assert scaled.at_least is None and scaled.met() is None
    assert full.at_least == 1000 and full.met() is False and full.target() == ">= 1,000 pods/s"


def test_check_exits_1_when_a_figure_misses_its_target(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from draconform.bench.registry import Measurement, Workload
    from draconform.commands import bench

    figures = {"fast": Measurement("fast", "pods/s", 1200, at_least=1000),
               "slow": Measurement("slow", "pods/s", 400, at_least=1000)}
    workloads = {name: Workload(name, "", lambda options, m=m: [m]) for name, m in figures.items()}
    monkeypatch.setattr(bench, "load_workloads", lambda: workloads)
    parser = __import__("argparse").ArgumentParser()
    bench.register(parser.add_subparsers())
    assert bench.handle(parser.parse_args(["bench", "fast", "--check"])) == 0
    assert bench.handle(parser.parse_args(["bench", "fast", "slow", "--check"])) == 1
    out, err = capsys.readouterr()
    assert "[target >= 1,000 pods/s: MISSED]" in out and "slow: 400.0 pods/s, target >= 1,000 pods/s" in err
    assert bench.handle(parser.parse_args(["bench", "fast", "slow"])) == 0  # without --check: printed only
    assert bench.handle(parser.parse_args(["bench", "fast", "--check", "--scale", "0.5"])) == 2
