"""The unix sockets of the reference drivers' kubelet plugins, one pair per (driver, node): the plugin's
DRAPlugin socket (the real gRPC protocol, so the harness talks to the reference exactly as to any other
driver) and its plugin-registration socket, which announces the driver to the kubelet's plugin watcher and
names the DRAPlugin socket and the versions served there. Sockets are opened on first request and every
one is closed with the cluster. The handler looks the driver up on every call, so a restarted driver keeps
its sockets, as a kubelet plugin's socket paths are stable."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from draconform.kubeletplugin.server import RegistrationServer, RunningServer, serve_plugin, serve_registration
from draconform.kubeletplugin.types import ClaimRef, PrepareResult
from draconform.reference.drivers.plugin import NodePlugin
from draconform.sut import PluginCall


class _Delegate:
    """A PluginHandler that finds the node's plugin at call time and records each call as it arrives (what a
    recording proxy in front of the socket would see)."""

    def __init__(self, plugin: Callable[[], NodePlugin], calls: list[PluginCall], now: Callable[[], datetime]) -> None:
        self._plugin = plugin
        self._calls = calls
        self._now = now

    def _record(self, method: str, claims: Sequence[ClaimRef]) -> None:
        self._calls.append(PluginCall(method, tuple(f"{c.namespace}/{c.name}" for c in claims),
                                      tuple(c.uid for c in claims), self._now()))

    def prepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult]:
        self._record("NodePrepareResources", claims)
        return self._plugin().prepare(claims)

    def unprepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, str]:
        self._record("NodeUnprepareResources", claims)
        return self._plugin().unprepare(claims)


class PluginSockets:
    def __init__(self, now: Callable[[], datetime]) -> None:
        self._now = now
        self._directory: Path | None = None
        self._servers: dict[tuple[str, str], RunningServer] = {}
        self._registrations: dict[tuple[str, str], RegistrationServer] = {}
        self._calls: dict[tuple[str, str], list[PluginCall]] = {}

    def calls(self, driver: str, node: str) -> list[PluginCall]:
        """Every call the plugin of `driver` on `node` received so far."""
        return list(self._calls.get((driver, node), []))

    def _path(self, name: str) -> str:
        if self._directory is None:
            # Short, because a unix socket path must fit in about 100 bytes.
            self._directory = Path(tempfile.mkdtemp(prefix="dcf-", dir="/tmp"))
        return str(self._directory / name)

    def endpoint(self, driver: str, node: str, plugin: Callable[[], NodePlugin]) -> str:
        """The DRAPlugin socket of `driver` on `node` (unix://...), served in every API version."""
        key = (driver, node)
        if key not in self._servers:
            delegate = _Delegate(plugin, self._calls.setdefault(key, []), self._now)
            self._servers[key] = serve_plugin(delegate, self._path(f"{len(self._servers)}.sock"))
        return self._servers[key].endpoint

    def registration_endpoint(self, driver: str, node: str, plugin: Callable[[], NodePlugin]) -> str:
        """The registration socket of `driver` on `node` (unix://...), announcing its DRAPlugin socket."""
        key = (driver, node)
        if key not in self._registrations:
            dra_endpoint = self.endpoint(driver, node, plugin)
            path = self._path(f"{len(self._registrations)}-reg.sock")
            self._registrations[key] = serve_registration(driver, dra_endpoint, path)
        return self._registrations[key].endpoint

    def close(self) -> None:
        for server in [*self._registrations.values(), *self._servers.values()]:
            server.stop()
        self._registrations.clear()
        self._servers.clear()
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
