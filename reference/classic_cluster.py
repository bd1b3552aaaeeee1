"""A reference cluster serving KEP-3063's classic API (cdi.k8s.io/v1alpha1) in place of resource.k8s.io:
the same store, clock and scheduler framework, with the classic claim controller, the scheduler's
classic DRA plugin, and, started per scenario, a driver's classic control-plane controller and its
admission webhook. The two APIs never mix in one cluster (docs/decisions.md D-3063-1)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from draconform.kube.kinds import CLASSIC_KINDS
from draconform.kubeletplugin.classic import serve_classic_plugin, serve_classic_registration
from draconform.kubeletplugin.server import RunningServer
from draconform.reference.apiserver import classic as classic_api
from draconform.reference.apiserver.store import Store
from draconform.reference.cluster import ControllerStarter, ReferenceCluster
from draconform.reference.controllers.classic_claims import ClassicClaimController
from draconform.reference.controllers.external import ExternalController, NodeAgents
from draconform.reference.drivers.classic_controller import ClassicDriverController
from draconform.reference.drivers.classic_plugin import ClassicNodePlugin
from draconform.reference.drivers.classic_webhook import ResourceClassWebhook
from draconform.reference.kubelet.classic import ClassicCheckpoint, ClassicKubelets
from draconform.reference.scheduler.classic import ClassicDynamicResources
from draconform.reference.scheduler.scheduler import Scheduler, SchedulerConfig
from draconform.sut import ComponentConfig, Obj, PluginCall, PluginFault, Unsupported

CLASSIC_CONTROLLERS: dict[str, ControllerStarter] = {
    "classic-driver": ClassicDriverController,
    "resource-class-webhook": ResourceClassWebhook,
}


class RacedStore:
    """The store as the scheduler sees it, where another client may win a race for an object: just before the
    scheduler's next write of it, that client's status write, made from a fresh read, lands first (`races`)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.races: dict[tuple[str, str | None, str], Obj] = {}  # (kind, namespace, name) -> the other's status fields

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def _race(self, obj: Obj) -> None:
        meta = obj.get("metadata") or {}
        fields = self.races.pop((obj.get("kind", ""), meta.get("namespace"), meta.get("name", "")), None)
        if fields is None:
            return
        other = self._store.get(obj["kind"], meta["name"], meta.get("namespace"))
        if other is not None:
            other["status"] = {**(other.get("status") or {}), **fields}
            self._store.update_status(other)

    def update(self, obj: Obj, **options: Any) -> Obj:
        self._race(obj)
        return self._store.update(obj, **options)

    def update_status(self, obj: Obj, **options: Any) -> Obj:
        self._race(obj)
        return self._store.update_status(obj, **options)


class ClassicCluster(ReferenceCluster):
    external_controllers = CLASSIC_CONTROLLERS
    # The classic protocol shipped in 1.26 to 1.31, before DynamicResourceAllocation was locked on and before
    # upstream checked gate dependencies: its components may run with the gate off.
    checks_gates_at_start = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._classic_kubelet_checkpoints: dict[str, ClassicCheckpoint] = {}  # per node: outlive a kubelet restart
        self._raced: RacedStore | None = None  # the scheduler's view of the store; outlives a scheduler restart
        super().__init__(*args, **kwargs)
        # A plugin's prepared resources live on the node, so they outlive a restart of its driver.
        self._classic_plugins: dict[tuple[str, str], ClassicNodePlugin] = {}
        self._classic_servers: dict[tuple[str, str, str], RunningServer] = {}
        self._socket_dir: Path | None = None

    def _new_store(self) -> Store:
        store = Store(self.clock, self._gates("kube-apiserver"), kinds=CLASSIC_KINDS)
        classic_api.install(store)
        return store

    def _new_controller(self) -> ExternalController:
        return ClassicClaimController(self.store, self.clock, self.events, self.metrics)

    def _new_kubelets(self) -> NodeAgents:
        return ClassicKubelets(self.store, self.clock, self.events, self._gates("kubelet"),
                               self.kubelet_plugin_endpoint, self._classic_kubelet_checkpoints, self.container_exits)

    def _new_scheduler(self) -> Scheduler:
        config = self.configs.get("kube-scheduler", ComponentConfig())
        gates = self._gates("kube-scheduler")
        if self._raced is None:
            self._raced = RacedStore(self.store)
        store = cast(Store, self._raced)
        return Scheduler(
            store, self.clock, self.events, self.metrics,
            SchedulerConfig(gates=gates, args=dict(config.args)),
            self.allocator_factory,
            dra=ClassicDynamicResources(store, gates),
        )

    def race_next_write(self, component: str, kind: str, name: str, status: Obj) -> None:
        if component != "kube-scheduler":
            raise Unsupported(f"the classic reference steps in between the scheduler's read and write only, not "
                              f"{component}'s")
        assert self._raced is not None  # made with the scheduler, when the cluster was built
        self._raced.races[(kind, "default", name)] = dict(status)

    def run_driver(self, name: str, inventory: Any) -> None:
        raise ValueError("a classic cluster's driver is its control-plane controller: start it with "
                         "run_controller('classic-driver', ...)")

    def run_controller(self, name: str, behaviour: Mapping[str, Any]) -> None:
        """Each driver runs its own controller: "classic-driver" is started once per driver name."""
        if name == "classic-driver":
            name = f"classic-driver/{behaviour.get('driver')}"
            previous = self.external.pop(name, None)
            if previous is not None:
                previous.stop()
            self.external[name] = ClassicDriverController(self.store, self.clock, behaviour)
            return
        super().run_controller(name, behaviour)

    # --- the drivers' kubelet plugins, over the classic protocol -----------------------------------
    def classic_plugin(self, driver: str, node: str) -> ClassicNodePlugin:
        if f"classic-driver/{driver}" not in self.external:
            raise ValueError(f"no classic driver {driver!r} is running; start it with run_controller first")
        return self._classic_plugins.setdefault((driver, node), ClassicNodePlugin(self.store, self.clock, driver, node))

    def _socket(self, name: str) -> str:
        if self._socket_dir is None:
            self._socket_dir = Path(tempfile.mkdtemp(prefix="dcc-", dir="/tmp"))  # short: unix paths are capped
        return str(self._socket_dir / name)

    def kubelet_plugin_endpoint(self, driver: str, node: str) -> str:
        key = (driver, node, "plugin")
        if key not in self._classic_servers:
            plugin = self.classic_plugin(driver, node)
            path = self._socket(f"{len(self._classic_servers)}.sock")
            self._classic_servers[key] = serve_classic_plugin(plugin, path)
        return self._classic_servers[key].endpoint

    def kubelet_plugin_registration_endpoint(self, driver: str, node: str) -> str:
        key = (driver, node, "registration")
        if key not in self._classic_servers:
            endpoint = self.kubelet_plugin_endpoint(driver, node)
            path = self._socket(f"{len(self._classic_servers)}-reg.sock")
            self._classic_servers[key] = serve_classic_registration(driver, endpoint, path)
        return self._classic_servers[key].endpoint

    def node_cdi_spec_files(self, node: str) -> dict[str, str]:
        """The spec files the classic plugins wrote on `node`, beside those of structured drivers."""
        files = super().node_cdi_spec_files(node)
        for (_, plugin_node), plugin in self._classic_plugins.items():
            if plugin_node == node:
                files.update(plugin.cdi)
        return files

    def kubelet_plugin_calls(self, driver: str, node: str) -> list[PluginCall]:
        return list(self.classic_plugin(driver, node).calls)

    def inject_plugin_fault(self, driver: str, node: str, fault: PluginFault | None) -> None:
        plugin = self.classic_plugin(driver, node)
        if fault is None:
            plugin.faults.clear()
        elif fault.kind != "transient" or fault.device is not None:
            raise Unsupported("a classic plugin can only be told to fail transiently (the seed's protocol has no "
                              "permanent errors, and the reference classic plugin neither hangs nor crashes)")
        else:
            plugin.faults.append(fault)

    def close(self) -> None:
        self.kubelets.stop()
        for server in self._classic_servers.values():
            server.stop()
        self._classic_servers.clear()
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None
        super().close()
