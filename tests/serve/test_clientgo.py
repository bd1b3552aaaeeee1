"""serve driven the way client-go drives an API server: generated clients send protobuf bodies for built-in
kinds (a driver publishing its ResourceSlices, kubectl's imperative create), informers list and watch with
WatchList and wait for the bookmark ending the initial events, and an update carrying another object's UID
is refused."""

from __future__ import annotations

import json

from google.protobuf import descriptor_pb2

from draconform.serve.kubeproto import kube_pb2, openapiv2_pb2
from draconform.serve.kubeproto.generate import compile_descriptors
from draconform.serve.protobuf import encode
from tests.serve.conftest import Http

PROTOBUF = "application/vnd.kubernetes.protobuf"
ACCEPT = {"Accept": "application/vnd.kubernetes.protobuf, application/json"}
SLICES = "/apis/resource.k8s.io/v1/resourceslices"


def _slice(name: str, generation: int = 1) -> dict[str, object]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "gpu.example.com", "nodeName": "worker-1",
                     "pool": {"name": "worker-1", "generation": generation, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}, "ecc": {"bool": False},
                                                                  "index": {"int": 0}},
                                  "capacity": {"memory": {"value": "80Gi"}}}]}}


def test_the_committed_module_matches_kube_proto() -> None:
    """Fails when a .proto file changed without `python -m draconform.serve.kubeproto.generate`."""
    for compiled, module in zip(compile_descriptors().file, (kube_pb2, openapiv2_pb2), strict=True):
        committed = descriptor_pb2.FileDescriptorProto()
        module.DESCRIPTOR.CopyToProto(committed)
        for proto in (committed, compiled):  # protoc's json_name, derived from the names, is not embedded
            messages = list(proto.message_type)
            while messages:
                message = messages.pop()
                for field in message.field:
                    field.ClearField("json_name")
                messages.extend(message.nested_type)
        assert committed == compiled, compiled.name


def test_a_driver_publishes_a_slice_in_protobuf_and_reads_it_back(http: Http) -> None:
    created = http.request("POST", SLICES, encode(_slice("worker-1-gpu"), kube_pb2.ResourceSlice), PROTOBUF, ACCEPT)
    assert created.status == 201, created.body
    assert created.headers["Content-Type"].startswith("application/json")  # client-go decodes by Content-Type
    device = created.json()["spec"]["devices"][0]
    assert device["attributes"] == {"model": {"string": "a100"}, "ecc": {"bool": False}, "index": {"int": 0}}
    assert device["capacity"] == {"memory": {"value": "80Gi"}}
    stored = created.json()
    updated = {**_slice("worker-1-gpu", generation=2), "metadata": stored["metadata"]}
    replaced = http.request("PUT", f"{SLICES}/worker-1-gpu", encode(updated, kube_pb2.ResourceSlice), PROTOBUF)
    assert replaced.status == 200 and replaced.json()["spec"]["pool"]["generation"] == 2


def test_an_update_with_another_uid_is_refused_as_client_go_expects(http: Http) -> None:
    stored = http.request("POST", SLICES, _slice("s")).json()
    stolen = {**_slice("s", generation=2), "metadata": {**stored["metadata"], "uid": "not-the-stored-uid"}}
    reply = http.request("PUT", f"{SLICES}/s", encode(stolen, kube_pb2.ResourceSlice), PROTOBUF)
    assert reply.status == 409 and reply.json()["reason"] == "Conflict"


def test_delete_options_in_protobuf_are_read(http: Http) -> None:
    stored = http.request("POST", SLICES, _slice("s")).json()
    options = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": "someone-else"}}
    refused = http.request("DELETE", f"{SLICES}/s", encode(options, kube_pb2.DeleteOptions), PROTOBUF)
    assert refused.status == 409
    options["preconditions"] = {"uid": stored["metadata"]["uid"]}
    assert http.request("DELETE", f"{SLICES}/s", encode(options, kube_pb2.DeleteOptions), PROTOBUF).status == 200
    assert http.request("GET", f"{SLICES}/s").status == 404


def test_a_kind_serve_reads_no_protobuf_for_is_a_415_and_the_connection_goes_on(http: Http) -> None:
    pod = kube_pb2.Unknown(typeMeta=kube_pb2.TypeMeta(apiVersion="v1", kind="Pod"), raw=b"\x0a\x00")
    reply = http.request("POST", "/api/v1/namespaces/default/pods", b"k8s\x00" + pod.SerializeToString(), PROTOBUF)
    assert reply.status == 415 and reply.json()["reason"] == "UnsupportedMediaType"
    assert http.request("POST", SLICES, b"not protobuf", PROTOBUF).status == 400
    assert http.request("GET", "/version").status == 200


def test_an_informer_lists_with_watch_list_and_syncs_on_the_bookmark(http: Http) -> None:
    http.request("POST", SLICES, encode(_slice("a"), kube_pb2.ResourceSlice), PROTOBUF)
    reply = http.request("GET", f"{SLICES}?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
                                "&sendInitialEvents=true&timeoutSeconds=1&watch=true", headers=ACCEPT)
    events = [json.loads(line) for line in reply.body.splitlines()]
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"
