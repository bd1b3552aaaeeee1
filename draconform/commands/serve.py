"""`draconform serve`: the reference control plane behind the Kubernetes API on 127.0.0.1 (the reference
API store, not a kube-apiserver), with the reference scheduler and resourceclaim controller as separate
processes using it through the Kubernetes client. Writes DIR/kubeconfig and DIR/cluster.yaml, then serves
until interrupted. Point `draconform run --kubeconfig DIR/kubeconfig --cluster-config DIR/cluster.yaml` or
your own controller at it."""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from types import FrameType

from draconform.commands.findings import EXIT_UNUSABLE, diagnostic
from draconform.kube.featuregates import CURRENT_RELEASE, parse_gate_settings
from draconform.live.config import ClusterConfig, ConfigError, OwnDriver


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help="serve the reference control plane over the Kubernetes API",
                                   description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path(".draconform-serve"),
                        help="where kubeconfig, cluster.yaml and the component logs go (default: .draconform-serve)")
    parser.add_argument("--port", type=_port, default=0,
                        help="the API port on 127.0.0.1, 1-65535 (default: any free port)")
    parser.add_argument("--release", default=CURRENT_RELEASE, help=f"Kubernetes release (default: {CURRENT_RELEASE})")
    parser.add_argument("--feature-gates", default="", metavar="NAME=BOOL,...",
                        help="gates set away from the release's defaults, for every component")
    parser.add_argument("--data", type=Path, metavar="DIR",
                        help="keep the API's objects in DIR/objects.json and load them again on the next start")
    parser.add_argument("--runtime-config", default="", metavar="GROUP/VERSION=BOOL,...",
                        help="turn on older API versions as kube-apiserver's flag does: resource.k8s.io/v1beta1 and "
                             "resource.k8s.io/v1beta2 (served beside v1 at their own paths; off by default, as in "
                             "Kubernetes 1.37)")
    parser.add_argument("--binding-timeout", type=float, metavar="SECONDS",
                        help="the scheduler's DRA bindingTimeout (default: the scheduler's, 600)")
    parser.add_argument("--driver", metavar="NAME",
                        help="run a DRA driver of the cluster's own, as a vendor's is: it publishes --driver-devices "
                             "plain devices on node --driver-node (created), claimed through the device class NAME "
                             "(created), and serves its kubelet plugin there; no ConfigMap programs it, and "
                             "cluster.yaml names it as driverUnderTest (without referencePrograms)")
    parser.add_argument("--driver-node", default="worker-1", metavar="NODE", help="its node (default: worker-1)")
    parser.add_argument("--driver-devices", type=int, default=4, metavar="N", help="its devices (default: 4)")
    parser.set_defaults(handler=handle)


def _port(text: str) -> int:
    """A TCP port, or 0 for any free one; anything else is a usage error (exit 2), not a traceback."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535 (or 0 for any free port), got {text!r}")
    return port


def handle(args: argparse.Namespace) -> int:
    from draconform.serve.control import ServedCluster
    from draconform.serve.resources import parse_runtime_config

    try:
        gates = parse_gate_settings(args.feature_gates)
        scheduler_args = {} if args.binding_timeout is None else {"bindingTimeout": args.binding_timeout}
        own = None if args.driver is None else OwnDriver(args.driver, args.driver_node, args.driver)
        cluster = ClusterConfig(args.release, gates, scheduler_args, own_driver=own)
        served = ServedCluster(args.dir, cluster, args.port, args.data, args.driver_devices,
                               parse_runtime_config(args.runtime_config))
    except (ValueError, ConfigError, OSError) as error:
        diagnostic("serve", str(error))
        return EXIT_UNUSABLE
    served.start()
    print(f"serving the reference control plane at {served.server.url} (the reference API store, not a "
          f"kube-apiserver)\n  kubeconfig: {served.kubeconfig}\n  cluster config: {served.cluster_config}",
          flush=True)
    done = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    done.wait()
    served.stop()
    return 0
