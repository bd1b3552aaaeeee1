"""What kube-apiserver checks of every object before storing it, whatever its kind: that it decodes into the
kind's Go types (a name that is a number, a label that is a list or a ConfigMap value that is an object is a
400, so that no stored object can break a later list for a typed client), its metadata (names, labels,
annotations, finalizers as upstream's ObjectMeta validation), and the unknown fields `fieldValidation` is
about. The kinds' shapes come from lightkube-models, which are generated from upstream's OpenAPI."""

from __future__ import annotations

import functools
import re
import types
import typing
from datetime import datetime
from typing import Any

from lightkube.models import core_v1, resource_v1, resource_v1beta1, resource_v1beta2

from draconform.sut import FieldCause, Obj

_MODELS: dict[str, Any] = {
    "Pod": core_v1.Pod, "Node": core_v1.Node, "Namespace": core_v1.Namespace, "ConfigMap": core_v1.ConfigMap,
    "Event": core_v1.Event, "DeviceClass": resource_v1.DeviceClass, "ResourceSlice": resource_v1.ResourceSlice,
    "ResourceClaim": resource_v1.ResourceClaim, "ResourceClaimTemplate": resource_v1.ResourceClaimTemplate,
    "DeviceTaintRule": resource_v1.DeviceTaintRule,
}
# The older resource.k8s.io versions' own shapes (v1beta1 keeps a device's fields under `basic`).
_OLDER_MODELS = {"v1beta1": resource_v1beta1, "v1beta2": resource_v1beta2}
# Maps whose values upstream types as strings (lightkube-models types every map as a plain dict).
_STRING_MAPS = {("metadata", "labels"), ("metadata", "annotations"), ("data",), ("binaryData",),
                ("spec", "nodeSelector")}
_LABEL = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(rf"^{_SUBDOMAIN}$")
QUALIFIED_NAME = re.compile(rf"^(?:(?=[^/]{{1,253}}/){_SUBDOMAIN}/)?{_LABEL}$")
LABEL_VALUE = re.compile(rf"^(?:{_LABEL})?$")
CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
TOTAL_ANNOTATION_BYTES = 256 * 1024


@functools.cache
def _fields(model: Any) -> dict[str, Any]:
    """A model's JSON field names and their types (Optional removed); {} when the hints cannot be read."""
    try:
        hints = typing.get_type_hints(model)
    except Exception:  # a model whose field names shadow builtins (DeviceAttribute.bool): taken as it comes
        return {}
    return {name.rstrip("_"): _unoptional(hint) for name, hint in hints.items()}


def _unoptional(hint: Any) -> Any:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007  # a runtime Union
    return hint


_GO_NAMES = {str: "string", int: "int64", float: "float64", bool: "bool", datetime: "string"}


def _scalar_fits(value: Any, hint: Any) -> bool:
    """Whether JSON `value` decodes into the Go scalar `hint` names (a bool is no number, a number no string)."""
    if hint in (str, datetime):
        return isinstance(value, str)
    if hint is bool:
        return isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, int) and not isinstance(value, bool)


def _go_type(hint: Any) -> str:
    """How Go names the type `hint` stands for: `[]v1.DeviceSelector`, `v1.DeviceClassSpec`, `string`."""
    if hint in _GO_NAMES:
        return _GO_NAMES[hint]
    if typing.get_origin(hint) in (list, typing.List):  # noqa: UP006
        return "[]" + _go_type((typing.get_args(hint) or (Any,))[0])
    if isinstance(hint, type) and hint.__module__.startswith("lightkube.models"):
        return f"{hint.__module__.rsplit('_', 1)[-1]}.{hint.__name__}"  # resource_v1 -> v1
    return "map[string]string" if hint is dict or typing.get_origin(hint) is dict else str(hint)


def _type_name(value: Any) -> str:
    return {str: "string", int: "number", float: "number", bool: "bool", list: "array", dict: "object"}.get(
        type(value), "null")


class Decoded:
    """What decoding `obj` into its kind found: type mismatches (the request is a 400) and unknown fields."""

    def __init__(self, kind: str, obj: Obj, version: str = "") -> None:
        self.kind = kind
        self.type_errors: list[tuple[str, str]] = []  # (field path, Go's decoding message)
        self.unknown: list[str] = []
        self._struct = kind  # the Go struct type whose field is being decoded
        model = getattr(_OLDER_MODELS[version], kind, None) if version in _OLDER_MODELS else _MODELS.get(kind)
        if model is not None:
            self._walk(obj, model, ())

    def _walk(self, value: Any, hint: Any, path: tuple[str | int, ...]) -> None:
        """Check `value` against the Go type `hint` stands for, by the kind of type it is."""
        if value is None:
            return  # null is every field's zero value
        origin = typing.get_origin(hint)
        if hint in _GO_NAMES:
            if not _scalar_fits(value, hint):
                self._mismatch(path, value, _GO_NAMES[hint])
        elif origin in (list, typing.List):  # noqa: UP006
            self._walk_list(value, hint, path)
        elif hint in (dict, typing.Dict) or origin in (dict, typing.Dict):  # noqa: UP006
            self._walk_map(value, path)
        elif origin in (typing.Union, types.UnionType):  # int-or-string
            if not any(isinstance(value, t) for t in typing.get_args(hint) if isinstance(t, type)):
                self._mismatch(path, value, "intstr.IntOrString")
        elif isinstance(hint, type) and hint.__module__.startswith("lightkube.models"):
            self._walk_struct(value, hint, path)

    def _walk_list(self, value: Any, hint: Any, path: tuple[str | int, ...]) -> None:
        if not isinstance(value, list):
            self._mismatch(path, value, _go_type(hint))
            return
        (item,) = typing.get_args(hint) or (Any,)
        for index, element in enumerate(value):
            self._walk(element, item, (*path, index))

    def _walk_map(self, value: Any, path: tuple[str | int, ...]) -> None:
        if not isinstance(value, dict):
            self._mismatch(path, value, "map[string]string")
        elif tuple(p for p in path if isinstance(p, str)) in _STRING_MAPS:
            for key, element in value.items():
                if not isinstance(element, str):
                    self._mismatch((*path, key), element, "string")

    def _walk_struct(self, value: Any, hint: type, path: tuple[str | int, ...]) -> None:
        """A Go struct: an object whose known fields are walked and whose unknown ones are noted."""
        if not isinstance(value, dict):
            self._mismatch(path, value, _go_type(hint))
            return
        fields = _fields(hint)
        if not fields:
            return
        for key, element in value.items():
            if key in fields:
                self._struct = hint.__name__
                self._walk(element, fields[key], (*path, key))
            elif path or key not in ("apiVersion", "kind"):
                self.unknown.append(_dotted((*path, key)))

    def _mismatch(self, path: tuple[str | int, ...], value: Any, wanted: str) -> None:
        # As Go words it: the innermost struct's type, then the path from the root without list indices
        unindexed = ".".join(str(part) for part in path if not isinstance(part, int))
        self.type_errors.append((_dotted(path), f"json: cannot unmarshal {_type_name(value)} into Go struct field "
                                                f"{self._struct}.{unindexed} of type {wanted}"))


def _dotted(path: tuple[str | int, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def drop_path(obj: Obj, path: tuple[str | int, ...]) -> None:
    """Remove the field at `path` (names, list indices, map keys), if it is there."""
    target: Any = obj
    for part in path[:-1]:
        if isinstance(part, int) and isinstance(target, list) and part < len(target):
            target = target[part]
        elif isinstance(target, dict) and not isinstance(part, int):
            target = target.get(part)
        else:
            return
    if isinstance(target, dict) and path:
        target.pop(path[-1], None)


def drop_unknown(obj: Obj, unknown: list[str]) -> None:
    """Remove the unknown fields Warn and Ignore decode away, as upstream's decoder drops them."""
    for field in unknown:
        parts = re.findall(r"[^.\[\]]+|\[\d+\]", field)
        target: Any = obj
        for part in parts[:-1]:
            target = target[int(part[1:-1])] if part.startswith("[") else target.get(part)
            if target is None:
                break
        if isinstance(target, dict):
            target.pop(parts[-1], None)


def metadata_causes(kind: str, obj: Obj, namespaced: bool) -> list[FieldCause]:
    """Upstream's ObjectMeta validation: a name of the kind's format, qualified label keys with label
    values, qualified annotation keys within 256 KiB, qualified finalizer names."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    if namespace and not namespaced:
        meta.pop("namespace")  # upstream clears it on cluster-scoped objects
    causes = _name_causes(kind, meta)
    if namespace and namespaced and not DNS_LABEL.match(namespace):
        causes.append(FieldCause("metadata.namespace", f'Invalid value: "{namespace}": a lowercase RFC 1123 label'))
    causes += _label_causes(meta.get("labels") or {}) + _annotation_causes(meta.get("annotations") or {})
    for index, finalizer in enumerate(meta.get("finalizers") or []):
        if not QUALIFIED_NAME.match(finalizer):
            causes.append(FieldCause(f"metadata.finalizers[{index}]", f'Invalid value: "{finalizer}": a '
                                     "finalizer must be a qualified name"))
    if kind == "ConfigMap":
        causes.extend(_config_map_causes(obj))
    return causes


def _name_causes(kind: str, meta: Obj) -> list[FieldCause]:
    """metadata.name (or generateName) in the kind's format: a label for a Namespace, else a subdomain."""
    causes: list[FieldCause] = []
    name, generate = meta.get("name"), meta.get("generateName")
    name_format, what = (DNS_LABEL, "a lowercase RFC 1123 label") if kind == "Namespace" else (
        DNS_SUBDOMAIN, "a lowercase RFC 1123 subdomain")
    if name:
        limit = 63 if kind == "Namespace" else 253
        if len(name) > limit or not name_format.match(name):
            causes.append(FieldCause("metadata.name", f'Invalid value: "{name}": a {what} must consist of lower '
                                     "case alphanumeric characters, '-' or '.', and must start and end with an "
                                     "alphanumeric character"))
    elif not generate:
        causes.append(FieldCause("metadata.name", "Required value: name or generateName is required"))
    if generate and not name_format.match(generate.rstrip("-.") or "x"):
        causes.append(FieldCause("metadata.generateName", f'Invalid value: "{generate}": must be {what} prefix'))
    return causes


def _label_causes(labels: Obj) -> list[FieldCause]:
    causes: list[FieldCause] = []
    for key, value in labels.items():
        if len(key) > 316 or not QUALIFIED_NAME.match(key):
            causes.append(FieldCause("metadata.labels", f'Invalid value: "{key}": name part must consist of '
                                     "alphanumeric characters, '-', '_' or '.', and must start and end with an "
                                     "alphanumeric character"))
        if len(value) > 63 or not LABEL_VALUE.match(value):
            causes.append(FieldCause("metadata.labels", f'Invalid value: "{value}": a valid label must be an empty '
                                     "string or consist of alphanumeric characters, '-', '_' or '.', and must "
                                     "start and end with an alphanumeric character (at most 63)"))
    return causes


def _annotation_causes(annotations: Obj) -> list[FieldCause]:
    causes = [FieldCause("metadata.annotations", f'Invalid value: "{key}": name part must consist of '
                         "alphanumeric characters, '-', '_' or '.'")
              for key in annotations if not QUALIFIED_NAME.match(key.lower())]
    if sum(len(k) + len(v) for k, v in annotations.items()) > TOTAL_ANNOTATION_BYTES:
        causes.append(FieldCause("metadata.annotations", "Too long: must have at most 262144 bytes"))
    return causes


def _config_map_causes(obj: Obj) -> list[FieldCause]:
    causes = []
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    for field, keys in (("data", data), ("binaryData", binary)):
        for key in keys:
            if len(key) > 253 or not CONFIG_KEY.match(key):
                causes.append(FieldCause(f"{field}[{key}]", f'Invalid value: "{key}": a valid config key must '
                                         "consist of alphanumeric characters, '-', '_' or '.'"))
            elif field == "binaryData" and key in data:
                causes.append(FieldCause(f"data[{key}]", f'Invalid value: "{key}": duplicate of key present in '
                                         "binaryData"))
    if sum(len(k) + len(v) for m in (data, binary) for k, v in m.items()) > 1024 * 1024:
        causes.append(FieldCause("data", "Too long: must have at most 1048576 bytes"))
    return causes



_POD_MUTABLE = "spec.containers[*].image, spec.initContainers[*].image, spec.activeDeadlineSeconds, " \
    "spec.tolerations (only additions to existing tolerations), spec.terminationGracePeriodSeconds (allow it " \
    "to be set to 1 if it was previously negative), spec.schedulingGates (only removals)"


def pod_update_causes(new: Obj, old: Obj) -> list[FieldCause]:
    """Upstream's ValidatePodUpdate: a pod's spec is immutable but for its containers' images, the active
    deadline, added tolerations, the termination grace period and removed scheduling gates (so a bound
    pod's nodeName, resource claims and containers stay as they were)."""
    def comparable(spec: Any) -> Any:
        spec = {k: v for k, v in (spec or {}).items() if v is not None and k not in (
            "activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates")}
        for field in ("containers", "initContainers"):
            if isinstance(spec.get(field), list):
                spec[field] = [{k: v for k, v in c.items() if k != "image" and v is not None}
                               if isinstance(c, dict) else c for c in spec[field]]
        return spec
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    causes = []
    if comparable(new_spec) != comparable(old_spec):
        causes.append(FieldCause("spec", f"Forbidden: pod updates may not change fields other than {_POD_MUTABLE}"))
    old_tolerations = old_spec.get("tolerations") or []
    if any(t not in (new_spec.get("tolerations") or []) for t in old_tolerations):
        causes.append(FieldCause("spec.tolerations", "Forbidden: existing toleration can not be modified except its "
                                                     "tolerationSeconds"))
    old_gates = [g.get("name") for g in old_spec.get("schedulingGates") or [] if isinstance(g, dict)]
    if any(isinstance(g, dict) and g.get("name") not in old_gates for g in new_spec.get("schedulingGates") or []):
        causes.append(FieldCause("spec.schedulingGates", "Forbidden: only deletion is allowed, but found new "
                                                         "scheduling gates"))
    return causes
