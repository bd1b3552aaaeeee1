"""The programmable reference components of `draconform serve`: the reference DRA driver (its slice publisher
and a kubelet plugin per Node, on unix sockets the kubelet process finds) and the external controllers a
scenario starts (KEP-5007's binding controller, the dynamic device scaler). Each runs in its own process and is
programmed the way an operator configures a deployed component, through the API: a ConfigMap labelled
`draconform.io/program=<program>` whose `program.json` holds the behaviour (a controller) or the inventory and
the faults to show (a driver). A program sees its ConfigMap's namespace only (cluster-scoped objects all),
labels what it creates with the ConfigMap's labels, and stops when the ConfigMap goes."""

from __future__ import annotations

import builtins
import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from draconform.kube.featuregates import FeatureGates
from draconform.live.config import DRIVER_PROGRAM, PROGRAM_DATA, PROGRAM_LABEL, OwnDriver
from draconform.live.kube import KINDS
from draconform.live.names import SCENARIO_LABEL, STEPS_NAMESPACE
from draconform.reference import components
from draconform.reference.apiserver.interface import Watch, WatchEvent
from draconform.reference.components import EXTERNAL_CONTROLLERS
from draconform.reference.controllers.external import ExternalController
from draconform.reference.drivers.driver import ReferenceDriver
from draconform.reference.drivers.sockets import PluginSockets
from draconform.serve.remote import RemoteStore, WallClock
from draconform.sut import Obj, PluginCall, PluginFault

ProgramKey = tuple[str, str]  # the ConfigMap's namespace and name


class ScopedWatch(Watch):
    """A watch that passes on changes of namespaced objects in one namespace only."""

    def __init__(self, inner: Watch, namespace: str) -> None:
        super().__init__(inner.kinds)
        self._inner = inner
        self._namespace = namespace

    def drain(self) -> list[WatchEvent]:
        return [event for event in self._inner.drain() if _visible(event.object, self._namespace)]

    def pending(self) -> bool:
        return self._inner.pending()

    def stop(self) -> None:
        super().stop()
        self._inner.stop()


class ScopedStore:
    """One program's view of the API: its namespace's objects and every cluster-scoped one; what it creates
    carries its labels, so the scenario that programmed it cleans it up."""

    def __init__(self, store: RemoteStore, namespace: str, labels: Mapping[str, str]) -> None:
        self._store = store
        self._namespace = namespace
        self._labels = dict(labels)

    @property
    def labels(self) -> dict[str, str]:
        """The labels of the ConfigMap that programmed it (its scenario's, in a live run)."""
        return dict(self._labels)

    def _scope(self, kind: str, namespace: str | None) -> str | None:
        """A live run's steps call its own namespace "default" (draconform.live.names), also in the claim
        references they send a kubelet plugin when they play the kubelet; so "default" means this one."""
        if not KINDS[kind].namespaced:
            return None
        return self._namespace if namespace in (None, STEPS_NAMESPACE) else namespace

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return self._store.get(kind, name, self._scope(kind, namespace))

    def list(self, kind: str, namespace: str | None = None) -> builtins.list[Obj]:
        return self._store.list(kind, self._scope(kind, namespace))

    def view(self, kind: str, namespace: str | None = None) -> builtins.list[Obj]:
        return self.list(kind, namespace)

    def peek(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return self.get(kind, name, namespace)

    def watch(self, *kinds: str) -> Watch:
        return ScopedWatch(self._store.watch(*kinds), self._namespace)

    # `copy_result` as `ApiStore` takes it: what comes back over the API is the caller's own anyway.
    def create(self, obj: Obj, *, copy_result: bool = True) -> Obj:
        labels = obj.setdefault("metadata", {}).setdefault("labels", {})
        for key, value in self._labels.items():
            labels.setdefault(key, value)
        return self._store.create(obj)

    def update(self, obj: Obj, *, copy_result: bool = True) -> Obj:
        return self._store.update(obj)

    def update_status(self, obj: Obj, *, copy_result: bool = True, copy_status: bool = True) -> Obj:
        return self._store.update_status(obj)

    def bind(self, namespace: str, name: str, node: str, *, copy_result: bool = True) -> Obj:
        return self._store.bind(self._scope("Pod", namespace) or namespace, name, node)

    def delete(self, kind: str, name: str, namespace: str | None = None,
               grace_period_seconds: int | None = None) -> None:
        self._store.delete(kind, name, self._scope(kind, namespace), grace_period_seconds)


def _visible(obj: Obj, namespace: str) -> bool:
    kind = obj.get("kind", "")
    return kind not in KINDS or not KINDS[kind].namespaced or obj["metadata"].get("namespace") == namespace


def program_of(config_map: Obj) -> tuple[str, dict[str, Any]] | None:
    """The program a ConfigMap names and its data, or None when it is not one (or its data is not JSON)."""
    meta = config_map.get("metadata") or {}
    program = (meta.get("labels") or {}).get(PROGRAM_LABEL)
    if not program:
        return None
    try:
        data = json.loads((config_map.get("data") or {}).get(PROGRAM_DATA) or "{}")
    except json.JSONDecodeError:
        return None
    return (str(program), data) if isinstance(data, dict) else None


class ProgramHost:
    """Runs the programs of some kinds (`accepts`) that ConfigMaps ask for; `start` builds one, `stop` ends it.
    A ConfigMap that changes restarts its program with the new data (`update` may instead adjust it)."""

    def __init__(self, store: RemoteStore, accepts: Callable[[str], bool], log: Callable[[str], None]) -> None:
        self._store = store
        self._accepts = accepts
        self._log = log
        self._watch = store.watch("ConfigMap")
        self.running: dict[ProgramKey, tuple[str, dict[str, Any]]] = {}
        for config_map in store.list("ConfigMap"):
            self._saw(config_map, deleted=False)

    def start(self, key: ProgramKey, program: str, data: dict[str, Any], scoped: ScopedStore) -> None:
        raise NotImplementedError

    def update(self, key: ProgramKey, program: str, data: dict[str, Any]) -> bool:
        """Adjust the running program to new data in place; False to restart it instead."""
        return False

    def end(self, key: ProgramKey) -> None:
        raise NotImplementedError

    def work(self) -> bool:
        raise NotImplementedError

    def sync(self) -> bool:
        events = self._watch.drain()
        for event in events:
            self._saw(event.object, deleted=event.type == "DELETED")
        return self.work() or bool(events)

    def stop(self) -> None:
        self._watch.stop()
        for key in list(self.running):
            self._end(key)

    def _saw(self, config_map: Obj, deleted: bool) -> None:
        meta = config_map["metadata"]
        key = (str(meta.get("namespace", "")), str(meta["name"]))
        found = None if deleted or meta.get("deletionTimestamp") else program_of(config_map)
        if found is None or not self._accepts(found[0]):
            if key in self.running:
                self._end(key)
            return
        program, data = found
        if self.running.get(key) == found:
            return
        try:
            if key in self.running and self.running[key][0] == program and self.update(key, program, data):
                self.running[key] = found
                return
            if key in self.running:
                self._end(key)
            labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != PROGRAM_LABEL}
            self.start(key, program, data, ScopedStore(self._store, key[0], labels))
        except (ValueError, KeyError, TypeError) as error:  # a program it cannot run: say so, keep the others
            self._log(f"ConfigMap {key[0]}/{key[1]}: cannot run {program}: {error}")
            return
        self.running[key] = found
        self._log(f"started {program} for ConfigMap {key[0]}/{key[1]}")

    def _end(self, key: ProgramKey) -> None:
        self.end(key)
        program, _ = self.running.pop(key)
        self._log(f"stopped {program} of ConfigMap {key[0]}/{key[1]}")


class ControllerHost(ProgramHost):
    """The reference's external controllers (reference/components.py EXTERNAL_CONTROLLERS), one per ConfigMap
    whose data is the controller's behaviour."""

    def __init__(self, store: RemoteStore, clock: WallClock, log: Callable[[str], None]) -> None:
        self._clock = clock
        self._controllers: dict[ProgramKey, ExternalController] = {}
        super().__init__(store, lambda program: program in EXTERNAL_CONTROLLERS, log)

    def start(self, key: ProgramKey, program: str, data: dict[str, Any], scoped: ScopedStore) -> None:
        self._controllers[key] = components.external_controller(program, scoped, self._clock, data)

    def end(self, key: ProgramKey) -> None:
        self._controllers.pop(key).stop()

    def work(self) -> bool:
        done = False
        for controller in list(self._controllers.values()):
            done = controller.sync() or done
        return done


def own_inventory(own: OwnDriver, devices: int) -> list[Obj]:
    """What `draconform serve --driver` publishes, as a vendor's driver publishes what its node has: one slice of
    `devices` plain devices ("dev-0" ...) on its node, in a pool named after the node."""
    assert own.node is not None
    return [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
             "metadata": {"name": f"{own.node}-{own.name}"},
             "spec": {"driver": own.name, "pool": {"name": own.node, "generation": 1, "resourceSliceCount": 1},
                      "nodeName": own.node, "devices": [{"name": f"dev-{number}"} for number in range(devices)]}}]


class DriverHost(ProgramHost):
    """Reference DRA drivers, one per ConfigMap whose data is {"name", "inventory", "faults"}: the driver
    publishes the inventory and serves a kubelet plugin on every Node, at DIR/<node>/<driver>.sock with its
    registration socket beside it; every call a plugin receives is appended to DIR/<node>/<driver>.calls.jsonl
    (what a recording proxy would see). A ConfigMap of a live scenario (labelled `draconform.io/scenario`) gets
    plugins on that scenario's nodes and on the nodes its inventory names only: on any other node the kubelet
    would prepare another scenario's claims through it and, once it stops, find no plugin to unprepare them
    (issue 42), and the node of the cluster's own driver under test has that driver's plugin, perhaps under
    the same name. A plugin that cannot be served on a node (its path taken by something not a socket) is
    logged and left out; the other plugins and drivers run on. `faults` is a list of {"node", "fault"} entries
    (fault null clears), applied in order, each once. With `own`, one more driver that no ConfigMap programs,
    like a vendor's: it publishes `own_inventory` and serves its plugin on its node only."""

    def __init__(self, store: RemoteStore, gates: FeatureGates, directory: Path, log: Callable[[str], None],
                 own: OwnDriver | None = None, own_devices: int = 0) -> None:
        self._gates = gates
        self._directory = directory
        self._own: tuple[ReferenceDriver, str] | None = None
        if own is not None:
            assert own.node is not None
            driver = components.driver(own.name, store, gates, cdi_root=directory)
            driver.set_inventory(own_inventory(own, own_devices))
            self._own = (driver, own.node)
        self._drivers: dict[ProgramKey, ReferenceDriver] = {}
        self._applied: dict[ProgramKey, int] = {}  # faults applied so far
        self._scenarios: dict[ProgramKey, str] = {}  # the live scenario that programmed a driver
        self._inventory_nodes: dict[ProgramKey, set[str]] = {}  # the nodes its inventory's slices name
        self._unserved: set[tuple[str, str]] = set()  # (driver, node) whose plugin could not be served: logged
        self._write_lock = threading.Lock()
        self._sockets = PluginSockets(WallClock().now, directory, self._recorded)
        self._nodes = store.watch("Node")
        super().__init__(store, lambda program: program == DRIVER_PROGRAM, log)
        if self._own is not None:
            self._serve_plugins()

    def start(self, key: ProgramKey, program: str, data: dict[str, Any], scoped: ScopedStore) -> None:
        name = str(data["name"])
        if self._own is not None and self._own[0].name == name:
            raise ValueError(f"driver {name!r} is the cluster's own driver, which no ConfigMap programs")
        if any(driver.name == name for driver in self._drivers.values()):
            raise ValueError(f"driver {name!r} already runs for another ConfigMap")
        driver = components.driver(name, scoped, self._gates, cdi_root=self._directory)
        self._drivers[key] = driver
        self._applied[key] = 0
        if scoped.labels.get(SCENARIO_LABEL):
            self._scenarios[key] = scoped.labels[SCENARIO_LABEL]
        try:
            self.update(key, program, data)  # which serves its plugins
        except (ValueError, KeyError, TypeError):
            self.end(key)
            raise

    def update(self, key: ProgramKey, program: str, data: dict[str, Any]) -> bool:
        driver = self._drivers[key]
        if str(data["name"]) != driver.name:
            return False
        inventory = list(data.get("inventory") or [])
        driver.set_inventory(inventory)
        self._inventory_nodes[key] = {str(obj["spec"]["nodeName"]) for obj in inventory
                                      if isinstance(obj.get("spec"), dict) and obj["spec"].get("nodeName")}
        faults = list(data.get("faults") or [])
        for entry in faults[self._applied[key]:]:
            fault = entry.get("fault")
            driver.faults(str(entry["node"])).add(PluginFault(**fault) if fault is not None else None)
        self._applied[key] = len(faults)
        self._serve_plugins()  # a node the new inventory names
        return True

    def end(self, key: ProgramKey) -> None:
        driver = self._drivers.pop(key)
        self._applied.pop(key, None)
        self._scenarios.pop(key, None)
        self._inventory_nodes.pop(key, None)
        self._unserved = {entry for entry in self._unserved if entry[0] != driver.name}
        driver.stop()
        self._sockets.close_driver(driver.name)
        for log in self._directory.glob(f"*/{driver.name}.calls.jsonl"):
            log.unlink(missing_ok=True)

    def stop(self) -> None:
        super().stop()
        if self._own is not None:
            self._own[0].stop()
        self._nodes.stop()
        self._sockets.close()

    def work(self) -> bool:
        node_changes = bool(self._nodes.drain())
        if node_changes:
            self._serve_plugins()
        done = node_changes
        if self._own is not None:
            done = self._own[0].sync() or done
        for driver in list(self._drivers.values()):
            done = driver.sync() or done
        return done

    def _serve_plugins(self) -> None:
        """Every running driver has a plugin on every Node it may serve, as a DaemonSet gives it one."""
        for node in self._store.list("Node"):
            name = node["metadata"]["name"]
            scenario = (node["metadata"].get("labels") or {}).get(SCENARIO_LABEL)
            for key, driver in self._drivers.items():
                ours = self._scenarios.get(key)
                if ours is None or ours == scenario or name in self._inventory_nodes.get(key, ()):
                    self._serve_plugin(driver, name)
            if self._own is not None and self._own[1] == name:
                self._sockets.registration_endpoint(self._own[0].name, name, _plugin_of(self._own[0], name))
                # Its calls are recorded from the start, so a live run tells "never called" from "no recorder".
                (self._directory / name / f"{self._own[0].name}.calls.jsonl").touch()

    def _serve_plugin(self, driver: ReferenceDriver, node: str) -> None:
        if (driver.name, node) in self._unserved:
            return
        try:
            self._sockets.registration_endpoint(driver.name, node, _plugin_of(driver, node))
        except OSError as error:  # another plugin's path (a vendor's driver of the same name, linked there)
            self._unserved.add((driver.name, node))
            self._log(f"driver {driver.name} serves no plugin on node {node}: {error}")

    def _recorded(self, driver: str, node: str, call: PluginCall) -> None:
        line = json.dumps({"method": call.method, "claims": list(call.claims), "uids": list(call.uids),
                           "time": call.time.isoformat()})
        with self._write_lock, (self._directory / node / f"{driver}.calls.jsonl").open("a") as log:
            log.write(line + "\n")


def _plugin_of(driver: ReferenceDriver, node: str) -> Callable[[], Any]:
    return lambda: driver.plugin(node)
