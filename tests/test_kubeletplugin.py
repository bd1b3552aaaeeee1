"""The kubelet-plugin gRPC client and server, end to end over real unix sockets, and the freshness of the
generated protobuf modules."""

from __future__ import annotations

import dataclasses
import importlib
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from draconform.kubeletplugin import (
    ClaimRef,
    KubeletPluginClient,
    PluginCallError,
    PluginInfo,
    PreparedDevice,
    PrepareResult,
    RegistrationStatus,
    notify_registration,
    registration_info,
    serve_plugin,
    serve_registration,
)
from draconform.kubeletplugin.generate import PROTOS, compile_descriptors
from draconform.kubeletplugin.types import CallFailed
from tests.descriptors import committed_descriptor, without_json_names

GPU = ClaimRef(namespace="default", name="gpu", uid="uid-gpu")
BROKEN = ClaimRef(namespace="default", name="broken", uid="uid-broken")
IGNORED = ClaimRef(namespace="other", name="ignored", uid="uid-ignored")

SHARED_GPU = PreparedDevice(
    pool="node-a",
    device="gpu-0",
    requests=("gpu", "gpu-alt"),
    cdi_device_ids=("example.com/gpu=gpu-0", "example.com/gpu=common"),
    share_id="share-1",
)
WHOLE_GPU = PreparedDevice(pool="node-a", device="gpu-1")


class Handler:
    """Answers from fixed tables, leaving out claims that have no entry, and remembers what it was asked."""

    def __init__(self, prepared: Mapping[str, PrepareResult], unprepared: Mapping[str, str]) -> None:
        self.prepared = prepared
        self.unprepared = unprepared
        self.asked: list[list[ClaimRef]] = []

    def prepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult]:
        self.asked.append(list(claims))
        return {c.uid: self.prepared[c.uid] for c in claims if c.uid in self.prepared}

    def unprepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, str]:
        self.asked.append(list(claims))
        return {c.uid: self.unprepared[c.uid] for c in claims if c.uid in self.unprepared}


class FailingOnce(Handler):
    def __init__(self) -> None:
        super().__init__({GPU.uid: PrepareResult(devices=(WHOLE_GPU,))}, {})
        self.failed = False

    def prepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult]:
        if not self.failed:
            self.failed = True
            raise RuntimeError("driver bug")
        return super().prepare(claims)


class Blocking(Handler):
    def __init__(self, release: threading.Event) -> None:
        super().__init__({}, {})
        self.release = release

    def prepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult]:
        self.release.wait()
        return {}


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    # Not tmp_path: its deep paths overflow the 107-byte limit of unix socket paths.
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="kp-"))
    yield path
    shutil.rmtree(path)


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


@pytest.mark.parametrize("api_version", ["v1", "v1beta1"])
def test_prepare_round_trip(socket_dir: Path, api_version: str) -> None:
    handler = Handler(
        {
            GPU.uid: PrepareResult(devices=(SHARED_GPU, WHOLE_GPU)),
            BROKEN.uid: PrepareResult(error="device gone", permanent=True),
        },
        {},
    )
    with (
        serve_plugin(handler, str(socket_dir / "plugins" / "dra.sock")) as server,
        KubeletPluginClient(server.endpoint, api_version=api_version) as client,
    ):
        results = client.prepare([GPU, BROKEN, IGNORED])

    assert handler.asked == [[GPU, BROKEN, IGNORED]]
    # v1beta1 has no share_id on the wire, so the server drops it.
    shared = SHARED_GPU if api_version == "v1" else dataclasses.replace(SHARED_GPU, share_id=None)
    assert results == {
        GPU.uid: PrepareResult(devices=(shared, WHOLE_GPU)),
        BROKEN.uid: PrepareResult(error="device gone", permanent=True),
    }


@pytest.mark.parametrize("api_version", ["v1", "v1beta1"])
def test_unprepare_round_trip(socket_dir: Path, api_version: str) -> None:
    handler = Handler({}, {GPU.uid: "", BROKEN.uid: "still in use"})
    with (
        serve_plugin(handler, str(socket_dir / "dra.sock")) as server,
        KubeletPluginClient(server.endpoint, api_version=api_version) as client,
    ):
        assert client.unprepare([GPU, BROKEN, IGNORED]) == {GPU.uid: "", BROKEN.uid: "still in use"}
    assert handler.asked == [[GPU, BROKEN, IGNORED]]


def test_client_accepts_a_plain_socket_path(socket_dir: Path) -> None:
    handler = Handler({}, {GPU.uid: ""})
    with serve_plugin(handler, str(socket_dir / "dra.sock")), KubeletPluginClient(str(socket_dir / "dra.sock")) as c:
        assert c.unprepare([GPU]) == {GPU.uid: ""}


def test_a_version_not_served_is_unimplemented(socket_dir: Path) -> None:
    with (
        serve_plugin(Handler({}, {}), str(socket_dir / "dra.sock"), api_versions=("v1",)) as server,
        KubeletPluginClient(server.endpoint, api_version="v1beta1") as client,
        pytest.raises(PluginCallError) as failure,
    ):
        client.unprepare([GPU])
    assert failure.value.code == "UNIMPLEMENTED"
    assert not failure.value.refusal  # a missing service is no answer of the plugin's


def test_handler_exception_fails_the_call_and_the_server_survives(socket_dir: Path) -> None:
    with (
        serve_plugin(FailingOnce(), str(socket_dir / "dra.sock")) as server,
        KubeletPluginClient(server.endpoint) as client,
    ):
        with pytest.raises(PluginCallError) as failure:
            client.prepare([GPU])
        assert client.prepare([GPU]) == {GPU.uid: PrepareResult(devices=(WHOLE_GPU,))}

    error = failure.value
    assert (error.endpoint, error.method, error.code) == (server.endpoint, "NodePrepareResources", "INTERNAL")
    assert "RuntimeError" in error.details and "driver bug" in error.details
    assert error.refusal  # an error status of the plugin's own, as the helper's for a claim it cannot read


class NotFound(Handler):
    """Fails every call as a whole with the status code a handler chose (KEP-3063 NodePrepareResource Errors)."""

    def __init__(self) -> None:
        super().__init__({}, {})

    def prepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult]:
        raise CallFailed("NOT_FOUND", "no such resource")

    def unprepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, str]:
        raise CallFailed("NOT_FOUND", "no such resource")


def test_a_handler_chooses_the_status_code_of_a_failed_call(socket_dir: Path) -> None:
    with (
        serve_plugin(NotFound(), str(socket_dir / "dra.sock")) as server,
        KubeletPluginClient(server.endpoint) as client,
    ):
        for call in (client.prepare, client.unprepare):
            with pytest.raises(PluginCallError) as failure:
                call([GPU])
            assert failure.value.code == "NOT_FOUND" and "no such resource" in failure.value.details


def test_missing_socket_is_unavailable(socket_dir: Path) -> None:
    endpoint = f"unix://{socket_dir}/absent.sock"
    with KubeletPluginClient(endpoint) as client, pytest.raises(PluginCallError) as failure:
        client.unprepare([GPU])

    error = failure.value
    assert (error.endpoint, error.method, error.code) == (endpoint, "NodeUnprepareResources", "UNAVAILABLE")
    for part in (endpoint, "NodeUnprepareResources", "UNAVAILABLE", error.details):
        assert part in str(error)
    assert not error.refusal


def test_slow_handler_exceeds_the_deadline(socket_dir: Path, release: threading.Event) -> None:
    with (
        serve_plugin(Blocking(release), str(socket_dir / "dra.sock")) as server,
        KubeletPluginClient(server.endpoint, timeout=0.05) as client,
        pytest.raises(PluginCallError) as failure,
    ):
        client.prepare([GPU])
    assert failure.value.code == "DEADLINE_EXCEEDED"
    assert not failure.value.refusal


def test_stop_removes_the_socket_and_is_idempotent(socket_dir: Path) -> None:
    server = serve_plugin(Handler({}, {}), str(socket_dir / "dra.sock"))
    assert (socket_dir / "dra.sock").is_socket()
    server.stop()
    server.stop()
    assert not (socket_dir / "dra.sock").exists()


def test_a_stale_socket_is_replaced(socket_dir: Path) -> None:
    path = socket_dir / "dra.sock"
    with socket.socket(socket.AF_UNIX) as leftover:
        leftover.bind(str(path))
    with serve_plugin(Handler({}, {GPU.uid: ""}), str(path)) as server, KubeletPluginClient(server.endpoint) as c:
        assert c.unprepare([GPU]) == {GPU.uid: ""}


def test_refuses_to_replace_what_is_not_a_socket(socket_dir: Path) -> None:
    (socket_dir / "dra.sock").write_text("not a socket")
    with pytest.raises(FileExistsError):
        serve_plugin(Handler({}, {}), str(socket_dir / "dra.sock"))


def test_refuses_a_socket_path_too_long_for_the_kernel(socket_dir: Path) -> None:
    with pytest.raises(ValueError, match="longer than 107 bytes"):
        serve_plugin(Handler({}, {}), str(socket_dir / ("x" * 100) / "dra.sock"))


def test_registration(socket_dir: Path) -> None:
    dra_socket = socket_dir / "plugins" / "gpu.example.com" / "dra.sock"
    with serve_registration(
        "gpu.example.com", f"unix://{dra_socket}", str(socket_dir / "registry" / "gpu.example.com-reg.sock")
    ) as server:
        assert registration_info(server.endpoint) == PluginInfo(
            type="DRAPlugin",
            name="gpu.example.com",
            endpoint=str(dra_socket),
            supported_versions=("v1.DRAPlugin", "v1beta1.DRAPlugin"),
        )
        assert server.last_status is None
        notify_registration(server.endpoint, registered=True)
        assert server.last_status == RegistrationStatus(registered=True)
        notify_registration(server.endpoint, registered=False, error="driver name taken")
        assert server.last_status == RegistrationStatus(registered=False, error="driver name taken")


def test_registration_call_failure_names_the_method(socket_dir: Path) -> None:
    with pytest.raises(PluginCallError) as failure:
        registration_info(str(socket_dir / "absent-reg.sock"), timeout=30.0)  # fails at once; room for load
    assert (failure.value.method, failure.value.code) == ("GetInfo", "UNAVAILABLE")


class _RecordingChannel:
    def __init__(self) -> None:
        self.methods: set[str] = set()

    def unary_unary(self, method: str, **_: Any) -> None:
        self.methods.add(method)


def test_generated_modules_match_the_proto_files() -> None:
    """Fails when a .proto file changed without `python -m draconform.kubeletplugin.generate`."""
    compiled = compile_descriptors().file
    assert len(compiled) == len(PROTOS)
    for file in compiled:
        module = f"draconform.kubeletplugin.{Path(file.name).stem}"
        committed = committed_descriptor(importlib.import_module(f"{module}_pb2"))
        assert without_json_names(committed) == without_json_names(file), file.name

        # The gRPC module's stubs must call exactly the methods the .proto declares.
        declared = {f"/{file.package}.{s.name}/{m.name}" for s in file.service for m in s.method}
        channel = _RecordingChannel()
        grpc_module = importlib.import_module(f"{module}_pb2_grpc")
        for service in file.service:
            getattr(grpc_module, f"{service.name}Stub")(channel)
        assert channel.methods == declared, file.name
