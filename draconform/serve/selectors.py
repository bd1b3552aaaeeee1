"""Label and field selectors as kube-apiserver reads them: set-based label selectors with checked keys and
values, and field selectors of `=`, `==`, `!=` over the fields each kind supports (an unsupported field is
a 400, as upstream, rather than a selector that matches nothing)."""

from __future__ import annotations

import re
from typing import Any

from draconform.sut import ApiError, Obj

Requirement = tuple[str, str, set[str]]  # (key, operator: in/notin/exists/!exists, values)

_REQUIREMENT = re.compile(r"\s*(?P<not>!)?(?P<key>[^\s!=,()]+)\s*(?:(?P<op>==|!=|=|\s+in\s+|\s+notin\s+)\s*"
                          r"(?P<value>\([^)]*\)|[^,]*))?\s*(?:,|$)")
_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_QUALIFIED_KEY = re.compile(rf"^(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{_NAME}$")
_LABEL_VALUE = re.compile(rf"^(?:{_NAME})?$")

# Fields a field selector may name besides metadata.name and metadata.namespace, per kind (upstream's
# field label conversion functions and the registries' field sets).
SELECTABLE_FIELDS: dict[str, frozenset[str]] = {
    "Pod": frozenset({"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                      "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs",
                      "status.nominatedNodeName"}),
    "Node": frozenset({"spec.unschedulable"}),
    "Namespace": frozenset({"status.phase"}),
    "Event": frozenset({"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}),
    "ResourceSlice": frozenset({"spec.nodeName", "spec.driver"}),
}
_FALSE_BY_DEFAULT = frozenset({"spec.unschedulable", "spec.hostNetwork"})


def parse_selector(text: str) -> list[Requirement]:
    """A label selector, `a=b,c!=d,e,!f,g in (x,y)`, as requirements; a malformed one is a BadRequest."""
    requirements: list[Requirement] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _REQUIREMENT.match(text, position)
        if match is None or match.end() == position:
            raise ApiError("BadRequest", f"unable to parse requirement: {text!r}")
        position = match.end()
        op = (match["op"] or "").strip()
        value = (match["value"] or "").strip()
        values = {v.strip() for v in value.strip("()").split(",")} if value.startswith("(") else {value}
        if match["not"]:
            requirements.append((match["key"], "!exists", set()))
        elif not op:
            requirements.append((match["key"], "exists", set()))
        else:
            requirements.append((match["key"], {"=": "in", "==": "in", "!=": "notin"}.get(op, op), values))
    return requirements


def parse_label_selector(text: str) -> list[Requirement]:
    """A label selector whose keys are qualified names and whose values are label values, as upstream checks."""
    requirements = parse_selector(text)
    for key, _, values in requirements:
        if not _QUALIFIED_KEY.match(key):
            raise ApiError("BadRequest", f"unable to parse requirement: invalid label key {key!r}: name part must "
                                         "consist of alphanumeric characters, '-', '_' or '.'")
        for value in values:
            if len(value) > 63 or not _LABEL_VALUE.match(value):
                raise ApiError("BadRequest", f"unable to parse requirement: invalid label value: {value!r}: a "
                                             "valid label must be an empty string or consist of alphanumeric "
                                             "characters, '-', '_' or '.', at most 63")
    return requirements


def parse_field_selector(text: str, kind: str) -> list[Requirement]:
    """A field selector: terms `key=value`, `key==value`, `key!=value` over the kind's selectable fields."""
    requirements: list[Requirement] = []
    for term in (t.strip() for t in text.split(",")):
        if not term:
            continue
        match = re.fullmatch(r"(?P<key>[^=!\s]+)\s*(?P<op>==|!=|=)\s*(?P<value>.*)", term)
        if match is None:
            raise ApiError("BadRequest", f"invalid selector: {text!r}; can't understand {term!r}")
        key = match["key"]
        if key not in ("metadata.name", "metadata.namespace") and key not in SELECTABLE_FIELDS.get(kind, ()):
            raise ApiError("BadRequest", f'field label not supported: {key}')
        requirements.append((key, "notin" if match["op"] == "!=" else "in", {match["value"].strip()}))
    return requirements


def matches(values: dict[str, str], requirements: list[Requirement]) -> bool:
    for key, op, wanted in requirements:
        present = key in values
        if (op == "exists" and not present) or (op == "!exists" and present):
            return False
        if op == "in" and values.get(key) not in wanted:
            return False
        if op == "notin" and present and values[key] in wanted:
            return False
    return True


def field_values(obj: Obj, requirements: list[Requirement]) -> dict[str, str]:
    """The value of each dotted path a field selector names, as a string ('' when absent)."""
    values = {}
    for key, _, _ in requirements:
        value: Any = obj
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if key == "status.podIPs":  # a list of {ip}; upstream selects on the first
            value = value[0].get("ip") if isinstance(value, list) and value and isinstance(value[0], dict) else None
        if value is None and key in _FALSE_BY_DEFAULT:
            value = False
        values[key] = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    return values


class Query:
    """What a list or watch asks for: a kind, a namespace (None: all) and selectors."""

    def __init__(self, kind: str, namespace: str | None, params: dict[str, str]) -> None:
        self.kind, self.namespace = kind, namespace
        self.labels = parse_label_selector(params.get("labelSelector", ""))
        self.fields = parse_field_selector(params.get("fieldSelector", ""), kind)

    @property
    def selective(self) -> bool:
        return bool(self.labels or self.fields)

    def wants(self, obj: Obj) -> bool:
        meta = obj.get("metadata") or {}
        return (obj.get("kind") == self.kind
                and (self.namespace is None or meta.get("namespace") == self.namespace)
                and matches(meta.get("labels") or {}, self.labels)
                and matches(field_values(obj, self.fields), self.fields))
