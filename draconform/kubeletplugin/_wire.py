"""Everything the client and the server share about the wire: socket addresses, the generated code of each
DRAPlugin version, and the conversions between protobuf messages and the values of `types`."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from draconform.kubeletplugin import (
    dra_v1_pb2,
    dra_v1_pb2_grpc,
    dra_v1beta1_pb2,
    dra_v1beta1_pb2_grpc,
    pluginregistration_v1_pb2_grpc,
)
from draconform.kubeletplugin.types import ClaimRef, PreparedDevice, PrepareResult

# The generated messages of v1 and v1beta1 differ only in Device.share_id, so one conversion serves both.
PrepareRequest = dra_v1_pb2.NodePrepareResourcesRequest | dra_v1beta1_pb2.NodePrepareResourcesRequest
PrepareResponse = dra_v1_pb2.NodePrepareResourcesResponse | dra_v1beta1_pb2.NodePrepareResourcesResponse
UnprepareRequest = dra_v1_pb2.NodeUnprepareResourcesRequest | dra_v1beta1_pb2.NodeUnprepareResourcesRequest
UnprepareResponse = dra_v1_pb2.NodeUnprepareResourcesResponse | dra_v1beta1_pb2.NodeUnprepareResourcesResponse

# Linux's sockaddr_un holds 108 bytes including the terminating NUL.
MAX_SOCKET_PATH_BYTES = 107


@dataclass(frozen=True)
class DRAVersion:
    """The generated code of one DRAPlugin API version. The gRPC entry points are typed loosely here because
    grpc_tools generates them without annotations."""

    prepare_request: type[PrepareRequest]
    prepare_response: type[PrepareResponse]
    unprepare_request: type[UnprepareRequest]
    unprepare_response: type[UnprepareResponse]
    stub: Callable[[Any], Any]
    add_servicer: Callable[[Any, Any], None]
    share_ids: bool


DRA_VERSIONS: Mapping[str, DRAVersion] = {
    "v1": DRAVersion(
        dra_v1_pb2.NodePrepareResourcesRequest,
        dra_v1_pb2.NodePrepareResourcesResponse,
        dra_v1_pb2.NodeUnprepareResourcesRequest,
        dra_v1_pb2.NodeUnprepareResourcesResponse,
        dra_v1_pb2_grpc.DRAPluginStub,
        dra_v1_pb2_grpc.add_DRAPluginServicer_to_server,
        share_ids=True,
    ),
    "v1beta1": DRAVersion(
        dra_v1beta1_pb2.NodePrepareResourcesRequest,
        dra_v1beta1_pb2.NodePrepareResourcesResponse,
        dra_v1beta1_pb2.NodeUnprepareResourcesRequest,
        dra_v1beta1_pb2.NodeUnprepareResourcesResponse,
        dra_v1beta1_pb2_grpc.DRAPluginStub,
        dra_v1beta1_pb2_grpc.add_DRAPluginServicer_to_server,
        share_ids=False,
    ),
}


# The same for the plugin watcher's Registration service.
REGISTRATION_STUB: Callable[[Any], Any] = pluginregistration_v1_pb2_grpc.RegistrationStub
ADD_REGISTRATION_SERVICER: Callable[[Any, Any], None] = (
    pluginregistration_v1_pb2_grpc.add_RegistrationServicer_to_server
)


def dra_version(api_version: str) -> DRAVersion:
    try:
        return DRA_VERSIONS[api_version]
    except KeyError:
        raise ValueError(f"unknown DRAPlugin API version {api_version!r}; known: {', '.join(DRA_VERSIONS)}") from None


def socket_path(endpoint: str) -> str:
    """The absolute socket path of `unix:///abs/path` or of a plain absolute path."""
    path = endpoint.removeprefix("unix://")
    if not os.path.isabs(path):
        raise ValueError(f"endpoint {endpoint!r} is neither unix:///absolute/path nor an absolute path")
    return path


def target(endpoint: str) -> str:
    """The gRPC target of an endpoint: always `unix:///abs/path`."""
    return "unix://" + socket_path(endpoint)


def fill_claims(request: PrepareRequest | UnprepareRequest, claims: Sequence[ClaimRef]) -> None:
    for claim in claims:
        request.claims.add(namespace=claim.namespace, uid=claim.uid, name=claim.name)


def claims_of(request: PrepareRequest | UnprepareRequest) -> list[ClaimRef]:
    return [ClaimRef(namespace=c.namespace, name=c.name, uid=c.uid) for c in request.claims]


def fill_prepare_response(response: PrepareResponse, results: Mapping[str, PrepareResult], share_ids: bool) -> None:
    for uid, result in results.items():
        entry = response.claims[uid]  # a message map creates the entry on first access
        entry.error = result.error
        entry.permanent_error = result.permanent
        for device in result.devices:
            added = entry.devices.add(
                request_names=device.requests,
                pool_name=device.pool,
                device_name=device.device,
                cdi_device_ids=device.cdi_device_ids,
            )
            if share_ids and device.share_id is not None:
                added.share_id = device.share_id


def prepare_results_of(response: PrepareResponse) -> dict[str, PrepareResult]:
    return {
        uid: PrepareResult(
            devices=tuple(_device_of(d) for d in entry.devices), error=entry.error, permanent=entry.permanent_error
        )
        for uid, entry in response.claims.items()
    }


def _device_of(device: dra_v1_pb2.Device | dra_v1beta1_pb2.Device) -> PreparedDevice:
    # share_id is optional in v1, so an empty one that was sent is still a share ID.
    share_id = device.share_id if isinstance(device, dra_v1_pb2.Device) and device.HasField("share_id") else None
    return PreparedDevice(
        pool=device.pool_name,
        device=device.device_name,
        requests=tuple(device.request_names),
        cdi_device_ids=tuple(device.cdi_device_ids),
        share_id=share_id,
    )


def fill_unprepare_response(response: UnprepareResponse, errors: Mapping[str, str]) -> None:
    for uid, error in errors.items():
        response.claims[uid].error = error


def unprepare_errors_of(response: UnprepareResponse) -> dict[str, str]:
    return {uid: entry.error for uid, entry in response.claims.items()}
