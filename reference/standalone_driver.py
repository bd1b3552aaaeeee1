"""The reference driver's kubelet plugin as a process of its own, serving its DRAPlugin socket (and, if asked,
its registration socket) until it is sent SIGTERM or SIGINT. `draconform plugin-check` is tested against it
the way a vendor runs it against their plugin on a node:

    python -m draconform.reference.standalone_driver --driver gpu.example.com --node node-1 \\
        --socket /tmp/dra.sock --registration /tmp/reg.sock --slices slices.yaml \\
        [--kubeconfig PATH | --claims claims.yaml] [--cdi-dir DIR] [--fault KIND:METHOD[:TIMES]]...

Its devices are those of the slices. With --kubeconfig it reads each claim from that API server when asked,
as a real plugin does; else what it knows is the claims given, or the claims `draconform plugin-check --slices`
derives from the same slices. A fault (see `draconform.sut.PluginFault`) makes it fail from the start: "crash"
ends the process in the middle of the call. With --cdi-dir it writes the CDI spec file of each prepared claim
into DIR (else it keeps them in memory). SIGHUP restarts it in place: new sockets, and what it prepared kept as a
plugin's checkpoint file keeps it. It prints "ready" once both sockets serve, and again after each restart."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from draconform.kube.cdi import SpecDirectory
from draconform.kubeletplugin.server import serve_plugin, serve_registration
from draconform.reference.apiserver.store import Store
from draconform.reference.claimfiles import CheckInputError, derive_claims, load_claims, load_objects
from draconform.reference.clock import FakeClock
from draconform.reference.drivers.faults import FaultPlan
from draconform.reference.drivers.plugin import Checkpoint, ClaimReader, NodePlugin, inventory_devices
from draconform.sut import PluginFault

CRASH_STATUS = 70


def _fault(text: str) -> PluginFault:
    parts = text.split(":")
    if len(parts) not in (2, 3):
        raise argparse.ArgumentTypeError(f"expected KIND:METHOD[:TIMES], got {text!r}")
    times = int(parts[2]) if len(parts) == 3 else None
    return PluginFault(kind=parts[0], method=parts[1], times=times)


def _crash() -> None:
    os._exit(CRASH_STATUS)  # no clean-up: a crash is a crash


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m draconform.reference.standalone_driver", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--driver", required=True)
    parser.add_argument("--node", required=True)
    parser.add_argument("--socket", required=True, help="path of the DRAPlugin socket")
    parser.add_argument("--registration", help="path of the plugin-registration socket")
    parser.add_argument("--slices", type=Path, required=True, help="the driver's ResourceSlices: its devices")
    parser.add_argument("--claims", type=Path, action="append", help="allocated ResourceClaims it can look up")
    parser.add_argument("--kubeconfig", type=Path, help="read claims from this API server instead")
    parser.add_argument("--cdi-dir", type=Path, help="where to write CDI spec files (default: kept in memory)")
    parser.add_argument("--fault", type=_fault, action="append", default=[], metavar="KIND:METHOD[:TIMES]")
    args = parser.parse_args(argv)

    try:
        slices = load_objects(args.slices, "ResourceSlice")
        reader = _reader(args)
    except CheckInputError as err:
        print(f"standalone plugin: {err}", file=sys.stderr)
        return 2
    faults = FaultPlan(on_crash=_crash)
    for fault in args.fault:
        faults.add(fault)
    devices = inventory_devices(slices)
    checkpoint = Checkpoint()
    cdi_dir = SpecDirectory(args.cdi_dir) if args.cdi_dir else None
    stop, restart = threading.Event(), threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    def restart_in_place(*_: object) -> None:
        restart.set()
        stop.set()

    signal.signal(signal.SIGHUP, restart_in_place)
    while True:
        plugin = NodePlugin(args.driver, args.node, reader, checkpoint, lambda: devices, faults, cdi_dir=cdi_dir)
        server = serve_plugin(plugin, args.socket)
        registration = (serve_registration(args.driver, server.endpoint, args.registration)
                        if args.registration else None)
        print("ready", flush=True)
        stop.wait()
        if registration is not None:
            registration.stop()
        server.stop()
        if not restart.is_set():
            break
        stop.clear()
        restart.clear()
        checkpoint = checkpoint.after_restart()
    faults.release()
    return 0


def _reader(args: argparse.Namespace) -> ClaimReader:
    """Where the plugin reads claims: the API server of --kubeconfig, or a store of the claims given."""
    if args.kubeconfig:
        from draconform.live.kube import KubeClient, load_config

        return KubeClient(load_config(args.kubeconfig))
    claims = load_claims(args.claims, args.driver) if args.claims else derive_claims(
        args.slices, args.driver, args.node)
    store = Store(FakeClock())
    for claim in claims:
        store.load(claim.obj)
    return store


if __name__ == "__main__":
    sys.exit(main())
