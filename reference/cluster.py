"""One reference cluster: an API store, kube-controller-manager's resourceclaim controller,
kube-scheduler, any external controllers a scenario starts (KEP-5007's binding controller, the dynamic
device scaler) and reference DRA drivers with their kubelet plugins, all on one injectable clock.
Components keep no state the store does not hold, so restarting one means building it again from the
store; the one exception is a kubelet plugin's record of prepared claims, which lives on the node (a
checkpoint file upstream) and so outlives a restart of its driver."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from draconform.kube.featuregates import CURRENT_RELEASE, FeatureGates, startup_refusals
from draconform.reference import components
from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.apiserver.admission import install as install_admission
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.reference.components import EXTERNAL_CONTROLLERS, default_allocator_factory
from draconform.reference.controllers.external import ExternalController, NodeAgents
from draconform.reference.drivers.driver import ReferenceDriver
from draconform.reference.drivers.plugin import Checkpoint, NodePlugin
from draconform.reference.drivers.sockets import PluginSockets
from draconform.reference.events import EventRecorder
from draconform.reference.kubelet.checkpoint import KubeletCheckpoint
from draconform.reference.metrics import MetricsRegistry
from draconform.reference.scheduler.scheduler import Scheduler
from draconform.sut import ComponentConfig, Obj, PluginCall, PluginFault, Unsupported

# A scenario that never stops changing the cluster is a bug in the reference implementation; stop
# with an error rather than hang the suite.
MAX_SETTLE_ROUNDS = 10_000
# Rounds of timers coming due one after another while the clock stands still; a component that keeps re-arming
# a timer for a moment already past would otherwise hold a scenario's clock step for ever.
MAX_STALLED_TIMERS = 100

# What starts an external controller in this cluster: the classic cluster has controllers of its own.
ControllerStarter = Callable[[Store, FakeClock, Mapping[str, Any]], ExternalController]


class ReferenceCluster:
    """A cluster serving today's structured API (resource.k8s.io/v1); `ClassicCluster` (classic.py) serves
    KEP-3063's classic one instead, with the same store, clock and scheduler framework."""

    external_controllers: Mapping[str, ControllerStarter] = EXTERNAL_CONTROLLERS
    # A component refuses to start with gate settings its release forbids (a locked gate, a gate on whose
    # dependency is off), as upstream's do from 1.35.
    checks_gates_at_start = True

    def __init__(
        self,
        configs: Mapping[str, ComponentConfig] | None = None,
        allocator_factory: AllocatorFactory | None = None,
        clock: FakeClock | None = None,
        keep_history: bool = False,
    ) -> None:
        self.configs = dict(configs or {})
        self.allocator_factory = allocator_factory or default_allocator_factory()
        self.clock = clock or FakeClock()
        self.events = EventRecorder(self.clock)
        self.metrics = MetricsRegistry()
        self.store = self._new_store()
        if keep_history:  # every stored version, for the seam's object_writes
            self.store.keep_history()
        self.controller = self._new_controller()
        self.controller_running = True  # False between stop_controller_manager() and its restart
        self.scheduler = self._new_scheduler()
        self.scheduler_running = True  # False between stop_scheduler() and its restart
        self.external: dict[str, ExternalController] = {}
        self.drivers: dict[str, ReferenceDriver] = {}
        self._checkpoints: dict[str, Checkpoint] = {}  # per driver; a plugin's state outlives a restart
        self._sockets = PluginSockets(self.clock.now)
        self._kubelet_checkpoints: dict[str, KubeletCheckpoint] = {}  # per node; outlives a kubelet restart
        # What the container runtime reports: pod UID -> the phase its containers ended in (Succeeded: all exited
        # with 0). The kubelet reads it and writes the pod's phase; like a runtime, it outlives a kubelet restart.
        self.container_exits: dict[str, str] = {}
        self.kubelets = self._new_kubelets()

    def _new_store(self) -> Store:
        store = Store(self.clock, self._gates("kube-apiserver"))
        install_admission(store)  # kube-apiserver validation and disabled-field dropping
        return store

    def _new_controller(self) -> ExternalController:
        """kube-controller-manager's claim controller."""
        return components.claim_controller(self.store, self.events)

    def _gates(self, component: str) -> FeatureGates:
        config = self.configs.get(component, ComponentConfig())
        release = config.version or CURRENT_RELEASE
        refusals = startup_refusals(config.feature_gates, release) if self.checks_gates_at_start else []
        if refusals:  # upstream's component exits at start-up with these; no scenario can run one
            raise ValueError(f"{component} {release} refuses to start with feature gates "
                             f"{dict(config.feature_gates)}: {'; '.join(refusals)}")
        return FeatureGates(config.feature_gates, release=release)

    def _new_scheduler(self) -> Scheduler:
        config = self.configs.get("kube-scheduler", ComponentConfig())
        return components.scheduler(self.store, self.clock, self.events, self.metrics, self._gates("kube-scheduler"),
                                    config.args, self.allocator_factory)

    def _new_kubelets(self) -> NodeAgents:
        config = self.configs.get("kubelet", ComponentConfig())
        return components.kubelets(self.store, self.clock, self.events, self._gates("kubelet"), config.args,
                                   self._kubelet_checkpoints, self._plugin_registration,
                                   self.container_exits)

    def finish_pod(self, name: str, namespace: str, phase: str) -> None:
        """The pod's containers end (all with exit code 0 for Succeeded, one not for Failed), as the container
        runtime reports it; its kubelet then writes the phase, as only a kubelet does."""
        if phase not in ("Succeeded", "Failed"):
            raise ValueError(f"a pod's containers end in Succeeded or Failed, not {phase!r}")
        pod = self.store.get("Pod", name, namespace)
        if pod is None:
            raise ValueError(f"pod {name!r} does not exist")
        self.container_exits[pod["metadata"]["uid"]] = phase
        self.kubelets.containers_exited(pod)
        self.settle()

    def _plugin_registration(self, driver: str, node: str) -> str | None:
        """What the kubelet's plugin watcher on `node` finds for `driver`: its registration socket, if it runs."""
        if driver not in self.drivers:
            return None
        return self.kubelet_plugin_registration_endpoint(driver, node)

    def restart(self, component: str) -> None:
        """Stop a component and build it again from the store and its (possibly new) config."""
        if component == "kube-apiserver":
            self.store.gates = self._gates("kube-apiserver")  # storage survives an API server restart
        elif component == "kube-scheduler":
            if self.scheduler_running:  # a stopped one has ended already
                self.scheduler.stop()
            self.scheduler = self._new_scheduler()
            self.scheduler_running = True
        elif component == "kube-controller-manager":
            self.controller.stop()
            self.controller = self._new_controller()
            self.controller_running = True
        elif component == "dra-driver":
            for name, previous in list(self.drivers.items()):
                previous.stop()
                # What the restarted driver finds on the nodes, as the standalone driver's restart does.
                self._checkpoints[name] = self._checkpoints.setdefault(name, Checkpoint()).after_restart()
                self.drivers[name] = self._new_driver(name)
                self.drivers[name].take_over(previous)
        elif component == "kubelet":
            self.kubelets.stop()
            self.kubelets = self._new_kubelets()
        else:
            raise ValueError(f"unknown component {component!r}")

    def _new_driver(self, name: str) -> ReferenceDriver:
        return components.driver(name, self.store, self._gates("dra-driver"),
                                 self._checkpoints.setdefault(name, Checkpoint()))

    def run_driver(self, name: str, inventory: Sequence[Mapping[str, Any]]) -> None:
        """Start the reference DRA driver `name`, or give the running one a new inventory."""
        if name not in self.drivers:
            self.drivers[name] = self._new_driver(name)
        self.drivers[name].set_inventory([dict(obj) for obj in inventory])

    def kubelet_plugin_endpoint(self, driver: str, node: str) -> str:
        """Where the kubelet reaches `driver`'s plugin on `node` (unix://...)."""
        return self._sockets.endpoint(driver, node, self._node_plugin(driver, node))

    def kubelet_plugin_registration_endpoint(self, driver: str, node: str) -> str:
        """Where the kubelet's plugin watcher on `node` finds `driver`'s registration socket (unix://...)."""
        return self._sockets.registration_endpoint(driver, node, self._node_plugin(driver, node))

    def _node_plugin(self, driver: str, node: str) -> Callable[[], NodePlugin]:
        """The driver's plugin on `node`, looked up at each call so that a restarted driver answers."""
        if driver not in self.drivers:
            raise ValueError(f"no driver {driver!r} is running; a scenario starts it with run_driver first")
        return lambda: self.drivers[driver].plugin(node)

    def kubelet_plugin_calls(self, driver: str, node: str) -> list[PluginCall]:
        return self._sockets.calls(driver, node)

    def node_cdi_spec_files(self, node: str) -> dict[str, str]:
        """The CDI spec files the drivers' plugins have written on `node` (file name -> text)."""
        return {name: text for checkpoint in self._checkpoints.values()
                for name, text in checkpoint.cdi.get(node, {}).items()}

    def inject_plugin_fault(self, driver: str, node: str, fault: PluginFault | None) -> None:
        if driver not in self.drivers:
            raise ValueError(f"no driver {driver!r} is running; a scenario starts it with run_driver first")
        self.drivers[driver].faults(node).add(fault)

    def close(self) -> None:
        """Stop the kubelets and close the kubelet plugins' sockets, registration sockets included."""
        self.kubelets.stop()
        for driver in self.drivers.values():
            driver.stop()  # lets hung plugin calls go
        self._sockets.close()

    def race_next_write(self, component: str, kind: str, name: str, status: Obj) -> None:
        raise Unsupported("the structured reference steps in between no component's read and write; only the "
                          "classic cluster's scheduler, whose Reserve writes the claim it read in Pre-filter, is raced")

    def run_controller(self, name: str, behaviour: Mapping[str, Any]) -> None:
        """Start an external controller, or restart it with a new behaviour."""
        if name not in self.external_controllers:
            raise KeyError(name)
        previous = self.external.pop(name, None)
        if previous is not None:
            previous.stop()
        self.external[name] = self.external_controllers[name](self.store, self.clock, behaviour)

    def stop_controller_manager(self) -> None:
        """kube-controller-manager goes down until restarted; the restarted one starts from the store."""
        self.controller.stop()
        self.controller_running = False

    def stop_scheduler(self) -> None:
        """kube-scheduler goes down until restarted: a pod it parked in PreBind is forgotten, its claims stay."""
        self.scheduler.stop()
        self.scheduler_running = False

    def settle(self) -> None:
        """Run controllers and the scheduler until neither has anything left to do right now."""
        self.clock.fire_due()
        for _ in range(MAX_SETTLE_ROUNDS):
            progressed = self.controller.sync() if self.controller_running else False
            if self.scheduler_running:
                progressed = self.scheduler.sync() or progressed
                progressed = self.scheduler.schedule_pending() or progressed
            for external in self.external.values():
                progressed = external.sync() or progressed
            for driver in self.drivers.values():
                progressed = driver.sync() or progressed
            progressed = self.kubelets.sync() or progressed
            if not progressed:
                return
        raise RuntimeError(f"the reference cluster did not settle within {MAX_SETTLE_ROUNDS} rounds")

    def advance(self, seconds: float) -> None:
        """Let time pass, settling after each moment a timer fires, so that what a timer starts
        (a retry, a timeout) happens at its own time and not at the end of the interval."""
        self.settle()
        target = self.clock.now() + timedelta(seconds=seconds)
        stalled = 0  # timers fired one after another without the clock moving
        while (deadline := self.clock.next_deadline()) is not None and deadline <= target:
            stalled = stalled + 1 if deadline <= self.clock.now() else 0
            if stalled > MAX_STALLED_TIMERS:  # a component re-arms a timer that is already due: time cannot pass
                raise RuntimeError(f"timers kept coming due at {self.clock.now().isoformat()} without end")
            self.clock.advance(max(deadline - self.clock.now(), timedelta(0)))
            self.settle()
        self.clock.advance(target - self.clock.now())
        self.settle()
