"""The metrics registry of one reference cluster. Each cluster owns its own prometheus_client registry
(never the process-global one) so parallel scenarios cannot see each other's counts."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest


class MetricsRegistry:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)

    def text(self) -> str:
        """Everything registered, in the Prometheus text exposition format."""
        return generate_latest(self.registry).decode("utf-8")
