"""The plugin's side of the protocol: serve any `PluginHandler` as a DRA kubelet plugin, and the
registration socket through which the kubelet's plugin watcher finds it."""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import grpc

from draconform.kubeletplugin import _wire, pluginregistration_v1_pb2
from draconform.kubeletplugin.types import API_VERSIONS, CallFailed, PluginHandler, RegistrationStatus

_log = logging.getLogger(__name__)

# Enough that one slow call does not hold up the others, few enough that a stuck handler cannot pile up
# threads.
_WORKERS = 4


class RunningServer:
    """A gRPC server listening on a unix socket. `endpoint` is `unix:///abs/path`; `stop()` ends it at once
    (calls in progress are cancelled) and removes the socket file."""

    def __init__(self, socket_path: str, register: Callable[[Any], None]) -> None:
        self.socket_path = _prepare_socket(socket_path)
        self.endpoint = "unix://" + self.socket_path
        self._executor = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="kubeletplugin")
        self._server = grpc.server(self._executor)
        self._stop_lock = threading.Lock()
        self._stopped = False
        try:
            register(self._server)
            self._server.add_insecure_port(self.endpoint)
            self._server.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop serving; safe to call more than once. A handler call already running keeps its worker
        thread until it returns, but its answer goes nowhere."""
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        self._server.stop(None).wait()
        self._executor.shutdown(wait=False)
        Path(self.socket_path).unlink(missing_ok=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class RegistrationServer(RunningServer):
    """A running Registration service; `last_status` is what the kubelet last notified it of, if anything."""

    def __init__(self, socket_path: str, servicer: _RegistrationServicer) -> None:
        self._servicer = servicer
        super().__init__(socket_path, lambda server: _wire.ADD_REGISTRATION_SERVICER(servicer, server))

    @property
    def last_status(self) -> RegistrationStatus | None:
        return self._servicer.last_status


def serve_plugin(
    handler: PluginHandler, socket_path: str, *, api_versions: Sequence[str] = API_VERSIONS
) -> RunningServer:
    """Serve `handler` as the DRAPlugin service, in each of `api_versions`, on the unix socket at
    `socket_path` (absolute, or `unix:///abs/path`). Parent directories are created and a socket file left
    behind by an earlier run is replaced."""
    versions = [_wire.dra_version(v) for v in api_versions]
    if not versions:
        raise ValueError("serve_plugin needs at least one API version")

    def register(server: Any) -> None:
        for version in versions:
            version.add_servicer(_DRAPluginServicer(handler, version), server)

    return RunningServer(socket_path, register)


def serve_registration(
    driver_name: str, dra_endpoint: str, socket_path: str, api_versions: Sequence[str] = API_VERSIONS
) -> RegistrationServer:
    """Serve the plugin watcher's Registration service on `socket_path`, announcing a DRA plugin named
    `driver_name` whose DRAPlugin socket is `dra_endpoint` and which serves `api_versions`. By upstream
    convention `socket_path` is /var/lib/kubelet/plugins_registry/<driver>-reg.sock."""
    for version in api_versions:
        _wire.dra_version(version)
    info = pluginregistration_v1_pb2.PluginInfo(
        type="DRAPlugin",
        name=driver_name,
        # The kubelet dials this as a path, not as a gRPC target.
        endpoint=_wire.socket_path(dra_endpoint),
        supported_versions=[f"{v}.DRAPlugin" for v in api_versions],
    )
    return RegistrationServer(socket_path, _RegistrationServicer(info))


def _prepare_socket(socket_path: str) -> str:
    path = _wire.socket_path(socket_path)
    if len(os.fsencode(path)) > _wire.MAX_SOCKET_PATH_BYTES:
        raise ValueError(f"unix socket path {path!r} is longer than {_wire.MAX_SOCKET_PATH_BYTES} bytes")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    # Only a socket is ours to replace; anything else at the path is a mistake in the caller's paths.
    if not stat.S_ISSOCK(mode):
        raise FileExistsError(f"{path} exists and is not a socket")
    os.unlink(path)
    return path


def _abort(context: Any, handler_method: str, err: Exception) -> None:
    # A status error makes the kubelet discard the whole answer and ask again later, which is what a
    # handler bug should cost; the traceback goes to the log for the driver's author.
    _log.exception("PluginHandler.%s raised", handler_method)
    context.abort(grpc.StatusCode.INTERNAL, f"PluginHandler.{handler_method} raised {type(err).__name__}: {err}")


class _DRAPluginServicer:
    """DRAPlugin in one API version, answering from a PluginHandler."""

    def __init__(self, handler: PluginHandler, version: _wire.DRAVersion) -> None:
        self._handler = handler
        self._version = version

    def NodePrepareResources(self, request: _wire.PrepareRequest, context: Any) -> _wire.PrepareResponse:
        response = self._version.prepare_response()
        try:
            results = self._handler.prepare(_wire.claims_of(request))
            _wire.fill_prepare_response(response, results, self._version.share_ids)
        except CallFailed as err:
            context.abort(getattr(grpc.StatusCode, err.code), str(err))
        except Exception as err:
            _abort(context, "prepare", err)
        return response

    def NodeUnprepareResources(self, request: _wire.UnprepareRequest, context: Any) -> _wire.UnprepareResponse:
        response = self._version.unprepare_response()
        try:
            _wire.fill_unprepare_response(response, self._handler.unprepare(_wire.claims_of(request)))
        except CallFailed as err:
            context.abort(getattr(grpc.StatusCode, err.code), str(err))
        except Exception as err:
            _abort(context, "unprepare", err)
        return response


class _RegistrationServicer:
    def __init__(self, info: pluginregistration_v1_pb2.PluginInfo) -> None:
        self._info = info
        self.last_status: RegistrationStatus | None = None

    def GetInfo(
        self, request: pluginregistration_v1_pb2.InfoRequest, context: Any
    ) -> pluginregistration_v1_pb2.PluginInfo:
        return self._info

    def NotifyRegistrationStatus(
        self, request: pluginregistration_v1_pb2.RegistrationStatus, context: Any
    ) -> pluginregistration_v1_pb2.RegistrationStatusResponse:
        self.last_status = RegistrationStatus(registered=request.plugin_registered, error=request.error)
        if not request.plugin_registered:
            _log.warning("the kubelet refused plugin %s: %s", self._info.name, request.error)
        return pluginregistration_v1_pb2.RegistrationStatusResponse()
