"""`draconform serve`: the reference API store behind the Kubernetes API on 127.0.0.1, with the reference
scheduler, resourceclaim controller, kubelet, DRA driver and external controllers each in its own process
talking to it through the Kubernetes client (the kubelet and the driver's plugins meet on unix sockets in a
short temporary directory, as on a node),
and the files a client needs: `kubeconfig` and `cluster.yaml` (release, gates, scheduler arguments and the
scheduler's metrics address, for `draconform run --cluster-config`)."""

from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from draconform.kube.featuregates import FeatureGates
from draconform.kube.kinds import SERVED_KINDS
from draconform.live.config import ClusterConfig
from draconform.reference.apiserver.admission import install as install_admission
from draconform.reference.apiserver.store import Store
from draconform.serve.component import COMPONENTS
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

    def __init__(self, directory: Path, cluster: ClusterConfig, port: int = 0) -> None:
        self.directory = directory
        self.cluster = cluster
        store = Store(WallClock(), FeatureGates(cluster.feature_gates, release=cluster.release), SERVED_KINDS)
        install_admission(store)
        self.server = ApiServer(store, port=port, version=cluster.release)
        self.children: list[subprocess.Popen[str]] = []
        self.kubeconfig = directory / "kubeconfig"
        self.cluster_config = directory / "cluster.yaml"
        self.plugin_dir: Path | None = None  # the nodes' kubelet plugin sockets, made on start

    def start(self, timeout: float = 60.0) -> None:
        """Serve, start the components and wait (bounded) until each says it is ready; then write
        cluster.yaml, whose appearance tells a waiting client that everything is up."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.cluster_config.unlink(missing_ok=True)
        self.server.serve_in_thread()
        self.kubeconfig.write_text(yaml.safe_dump(kubeconfig(self.server.url), sort_keys=False))
        # Short, because a unix socket path must fit in about 100 bytes: DIR/<node>/<driver>-reg.sock.
        self.plugin_dir = Path(tempfile.mkdtemp(prefix="dcf-serve-", dir="/tmp"))
        components_config = self.directory / "components.yaml"
        components_config.write_text(replace(self.cluster, kubelet_plugin_dir=str(self.plugin_dir)).dump())
        for component in COMPONENTS:
            log = (self.directory / f"{component}.log").open("w")
            self.children.append(subprocess.Popen(
                [sys.executable, "-m", "draconform.serve.component", component, "--kubeconfig", str(self.kubeconfig),
                 "--cluster-config", str(components_config)],
                stdout=subprocess.PIPE, stderr=log, text=True,
                env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"}))  # a crash leaves tracebacks
        ready = self._wait_ready(timeout)
        metrics = next((line["metrics"] for line in ready if "metrics" in line), None)
        config = ClusterConfig(self.cluster.release, self.cluster.feature_gates, self.cluster.scheduler_args, metrics,
                               node_kubelets=True, reference_programs=True, kubelet_plugin_dir=str(self.plugin_dir),
                               kubeconfig=str(self.kubeconfig.resolve()))
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

    def stop(self) -> None:
        for child in self.children:
            if child.poll() is None:
                child.terminate()
        for child in self.children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
        self.children = []
        self.server.shutdown()
        if self.plugin_dir is not None:
            shutil.rmtree(self.plugin_dir, ignore_errors=True)
            self.plugin_dir = None
