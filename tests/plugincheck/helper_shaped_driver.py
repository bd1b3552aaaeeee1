"""A test driver's kubelet plugin shaped like the ones built on upstream's helper
(k8s.io/dynamic-resource-allocation/kubeletplugin), as most real DRA drivers are; `draconform plugin-check` must
pass it on every MUST rule (docs/decisions.md D-3063-8). Like the helper it

- reads every claim of a prepare request from the API server over HTTP before preparing any, and fails the
  whole call with a gRPC error when one is missing, not allocated or carries another UID;
- serialises prepare and unprepare on one lock (the reads happen before it);
- reports a firstAvailable device under its parent request;
- answers NotifyRegistrationStatus(registered=false) with an error;
- advertises only the DRAPlugin versions it serves (v1).

Like a driver's own code it prepares only its devices on this node, keeps its state by claim UID in a
checkpoint file, writes one CDI spec file per claim and removes it on unprepare. With --no-devices it answers
every claim with no devices and writes no CDI spec, as a driver that configures what it prepares itself
(dranet). SIGHUP restarts it in place. It prints "ready" whenever it serves.

    python tests/plugincheck/helper_shaped_driver.py --driver NAME --node NODE --socket PATH --registration PATH
        --slices FILE --cdi-dir DIR --kubeconfig PATH [--no-devices]
"""

from __future__ import annotations

import argparse
import json
import signal
import ssl
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import grpc
import yaml

from draconform.kubeletplugin import _wire, pluginregistration_v1_pb2
from draconform.kubeletplugin.server import RunningServer, serve_plugin
from draconform.kubeletplugin.types import ClaimRef, PreparedDevice, PrepareResult


class ApiServer:
    """GET on the API server of a kubeconfig, as client-go would do it (no caching)."""

    def __init__(self, kubeconfig: Path) -> None:
        config = yaml.safe_load(kubeconfig.read_text())
        self.server = config["clusters"][0]["cluster"]["server"].rstrip("/")
        self.context = ssl.create_default_context()

    def claim(self, namespace: str, name: str) -> dict[str, Any] | None:
        url = f"{self.server}/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}"
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                claim: dict[str, Any] = json.load(response)
                return claim
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            raise


class Driver:
    """What the driver itself does: the helper calls `prepare` with claims already read, under its lock."""

    def __init__(self, args: argparse.Namespace, api: ApiServer) -> None:
        self.name, self.node, self.api = args.driver, args.node, api
        self.no_devices = args.no_devices
        self.cdi_dir: Path = args.cdi_dir
        self.checkpoint: Path = args.cdi_dir.parent / "helper-driver-checkpoint.json"
        slices = [s for s in yaml.safe_load_all(args.slices.read_text()) if s]
        self.devices = {(s["spec"]["pool"]["name"], d["name"]) for s in slices
                        if s["spec"]["driver"] == self.name and s["spec"].get("nodeName") == self.node
                        for d in s["spec"].get("devices") or []}
        self.lock = threading.Lock()

    def _state(self) -> dict[str, Any]:
        return json.loads(self.checkpoint.read_text()) if self.checkpoint.exists() else {}

    def _save(self, state: Mapping[str, Any]) -> None:
        self.checkpoint.write_text(json.dumps(state))

    def _spec_file(self, uid: str) -> Path:
        return self.cdi_dir / f"{self.name}-{uid}.yaml"

    # --- the DRAPlugin service, as the helper serves it ------------------------------------------------------
    def prepare(self, claims: Sequence[ClaimRef]) -> dict[str, PrepareResult]:
        read = []
        for ref in claims:  # slow API calls before taking the lock
            claim = self.api.claim(ref.namespace, ref.name)
            if claim is None:
                raise LookupError(f"retrieve claim {ref.namespace}/{ref.name}: not found")
            if not (claim.get("status") or {}).get("allocation"):
                raise LookupError(f"claim {ref.namespace}/{ref.name} not allocated")
            if claim["metadata"]["uid"] != ref.uid:
                raise LookupError(f"claim {ref.namespace}/{ref.name} got replaced")
            read.append(claim)
        with self.lock:
            state = self._state()
            answers = {claim["metadata"]["uid"]: self._prepare_one(claim, state) for claim in read}
            self._save(state)
        return answers

    def unprepare(self, claims: Sequence[ClaimRef]) -> dict[str, str]:
        with self.lock:
            state = self._state()
            for ref in claims:
                state.pop(ref.uid, None)
                self._spec_file(ref.uid).unlink(missing_ok=True)
            self._save(state)
        return {ref.uid: "" for ref in claims}

    # --- the driver's own code -------------------------------------------------------------------------------
    def _prepare_one(self, claim: Mapping[str, Any], state: dict[str, Any]) -> PrepareResult:
        uid = claim["metadata"]["uid"]
        if uid in state:
            return self._result(state[uid])
        results = [r for r in claim["status"]["allocation"]["devices"].get("results") or []
                   if r["driver"] == self.name]
        held = {(d["pool"], d["device"]) for other in state.values() for d in other if not d["shared"]}
        devices = []
        for result in results:
            key = (result["pool"], result["device"])
            if key not in self.devices:
                return PrepareResult(error=f"device {result['pool']}/{result['device']} is not on node {self.node}")
            shared = bool(result.get("shareID") or result.get("adminAccess"))
            if not shared and key in held:
                return PrepareResult(error=f"device {result['pool']}/{result['device']} is in use by another claim")
            devices.append({"pool": result["pool"], "device": result["device"], "shared": shared,
                            "request": result["request"].split("/")[0], "share": result.get("shareID"),
                            "cdi": f"k8s.{self.name}/claim={uid}-{result['device']}"})
        if not self.no_devices:
            spec = {"cdiVersion": "0.6.0", "kind": f"k8s.{self.name}/claim",
                    "devices": [{"name": d["cdi"].split("=")[1], "containerEdits": {"env": [f"DEVICE={d['device']}"]}}
                                for d in devices]}
            if devices:
                self._spec_file(uid).write_text(yaml.safe_dump(spec))
        state[uid] = devices
        return self._result(devices)

    def _result(self, devices: Sequence[Mapping[str, Any]]) -> PrepareResult:
        return PrepareResult() if self.no_devices else _result(devices)


def _result(devices: Sequence[Mapping[str, Any]]) -> PrepareResult:
    return PrepareResult(devices=tuple(
        PreparedDevice(pool=d["pool"], device=d["device"], requests=(d["request"],), cdi_device_ids=(d["cdi"],),
                       share_id=d["share"]) for d in devices))


class Registration:
    """The helper's registration server: GetInfo, and an error in reply to a failed registration."""

    def __init__(self, driver: str, endpoint: str) -> None:
        self.info = pluginregistration_v1_pb2.PluginInfo(type="DRAPlugin", name=driver, endpoint=endpoint,
                                                         supported_versions=["v1.DRAPlugin"])

    def GetInfo(self, request: Any, context: Any) -> Any:
        return self.info

    def NotifyRegistrationStatus(self, request: Any, context: Any) -> Any:
        if not request.plugin_registered:
            context.abort(grpc.StatusCode.UNKNOWN, f"failed registration process: {request.error}")
        return pluginregistration_v1_pb2.RegistrationStatusResponse()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    for flag in ("--driver", "--node", "--socket", "--registration"):
        parser.add_argument(flag, required=True)
    for flag in ("--slices", "--cdi-dir", "--kubeconfig"):
        parser.add_argument(flag, type=Path, required=True)
    parser.add_argument("--no-devices", action="store_true")
    args = parser.parse_args(argv)
    driver = Driver(args, ApiServer(args.kubeconfig))
    stop, restart = threading.Event(), threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def restart_in_place(*_: object) -> None:
        restart.set()
        stop.set()

    signal.signal(signal.SIGHUP, restart_in_place)
    while True:
        server = serve_plugin(driver, args.socket, api_versions=("v1",))
        servicer = Registration(args.driver, _wire.socket_path(server.endpoint))
        registration = RunningServer(args.registration,
                                     lambda grpc_server, s=servicer: _wire.ADD_REGISTRATION_SERVICER(s, grpc_server))
        print("ready", flush=True)
        stop.wait()
        registration.stop()
        server.stop()
        if not restart.is_set():
            return 0
        stop.clear()
        restart.clear()


if __name__ == "__main__":
    sys.exit(main())
