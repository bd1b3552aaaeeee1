"""Bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`, what client-go's generated
clients and kubectl's imperative commands send and ask for with built-in kinds): the envelope is the magic
bytes `k8s\\0` and a runtime.Unknown naming apiVersion and kind around the object's bytes; the messages
(kubeproto/kube.proto) are parsed and written by the protobuf library. A request body is turned into JSON as
Kubernetes' JSON encoding writes it (times as RFC 3339, quantities as strings, raw extensions and managed
fields as JSON, embedded structs inline, zero values of omitempty fields left out); a field kube.proto
lacks is refused, never dropped. An answer is written in protobuf only when every field it has is in
kube.proto (else it goes as JSON, which client-go decodes by the response's Content-Type). A watch asked for
in protobuf is a stream of length-prefixed WatchEvents (`watch_frame`)."""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from google.protobuf import json_format, unknown_fields
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from draconform.serve.kubeproto import kube_pb2 as _generated
from draconform.sut import ApiError, Obj

kube_pb2: Any = _generated  # generated without a .pyi (see kubeproto/generate.py)

MAGIC = b"k8s\x00"
STORED_KINDS = ("Pod", "Node", "Namespace", "ConfigMap", "Event", "DeviceClass", "ResourceSlice", "ResourceClaim",
                "ResourceClaimTemplate", "DeviceTaintRule")
MESSAGES: dict[str, type[Message]] = {
    kind: getattr(kube_pb2, kind) for kind in (*STORED_KINDS, "Binding", "DeleteOptions")
}
LISTS: dict[str, type[Message]] = {f"{kind}List": getattr(kube_pb2, f"{kind}List") for kind in STORED_KINDS}
WATCH_STREAM = "application/vnd.kubernetes.protobuf;stream=watch"  # a protobuf watch's Content-Type
# Pointer fields whose zero value means something (the rest are left out at zero, as JSON's omitempty does), by
# name or, where the name means a plain field elsewhere, as "Message.field"
KEEP_ZERO = frozenset({
    "gracePeriodSeconds", "tolerationSeconds", "deletionGracePeriodSeconds", "remainingItemCount",
    "terminationGracePeriodSeconds", "activeDeadlineSeconds", "automountServiceAccountToken", "priority",
    "shareProcessNamespace", "enableServiceLinks", "setHostnameAsFQDN", "hostUsers", "optional", "defaultMode",
    "mode", "privileged", "runAsUser", "runAsGroup", "runAsNonRoot", "readOnlyRootFilesystem",
    "allowPrivilegeEscalation", "fsGroup", "started", "adminAccess", "hostProcess",
    "NodeRuntimeHandlerFeatures.userNamespaces",
    "NodeRuntimeHandlerFeatures.recursiveReadOnlyMounts", "NodeFeatures.supplementalGroupsPolicy",
    "NodeFeatures.containerUlimits", "NodeSwapStatus.capacity", "CSIVolumeSource.readOnly",
    "AzureDiskVolumeSource.readOnly", "PersistentVolumeClaimSpec.storageClassName", "FCVolumeSource.lun",
    # resource.k8s.io's *bool fields: a driver on upstream's helper publishes allowMultipleAllocations: false,
    # which kube-apiserver keeps (the helper reads it back and logs the field dropped otherwise)
    "allowMultipleAllocations", "allNodes", "perDeviceNodeSelection", "bindsToNode"})
# Plain Go fields without omitempty whose zero clients read (a container's exit code 0, uid 0, a kubelet's empty
# kubeProxyVersion): JSON writes them whenever their message is there, so decoding writes them too
WRITE_ZERO: dict[str, frozenset[str]] = {
    "ContainerStatus": frozenset({"name", "ready", "restartCount", "image", "imageID"}),
    "ContainerStateTerminated": frozenset({"exitCode"}),
    "LinuxContainerUser": frozenset({"uid", "gid"}),
    "Ulimit": frozenset({"name", "hard", "soft"}),
    "DaemonEndpoint": frozenset({"Port"}),
    "NodeSystemInfo": frozenset({"machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
                                 "containerRuntimeVersion", "kubeletVersion", "kubeProxyVersion", "operatingSystem",
                                 "architecture"}),
    "ResourcePool": frozenset({"generation"}),
    "ISCSIVolumeSource": frozenset({"lun"}),
    "AttachedVolume": frozenset({"name", "devicePath"}),
    "NodeRuntimeHandler": frozenset({"name"}),  # "" names the default handler
}
# Embedded Go structs: one message field on the wire, their fields inline in JSON
INLINE = frozenset({"localObjectReference", "volumeSource", "handler", "ephemeralContainerCommon",
                    "deviceConfiguration"})
MICRO_TIMES = frozenset({"eventTime", "lastObservedTime"})
# resource.k8s.io/v1beta1's own messages (kube.proto's V1beta1*), where its shapes differ from v1's; v1beta2 has
# v1's field numbers, and v1beta1's DeviceClass is v1's
V1BETA1 = "resource.k8s.io/v1beta1"
V1BETA1_MESSAGES: dict[str, type[Message]] = {
    name: getattr(kube_pb2, f"V1beta1{name}") for kind in ("ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
    for name in (kind, f"{kind}List")}


def message_type(kind: str, api_version: str) -> type[Message] | None:
    """The message of `kind` (an object's or a list's) in `api_version`; None when kube.proto has none."""
    if api_version == V1BETA1 and kind in V1BETA1_MESSAGES:
        return V1BETA1_MESSAGES[kind]
    return MESSAGES.get(kind) if kind in MESSAGES else LISTS.get(kind)


def decode(body: bytes) -> Obj:
    """The object a protobuf request body carries, as JSON; 415 for a kind this encoding is not read for."""
    if not body.startswith(MAGIC):
        raise ApiError("BadRequest", "the protobuf body does not begin with the Kubernetes magic bytes")
    try:
        envelope = kube_pb2.Unknown.FromString(body[len(MAGIC):])
    except DecodeError as error:
        raise ApiError("BadRequest", f"the protobuf envelope could not be decoded: {error}") from None
    kind, api_version = envelope.typeMeta.kind, envelope.typeMeta.apiVersion
    found = message_type(kind, api_version) if kind in MESSAGES else None
    if found is None:
        raise ApiError("UnsupportedMediaType", f"draconform serve reads no protobuf body of kind {kind!r}; send "
                                               "application/json")
    try:
        message = found.FromString(envelope.raw)
    except DecodeError as error:
        raise ApiError("BadRequest", f"the protobuf {kind} could not be decoded: {error}") from None
    unread = _unread_field(message, kind)
    if unread:
        raise ApiError("UnsupportedMediaType", f"draconform serve reads no {unread} in protobuf; send this "
                                               f"{kind} as application/json")
    obj = to_json(message)
    return {"apiVersion": api_version, "kind": kind, **obj} if api_version else {"kind": kind, **obj}


def _unread_field(message: Message, path: str) -> str:
    """Where `message` carries a field kube.proto does not name ("field 40 of Pod.spec.containers[0]"), or "".
    Zero values are no loss (a Go client writes every non-pointer field, set or not), so they pass."""
    for unknown in unknown_fields.UnknownFieldSet(message):
        if unknown.data not in (0, b""):
            return f"field {unknown.field_number} of {path}"
    for where, child in _children(message, path):
        found = _unread_field(child, where)
        if found:
            return found
    return ""


def _children(message: Message, path: str) -> Iterator[tuple[str, Message]]:
    """The messages inside `message`, each with where it is."""
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            if field.message_type.fields_by_name["value"].message_type is not None:
                yield from ((f"{path}.{field.name}[{key!r}]", item) for key, item in value.items())
        elif field.is_repeated:
            yield from ((f"{path}.{field.name}[{i}]", item) for i, item in enumerate(value))
        else:
            yield f"{path}.{field.name}", value


def to_json(message: Message) -> Obj:
    out: Obj = {}
    name = message.DESCRIPTOR.name
    keep_zero = name == "DeviceAttribute"  # its fields are pointers: false and 0 are values
    for field, value in message.ListFields():
        converted = _field(field, value)
        if field.name in INLINE and isinstance(converted, dict):
            out.update(converted)
            continue
        if converted == {} and field.message_type is not None:
            out[field.name] = converted  # a struct on the wire is one JSON writes, empty or not (`emptyDir: {}`)
            continue
        if converted in (None, "", 0, False, [], {}) and converted is not True and not (
                keep_zero or field.name in KEEP_ZERO or f"{name}.{field.name}" in KEEP_ZERO
                or field.name in WRITE_ZERO.get(name, ())):
            continue
        out[field.name] = converted
    for zero in WRITE_ZERO.get(name, ()):
        out.setdefault(zero, message.DESCRIPTOR.fields_by_name[zero].default_value)
    return out


def _field(field: FieldDescriptor, value: Any) -> Any:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name["value"]
        return {key: _single(value_field, item, value_field.name) for key, item in value.items()}
    if field.is_repeated:
        return [_single(field, item, field.name) for item in value]
    return _single(field, value, field.name)


def _single(field: FieldDescriptor, value: Any, name: str) -> Any:
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode()
    if field.message_type is None:
        return value
    kind = field.message_type.name
    if kind == "Time":
        if not value.seconds and not value.nanos:  # Go's zero time, which JSON writes as null
            return None
        moment = datetime.fromtimestamp(value.seconds + value.nanos / 1e9, UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if name in MICRO_TIMES else "%Y-%m-%dT%H:%M:%SZ")
    if kind == "Quantity":
        return value.string
    if kind == "IntOrString":  # type 1 is a string
        return value.strVal if value.type == 1 else value.intVal
    if kind == "RawExtension":
        return _raw_json(value.raw)
    if kind == "FieldsV1":
        return _raw_json(value.Raw)
    return to_json(value)


def _raw_json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        raise ApiError("BadRequest", "an embedded object is not JSON") from None


def encode(obj: Obj, message_type: type[Message]) -> bytes:
    """`obj` in the protobuf envelope, as `message_type` (the inverse of `decode`); a ParseError when `obj` has
    a field the message lacks or a value of another type."""
    envelope = kube_pb2.Unknown(typeMeta=kube_pb2.TypeMeta(apiVersion=obj.get("apiVersion", ""),
                                                           kind=obj.get("kind", "")))
    body = _without_type_meta(obj)
    if "items" in body:  # a list's items carry no apiVersion and kind in protobuf
        body["items"] = [_without_type_meta(item) for item in body["items"]]
    message = json_format.ParseDict(_for_json_format(body, message_type.DESCRIPTOR), message_type())
    envelope.raw = message.SerializeToString()
    return MAGIC + envelope.SerializeToString()


def encode_answer(body: Obj) -> bytes | None:
    """An answer (an object or a list of a kind kube.proto has) in protobuf, or None when it must go as JSON:
    another kind (a Status, a Table) or a field kube.proto lacks, which protobuf would silently drop."""
    kind = str(body.get("kind", ""))
    found = message_type(kind, str(body.get("apiVersion", ""))) if kind in STORED_KINDS or kind in LISTS else None
    if found is None:
        return None
    try:
        return encode(body, found)
    except (json_format.ParseError, ValueError, TypeError, AttributeError):
        return None


def _without_type_meta(obj: Any) -> Any:
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")} if isinstance(obj, dict) else obj


def _for_json_format(value: Any, descriptor: Any) -> Any:
    """Kubernetes JSON into the shapes json_format reads for the special messages (times, quantities)."""
    if not isinstance(value, dict):
        return value
    value = _nest_inline(value, descriptor)
    out = {}
    for key, item in value.items():
        field = descriptor.fields_by_name.get(key)
        if field is None or field.message_type is None:
            out[key] = item
            continue
        if field.message_type.GetOptions().map_entry:
            inner = field.message_type.fields_by_name["value"]
            out[key] = {k: _special(inner, v) for k, v in item.items()}
        elif isinstance(item, list):
            out[key] = [_special(field, v) for v in item]
        else:
            out[key] = _special(field, item)
    return out


def _nest_inline(value: Obj, descriptor: Any) -> Obj:
    """JSON's inline fields of an embedded struct moved under the message field that carries them."""
    for name in INLINE & set(descriptor.fields_by_name):
        inner = descriptor.fields_by_name[name].message_type.fields_by_name
        moved = {k: v for k, v in value.items() if k in inner and k not in descriptor.fields_by_name}
        if moved:
            value = {**{k: v for k, v in value.items() if k not in moved}, name: moved}
    return value


def _special(field: FieldDescriptor, item: Any) -> Any:
    if field.message_type is None or item is None:
        return item
    kind = field.message_type.name
    if kind == "Time":
        moment = datetime.fromisoformat(str(item).replace("Z", "+00:00"))
        seconds = int(moment.timestamp())
        return {"seconds": str(seconds), "nanos": moment.microsecond * 1000}
    if kind == "Quantity":
        return {"string": str(item)}
    if kind == "IntOrString":
        return {"type": 1, "strVal": item} if isinstance(item, str) else {"type": 0, "intVal": item}
    if kind in ("RawExtension", "FieldsV1"):
        return {"raw" if kind == "RawExtension" else "Raw": base64.b64encode(json.dumps(item).encode()).decode()}
    return _for_json_format(item, field.message_type)


def encode_object(obj: Obj) -> bytes | None:
    """An object of a stored kind (in the message of its apiVersion), or a Status, in its envelope; None when it
    has a field kube.proto lacks."""
    kind = str(obj.get("kind", ""))
    found = kube_pb2.Status if kind == "Status" else \
        message_type(kind, str(obj.get("apiVersion", ""))) if kind in MESSAGES else None
    if found is None:
        return None
    try:
        return encode(obj, found)
    except (json_format.ParseError, ValueError, TypeError, AttributeError):
        return None


def watch_frame(kind: str, raw: bytes) -> bytes:
    """One event of a protobuf watch stream as upstream frames it: a 4-byte big-endian length, then a
    meta/v1 WatchEvent (written bare, with no envelope) whose object's raw bytes are the object in its own
    envelope (`encode_object`; an ERROR event's object is a Status)."""
    event = kube_pb2.WatchEvent(type=kind, object=kube_pb2.RawExtension(raw=raw)).SerializeToString()
    return struct.pack(">I", len(event)) + event
