"""Fixtures of the live tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from draconform.kube.kinds import SERVED_KINDS
from draconform.reference.apiserver.admission import install as install_admission
from draconform.reference.apiserver.store import Store
from draconform.serve.control import kubeconfig
from draconform.serve.remote import WallClock
from draconform.serve.server import ApiServer


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Path]:
    """The reference store behind the Kubernetes API, with nothing acting on it; yields its kubeconfig."""
    store = Store(WallClock(), kinds=SERVED_KINDS)
    install_admission(store)
    server = ApiServer(store)
    server.serve_in_thread()
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig(server.url)))
    yield path
    server.shutdown()
