"""The kubelet's side of the protocol: call a DRA driver's kubelet plugin, and its registration socket, the
way the kubelet does."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar

import grpc

from draconform.kubeletplugin import _wire, pluginregistration_v1_pb2
from draconform.kubeletplugin.types import ClaimRef, PluginInfo, PrepareResult

Response = TypeVar("Response")

# Each call's deadline unless the caller sets one: upstream's kubelet gives a plugin call 45 seconds. A healthy
# plugin answers in milliseconds, so no load brings its calls near it; only a hung plugin makes a caller wait.
DEFAULT_TIMEOUT = 45.0
# gRPC statuses that mean the call got no considered answer: the plugin hung, died, or lacks the method.
BROKEN_CALL_CODES = ("DEADLINE_EXCEEDED", "UNAVAILABLE", "UNIMPLEMENTED", "CANCELLED")


class PluginCallError(Exception):
    """A call failed as a whole (the kubelet would discard any answer): the socket is missing, the plugin
    crashed or raised, or the deadline passed. `code` is the gRPC status name, such as "UNAVAILABLE"."""

    def __init__(self, endpoint: str, method: str, code: str, details: str) -> None:
        super().__init__(f"{method} on {endpoint} failed with {code}: {details}")
        self.endpoint = endpoint
        self.method = method
        self.code = code
        self.details = details

    @property
    def refusal(self) -> bool:
        """The plugin answered with an error status of its own, as upstream's helper fails a whole prepare for
        a claim it cannot read from the API server (not a hang, a crash or a missing method)."""
        return self.code not in BROKEN_CALL_CODES


def _call(endpoint: str, method: str, rpc: Callable[[], Response]) -> Response:
    try:
        return rpc()
    except grpc.RpcError as err:
        # Every error grpc raises from a unary call is also a grpc.Call carrying the status.
        raise PluginCallError(endpoint, method, err.code().name, err.details() or "") from err


class KubeletPluginClient:
    """Calls the DRAPlugin service of one kubelet plugin in one API version ("v1" or "v1beta1").
    `endpoint` is `unix:///abs/path` or an absolute path; `timeout` (seconds) bounds each call."""

    def __init__(self, endpoint: str, *, api_version: str = "v1", timeout: float = DEFAULT_TIMEOUT) -> None:
        self._version = _wire.dra_version(api_version)
        self.endpoint = _wire.target(endpoint)
        self.api_version = api_version
        self.timeout = timeout
        self._channel = grpc.insecure_channel(self.endpoint)
        self._stub = self._version.stub(self._channel)

    def connect(self) -> None:
        """Open the connection now (within the deadline), so that a later call is not slowed by setting it up:
        calls meant to arrive together then do. Raises PluginCallError when the plugin cannot be reached."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=self.timeout)
        except grpc.FutureTimeoutError as err:
            raise PluginCallError(self.endpoint, "connect", "UNAVAILABLE",
                                  f"no connection within {self.timeout:g} seconds") from err

    def prepare(self, claims: Sequence[ClaimRef]) -> dict[str, PrepareResult]:
        """NodePrepareResources: per claim UID, what the plugin answered. Claims it left out are absent."""
        request = self._version.prepare_request()
        _wire.fill_claims(request, claims)
        response: _wire.PrepareResponse = _call(
            self.endpoint,
            "NodePrepareResources",
            lambda: self._stub.NodePrepareResources(request, timeout=self.timeout),
        )
        return _wire.prepare_results_of(response)

    def unprepare(self, claims: Sequence[ClaimRef]) -> dict[str, str]:
        """NodeUnprepareResources: per claim UID, the plugin's error message, "" for success."""
        request = self._version.unprepare_request()
        _wire.fill_claims(request, claims)
        response: _wire.UnprepareResponse = _call(
            self.endpoint,
            "NodeUnprepareResources",
            lambda: self._stub.NodeUnprepareResources(request, timeout=self.timeout),
        )
        return _wire.unprepare_errors_of(response)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def prepare_at_once(endpoint: str, calls: Sequence[Sequence[ClaimRef]], *, api_version: str = "v1",
                    timeout: float = DEFAULT_TIMEOUT) -> list[dict[str, PrepareResult] | PluginCallError]:
    """NodePrepareResources for each of `calls`, each over its own connection and all at once, as the kubelet's
    pod workers prepare the claims of several pods; per call its answer, or how it failed as a whole. Each
    connection is opened first, so that the calls leave together even on a loaded machine."""
    start = threading.Barrier(len(calls))
    answers: list[dict[str, PrepareResult] | PluginCallError | None] = [None] * len(calls)

    def call(index: int, claims: Sequence[ClaimRef]) -> None:
        with KubeletPluginClient(endpoint, api_version=api_version, timeout=timeout) as client:
            try:
                client.connect()
            except PluginCallError as err:
                answers[index] = err
                start.abort()
                return
            # When another call could not connect, this one is still made and judged.
            with contextlib.suppress(threading.BrokenBarrierError):
                start.wait(timeout)
            try:
                answers[index] = client.prepare(claims)
            except PluginCallError as err:
                answers[index] = err

    threads = [threading.Thread(target=call, args=(index, claims)) for index, claims in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done = [answer for answer in answers if answer is not None]
    if len(done) != len(calls):  # a thread died of something other than the call failing
        raise RuntimeError(f"{len(calls) - len(done)} of {len(calls)} calls to {endpoint} ended without an answer")
    return done


def _registration_call(endpoint: str, method: str, request: Any, timeout: float) -> Any:
    address = _wire.target(endpoint)
    with grpc.insecure_channel(address) as channel:
        stub = _wire.REGISTRATION_STUB(channel)
        return _call(address, method, lambda: getattr(stub, method)(request, timeout=timeout))


def registration_info(endpoint: str, timeout: float = DEFAULT_TIMEOUT) -> PluginInfo:
    """Ask a plugin's registration socket what it is (GetInfo), as the kubelet's plugin watcher does."""
    info: pluginregistration_v1_pb2.PluginInfo = _registration_call(
        endpoint, "GetInfo", pluginregistration_v1_pb2.InfoRequest(), timeout
    )
    return PluginInfo(
        type=info.type, name=info.name, endpoint=info.endpoint, supported_versions=tuple(info.supported_versions)
    )


def notify_registration(endpoint: str, registered: bool, error: str = "", timeout: float = DEFAULT_TIMEOUT) -> None:
    """Tell a plugin whether the kubelet accepted its registration (NotifyRegistrationStatus)."""
    _registration_call(
        endpoint,
        "NotifyRegistrationStatus",
        pluginregistration_v1_pb2.RegistrationStatus(plugin_registered=registered, error=error),
        timeout,
    )
