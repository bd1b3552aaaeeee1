"""One factory per reference component, from what every host of it has: an `ApiStore`, a clock, the event
recorder and the component's gates and arguments. The in-process cluster (`cluster.py`), `draconform serve`'s
component processes and the tests build each component here, so a component is wired in one place whether it
runs against the in-memory store or a cluster's API."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.clock import Clock
from draconform.reference.controllers.binding import BindingController
from draconform.reference.controllers.external import ExternalController
from draconform.reference.controllers.resourceclaim import ResourceClaimController
from draconform.reference.controllers.scaler import DynamicDeviceScaler
from draconform.reference.drivers.driver import ReferenceDriver
from draconform.reference.drivers.plugin import Checkpoint
from draconform.reference.events import EventRecorder
from draconform.reference.kubelet.checkpoint import KubeletCheckpoint
from draconform.reference.kubelet.nodes import Kubelets, PluginLocator
from draconform.reference.metrics import MetricsRegistry
from draconform.reference.scheduler.scheduler import Scheduler, SchedulerConfig

ControllerFactory = Callable[[ApiStore, Clock, Mapping[str, Any]], ExternalController]

# The external controllers a scenario may start (the seam's `run_controller`, serve's programs), by name.
EXTERNAL_CONTROLLERS: dict[str, ControllerFactory] = {
    "binding-controller": BindingController,
    "dynamic-device-scaler": DynamicDeviceScaler,
}


def default_allocator_factory() -> AllocatorFactory:
    """The polars columnar core is the production path; the oracle exists to check it."""
    from draconform.reference.allocator.columnar import ColumnarAllocator

    return ColumnarAllocator


def scheduler(store: ApiStore, clock: Clock, events: EventRecorder, metrics: MetricsRegistry, gates: FeatureGates,
              args: Mapping[str, Any], allocator_factory: AllocatorFactory | None = None) -> Scheduler:
    """kube-scheduler with the structured DRA plugin over an allocation core (the columnar one by default)."""
    return Scheduler(store, clock, events, metrics, SchedulerConfig(gates=gates, args=dict(args)),
                     allocator_factory or default_allocator_factory())


def claim_controller(store: ApiStore, events: EventRecorder) -> ResourceClaimController:
    """kube-controller-manager's resourceclaim controller."""
    return ResourceClaimController(store, events)


def kubelets(store: ApiStore, clock: Clock, events: EventRecorder, gates: FeatureGates, args: Mapping[str, Any],
             checkpoints: dict[str, KubeletCheckpoint], locate: PluginLocator,
             container_exits: dict[str, str] | None = None) -> Kubelets:
    """A reference kubelet for every Node; `checkpoints` (per node) outlive a rebuilt kubelet, as on disk,
    `locate(driver, node)` is its plugin watcher: a driver's registration socket on the node, if served, and
    `container_exits` what the container runtime reports of pods whose containers ended (by pod UID)."""
    return Kubelets(store, clock, events, gates, args, checkpoints, locate, container_exits)


def driver(name: str, store: ApiStore, gates: FeatureGates, checkpoint: Checkpoint | None = None,
           cdi_root: Path | None = None) -> ReferenceDriver:
    """The reference DRA driver `name`: its slice publisher and a kubelet plugin per node. `checkpoint` is what its
    plugins prepared, kept by the host so a restarted driver takes it over (a fresh one without)."""
    return ReferenceDriver(name, store, gates, checkpoint if checkpoint is not None else Checkpoint(),
                           cdi_root=cdi_root)


def external_controller(name: str, store: ApiStore, clock: Clock, behaviour: Mapping[str, Any]) -> ExternalController:
    """The external controller `name` of EXTERNAL_CONTROLLERS with its programmed behaviour (KeyError if unknown)."""
    return EXTERNAL_CONTROLLERS[name](store, clock, behaviour)
