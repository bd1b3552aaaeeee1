"""Fixtures of serve's tests: the reference store behind the Kubernetes API in this process (no components),
and a small HTTP client that shows status, headers and body as they came."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from http import client as http_client
from pathlib import Path
from typing import Any

import pytest
import yaml

from draconform.kube.kinds import SERVED_KINDS
from draconform.reference.apiserver.admission import install as install_admission
from draconform.reference.apiserver.store import Store
from draconform.serve.control import kubeconfig
from draconform.serve.remote import WallClock
from draconform.serve.resources import parse_runtime_config
from draconform.serve.server import ApiServer


@dataclass
class Reply:
    status: int
    headers: http_client.HTTPMessage
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Http:
    """One kept-alive connection to the server."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.connection = http_client.HTTPConnection(host, int(port), timeout=30)

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
                headers: dict[str, str] | None = None) -> Reply:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        sent = {"Content-Type": content_type, **(headers or {})} if data is not None else dict(headers or {})
        self.connection.request(method, path, body=data, headers=sent)
        response = self.connection.getresponse()
        return Reply(response.status, response.headers, response.read())

    def close(self) -> None:
        self.connection.close()


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[ApiServer]:
    """The server; a test marked `@pytest.mark.runtime_config("resource.k8s.io/v1beta1=true,...")` gets one
    with those group-versions turned on, as `draconform serve --runtime-config` does."""
    marker = request.node.get_closest_marker("runtime_config")
    store = Store(WallClock(), kinds=SERVED_KINDS)
    install_admission(store)
    served = ApiServer(store, runtime_config=parse_runtime_config(marker.args[0]) if marker else frozenset())
    served.serve_in_thread()
    yield served
    served.shutdown()


@pytest.fixture
def http(server: ApiServer) -> Iterator[Http]:
    client = Http(server.url)
    yield client
    client.close()


@pytest.fixture
def kubeconfig_file(server: ApiServer, tmp_path: Path) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig(server.url)))
    return path
