"""The reference implementation as a `SystemUnderTest`: the one provider of the seam in
`draconform.sut` that ships with draconform. Steps reach the reference cluster only through it."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.classic_cluster import ClassicCluster
from draconform.reference.cluster import ReferenceCluster
from draconform.sut import (
    COMPONENTS,
    ComponentConfig,
    DriverUnderTest,
    Event,
    Obj,
    Patience,
    PluginCall,
    PluginFault,
    Unsupported,
)

SIMULATED_PATIENCE = 30.0  # simulated seconds a Then step's "eventually" observation may wait for


class ReferenceSystem:
    """Built lazily, so that configuration steps can run before the cluster starts."""

    def __init__(self, allocator_factory: AllocatorFactory | None = None) -> None:
        self._configs: dict[str, ComponentConfig] = {}
        self._allocator_factory = allocator_factory  # None: the cluster's default core
        self._cluster: ReferenceCluster | None = None
        self._api = "structured"

    @property
    def cluster(self) -> ReferenceCluster:
        if self._cluster is None:
            cluster_type = ClassicCluster if self._api == "classic" else ReferenceCluster
            self._cluster = cluster_type(self._configs, allocator_factory=self._allocator_factory, keep_history=True)
        return self._cluster

    def serve_api(self, api: str) -> None:
        if api not in ("structured", "classic"):
            raise Unsupported(f"the reference serves the 'structured' or the 'classic' DRA API, not {api!r}")
        if self._cluster is not None and api != self._api:
            raise ValueError("the DRA API a cluster serves is chosen before the cluster starts")
        self._api = api

    # --- set-up -------------------------------------------------------------------------------
    def configure(self, component: str, config: ComponentConfig) -> None:
        if component not in COMPONENTS:
            raise ValueError(f"unknown component {component!r}; known: {', '.join(COMPONENTS)}")
        self._configs[component] = config
        if self._cluster is not None:
            self._cluster.configs[component] = config
            self._cluster.restart(component)

    def restart(self, component: str) -> None:
        self.cluster.restart(component)

    def stop(self, component: str) -> None:
        if component == "kube-scheduler":
            self.cluster.stop_scheduler()
            return
        if component != "kube-controller-manager":
            raise Unsupported(f"the reference implementation can stop only kube-controller-manager and kube-scheduler, "
                              f"not {component!r}")
        self.cluster.stop_controller_manager()

    # --- API objects --------------------------------------------------------------------------
    def create(self, obj: Obj) -> Obj:
        return self.cluster.store.create(obj)

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return self.cluster.store.get(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return self.cluster.store.list(kind, namespace)

    def update(self, obj: Obj) -> Obj:
        return self.cluster.store.update(obj)

    def update_status(self, obj: Obj) -> Obj:
        return self.cluster.store.update_status(obj)

    def delete(self, kind: str, name: str, namespace: str | None = None,
               grace_period_seconds: int | None = None) -> None:
        self.cluster.store.delete(kind, name, namespace, grace_period_seconds=grace_period_seconds)

    def label_namespace(self, namespace: str, labels: Mapping[str, str]) -> None:
        self.cluster.store.label_namespace(namespace, dict(labels))

    # --- the control plane at work ------------------------------------------------------------
    def settle(self) -> None:
        self.cluster.settle()

    def advance_clock(self, seconds: float) -> None:
        self.cluster.advance(seconds)

    def finish_pod(self, name: str, namespace: str, phase: str) -> None:
        self.cluster.finish_pod(name, namespace, phase)

    def now(self) -> datetime:
        return self.cluster.clock.now()

    def run_controller(self, name: str, behaviour: Mapping[str, Any]) -> None:
        try:
            self.cluster.run_controller(name, behaviour)
        except KeyError:
            raise Unsupported(f"the reference implementation has no external controller {name!r}") from None

    def race_next_write(self, component: str, kind: str, name: str, status: Obj) -> None:
        self.cluster.race_next_write(component, kind, name, status)

    # --- a DRA driver -------------------------------------------------------------------------
    def run_driver(self, name: str, inventory: Sequence[Obj]) -> None:
        self.cluster.run_driver(name, inventory)

    def driver_under_test(self, driver: str, node: str, device_class: str) -> DriverUnderTest | None:
        return None  # the reference driver publishes the devices it is handed

    def kubelet_plugin_endpoint(self, driver: str, node: str) -> str:
        return self.cluster.kubelet_plugin_endpoint(driver, node)

    def kubelet_plugin_registration_endpoint(self, driver: str, node: str) -> str:
        return self.cluster.kubelet_plugin_registration_endpoint(driver, node)

    def pool_name(self, driver: str, pool: str) -> str:
        return pool  # in process every scenario has a cluster of its own: no name is changed

    def kubelet_plugin_calls(self, driver: str, node: str) -> builtins.list[PluginCall]:
        return self.cluster.kubelet_plugin_calls(driver, node)

    def inject_plugin_fault(self, driver: str, node: str, fault: PluginFault | None) -> None:
        self.cluster.inject_plugin_fault(driver, node, fault)

    def node_cdi_spec_files(self, node: str) -> dict[str, str]:
        return self.cluster.node_cdi_spec_files(node)

    def close(self) -> None:
        if self._cluster is not None:
            self._cluster.close()

    # --- observation --------------------------------------------------------------------------
    def events(self) -> builtins.list[Event]:
        return self.cluster.events.events()

    def object_writes(self, kind: str, name: str, namespace: str | None = None) -> builtins.list[Obj]:
        return self.cluster.store.history(kind, name, namespace)

    def metrics_text(self) -> str:
        return self.cluster.metrics.text()

    def patience(self, observation: str) -> Patience:
        # settle() has done all there is to do, so a Then step looks once in real time; a component that
        # reacts later in simulated time (a poll, a resync) is given half a minute of the fake clock.
        return Patience(simulated=SIMULATED_PATIENCE)


def columnar_system() -> ReferenceSystem:
    """The reference with the polars allocation core (the default): `--sut draconform.reference.sut:columnar_system`."""
    from draconform.reference.allocator.columnar import ColumnarAllocator

    return ReferenceSystem(ColumnarAllocator)


def oracle_system() -> ReferenceSystem:
    """The reference with the readable oracle core, to check the suite against it:
    `--sut draconform.reference.sut:oracle_system`."""
    from draconform.reference.allocator.oracle import OracleAllocator

    return ReferenceSystem(OracleAllocator)
