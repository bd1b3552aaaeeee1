"""Bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`, what client-go's generated
clients and kubectl's imperative commands send and ask for with built-in kinds): the envelope is the magic
bytes `k8s\\0` and a runtime.Unknown naming apiVersion and kind around the object's bytes; the messages
(kubeproto/kube.proto) are parsed and written by the protobuf library. A request body is turned into JSON as
Kubernetes' JSON encoding writes it (times as RFC 3339, quantities as strings, raw extensions and managed
fields as JSON, embedded structs inline, zero values of non-pointer fields left out); a field kube.proto
lacks is refused, never dropped. An answer is written in protobuf only when every field it has is in
kube.proto (else it goes as JSON, which client-go decodes by the response's Content-Type)."""

from __future__ import annotations

import base64
import json
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
# Pointer fields whose zero value means something (the rest are left out at zero, as JSON's omitempty does)
KEEP_ZERO = frozenset({
    "gracePeriodSeconds", "tolerationSeconds", "deletionGracePeriodSeconds", "remainingItemCount",
    "terminationGracePeriodSeconds", "activeDeadlineSeconds", "automountServiceAccountToken", "priority",
    "shareProcessNamespace", "enableServiceLinks", "setHostnameAsFQDN", "hostUsers", "optional", "defaultMode",
    "mode", "privileged", "runAsUser", "runAsGroup", "runAsNonRoot", "readOnlyRootFilesystem",
    "allowPrivilegeEscalation", "fsGroup", "started"})
# Messages whose members say what they are by being there, empty or not (`emptyDir: {}`)
KEEP_EMPTY = frozenset({"VolumeSource", "ContainerState"})
# Message types that say something by being there: an empty label selector matches everything, an absent one
# nothing (or, for a pod affinity term's namespaceSelector, only the pod's own namespace); a pod's security context,
# which kube-apiserver defaults to empty and clients read without a nil check (kubectl debug 1.33)
KEEP_EMPTY_TYPES = frozenset({"LabelSelector", "PodSecurityContext"})
# Embedded Go structs: one message field on the wire, their fields inline in JSON
INLINE = frozenset({"localObjectReference", "volumeSource", "handler"})
MICRO_TIMES = frozenset({"eventTime", "lastObservedTime"})


def decode(body: bytes) -> Obj:
    """The object a protobuf request body carries, as JSON; 415 for a kind this encoding is not read for."""
    if not body.startswith(MAGIC):
        raise ApiError("BadRequest", "the protobuf body does not begin with the Kubernetes magic bytes")
    try:
        envelope = kube_pb2.Unknown.FromString(body[len(MAGIC):])
    except DecodeError as error:
        raise ApiError("BadRequest", f"the protobuf envelope could not be decoded: {error}") from None
    kind, api_version = envelope.typeMeta.kind, envelope.typeMeta.apiVersion
    message_type = MESSAGES.get(kind)
    if message_type is None:
        raise ApiError("UnsupportedMediaType", f"draconform serve reads no protobuf body of kind {kind!r}; send "
                                               "application/json")
    try:
        message = message_type.FromString(envelope.raw)
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
    keep_zero = message.DESCRIPTOR.name == "DeviceAttribute"  # its fields are pointers: false and 0 are values
    for field, value in message.ListFields():
        converted = _field(field, value)
        if field.name in INLINE and isinstance(converted, dict):
            out.update(converted)
            continue
        kind = field.message_type.name if field.message_type is not None else ""
        if converted == {} and (message.DESCRIPTOR.name in KEEP_EMPTY or kind in KEEP_EMPTY_TYPES):
            out[field.name] = converted
            continue
        if converted in (None, "", 0, False, [], {}) and not (keep_zero or field.name in KEEP_ZERO) and \
                converted is not True:
            continue
        out[field.name] = converted
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
    message_type = MESSAGES.get(kind) if kind in STORED_KINDS else LISTS.get(kind)
    if message_type is None:
        return None
    try:
        return encode(body, message_type)
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
