"""kube-scheduler's KEP-5007 metrics ("What specific metrics should inform a rollback?"), under the
KEP's names (docs/decisions.md D-5007-9), registered on the cluster's own registry while a scheduler with the feature
runs. A restarted scheduler starts from zero, as a restarted process would.

Upstream implemented `scheduler_dra_bindingconditions_allocations_total{profile,driver,status}` per
device and `scheduler_dra_bindingconditions_wait_duration_seconds` instead of the duration below."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from draconform.reference.metrics import MetricsRegistry

ALLOCATIONS_TOTAL = "scheduler_dra_bindingconditions_allocations_total"
PREBIND_DURATION = "scheduler_dra_bindingconditions_prebind_duration_seconds"
STATUSES = ("success", "failure", "timeout")
# Upstream's buckets for the wait: 0.1 s doubling, 14 buckets (up to about 27 minutes).
BUCKETS = tuple(0.1 * 2**i for i in range(14))


class BindingConditionMetrics:
    def __init__(self, registry: MetricsRegistry) -> None:
        self._registry = registry.registry
        self.allocations = Counter(
            ALLOCATIONS_TOTAL.removesuffix("_total"),
            "Scheduling attempts (PreBind executions) that required binding conditions, by outcome.",
            ["status"],
            registry=self._registry,
        )
        self.prebind_duration = Histogram(
            PREBIND_DURATION,
            "Duration of the DRA PreBind phase, by outcome and whether binding conditions were required.",
            ["status", "requires_bindingconditions"],
            buckets=BUCKETS,
            registry=self._registry,
        )

    def observe(self, status: str, requires: bool, seconds: float) -> None:
        """One finished PreBind: counted when it waited for binding conditions, timed always."""
        if requires:
            self.allocations.labels(status=status).inc()
        self.prebind_duration.labels(status=status, requires_bindingconditions=str(requires).lower()).observe(
            max(seconds, 0.0)
        )

    def unregister(self) -> None:
        self._registry.unregister(self.allocations)
        self._registry.unregister(self.prebind_duration)
