"""The programs of `draconform serve` (reference driver and external controllers) as an operator configures
them, through ConfigMaps: against the served store alone, with the program host in this process."""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from draconform.kube.featuregates import FeatureGates
from draconform.kube.kinds import with_pod_room
from draconform.live.config import PROGRAM_DATA, PROGRAM_LABEL
from draconform.live.kube import KubeClient, load_config
from draconform.serve.programs import ControllerHost, DriverHost, ScopedStore
from draconform.serve.remote import RemoteStore, WallClock
from tests.live.helpers import wait_until


@pytest.fixture
def client(api: Path) -> Iterator[KubeClient]:
    kube = KubeClient(load_config(api))
    for namespace in ("team-a", "team-b"):
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    yield kube
    kube.close()


def _program(namespace: str, name: str, program: str, data: dict[str, object]) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {PROGRAM_LABEL: program, "draconform.io/scenario": namespace}},
            "data": {PROGRAM_DATA: json.dumps(data)}}


def test_a_controller_runs_while_its_configmap_exists_and_a_bad_one_is_refused_alone(client: KubeClient) -> None:
    logged: list[str] = []
    remote = RemoteStore(client, threading.Event())
    host = ControllerHost(remote, WallClock(), logged.append)
    client.create(_program("team-a", "binder", "binding-controller", {"driver": "gpu.example.com"}))
    client.create(_program("team-b", "typo", "binding-controller", {"drvier": "gpu.example.com"}))

    def synced() -> bool:
        with remote.lock:
            remote.catch_up()
            host.sync()
        return any("typo" in line for line in logged) and bool(host.running)

    wait_until(synced, 300, "the host seeing both ConfigMaps")
    assert list(host.running) == [("team-a", "binder")]
    assert any("team-b/typo: cannot run binding-controller" in line and "drvier" in line for line in logged)
    client.delete("ConfigMap", "binder", "team-a")

    def stopped() -> bool:
        with remote.lock:
            remote.catch_up()
            host.sync()
        return not host.running

    wait_until(stopped, 300, "the host stopping the controller of a deleted ConfigMap")
    host.stop()


def test_a_program_sees_its_namespace_and_labels_what_it_creates(client: KubeClient) -> None:
    scoped = ScopedStore(RemoteStore(client), "team-a", {"draconform.io/scenario": "abc"})
    for namespace in ("team-a", "team-b"):
        client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": namespace}})
    assert [c["metadata"]["namespace"] for c in scoped.list("ConfigMap")] == ["team-a"]
    assert scoped.get("ConfigMap", "x", "default")["metadata"]["namespace"] == "team-a"  # type: ignore[index]
    made = scoped.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}))
    assert made["metadata"]["labels"] == {"draconform.io/scenario": "abc"}


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory for unix sockets, whose paths must fit in about 100 bytes (pytest's tmp_path may not)."""
    directory = Path(tempfile.mkdtemp(prefix="dcf-", dir="/tmp"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def _node(client: KubeClient, name: str, scenario: str | None) -> None:
    labels = {"draconform.io/scenario": scenario} if scenario else {}
    client.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}))


def _vendor_plugin(directory: Path, node: str, driver: str, elsewhere: Path) -> socket.socket:
    """A vendor's kubelet plugin of `driver` on `node`, serving its socket elsewhere and linked where serve's
    kubelets look (how docs/testing-a-driver.md runs a public driver): a listening socket nobody else may take."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(elsewhere))
    listener.listen()
    (directory / node).mkdir(parents=True, exist_ok=True)
    (directory / node / f"{driver}.sock").symlink_to(elsewhere)
    return listener


def _synced_driver_host(client: KubeClient, directory: Path, logged: list[str]) -> DriverHost:
    remote = RemoteStore(client, threading.Event())
    host = DriverHost(remote, FeatureGates(), directory, logged.append)

    def synced() -> bool:
        with remote.lock:
            remote.catch_up()
            host.sync()
        return bool(host.running)

    wait_until(synced, 300, "the host starting the programmed driver")
    return host


def _slice(node: str) -> dict[str, object]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": "gpu.example.com", "nodeName": node, "devices": [{"name": "gpu-0"}],
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}}


def test_a_scenarios_driver_serves_plugins_on_its_own_nodes_and_those_of_its_inventory_only(
        client: KubeClient, short_dir: Path) -> None:
    """Issue 42: a driver a scenario programmed served plugins on every node, so serve's kubelet prepared
    another scenario's claim through it (a claim of that scenario's driver, whose slices it wrote itself); that
    pod, deleted after the driver had stopped, kept its claim reserved, there being no plugin left to unprepare
    it (kep-3063/claim-lifecycle.feature:39 failed in whole-suite runs, passed alone)."""
    directory = short_dir / "p"
    _node(client, "a-worker-1", "team-a")
    _node(client, "b-worker-1", "team-b")  # another scenario's node
    _node(client, "node-1", None)  # the cluster's own node, where a vendor's driver runs
    _node(client, "node-2", None)  # an unlabelled node the scenario's inventory names (a driver under test's)
    client.create(_program("team-a", "driver-gpu.example.com", "driver",
                           {"name": "gpu.example.com", "inventory": [_slice("node-2")], "faults": []}))
    logged: list[str] = []
    host = _synced_driver_host(client, directory, logged)
    try:
        served = sorted(path.parent.name for path in directory.glob("*/gpu.example.com-reg.sock"))
        assert served == ["a-worker-1", "node-2"], logged
    finally:
        host.stop()


def test_a_plugin_path_taken_by_another_plugin_is_logged_and_the_driver_runs_on(
        client: KubeClient, short_dir: Path) -> None:
    """A driver programmed by hand (no scenario label) has a plugin on every node but one where another plugin
    of its name is linked: that node is logged, and the dra-driver process does not end over it (issue 42:
    with dra-example-driver as the cluster's own gpu.example.com, a scenario's reference driver of that name
    crashed serve's dra-driver again and again, and kep-5004/extended-resources.feature:228 found its slices
    gone)."""
    directory = short_dir / "p"
    _node(client, "worker-1", None)
    _node(client, "node-1", None)
    vendor = _vendor_plugin(directory, "node-1", "gpu.example.com", short_dir / "vendor.sock")
    config_map = _program("team-a", "by-hand", "driver", {"name": "gpu.example.com", "inventory": []})
    del config_map["metadata"]["labels"]["draconform.io/scenario"]  # type: ignore[index]
    client.create(config_map)
    logged: list[str] = []
    host = _synced_driver_host(client, directory, logged)
    try:
        assert (directory / "worker-1" / "gpu.example.com-reg.sock").is_socket()
        assert (directory / "node-1" / "gpu.example.com.sock").is_symlink(), "the vendor's plugin was taken over"
        assert not (directory / "node-1" / "gpu.example.com-reg.sock").exists()
        assert any("gpu.example.com serves no plugin on node node-1" in line for line in logged), logged
    finally:
        host.stop()
        vendor.close()
