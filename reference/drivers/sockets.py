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

    def __init__(self, plugin: Callable[[], NodePlugin], record: Callable[[PluginCall], None],
                 now: Callable[[], datetime]) -> None:
        self._plugin = plugin
        self._record_call = record
        self._now = now

    def _record(self, method: str, claims: Sequence[ClaimRef]) -> None:
        self._record_call(PluginCall(method, tuple(f"{c.namespace}/{c.name}" for c in claims),
                                     tuple(c.uid for c in claims), self._now()))

    def prepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult]:
        self._record("NodePrepareResources", claims)
        return self._plugin().prepare(claims)

    def unprepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, str]:
        self._record("NodeUnprepareResources", claims)
        return self._plugin().unprepare(claims)


class PluginSockets:
    """`directory` given: the sockets of `driver` on `node` are DIRECTORY/<node>/<driver>.sock and
    <driver>-reg.sock, where a kubelet in another process finds them, and `on_call` hears of every call too (a
    recording proxy's log). Otherwise they go to a short temporary directory, removed on close."""

    def __init__(self, now: Callable[[], datetime], directory: Path | None = None,
                 on_call: Callable[[str, str, PluginCall], None] | None = None) -> None:
        self._now = now
        self._fixed = directory
        self._on_call = on_call
        self._directory: Path | None = None
        self._servers: dict[tuple[str, str], RunningServer] = {}
        self._registrations: dict[tuple[str, str], RegistrationServer] = {}
        self._calls: dict[tuple[str, str], list[PluginCall]] = {}

    def calls(self, driver: str, node: str) -> list[PluginCall]:
        """Every call the plugin of `driver` on `node` received so far."""
        return list(self._calls.get((driver, node), []))

    def _path(self, driver: str, node: str, suffix: str, count: int) -> str:
        if self._fixed is not None:
            (self._fixed / node).mkdir(parents=True, exist_ok=True)
            return str(self._fixed / node / f"{driver}{suffix}")
        if self._directory is None:
            # Short, because a unix socket path must fit in about 100 bytes.
            self._directory = Path(tempfile.mkdtemp(prefix="dcf-", dir="/tmp"))
        return str(self._directory / f"{count}{suffix}")

    def _recorder(self, driver: str, node: str) -> Callable[[PluginCall], None]:
        calls = self._calls.setdefault((driver, node), [])

        def record(call: PluginCall) -> None:
            calls.append(call)
            if self._on_call is not None:
                self._on_call(driver, node, call)

        return record

    def endpoint(self, driver: str, node: str, plugin: Callable[[], NodePlugin]) -> str:
        """The DRAPlugin socket of `driver` on `node` (unix://...), served in every API version."""
        key = (driver, node)
        if key not in self._servers:
            delegate = _Delegate(plugin, self._recorder(driver, node), self._now)
            self._servers[key] = serve_plugin(delegate, self._path(driver, node, ".sock", len(self._servers)))
        return self._servers[key].endpoint

    def registration_endpoint(self, driver: str, node: str, plugin: Callable[[], NodePlugin]) -> str:
        """The registration socket of `driver` on `node` (unix://...), announcing its DRAPlugin socket."""
        key = (driver, node)
        if key not in self._registrations:
            dra_endpoint = self.endpoint(driver, node, plugin)
            path = self._path(driver, node, "-reg.sock", len(self._registrations))
            self._registrations[key] = serve_registration(driver, dra_endpoint, path)
        return self._registrations[key].endpoint

    def close_driver(self, driver: str) -> None:
        """Stop the sockets of one driver on every node (its plugins are gone)."""
        for table in (self._registrations, self._servers):
            for key in [key for key in table if key[0] == driver]:
                table.pop(key).stop()

    def close(self) -> None:
        for server in [*self._registrations.values(), *self._servers.values()]:
            server.stop()
        self._registrations.clear()
        self._servers.clear()
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
