"""The kubelet <-> DRA kubelet-plugin protocol over unix sockets, both ends.

`KubeletPluginClient` calls a driver's kubelet plugin the way the kubelet does (NodePrepareResources and
NodeUnprepareResources of the DRAPlugin gRPC service, v1 or v1beta1), and `registration_info` /
`notify_registration` play the kubelet's plugin watcher against a registration socket. `serve_plugin`
serves any `PluginHandler` as a kubelet plugin and `serve_registration` announces it to a kubelet.
Everything crosses this package's boundary as the plain values of `draconform.kubeletplugin.types`;
protobuf stays inside.

The upstream default paths are /var/lib/kubelet/plugins/<driver>/dra.sock for the plugin and
/var/lib/kubelet/plugins_registry/<driver>-reg.sock for registration. Unix socket paths are limited to 107
bytes on Linux."""

from draconform.kubeletplugin.client import KubeletPluginClient, PluginCallError, notify_registration, registration_info
from draconform.kubeletplugin.server import RegistrationServer, RunningServer, serve_plugin, serve_registration
from draconform.kubeletplugin.types import (
    API_VERSIONS,
    ClaimRef,
    PluginHandler,
    PluginInfo,
    PreparedDevice,
    PrepareResult,
    RegistrationStatus,
)

__all__ = [
    "API_VERSIONS",
    "ClaimRef",
    "KubeletPluginClient",
    "PluginCallError",
    "PluginHandler",
    "PluginInfo",
    "PrepareResult",
    "PreparedDevice",
    "RegistrationServer",
    "RegistrationStatus",
    "RunningServer",
    "notify_registration",
    "registration_info",
    "serve_plugin",
    "serve_registration",
]
