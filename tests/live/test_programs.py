"""The programs of `draconform serve` (reference driver and external controllers) as an operator configures
them, through ConfigMaps: against the served store alone, with the program host in this process."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from draconform.kube.kinds import with_pod_room
from draconform.live.config import PROGRAM_DATA, PROGRAM_LABEL
from draconform.live.kube import KubeClient, load_config
from draconform.serve.programs import ControllerHost, ScopedStore
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
