"""The KEP-5007 workload for `draconform bench`: pods parked in PreBind on binding conditions, then
released one condition update at a time (prebind_latency.py does the work). The oracle core is
not offered: setting 1000 pods up through it takes minutes and says nothing about the wait."""

from __future__ import annotations

from draconform.bench.prebind_latency import binding_conditions_latency
from draconform.bench.registry import BenchOptions, Measurement, workload

NAME = "binding-conditions"
PODS = 1000  # the KEP's test plan: "1000 Pods waiting in PreBind"


@workload(NAME, "latency from a binding-condition update to the pod being bound, 1000 pods waiting in PreBind")
def binding_conditions(options: BenchOptions) -> list[Measurement]:
    figures = binding_conditions_latency(max(10, round(PODS * options.scale)))
    waiting = f"{figures.pods} pods waiting in PreBind, conditions set True in random order"

    def micro(value: float, detail: str) -> Measurement:
        return Measurement(NAME, "µs", value * 1e6, detail, "columnar")

    measurements = [
        micro(figures.median_latency, f"median, update to pod bound; {waiting}"),
        micro(figures.p99_latency, "p99, update to pod bound"),
        micro(figures.median_latency_first_tenth, "median of the first tenth of updates (most pods waiting)"),
        micro(figures.median_latency_last_tenth, "median of the last tenth of updates (fewest pods waiting)"),
        Measurement(NAME, "ms", figures.total_seconds * 1e3, f"total for all {figures.pods} updates and bindings",
                    "columnar"),
        Measurement(NAME, "ms", figures.setup_seconds * 1e3, "set-up: objects created, every pod parked in PreBind",
                    "columnar"),
    ]
    if figures.peak_bytes is not None:
        measurements.append(Measurement(NAME, "MiB", figures.peak_bytes / 2**20,
                                        "peak traced memory (tracemalloc, a second identical run)", "columnar"))
    return measurements
