"""Fixtures of the plugin-check tests: a short working directory (unix socket paths are short) and an API server
over HTTP (the reference store behind the Kubernetes REST protocol, as `draconform serve` serves it, with
nothing acting on it) holding the nodes and the driver's slices."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from draconform.kube.kinds import SERVED_KINDS, with_pod_room
from draconform.reference.apiserver.admission import install as install_admission
from draconform.reference.apiserver.store import Store
from draconform.serve.control import kubeconfig
from draconform.serve.remote import WallClock
from draconform.serve.server import ApiServer
from tests.plugincheck.helpers import NODE, SLICES


@pytest.fixture
def workdir() -> Iterator[Path]:
    # Short, because a unix socket path must fit in about 100 bytes.
    directory = Path(tempfile.mkdtemp(prefix="dcf-pc-", dir="/tmp"))
    (directory / "slices.yaml").write_text(yaml.safe_dump_all(SLICES))
    (directory / "cdi").mkdir()
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@dataclass
class Api:
    kubeconfig: Path
    store: Store


@pytest.fixture
def api(workdir: Path) -> Iterator[Api]:
    """The reference store behind the Kubernetes API over HTTP, holding the nodes and the driver's slices."""
    store = Store(WallClock(), kinds=SERVED_KINDS)
    install_admission(store)
    for node in (NODE, "node-2"):
        store.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}))
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    for slice_ in SLICES:
        store.create(slice_)
    server = ApiServer(store)
    server.serve_in_thread()
    path = workdir / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig(server.url)))
    yield Api(path, store)
    server.shutdown()
