"""`draconform serve`: the reference API store behind the Kubernetes API on 127.0.0.1, with the reference
scheduler, resourceclaim controller, kubelet, DRA driver and external controllers each in its own process
talking to it through the Kubernetes client (the kubelet and the driver's plugins meet on unix sockets in a
short temporary directory, as on a node),
and the files a client needs: `kubeconfig` and `cluster.yaml` (release, gates, scheduler arguments and the
scheduler's metrics address, for `draconform run --cluster-config`). A component process that exits is
logged and started again (after a pause that grows while it keeps exiting); /readyz?verbose lists each
component. With a data directory, the store is saved there (every few seconds after a change, and on stop)
and loaded again on the next start."""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from draconform.kube.featuregates import FeatureGates
from draconform.kube.kinds import SERVED_KINDS
from draconform.live.config import ClusterConfig, OwnDriver
from draconform.reference.apiserver.admission import install as install_admission
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import format_time
from draconform.serve.component import COMPONENTS
from draconform.serve.handlers import node_registered
from draconform.serve.remote import WallClock
from draconform.serve.server import ApiServer

CONTEXT = "draconform-reference"


def kubeconfig(server_url: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": CONTEXT,
        "clusters": [{"name": CONTEXT, "cluster": {"server": server_url}}],
        "users": [{"name": "draconform", "user": {}}],
        "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": "draconform"}}],
    }


class ServedCluster:
    """The server in this process (a thread) and one child process per component."""

    def __init__(self, directory: Path, cluster: ClusterConfig, port: int = 0, data: Path | None = None,
                 own_devices: int = 4, runtime_config: frozenset[str] = frozenset()) -> None:
        self.directory = directory
        self.cluster = cluster
        self.own_devices = own_devices
        store = Store(WallClock(), FeatureGates(cluster.feature_gates, release=cluster.release), SERVED_KINDS)
        install_admission(store)
        self.data = data
        if data is not None:
            load_objects(store, data / OBJECTS_FILE)
        if cluster.own_driver is not None:
            create_own_driver_objects(store, cluster.own_driver)
        self.server = ApiServer(store, port=port, version=cluster.release, runtime_config=runtime_config)
        self.children: list[subprocess.Popen[str]] = []
        self.supervised: dict[str, Supervised] = {}
        self._stopping = threading.Event()
        self._supervising = threading.Lock()  # held by a supervision round, so stop never races a restart
        self.kubeconfig = directory / "kubeconfig"
        self.cluster_config = directory / "cluster.yaml"
        self.plugin_dir: Path | None = None  # the nodes' kubelet plugin sockets, made on start

    def start(self, timeout: float = 300.0) -> None:
        """Serve, start the components and wait (bounded) until each says it is ready; then write
        cluster.yaml, whose appearance tells a waiting client that everything is up. A component that fails
        exits at once; the bound is for one that hangs, and leaves a loaded machine minutes to start them all."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.cluster_config.unlink(missing_ok=True)
        self.server.serve_in_thread()
        self.kubeconfig.write_text(yaml.safe_dump(kubeconfig(self.server.url), sort_keys=False))
        # Short, because a unix socket path must fit in about 100 bytes: DIR/<node>/<driver>-reg.sock.
        self.plugin_dir = Path(tempfile.mkdtemp(prefix="dcf-serve-", dir="/tmp"))
        components_config = self.directory / "components.yaml"
        components_config.write_text(replace(self.cluster, kubelet_plugin_dir=str(self.plugin_dir)).dump())
        for component in COMPONENTS:
            command = [sys.executable, "-m", "draconform.serve.component", component, "--kubeconfig",
                       str(self.kubeconfig), "--cluster-config", str(components_config),
                       "--own-driver-devices", str(self.own_devices)]
            self.supervised[component] = Supervised(component, command, self.directory / f"{component}.log")
            self.children.append(self.supervised[component].start())
        ready = self._wait_ready(timeout)
        metrics = next((line["metrics"] for line in ready if "metrics" in line), None)
        if metrics is not None:  # a restarted scheduler serves its metrics where cluster.yaml says
            self.supervised["kube-scheduler"].command += ["--metrics-port", metrics.rsplit(":", 1)[1].split("/")[0]]
        for component, supervised in self.supervised.items():
            self.server.health_checks[component] = supervised.problem
        threading.Thread(target=self._supervise, name="serve-supervisor", daemon=True).start()
        # With a driver of its own the cluster is one a vendor's driver runs on: nothing is programmed.
        config = ClusterConfig(self.cluster.release, self.cluster.feature_gates, self.cluster.scheduler_args, metrics,
                               node_kubelets=True, reference_programs=self.cluster.own_driver is None,
                               kubelet_plugin_dir=str(self.plugin_dir), kubeconfig=str(self.kubeconfig.resolve()),
                               own_driver=self.cluster.own_driver)
        temporary = self.cluster_config.with_suffix(".tmp")
        temporary.write_text(config.dump())
        temporary.replace(self.cluster_config)

    def _wait_ready(self, timeout: float) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        ready: list[dict[str, Any]] = []
        with selectors.DefaultSelector() as selector:
            for child in self.children:
                assert child.stdout is not None
                selector.register(child.stdout, selectors.EVENT_READ, child)
            while len(ready) < len(self.children):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.stop()
                    raise RuntimeError(f"components not ready within {timeout:g}s; see {self.directory}/*.log")
                for key, _ in selector.select(remaining):
                    line = key.fileobj.readline()  # type: ignore[union-attr]
                    if not line:
                        self.stop()
                        raise RuntimeError(f"a component exited while starting; see {self.directory}/*.log")
                    ready.append(json.loads(line))
                    selector.unregister(key.fileobj)
        return ready

    def _supervise(self) -> None:
        """Start again every component process that exits, saying so on serve's output and in its log; save the
        store to the data directory when it changed."""
        saved = -1
        while not self._stopping.wait(SUPERVISE_SECONDS):
            with self._supervising:
                for supervised in self.supervised.values():
                    supervised.check(self._stopping)
                self.children = [s.process for s in self.supervised.values() if s.process is not None]
            if self.data is not None and self.server.revision() != saved:
                saved = self.server.revision()
                self.server.run(lambda: save_objects(self.server.store, self.data / OBJECTS_FILE))  # type: ignore[operator]

    def stop(self) -> None:
        self._stopping.set()
        with self._supervising:  # a round under way finishes first; none starts a process after this
            self.children = [s.process for s in self.supervised.values() if s.process is not None] or self.children
        for child in self.children:
            if child.poll() is None:
                child.terminate()
        for child in self.children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
        self.children = []
        if self.data is not None:
            self.server.run(lambda: save_objects(self.server.store, self.data / OBJECTS_FILE))  # type: ignore[operator]
        self.server.shutdown()
        if self.plugin_dir is not None:
            shutil.rmtree(self.plugin_dir, ignore_errors=True)
            self.plugin_dir = None


SUPERVISE_SECONDS = 1.0
MAX_RESTART_PAUSE = 30.0
OBJECTS_FILE = "objects.json"


class Supervised:
    """One component's process, started again when it exits; `problem` is what /readyz says of it."""

    def __init__(self, name: str, command: list[str], log: Path) -> None:
        self.name, self.command, self.log = name, command, log
        self.process: subprocess.Popen[str] | None = None
        self.restarts = 0
        self.last_exit: str | None = None
        self._next_start = 0.0

    def start(self) -> subprocess.Popen[str]:
        with self.log.open("w" if self.restarts == 0 else "a") as log:
            self.process = subprocess.Popen(
                self.command, stdout=subprocess.PIPE if self.restarts == 0 else subprocess.DEVNULL, stderr=log,
                text=True, env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"})  # tracebacks
        return self.process

    def check(self, stopping: threading.Event) -> None:
        if self.process is None:
            if time.monotonic() >= self._next_start and not stopping.is_set():
                self.start()
                print(f"serve: {self.name} started again (restart {self.restarts})", file=sys.stderr, flush=True)
            return
        status = self.process.poll()
        if status is None or stopping.is_set():
            return
        self.restarts += 1
        self.last_exit = f"exited with status {status} at {time.strftime('%H:%M:%S')}"
        pause = min(MAX_RESTART_PAUSE, 0.5 * 2 ** min(self.restarts - 1, 6))
        message = f"serve: {self.name} {self.last_exit}; starting it again in {pause:g}s (see {self.log})"
        print(message, file=sys.stderr, flush=True)
        with self.log.open("a") as log:
            log.write(message + "\n")
        self.process = None
        self._next_start = time.monotonic() + pause

    def problem(self) -> str | None:
        if self.process is not None and self.process.poll() is None:
            return None
        return f"{self.last_exit or 'not running'}; restarts so far: {self.restarts}"


def save_objects(store: Store, path: Path) -> None:
    """Every stored object, as JSON, written whole before it replaces the last save."""
    objects = [obj for kind in store.kinds for obj in store.view(kind)]
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(objects))
    temporary.replace(path)


def create_own_driver_objects(store: Store, own: OwnDriver) -> None:
    """The node `serve --driver` runs its driver on and the class its devices are claimed through, as a cluster
    and a driver's installation have them (kept when a data directory already has them)."""
    assert own.node is not None and own.device_class is not None
    if store.get("Node", own.node) is None:
        node: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                                "metadata": {"name": own.node, "labels": {"kubernetes.io/hostname": own.node}}}
        node_registered(node, format_time(store.clock.now()))
        store.create(node)
    if store.get("DeviceClass", own.device_class) is None:
        store.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": own.device_class},
                      "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{own.name}"'}}]}})


def load_objects(store: Store, path: Path) -> None:
    """The objects of an earlier save, namespaces first, stored as they were (uids and timestamps kept)."""
    if not path.exists():
        return
    objects = json.loads(path.read_text())
    for obj in sorted(objects, key=lambda o: o.get("kind") != "Namespace"):
        store.load(obj)
