"""How the reference kubelet reaches a DRA driver's kubelet plugin. The kubelet depends only on `DriverClient`
(prepare and unprepare a batch of claims, per claim an answer) and on `PluginRegistry.client(driver)`; the one
implementation speaks the current DRAPlugin gRPC protocol (draconform.kubeletplugin), found the way the
kubelet's plugin watcher finds it: through the plugin's registration socket, whose GetInfo names the DRAPlugin
socket and the versions served there. Another protocol (KEP-3063's classic one-resource-per-call service) is
another `DriverClient` behind the same registry."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from draconform.kubeletplugin.client import KubeletPluginClient, PluginCallError, notify_registration, registration_info
from draconform.kubeletplugin.types import API_VERSIONS, ClaimRef, PrepareResult

# A plugin call's deadline, in wall seconds (a gRPC deadline is real time): upstream's kubelet gives a call 45
# seconds, and so does this one. The reference plugins answer in milliseconds, so a loaded machine never
# brings a healthy call near it; a scenario about a hung plugin sets a short deadline through the kubelet's
# `pluginCallTimeout` argument, and its plugin hangs until released, so that deadline always passes.
DEFAULT_CALL_TIMEOUT = 45.0
# The plugin watcher's registration calls keep their own deadline: a scenario's short deadline for prepare and
# unprepare calls must not make registration fail when a loaded machine answers slowly.
REGISTRATION_TIMEOUT = DEFAULT_CALL_TIMEOUT


class PluginUnavailable(Exception):
    """The driver has no registered plugin on this node (or its registration could not be read)."""


class DriverClient(Protocol):
    """One driver's plugin as the kubelet uses it. A call that fails as a whole raises PluginCallError."""

    def prepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult]:
        """Per claim UID, the plugin's answer; a claim left out of the answer is absent."""
        ...

    def unprepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, str]:
        """Per claim UID, the error ("" for success); a claim left out of the answer is absent."""
        ...

    def close(self) -> None: ...


# Finds the registration socket of a driver's plugin on the node; None when the driver has none there.
Locator = Callable[[str], "str | None"]


class PluginRegistry:
    """The plugins of one node, by driver name, connected on first use and kept until `close`."""

    def __init__(self, locate: Locator, timeout: float = DEFAULT_CALL_TIMEOUT) -> None:
        self._locate = locate
        self._timeout = timeout
        self._clients: dict[str, DriverClient] = {}

    def client(self, driver: str) -> DriverClient:
        if driver in self._clients:
            return self._clients[driver]
        registration = self._locate(driver)
        if registration is None:
            raise PluginUnavailable(f"DRA driver {driver} is not registered on this node")
        try:
            info = registration_info(registration, timeout=REGISTRATION_TIMEOUT)
        except PluginCallError as err:
            raise PluginUnavailable(f"the registration socket of DRA driver {driver} did not answer: {err}") from err
        # The kubelet takes the first DRAPlugin service in the plugin's list that it speaks.
        offered = [name.removesuffix(".DRAPlugin") for name in info.supported_versions if name.endswith(".DRAPlugin")]
        versions = [version for version in offered if version in API_VERSIONS]
        if info.type != "DRAPlugin" or info.name != driver or not versions:
            reason = f"plugin {info.name!r} of type {info.type!r} offers {list(info.supported_versions)}"
            notify_registration(registration, False, reason, timeout=REGISTRATION_TIMEOUT)
            raise PluginUnavailable(f"DRA driver {driver} cannot be used: {reason}")
        notify_registration(registration, True, timeout=REGISTRATION_TIMEOUT)
        client = KubeletPluginClient(info.endpoint, api_version=versions[0], timeout=self._timeout)
        self._clients[driver] = client
        return client

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
