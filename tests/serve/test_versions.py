"""resource.k8s.io v1beta1 and v1beta2 at their own paths: off by default (404, discovery lists v1 only), and
with `--runtime-config` turning them on, discovery, OpenAPI, every verb, watches and tables in the path's
version, JSON and protobuf bodies, objects converted to the stored v1 and back without losing a field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from draconform.cli import main
from draconform.paths import FEATURES_DIR
from draconform.serve.protobuf import MAGIC, encode, kube_pb2, message_type, to_json
from draconform.serve.resources import parse_runtime_config
from draconform.serve.server import ApiServer
from tests.serve.conftest import Http, Reply
from tests.serve.test_clientgo import _watch_events

BOTH = "resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true"
MANIFESTS = FEATURES_DIR / "kep-3063" / "manifests"
GROUP = "/apis/resource.k8s.io"
PROTOBUF = "application/vnd.kubernetes.protobuf"
ACCEPT = {"Accept": "application/vnd.kubernetes.protobuf, application/json"}
PLURALS = {"DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices", "ResourceClaim": "resourceclaims",
           "ResourceClaimTemplate": "resourceclaimtemplates"}
NAMESPACED = {"ResourceClaim", "ResourceClaimTemplate"}
on = pytest.mark.runtime_config(BOTH)


def _manifest(version: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((MANIFESTS / f"versions-{version}.yaml").read_text()) if doc]


def _path(version: str, kind: str, name: str | None = None) -> str:
    scope = "/namespaces/default" if kind in NAMESPACED else ""
    return f"{GROUP}/{version}{scope}/{PLURALS[kind]}" + (f"/{name}" if name else "")


def _claim(version: str, name: str = "gpu") -> dict[str, Any]:
    request: dict[str, Any] = {"name": "gpu", "deviceClassName": "gpu.example.com", "count": 2}
    if version != "v1beta1":
        request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "count": 2}}
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": [request]}}}


def _lines(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in body.splitlines() if line.strip()]


def test_the_older_versions_are_off_by_default(http: Http) -> None:
    group = http.request("GET", GROUP).json()
    assert [v["version"] for v in group["versions"]] == ["v1"]
    assert http.request("GET", f"{GROUP}/v1beta1").status == 404
    assert http.request("POST", _path("v1beta1", "ResourceClaim"), _claim("v1beta1")).status == 404
    assert "apis/resource.k8s.io/v1beta2" not in http.request("GET", "/openapi/v3").json()["paths"]


def test_runtime_config_names_only_what_serve_can_turn_on() -> None:
    assert parse_runtime_config(BOTH) == {"resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2"}
    assert parse_runtime_config("resource.k8s.io/v1beta2,resource.k8s.io/v1beta1=false") == {
        "resource.k8s.io/v1beta2"}
    with pytest.raises(ValueError, match="batch/v1beta1"):
        parse_runtime_config("batch/v1beta1=true")


def test_serve_refuses_a_runtime_config_it_cannot_serve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--dir", str(tmp_path), "--runtime-config", "resource.k8s.io/v1alpha3=true"]) == 2
    err = capsys.readouterr().err
    assert "resource.k8s.io/v1alpha3" in err and "resource.k8s.io/v1beta1" in err and "Traceback" not in err


@on
def test_discovery_lists_the_older_versions_after_the_preferred_v1(http: Http) -> None:
    group = http.request("GET", GROUP).json()
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta2", "v1beta1"]
    assert group["preferredVersion"]["version"] == "v1"
    listed = {g["name"]: g for g in http.request("GET", "/apis").json()["groups"]}["resource.k8s.io"]
    assert listed["preferredVersion"]["version"] == "v1" and len(listed["versions"]) == 3
    v1beta1 = {r["name"] for r in http.request("GET", f"{GROUP}/v1beta1").json()["resources"]}
    assert {"resourceclaims", "resourceclaims/status", "resourceslices", "deviceclasses"} <= v1beta1
    assert "devicetaintrules" not in v1beta1  # DeviceTaintRule has no v1beta1
    v1beta2 = {r["name"] for r in http.request("GET", f"{GROUP}/v1beta2").json()["resources"]}
    assert "devicetaintrules" in v1beta2


@on
def test_openapi_describes_each_older_version(http: Http) -> None:
    index = http.request("GET", "/openapi/v3").json()["paths"]
    assert {"apis/resource.k8s.io/v1beta1", "apis/resource.k8s.io/v1beta2"} <= set(index)
    document = http.request("GET", index["apis/resource.k8s.io/v1beta1"]["serverRelativeURL"]).json()
    device = document["components"]["schemas"]["io.k8s.api.resource.v1beta1.Device"]
    assert set(device["properties"]) == {"name", "basic"}
    claim = document["components"]["schemas"]["io.k8s.api.resource.v1beta1.ResourceClaim"]
    assert claim["x-kubernetes-group-version-kind"] == [
        {"group": "resource.k8s.io", "version": "v1beta1", "kind": "ResourceClaim"}]
    assert "/apis/resource.k8s.io/v1beta1/namespaces/{namespace}/resourceclaims" in document["paths"]
    v2 = http.request("GET", "/openapi/v2").json()
    assert "io.k8s.api.resource.v1beta2.ResourceClaim" in v2["definitions"]


@on
@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_every_field_written_in_an_older_version_reads_back_in_v1_and_in_that_version(http: Http,
                                                                                      version: str) -> None:
    """The KEP-3063 manifests write every field of each kind; the v1 copy holds the same values at v1's places.
    A conversion that dropped or misplaced a field fails one of the comparisons."""
    expected = {(doc["kind"], doc["metadata"]["name"].removesuffix("-v1")): doc for doc in _manifest("v1")}
    for doc in _manifest(version):
        kind, name = doc["kind"], doc["metadata"]["name"]
        created = http.request("POST", _path(version, kind), doc)
        assert created.status == 201, created.body
        assert created.json()["apiVersion"] == f"resource.k8s.io/{version}"
        assert created.json()["spec"] == doc["spec"]
        stored = http.request("GET", _path("v1", kind, name)).json()
        assert stored["apiVersion"] == "resource.k8s.io/v1"
        assert stored["spec"] == expected[kind, name.removesuffix(f"-{version}")]["spec"], f"{kind} {name}"
        again = http.request("GET", _path(version, kind, name)).json()
        assert again["spec"] == doc["spec"], f"{kind} {name} read back in {version}"
        assert again["metadata"]["uid"] == stored["metadata"]["uid"]
        assert again["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]


@on
def test_a_v1_object_reads_in_v1beta1_and_lists_there(http: Http) -> None:
    assert http.request("POST", _path("v1", "ResourceClaim"), _claim("v1")).status == 201
    read = http.request("GET", _path("v1beta1", "ResourceClaim", "gpu")).json()
    assert read["apiVersion"] == "resource.k8s.io/v1beta1"
    assert read["spec"]["devices"]["requests"] == [{"name": "gpu", "deviceClassName": "gpu.example.com",
                                                    "count": 2, "allocationMode": "ExactCount"}]
    listed = http.request("GET", _path("v1beta1", "ResourceClaim")).json()
    assert listed["kind"] == "ResourceClaimList" and listed["apiVersion"] == "resource.k8s.io/v1beta1"
    assert listed["items"][0]["spec"] == read["spec"]
    table = http.request("GET", _path("v1beta1", "ResourceClaim"),
                         headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert table["kind"] == "Table" and table["rows"][0]["cells"][:2] == ["gpu", "pending"]


@on
def test_update_status_and_delete_at_a_v1beta1_path(http: Http) -> None:
    created = http.request("POST", _path("v1beta1", "ResourceClaim"), _claim("v1beta1")).json()
    created["metadata"]["labels"] = {"team": "a"}
    created["spec"]["devices"]["requests"][0]["count"] = 3
    assert http.request("PUT", _path("v1beta1", "ResourceClaim", "gpu"), created).status == 422  # spec immutable
    created["spec"]["devices"]["requests"][0]["count"] = 2
    updated = http.request("PUT", _path("v1beta1", "ResourceClaim", "gpu"), created)
    assert updated.status == 200, updated.body
    assert updated.json()["metadata"]["labels"] == {"team": "a"}
    stale = dict(created, metadata={**created["metadata"], "uid": "another"})
    assert http.request("PUT", _path("v1beta1", "ResourceClaim", "gpu"), stale).status == 409
    claim = updated.json()
    claim["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": f"gpu-{i}"} for i in (0, 1)]}},
        "reservedFor": [{"resource": "pods", "name": "web", "uid": "pod-1"}]}
    status = http.request("PUT", _path("v1beta1", "ResourceClaim", "gpu") + "/status", claim)
    assert status.status == 200, status.body
    assert http.request("GET", _path("v1", "ResourceClaim", "gpu")).json()["status"]["reservedFor"][0]["uid"] == \
        "pod-1"
    deleted = http.request("DELETE", _path("v1beta1", "ResourceClaim", "gpu"))
    assert deleted.status == 200 and deleted.json()["apiVersion"] == "resource.k8s.io/v1beta1"
    assert http.request("GET", _path("v1", "ResourceClaim", "gpu")).status == 404


@on
def test_patches_apply_to_the_object_as_written_in_the_paths_version(http: Http) -> None:
    slice_ = next(doc for doc in _manifest("v1beta1")
                  if (doc["kind"], doc["metadata"]["name"]) == ("ResourceSlice", "every-field-v1beta1"))
    path = _path("v1beta1", "ResourceSlice", "every-field-v1beta1")
    assert http.request("POST", _path("v1beta1", "ResourceSlice"), slice_).status == 201
    merged = http.request("PATCH", path, {"metadata": {"labels": {"a": "b"}}},
                          content_type="application/merge-patch+json")
    assert merged.status == 200 and merged.json()["spec"] == slice_["spec"]
    patched = http.request("PATCH", path, [{"op": "replace", "path": "/spec/devices/0/basic/attributes/model",
                                            "value": {"string": "h100"}}], content_type="application/json-patch+json")
    assert patched.status == 200, patched.body
    stored = http.request("GET", _path("v1", "ResourceSlice", "every-field-v1beta1")).json()
    assert stored["spec"]["devices"][0]["attributes"]["model"] == {"string": "h100"}
    assert stored["spec"]["devices"][0]["capacity"] == slice_["spec"]["devices"][0]["basic"]["capacity"]
    strategic = http.request("PATCH", path, {"metadata": {"labels": {"c": "d"}}},
                             content_type="application/strategic-merge-patch+json")
    assert strategic.status == 200 and strategic.json()["metadata"]["labels"] == {"a": "b", "c": "d"}
    applied = http.request("PATCH", _path("v1beta1", "ResourceClaim", "applied") + "?fieldManager=me",
                           yaml.safe_dump(_claim("v1beta1", "applied")).encode(),
                           content_type="application/apply-patch+yaml")
    assert applied.status == 201, applied.body
    assert applied.json()["spec"]["devices"]["requests"][0]["deviceClassName"] == "gpu.example.com"
    stored_claim = http.request("GET", _path("v1", "ResourceClaim", "applied")).json()
    assert stored_claim["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2


@on
def test_dry_run_at_a_v1beta1_path_persists_nothing(http: Http) -> None:
    dry = http.request("POST", _path("v1beta1", "ResourceClaim") + "?dryRun=All", _claim("v1beta1"))
    assert dry.status == 201 and dry.json()["apiVersion"] == "resource.k8s.io/v1beta1"
    assert http.request("GET", _path("v1", "ResourceClaim", "gpu")).status == 404


@on
def test_a_field_of_another_version_is_an_unknown_field_of_the_version_written(http: Http) -> None:
    """v1's `exactly` written in v1beta1 is unknown to v1beta1's decoder: Strict (kubectl's default) names it at its
    v1beta1 path in a 400; Warn drops it, and the request left without a class is then invalid."""
    claim = _claim("v1")
    claim["apiVersion"] = "resource.k8s.io/v1beta1"
    strict = http.request("POST", _path("v1beta1", "ResourceClaim") + "?fieldValidation=Strict", claim)
    assert strict.status == 400 and strict.json()["message"].endswith(
        'strict decoding error: unknown field "spec.devices.requests[0].exactly"')
    warned = http.request("POST", _path("v1beta1", "ResourceClaim"), claim)
    assert warned.status == 422 and "deviceClassName" in warned.json()["message"]
    mismatched = http.request("POST", _path("v1beta1", "ResourceClaim"), _claim("v1beta2"))
    assert mismatched.status == 400 and "resource.k8s.io/v1beta1" in mismatched.json()["message"]


@on
def test_a_watch_at_a_v1beta1_path_carries_v1beta1_objects_and_bookmarks(http: Http, server: ApiServer) -> None:
    assert http.request("POST", _path("v1", "ResourceClaim"), _claim("v1")).status == 201
    events = _lines(http.request("GET", _path("v1beta1", "ResourceClaim") + "?watch=1&sendInitialEvents=true"
                                 "&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1").body)
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[0]["object"]["apiVersion"] == "resource.k8s.io/v1beta1"
    assert events[0]["object"]["spec"]["devices"]["requests"][0]["deviceClassName"] == "gpu.example.com"
    assert events[1]["object"]["apiVersion"] == "resource.k8s.io/v1beta1"
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


@on
def test_a_protobuf_watch_at_a_v1beta1_path_carries_v1beta1_messages(http: Http) -> None:
    """An older client-go informer: WatchList in protobuf at the v1beta1 path gets the object in v1beta1's own
    message (the flat request) and the end-of-initial-events bookmark, not v1's shapes."""
    assert http.request("POST", _path("v1", "ResourceClaim"), _claim("v1")).status == 201
    reply = http.request("GET", _path("v1beta1", "ResourceClaim") + "?watch=1&sendInitialEvents=true"
                         "&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
                         headers={"Accept": "application/vnd.kubernetes.protobuf;stream=watch"})
    events = _watch_events(reply)
    assert {obj["apiVersion"] for _, obj in events} == {"resource.k8s.io/v1beta1"}
    assert [kind for kind, _ in events] == ["ADDED", "BOOKMARK"]
    request = events[0][1]["spec"]["devices"]["requests"][0]
    assert request["deviceClassName"] == "gpu.example.com" and request["count"] == 2 and "exactly" not in request
    assert events[1][1]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def _from_protobuf(reply: Reply) -> dict[str, Any]:
    """An answer read as client-go reads it, by the version its envelope names."""
    assert reply.headers["Content-Type"] == PROTOBUF, reply.body
    envelope = kube_pb2.Unknown.FromString(reply.body[len(MAGIC):])
    found = message_type(envelope.typeMeta.kind, envelope.typeMeta.apiVersion)
    assert found is not None
    return {"apiVersion": envelope.typeMeta.apiVersion, "kind": envelope.typeMeta.kind,
            **to_json(found.FromString(envelope.raw))}


@on
@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_protobuf_bodies_of_an_older_version_round_trip_every_field(http: Http, version: str) -> None:
    """What an older client-go's generated client sends and reads: every field of the KEP-3063 manifests in the
    version's protobuf messages, answered in protobuf, the same in v1 as when written in JSON."""
    expected = {(doc["kind"], doc["metadata"]["name"].removesuffix("-v1")): doc for doc in _manifest("v1")}
    for doc in _manifest(version):
        kind, name = doc["kind"], doc["metadata"]["name"]
        found = message_type(kind, doc["apiVersion"])
        assert found is not None
        created = http.request("POST", _path(version, kind), encode(doc, found), PROTOBUF, ACCEPT)
        assert created.status == 201, created.body
        answer = _from_protobuf(created)
        assert answer["apiVersion"] == f"resource.k8s.io/{version}" and answer["spec"] == doc["spec"], kind
        stored = http.request("GET", _path("v1", kind, name)).json()
        assert stored["spec"] == expected[kind, name.removesuffix(f"-{version}")]["spec"], f"{kind} {name}"
        listed = _from_protobuf(http.request("GET", _path(version, kind), headers=ACCEPT))
        assert listed["kind"] == f"{kind}List" and name in [i["metadata"]["name"] for i in listed["items"]]
    slice_ = next(doc for doc in _manifest(version)
                  if (doc["kind"], doc["metadata"]["name"]) == ("ResourceSlice", f"every-field-{version}"))
    read = _from_protobuf(http.request("GET", _path(version, "ResourceSlice", slice_["metadata"]["name"]),
                                       headers=ACCEPT))
    read["spec"]["pool"]["generation"] = 4
    found = message_type("ResourceSlice", slice_["apiVersion"])
    assert found is not None
    updated = http.request("PUT", _path(version, "ResourceSlice", slice_["metadata"]["name"]), encode(read, found),
                           PROTOBUF, ACCEPT)
    assert updated.status == 200, updated.body
    assert _from_protobuf(updated)["spec"] == {**slice_["spec"], "pool": {**slice_["spec"]["pool"], "generation": 4}}
