"""The kubelet-plugin protocol in plain Python: what the kubelet asks a DRA driver's kubelet plugin and
what the plugin answers (the DRAPlugin gRPC service, `k8s.io/kubelet/pkg/apis/dra/v1`). The gRPC client
and server in this package translate between these values and protobuf messages, so neither the
harness's steps nor the reference driver ever handle protobuf."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from draconform.kube import cdi

# The API versions of the DRAPlugin service a plugin may serve, as named at plugin registration.
API_VERSIONS = ("v1", "v1beta1")

# A fully qualified CDI device name (vendor/class=name), as the protocol's answers carry them.
CDI_DEVICE_ID = cdi.CDI_DEVICE_ID


@dataclass(frozen=True)
class ClaimRef:
    """A claim the kubelet asks about: the gRPC `Claim` message (namespace, uid, name; all required)."""

    namespace: str
    name: str
    uid: str


@dataclass(frozen=True)
class PreparedDevice:
    """One device a plugin prepared for a claim (the gRPC `Device` message). An empty `requests` means the
    device serves every request of the claim. `share_id` exists only in v1 (consumable capacity)."""

    pool: str
    device: str
    requests: tuple[str, ...] = ()
    cdi_device_ids: tuple[str, ...] = ()
    share_id: str | None = None


@dataclass(frozen=True)
class PrepareResult:
    """A plugin's answer for one claim. A non-empty `error` is a failure and the devices are ignored.
    `permanent` is KEP-5322's proposed `permanent_error` flag (not in upstream's protocol as of 1.37); it
    counts only together with an error."""

    devices: tuple[PreparedDevice, ...] = ()
    error: str = ""
    permanent: bool = False

    @property
    def failed(self) -> bool:
        return bool(self.error)


class CallFailed(Exception):
    """Raised by a PluginHandler to fail a whole call with a gRPC status code of its choice, such as "NOT_FOUND"
    (KEP-3063 "NodePrepareResource Errors"); any other exception fails it with INTERNAL."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class PluginHandler(Protocol):
    """What a kubelet plugin does, independent of the wire: the server in this package serves any object
    of this shape over gRPC. Results are keyed by claim UID; a claim missing from the answer is one the
    kubelet must ask about again."""

    def prepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, PrepareResult]: ...

    def unprepare(self, claims: Sequence[ClaimRef]) -> Mapping[str, str]:
        """Per claim UID, an error message, or "" for success."""
        ...


@dataclass(frozen=True)
class PluginInfo:
    """What a plugin tells the kubelet's plugin watcher about itself (the `PluginInfo` message of
    pluginregistration v1). For a DRA driver `type` is "DRAPlugin", `name` the driver name, `endpoint` the
    path of the DRAPlugin socket and `supported_versions` names like "v1.DRAPlugin"."""

    type: str
    name: str
    endpoint: str
    supported_versions: tuple[str, ...]


@dataclass(frozen=True)
class RegistrationStatus:
    """The kubelet's verdict on a plugin's registration; `error` says why it refused the plugin."""

    registered: bool
    error: str = ""
