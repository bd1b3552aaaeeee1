"""KEP-3063's classic kubelet plugin protocol (classic_v1alpha1.proto: one resource per call, by claim
UID, answered with CDI device names), both sides: the client the harness (as the kubelet) calls a plugin
with, and a server for any `ClassicPluginHandler`, with the registration socket announcing a plugin of
type "ResourcePlugin". A handler refuses a call by raising `ClassicPluginError` with the gRPC status the
seed prescribes (NOT_FOUND for a resource the driver does not know)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import grpc

from draconform.kubeletplugin import _wire, classic_v1alpha1_pb2, classic_v1alpha1_pb2_grpc, pluginregistration_v1_pb2
from draconform.kubeletplugin.client import DEFAULT_TIMEOUT, PluginCallError
from draconform.kubeletplugin.server import RegistrationServer, RunningServer, _RegistrationServicer

PLUGIN_TYPE = "ResourcePlugin"
VERSION = "v1alpha1"


class ClassicPluginError(Exception):
    """A handler's refusal: `code` is a gRPC status name such as "NOT_FOUND"."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class ClassicPluginHandler(Protocol):
    def prepare(self, resource_uid: str) -> Sequence[str]:
        """The CDI device names of the prepared resource; raises ClassicPluginError to refuse."""
        ...

    def unprepare(self, resource_uid: str, cdi_devices: Sequence[str]) -> None:
        """Undo a prepare; raises ClassicPluginError to refuse."""
        ...


class ClassicPluginClient:
    """Calls one plugin's Node service; `timeout` (seconds) bounds each call. Failures, refusals included,
    raise PluginCallError with the gRPC status name."""

    def __init__(self, endpoint: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.endpoint = _wire.target(endpoint)
        self.timeout = timeout
        self._channel = grpc.insecure_channel(self.endpoint)
        self._stub = classic_v1alpha1_pb2_grpc.NodeStub(self._channel)

    def prepare(self, resource_uid: str) -> tuple[str, ...]:
        request = classic_v1alpha1_pb2.NodePrepareResourceRequest(resource_uid=resource_uid)
        response = self._call(
            "NodePrepareResource", lambda: self._stub.NodePrepareResource(request, timeout=self.timeout)
        )
        return tuple(response.cdi_device)

    def unprepare(self, resource_uid: str, cdi_devices: Sequence[str] = ()) -> None:
        request = classic_v1alpha1_pb2.NodeUnprepareResourceRequest(resource_uid=resource_uid, cdi_device=cdi_devices)
        self._call("NodeUnprepareResource", lambda: self._stub.NodeUnprepareResource(request, timeout=self.timeout))

    def _call(self, method: str, rpc: Any) -> Any:
        try:
            return rpc()
        except grpc.RpcError as err:
            raise PluginCallError(self.endpoint, method, err.code().name, err.details() or "") from err

    def close(self) -> None:
        self._channel.close()


class _NodeServicer:
    def __init__(self, handler: ClassicPluginHandler) -> None:
        self._handler = handler

    def NodePrepareResource(self, request: Any, context: Any) -> Any:
        try:
            devices = self._handler.prepare(request.resource_uid)
        except ClassicPluginError as refusal:
            context.abort(getattr(grpc.StatusCode, refusal.code), refusal.message)
        return classic_v1alpha1_pb2.NodePrepareResourceResponse(cdi_device=list(devices))

    def NodeUnprepareResource(self, request: Any, context: Any) -> Any:
        try:
            self._handler.unprepare(request.resource_uid, list(request.cdi_device))
        except ClassicPluginError as refusal:
            context.abort(getattr(grpc.StatusCode, refusal.code), refusal.message)
        return classic_v1alpha1_pb2.NodeUnprepareResourceResponse()


def serve_classic_plugin(handler: ClassicPluginHandler, socket_path: str) -> RunningServer:
    """Serve `handler` as the classic Node service on the unix socket at `socket_path`."""
    return RunningServer(
        socket_path, lambda server: classic_v1alpha1_pb2_grpc.add_NodeServicer_to_server(_NodeServicer(handler), server)
    )


def serve_classic_registration(driver_name: str, endpoint: str, socket_path: str) -> RegistrationServer:
    """The registration socket of a classic plugin: type ResourcePlugin, its Node socket, version v1alpha1."""
    info = pluginregistration_v1_pb2.PluginInfo(
        type=PLUGIN_TYPE, name=driver_name, endpoint=_wire.socket_path(endpoint), supported_versions=[VERSION]
    )
    return RegistrationServer(socket_path, _RegistrationServicer(info))
