"""Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`, what client-go's
generated clients and kubectl's imperative commands send for built-in kinds), read into the JSON form the
handlers take: the envelope is the magic bytes `k8s\\0` and a runtime.Unknown naming apiVersion and kind
around the object's bytes; the messages (kubeproto/kube.proto) are parsed by the protobuf library and
turned into JSON as Kubernetes' JSON encoding writes them (times as RFC 3339, quantities as strings, raw
extensions and managed fields as JSON, zero values of non-pointer fields left out). Answers stay JSON,
which client-go decodes by the response's Content-Type."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from draconform.serve.kubeproto import kube_pb2 as _generated
from draconform.sut import ApiError, Obj

kube_pb2: Any = _generated  # generated without a .pyi (see kubeproto/generate.py)

MAGIC = b"k8s\x00"
MESSAGES: dict[str, type[Message]] = {
    kind: getattr(kube_pb2, kind) for kind in (
        "Namespace", "ConfigMap", "Event", "Binding", "DeleteOptions", "DeviceClass", "ResourceSlice",
        "ResourceClaim", "ResourceClaimTemplate")
}
# Pointer fields whose zero value means something (the rest are left out at zero, as JSON's omitempty does)
KEEP_ZERO = frozenset({"gracePeriodSeconds", "tolerationSeconds", "deletionGracePeriodSeconds"})
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
    obj = to_json(message)
    return {"apiVersion": api_version, "kind": kind, **obj} if api_version else {"kind": kind, **obj}


def to_json(message: Message) -> Obj:
    out: Obj = {}
    keep_zero = message.DESCRIPTOR.name == "DeviceAttribute"  # its fields are pointers: false and 0 are values
    for field, value in message.ListFields():
        converted = _field(field, value)
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
        moment = datetime.fromtimestamp(value.seconds + value.nanos / 1e9, UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if name in MICRO_TIMES else "%Y-%m-%dT%H:%M:%SZ")
    if kind == "Quantity":
        return value.string
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
    """The protobuf body a client would send for `obj` (for tests of the reading side): the inverse of
    `decode` for the fields this module knows."""
    from google.protobuf import json_format

    envelope = kube_pb2.Unknown(typeMeta=kube_pb2.TypeMeta(apiVersion=obj.get("apiVersion", ""),
                                                           kind=obj.get("kind", "")))
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    message = json_format.ParseDict(_for_json_format(body, message_type.DESCRIPTOR), message_type())
    envelope.raw = message.SerializeToString()
    return MAGIC + envelope.SerializeToString()


def _for_json_format(value: Any, descriptor: Any) -> Any:
    """Kubernetes JSON into the shapes json_format reads for the special messages (times, quantities)."""
    if not isinstance(value, dict):
        return value
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


def _special(field: FieldDescriptor, item: Any) -> Any:
    if field.message_type is None:
        return item
    kind = field.message_type.name
    if kind == "Time":
        moment = datetime.fromisoformat(str(item).replace("Z", "+00:00"))
        return {"seconds": str(int(moment.timestamp()))}
    if kind == "Quantity":
        return {"string": str(item)}
    if kind in ("RawExtension", "FieldsV1"):
        return {"raw" if kind == "RawExtension" else "Raw": base64.b64encode(json.dumps(item).encode()).decode()}
    return _for_json_format(item, field.message_type)
