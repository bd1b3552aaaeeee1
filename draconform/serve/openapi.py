"""OpenAPI documents for the kinds serve stores, generated from lightkube-models (itself generated from
upstream's OpenAPI, with its field descriptions): /openapi/v3 (the index) and /openapi/v3/api/v1,
/openapi/v3/apis/GROUP/VERSION (one document per group-version, with each kind's schema carrying
x-kubernetes-group-version-kind for `kubectl explain`, the merge keys of patches.py as
x-kubernetes-patch-merge-key, and PATCH operations that take `fieldValidation`, which tells kubectl to leave
validation to the server), and /openapi/v2, as JSON or, for kubectl before 1.29, which reads only that, in
gnostic's protobuf encoding (kubeproto/openapiv2.proto)."""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import re
from typing import Any

from draconform.serve.patches import MERGE_KEYS, SET_LISTS
from draconform.serve.resources import STORED, Resource, Served
from draconform.sut import Obj

_MODULES = {"core_v1": "io.k8s.api.core.v1", "meta_v1": "io.k8s.apimachinery.pkg.apis.meta.v1",
            "resource_v1": "io.k8s.api.resource.v1", "resource_v1beta1": "io.k8s.api.resource.v1beta1",
            "resource_v1beta2": "io.k8s.api.resource.v1beta2", "runtime": "io.k8s.apimachinery.pkg.runtime",
            "util_intstr": "io.k8s.apimachinery.pkg.util.intstr", "resource": "io.k8s.apimachinery.pkg.api.resource"}
_SCALARS: dict[str, Obj] = {"str": {"type": "string"}, "int": {"type": "integer", "format": "int64"},
            "float": {"type": "number", "format": "double"}, "bool": {"type": "boolean"},
            "dict": {"type": "object", "additionalProperties": {"type": "string"}},
            "Dict": {"type": "object", "additionalProperties": {"type": "string"}},
            "datetime": {"type": "string", "format": "date-time"}}
_SPECIAL: dict[str, Obj] = {
            "resource.Quantity": {"type": "string", "format": "quantity"},
            "util_intstr.IntOrString": {"type": "string", "format": "int-or-string", "x-kubernetes-int-or-string":
                                        True},
            "runtime.RawExtension": {"type": "object"}, "meta_v1.FieldsV1": {"type": "object"},
            "meta_v1.Time": {"type": "string", "format": "date-time"},
            "meta_v1.MicroTime": {"type": "string", "format": "date-time"}}
# The value type of map fields, which lightkube-models types only as `dict` (maps of strings otherwise): upstream's
# `map[string]DeviceAttribute` and quantities, so that kubectl's own validation (a saved List, kubectl 1.27/1.28)
# and explain read them as upstream's schemas say.
_MAP_VALUES: dict[tuple[str, str], str] = {
    ("Device", "attributes"): "DeviceAttribute", ("Device", "capacity"): "DeviceCapacity",
    ("DeviceCounterConsumption", "counters"): "Counter", ("CounterSet", "counters"): "Counter",
    **{(model, name): "resource.Quantity" for model, name in (
        ("ResourceRequirements", "limits"), ("ResourceRequirements", "requests"),
        ("VolumeResourceRequirements", "limits"), ("VolumeResourceRequirements", "requests"),
        ("PodSpec", "overhead"), ("PodStatus", "allocatedResources"), ("ContainerStatus", "allocatedResources"),
        ("NodeStatus", "allocatable"), ("NodeStatus", "capacity"), ("CapacityRequirements", "requests"),
        ("DeviceRequestAllocationResult", "consumedCapacity"))}}
_BYTE_MAPS = {("ConfigMap", "binaryData")}
ACCEPT_PROTOBUF_V2 = "application/com.github.proto-openapi.spec.v2"


def _model(module: str, name: str) -> Any:
    return getattr(importlib.import_module(f"lightkube.models.{module}"), name, None)


def _descriptions(model: Any) -> tuple[str, dict[str, str]]:
    """The model's own description and each field's, from lightkube's generated docstrings."""
    doc = model.__doc__ or ""
    head, _, params = doc.partition("**parameters**")
    fields: dict[str, str] = {}
    for match in re.finditer(r"\* \*\*(\w+)\*\* ``[^`]*`` - (.*?)(?=\n\s*\* \*\*|\Z)", params, re.S):
        fields[match[1]] = " ".join(match[2].split())
    return " ".join(head.split()), fields


class _Builder:
    """Schemas for a model and every model it refers to, under upstream's definition names."""

    def __init__(self) -> None:
        self.schemas: dict[str, Obj] = {}

    def ref(self, module: str, name: str) -> str:
        key = f"{_MODULES.get(module, module)}.{name}"
        if key not in self.schemas:
            self.schemas[key] = {}
            model = _model(module, name)
            self.schemas[key] = self._object(module, model) if model is not None else {"type": "object"}
        return key

    def _object(self, module: str, model: Any) -> Obj:
        description, field_docs = _descriptions(model)
        properties: dict[str, Obj] = {}
        required: list[str] = []
        for field, annotation in getattr(model, "__annotations__", {}).items():
            name = field.rstrip("_")
            text = str(annotation)
            if not text.startswith("Optional["):
                required.append(name)
            schema = self._type(module, text.removeprefix("Optional[").removesuffix("]")
                                if text.startswith("Optional[") else text)
            where = (model.__name__, name)
            if where in _MAP_VALUES:
                schema = {"type": "object", "additionalProperties": self._type(module, _MAP_VALUES[where])}
            elif where in _BYTE_MAPS:
                schema = {"type": "object", "additionalProperties": {"type": "string", "format": "byte"}}
            if name in field_docs:
                schema = {**schema, "description": field_docs[name]} if "$ref" not in schema else {
                    "allOf": [schema], "description": field_docs[name]}
            properties[name] = schema
        result: Obj = {"type": "object", "description": description, "properties": properties}
        if required:
            result["required"] = required
        return result

    def _type(self, module: str, text: str) -> Obj:
        if text.startswith("List[") and text.endswith("]"):
            return {"type": "array", "items": self._type(module, text[5:-1])}
        special = _SPECIAL.get(text) or _SPECIAL.get(f"{module}.{text}")  # `Time` as ObjectMeta, in meta_v1, names it
        if special is not None:
            return dict(special)
        if text in _SCALARS:
            return dict(_SCALARS[text])
        owner, _, name = text.rpartition(".")
        return {"$ref": f"#/components/schemas/{self.ref(owner or module, name)}"}


def _patch_extensions(builder: _Builder, resources: list[Resource]) -> None:
    """The merge keys and strategies serve's strategic merge patch uses, on the schemas' list fields."""
    for (kind, path), key in [*MERGE_KEYS.items(), *((k, None) for k in SET_LISTS)]:
        for resource in resources:
            if kind not in ("*", resource.kind):
                continue
            schema = builder.schemas.get(_kind_schema_name(resource))
            for part in path[:-1]:
                schema = _follow(builder, ((schema or {}).get("properties") or {}).get(part))
            prop = ((schema or {}).get("properties") or {}).get(path[-1])
            if prop is not None:
                prop["x-kubernetes-patch-strategy"] = "merge"
                if key:
                    prop["x-kubernetes-patch-merge-key"] = key


def _follow(builder: _Builder, schema: Obj | None) -> Obj | None:
    while schema is not None:
        if "$ref" in schema:
            schema = builder.schemas.get(schema["$ref"].rsplit("/", 1)[-1])
        elif "allOf" in schema:
            schema = schema["allOf"][0]
        elif schema.get("type") == "array":
            schema = schema.get("items")
        else:
            return schema
    return None


def _model_module(resource: Resource) -> str:
    """The lightkube-models module of the resource's group-version (named as upstream's Go package)."""
    return "core_v1" if not resource.group else f"{resource.group.split('.')[0]}_{resource.version}"


def _kind_schema_name(resource: Resource) -> str:
    return f"{_MODULES[_model_module(resource)]}.{resource.kind}"


def _parameters(*names: str) -> list[Obj]:
    return [{"name": name, "in": "query", "schema": {"type": "string"}, "uniqueItems": True} for name in names]


def _operations(resource: Resource, schema_ref: str) -> dict[str, Obj]:
    gvk = {"group": resource.group, "version": resource.version, "kind": resource.kind}
    body = {"content": {"application/json": {"schema": {"$ref": schema_ref}}}}
    ok = {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": schema_ref}}}}}
    base = f"/api/{resource.version}" if not resource.group else f"/apis/{resource.group}/{resource.version}"
    scope = f"{base}/namespaces/{{namespace}}" if resource.namespaced else base
    write = ("dryRun", "fieldManager", "fieldValidation")

    def operation(action: str, extra: tuple[str, ...] = (), with_body: bool = False) -> Obj:
        op: Obj = {"operationId": f"{action}{resource.kind}", "responses": ok, "parameters": _parameters(*extra),
                   "x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk}
        if with_body:
            op["requestBody"] = body
        return op
    patch = operation("patch", (*write, "force"))
    patch["requestBody"] = {"content": {media: {"schema": {"type": "object"}} for media in (
        "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json",
        "application/apply-patch+yaml")}}
    return {
        f"{scope}/{resource.plural}": {
            "get": operation("list", ("labelSelector", "fieldSelector", "limit", "continue", "watch",
                                      "resourceVersion", "allowWatchBookmarks", "sendInitialEvents")),
            "post": operation("post", write, with_body=True)},
        f"{scope}/{resource.plural}/{{name}}": {
            "get": operation("get"), "put": operation("put", write, with_body=True), "patch": patch,
            "delete": operation("delete", ("dryRun", "gracePeriodSeconds", "propagationPolicy"))},
    }


@functools.cache
def group_version_document(group: str, version: str, what: Served = STORED) -> Obj:
    builder = _Builder()
    paths: dict[str, Obj] = {}
    resources = [r for r in what.resources if (r.group, r.version) == (group, version)]
    for resource in resources:
        name = builder.ref(_model_module(resource), resource.kind)
        builder.schemas[name]["x-kubernetes-group-version-kind"] = [
            {"group": resource.group, "version": resource.version, "kind": resource.kind}]
        paths.update(_operations(resource, f"#/components/schemas/{name}"))
    _patch_extensions(builder, resources)
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes (draconform serve)", "version": "v1.37.0"},
            "paths": paths, "components": {"schemas": builder.schemas}}


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


@functools.cache
def v3_index(what: Served = STORED) -> Obj:
    paths = {}
    for group, version in what.group_versions:
        digest = hashlib.sha512(json.dumps(group_version_document(group, version, what), sort_keys=True).encode())
        paths[_gv_path(group, version)] = {
            "serverRelativeURL": f"/openapi/v3/{_gv_path(group, version)}?hash={digest.hexdigest()[:32].upper()}"}
    return {"paths": paths}


@functools.cache
def v2_document(what: Served = STORED) -> Obj:
    """The same schemas as one Swagger 2.0 document (definitions, paths with body parameters)."""
    definitions: dict[str, Obj] = {}
    paths: dict[str, Obj] = {}
    for group, version in what.group_versions:
        document = json.loads(json.dumps(group_version_document(group, version, what)).replace(
            "#/components/schemas/", "#/definitions/"))
        definitions.update(document["components"]["schemas"])
        for path, operations in document["paths"].items():
            converted = {}
            for method, op in operations.items():
                body = ((op.get("requestBody") or {}).get("content") or {}).get("application/json")
                op = {k: v for k, v in op.items() if k not in ("requestBody", "responses")}
                op["parameters"] = [{"name": p["name"], "in": "query", "type": "string", "uniqueItems": True}
                                    for p in op.get("parameters", [])]
                if body is not None:
                    op["parameters"].insert(0, {"name": "body", "in": "body", "required": True,
                                                "schema": body["schema"]})
                op["responses"] = {"200": {"description": "OK"}}
                converted[method] = op
            paths[path] = converted
    return {"swagger": "2.0", "info": {"title": "Kubernetes (draconform serve)", "version": "v1.37.0"},
            "paths": paths, "definitions": definitions}


V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


@functools.cache
def v2_protobuf(what: Served = STORED) -> bytes:
    """The v2 document in gnostic's protobuf encoding (kubeproto/openapiv2.proto), as kubectl before 1.29 reads
    it for apply's validation and patches."""
    from draconform.serve.kubeproto import openapiv2_pb2

    generated: Any = openapiv2_pb2
    document = v2_document(what)

    def extensions(node: Obj) -> list[Any]:
        return [generated.NamedAny(name=key, value=generated.Any(yaml=json.dumps(value)))
                for key, value in node.items() if key.startswith("x-")]

    def schema(node: Obj) -> Any:
        if "allOf" in node and len(node["allOf"]) == 1 and "$ref" in node["allOf"][0]:
            node = {**{k: v for k, v in node.items() if k != "allOf"}, "$ref": node["allOf"][0]["$ref"]}
        out = generated.Schema(_ref=node.get("$ref", ""), format=node.get("format", ""),
                               description=node.get("description", ""), required=node.get("required", []),
                               vendor_extension=extensions(node))
        if "type" in node:
            out.type.value.append(node["type"])
        if "items" in node:
            out.items.schema.append(schema(node["items"]))
        if isinstance(node.get("additionalProperties"), dict):
            out.additional_properties.schema.CopyFrom(schema(node["additionalProperties"]))
        for name, prop in (node.get("properties") or {}).items():
            out.properties.additional_properties.add(name=name, value=schema(prop))
        return out

    def parameter(node: Obj) -> Any:
        if node["in"] == "body":
            return generated.ParametersItem(parameter=generated.Parameter(body_parameter=generated.BodyParameter(
                name=node["name"], description=node.get("description", ""), required=True,
                schema=schema(node["schema"]), **{"in": "body"})))
        query = generated.QueryParameterSubSchema(name=node["name"], type=node.get("type", "string"),
                                                  unique_items=True, **{"in": "query"})
        return generated.ParametersItem(parameter=generated.Parameter(
            non_body_parameter=generated.NonBodyParameter(query_parameter_sub_schema=query)))

    out = generated.Document(swagger="2.0", info=generated.Info(title=document["info"]["title"],
                                                                version=document["info"]["version"]))
    for path, operations in document["paths"].items():
        item = generated.PathItem()
        for method, op in operations.items():
            target = getattr(item, method)
            target.operation_id = op.get("operationId", "")
            target.consumes.append("application/json")
            target.produces.append("application/json")
            target.parameters.extend(parameter(p) for p in op.get("parameters", []))
            target.responses.response_code.add(name="200", value=generated.ResponseValue(
                response=generated.Response(description="OK")))
            target.vendor_extension.extend(extensions(op))
        out.paths.path.add(name=path, value=item)
    for name, definition in document["definitions"].items():
        out.definitions.additional_properties.add(name=name, value=schema(definition))
    data: bytes = out.SerializeToString()
    return data


def document(path: str, what: Served = STORED) -> Obj | None:
    """The OpenAPI document at `path` for the resources `what`, or None when `path` names none."""
    if path == "/openapi/v2":
        return v2_document(what)
    if path == "/openapi/v3":
        return v3_index(what)
    prefix = "/openapi/v3/"
    if path.startswith(prefix):
        for group, version in what.group_versions:
            if path[len(prefix):] == _gv_path(group, version):
                return group_version_document(group, version, what)
    return None
