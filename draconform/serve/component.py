"""One reference component in its own process, against a cluster's API through the Kubernetes client:
`python -m draconform.serve.component NAME --kubeconfig FILE --cluster-config FILE`. NAME is
kube-scheduler (which also serves its metrics over HTTP), kube-controller-manager (the resourceclaim
controller), kubelet (a reference kubelet for every Node object: pod phases, claims prepared through the
drivers' kubelet plugins it finds registered under the cluster's kubeletPluginDir, and finishing the deletion of
the pods bound to its node), dra-driver (the reference DRA drivers) or dra-controllers (the reference's
external controllers); the last two run what ConfigMaps program (programs.py). The component is the
reference's own code on a real-time clock; like a restarted pod, it is built again from the API when a round
of its work fails."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prometheus_client import start_http_server

from draconform.kube.featuregates import FeatureGates
from draconform.live.config import ClusterConfig
from draconform.live.kube import KubeClient, load_config
from draconform.reference import components
from draconform.reference.kubelet.checkpoint import KubeletCheckpoint
from draconform.reference.metrics import MetricsRegistry
from draconform.serve.programs import ControllerHost, DriverHost
from draconform.serve.remote import RemoteEventRecorder, RemoteStore, StaleView, WallClock

COMPONENTS = ("kube-scheduler", "kube-controller-manager", "kubelet", "dra-driver", "dra-controllers")
KUBELET_CHECKPOINTS: dict[str, KubeletCheckpoint] = {}  # per node; outlives a rebuilt kubelet, as on disk
IDLE_SECONDS = 0.5  # the longest a component sleeps without a watch event or a timer due
MAX_BACKOFF_SECONDS = 5.0  # the longest pause between rebuilds after rounds that keep failing


def _log(component: str, text: str) -> None:
    print(f"[{component}] {text}", file=sys.stderr, flush=True)


def build(component: str, store: RemoteStore, clock: WallClock, events: RemoteEventRecorder,
          metrics: MetricsRegistry, cluster: ClusterConfig,
          own_devices: int = 0) -> tuple[Callable[[], bool], Callable[[], None]]:
    """The component as one round of its work (returning whether it did anything), and its stop."""
    gates = FeatureGates(cluster.feature_gates, release=cluster.release)
    if component == "kube-scheduler":
        scheduler = components.scheduler(store, clock, events, metrics, gates, cluster.scheduler_args)
        return (lambda: scheduler.sync() | scheduler.schedule_pending()), scheduler.stop
    plugins = Path(cluster.kubelet_plugin_dir) if cluster.kubelet_plugin_dir else None
    if component == "kubelet":
        kubelets = components.kubelets(store, clock, events, gates, {}, KUBELET_CHECKPOINTS,
                                       lambda driver, node: _registration(plugins, driver, node))
        return kubelets.sync, kubelets.stop
    if component == "dra-driver":
        if plugins is None:
            raise ValueError("dra-driver needs kubeletPluginDir in its cluster config")
        drivers = DriverHost(store, gates, plugins, lambda text: _log(component, text), cluster.own_driver,
                             own_devices)
        return drivers.sync, drivers.stop
    if component == "dra-controllers":
        controllers = ControllerHost(store, clock, lambda text: _log(component, text))
        return controllers.sync, controllers.stop
    controller = components.claim_controller(store, events)
    return controller.sync, controller.stop


def _registration(plugins: Path | None, driver: str, node: str) -> str | None:
    """What the kubelet's plugin watcher on `node` finds for `driver`: its registration socket, if served."""
    if plugins is None:
        return None
    socket = plugins / node / f"{driver}-reg.sock"
    return f"unix://{socket}" if socket.exists() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m draconform.serve.component")
    parser.add_argument("component", choices=COMPONENTS)
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--cluster-config", type=Path, required=True)
    parser.add_argument("--own-driver-devices", type=int, default=4,
                        help="dra-driver: how many devices the cluster config's driverUnderTest publishes (default 4)")
    parser.add_argument("--metrics-port", type=int, default=0,
                        help="kube-scheduler's metrics port (default: any free one; a restart keeps the first)")
    args = parser.parse_args(argv)
    cluster = ClusterConfig.load(args.cluster_config)
    client = KubeClient(load_config(args.kubeconfig), field_manager=args.component)
    clock = WallClock()
    metrics = MetricsRegistry()
    ready: dict[str, Any] = {"component": args.component}
    if args.component == "kube-scheduler":
        httpd, _ = start_http_server(args.metrics_port, addr="127.0.0.1", registry=metrics.registry)
        ready["metrics"] = f"http://127.0.0.1:{httpd.server_port}/metrics"
    woken = threading.Event()
    events = RemoteEventRecorder(client, clock, args.component,
                                 lambda error: _log(args.component, f"event not written: {error}"))

    store = RemoteStore(client, woken)

    def start() -> tuple[Callable[[], bool], Callable[[], None]]:
        return build(args.component, store, clock, events, metrics, cluster, args.own_driver_devices)

    work, stop = start()
    print(json.dumps(ready), flush=True)  # the parent waits for this line
    failures = 0  # rounds failed in a row: a lasting fault backs off instead of spinning on rebuilds
    while True:
        woken.clear()
        try:
            with store.lock:
                store.catch_up()  # the round sees every change made before it began, of every kind
                clock.fire_due()
                busy = work()
            failures = 0
        except StaleView as error:  # the component is sound, its view is behind: wait, then look again
            _log(args.component, f"a round did not begin: {error}")
            failures += 1
            time.sleep(min(MAX_BACKOFF_SECONDS, 0.05 * 2 ** failures))
            busy = True
        except Exception:
            _log(args.component, "a round failed; rebuilding from the API\n" + traceback.format_exc())
            if failures:
                time.sleep(min(MAX_BACKOFF_SECONDS, 0.05 * 2 ** failures))
            failures += 1
            with store.lock:
                stop()  # its watches end and its metrics are unregistered before the new one registers them
                work, stop = start()
            busy = True
        if not busy:
            next_timer = clock.seconds_to_next()
            woken.wait(IDLE_SECONDS if next_timer is None else min(next_timer, IDLE_SECONDS))


if __name__ == "__main__":
    sys.exit(main())
