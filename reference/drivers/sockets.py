"""The unix sockets the reference drivers' kubelet plugins listen on, one per (driver, node), served over
the real DRAPlugin gRPC protocol so the harness talks to the reference exactly as to any other driver.
A socket is opened on first request and every one is closed with the cluster. The handler looks the driver
up on every call, so a restarted driver keeps its socket, as a kubelet plugin's socket path is stable."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from draconform.kubeletplugin.server import RunningServer, serve_plugin
from draconform.kubeletplugin.types import ClaimRef, PrepareResult
from draconform.reference.drivers.plugin import NodePlugin


class _Delegate:
    """A PluginHandler that finds the node's plugin at call time."""

    def __init__(self, plugin: Callable[[], NodePlugin]) -> None:
        self._plugin = plugin

    def prepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult]:
        return self._plugin().prepare(claims)

    def unprepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, str]:
        return self._plugin().unprepare(claims)


class PluginSockets:
    def __init__(self) -> None:
        self._directory: Path | None = None
        self._servers: dict[tuple[str, str], RunningServer] = {}

    def endpoint(self, driver: str, node: str, plugin: Callable[[], NodePlugin]) -> str:
        key = (driver, node)
        if key not in self._servers:
            if self._directory is None:
                # Short, because a unix socket path must fit in about 100 bytes.
                self._directory = Path(tempfile.mkdtemp(prefix="dcf-", dir="/tmp"))
            path = self._directory / f"{len(self._servers)}.sock"
            self._servers[key] = serve_plugin(_Delegate(plugin), str(path))
        return self._servers[key].endpoint

    def close(self) -> None:
        for server in self._servers.values():
            server.stop()
        self._servers.clear()
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
