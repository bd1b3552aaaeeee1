"""serve driven the way client-go drives an API server: generated clients send protobuf bodies for built-in
kinds and ask for protobuf answers (a driver publishing its ResourceSlices, a kubelet or scheduler reading and
writing Pods and Nodes, kubectl's imperative create), informers list and watch with WatchList and wait for
the bookmark ending the initial events, and an update carrying another object's UID is refused."""

from __future__ import annotations

import json
from typing import Any

from draconform.serve.kubeproto import kube_pb2, openapiv2_pb2
from draconform.serve.kubeproto.generate import compile_descriptors
from draconform.serve.protobuf import LISTS, MESSAGES, encode, message_type, to_json
from draconform.sut import Obj
from tests.descriptors import committed_descriptor, without_json_names
from tests.serve.conftest import Http, Reply

PROTOBUF = "application/vnd.kubernetes.protobuf"
ACCEPT = {"Accept": "application/vnd.kubernetes.protobuf, application/json"}
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
PODS = "/api/v1/namespaces/default/pods"
NODES = "/api/v1/nodes"
TAINT_RULES = "/apis/resource.k8s.io/v1/devicetaintrules"


def _read(reply: Reply) -> Obj:
    """An answer as client-go reads it: by its Content-Type, protobuf (an object or a list) or JSON."""
    if not reply.headers["Content-Type"].startswith(PROTOBUF):
        decoded: Obj = reply.json()
        return decoded
    assert reply.body.startswith(b"k8s\x00")
    envelope = kube_pb2.Unknown.FromString(reply.body[4:])
    kind = envelope.typeMeta.kind
    message = (MESSAGES.get(kind) or LISTS[kind]).FromString(envelope.raw)
    return {"apiVersion": envelope.typeMeta.apiVersion, "kind": kind, **to_json(message)}


def _create_in_protobuf(http: Http, path: str, obj: Obj, message: Any) -> Obj:
    """POST `obj` as client-go does (protobuf body, protobuf asked for first); the server must answer in protobuf,
    since nothing in these objects is lost on the way."""
    created = http.request("POST", path, encode(obj, message), PROTOBUF, ACCEPT)
    assert created.status == 201, created.body
    assert created.headers["Content-Type"] == PROTOBUF
    return _read(created)


def _pod(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "ctr", "image": "registry.example/app:1", "command": ["serve"],
                                     "args": ["--port", "8080"], "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                                     "env": [{"name": "NODE",
                                              "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                                             {"name": "MODE",
                                              "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "mode"}}}],
                                     "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"},
                                                   "claims": [{"name": "gpu", "request": "one"}]},
                                     "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
                                     "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"},
                                                       "periodSeconds": 10},
                                     "readinessProbe": {"tcpSocket": {"port": 8080}, "failureThreshold": 3},
                                     "startupProbe": {"exec": {"command": ["true"]}},
                                     "terminationMessagePath": "/dev/termination-log",
                                     "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
                     "volumes": [{"name": "scratch", "emptyDir": {}},
                                 {"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                     "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoExecute",
                                      "tolerationSeconds": 0}],
                     "terminationGracePeriodSeconds": 0, "restartPolicy": "Never",
                     "schedulerName": "default-scheduler",
                     # what kube-apiserver defaults, so that the pod reads back as sent
                     "dnsPolicy": "ClusterFirst", "enableServiceLinks": True, "securityContext": {}}}


def _node(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}], "podCIDR": "10.0.1.0/24"},
            "status": {"capacity": {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "100Gi", "pods": "110"},
                       "allocatable": {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "100Gi", "pods": "110"},
                       "addresses": [{"type": "InternalIP", "address": "10.0.0.7"}],
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "lastHeartbeatTime": "2026-11-26T10:00:00Z",
                                       "lastTransitionTime": "2026-11-26T10:00:00Z"}],
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                       "nodeInfo": {"machineID": "m-7", "systemUUID": "u-7", "bootID": "b-7",
                                    "kernelVersion": "6.12.0", "osImage": "Debian GNU/Linux 13 (trixie)",
                                    "containerRuntimeVersion": "containerd://2.1.0", "kubeletVersion": "v1.37.0",
                                    "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}}}


def _slice(name: str, generation: int = 1) -> dict[str, object]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "gpu.example.com", "nodeName": "worker-1",
                     "pool": {"name": "worker-1", "generation": generation, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}, "ecc": {"bool": False},
                                                                  "index": {"int": 0}},
                                  "capacity": {"memory": {"value": "80Gi"}}}]}}


def _taint_rule(name: str) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": name},
            "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "worker-1", "device": "gpu-0"},
                     "taint": {"key": "example.com/unhealthy", "value": "ecc", "effect": "NoSchedule",
                               "timeAdded": "2026-11-26T10:00:00Z"}}}


def test_the_committed_module_matches_kube_proto() -> None:
    """Fails when a .proto file changed without `python -m draconform.serve.kubeproto.generate`."""
    for compiled, module in zip(compile_descriptors().file, (kube_pb2, openapiv2_pb2), strict=True):
        assert without_json_names(committed_descriptor(module)) == without_json_names(compiled), compiled.name


def test_a_driver_publishes_a_slice_in_protobuf_and_reads_it_back(http: Http) -> None:
    stored = _create_in_protobuf(http, SLICES, _slice("worker-1-gpu"), kube_pb2.ResourceSlice)
    device = stored["spec"]["devices"][0]
    assert device["attributes"] == {"model": {"string": "a100"}, "ecc": {"bool": False}, "index": {"int": 0}}
    assert device["capacity"] == {"memory": {"value": "80Gi"}}
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


def test_a_pod_round_trips_in_protobuf_through_create_get_list_and_update(http: Http) -> None:
    sent = _pod("web-1")
    stored = _create_in_protobuf(http, PODS, sent, kube_pb2.Pod)
    assert stored["kind"] == "Pod" and stored["spec"] == sent["spec"]
    assert stored["metadata"]["labels"] == {"app": "web"} and stored["metadata"]["uid"]
    assert stored["status"]["phase"] == "Pending"  # set by the server, read back through protobuf
    got = http.request("GET", f"{PODS}/web-1", headers=ACCEPT)
    assert got.headers["Content-Type"] == PROTOBUF and _read(got) == stored
    listed = _read(http.request("GET", PODS, headers=ACCEPT))
    assert listed["kind"] == "PodList" and listed["metadata"]["resourceVersion"]
    assert [item["metadata"]["name"] for item in listed["items"]] == ["web-1"]
    assert listed["items"][0]["spec"] == sent["spec"]
    changed = {**stored, "metadata": {**stored["metadata"], "labels": {"app": "web", "tier": "front"}}}
    updated = http.request("PUT", f"{PODS}/web-1", encode(changed, kube_pb2.Pod), PROTOBUF, ACCEPT)
    assert updated.status == 200, updated.body
    after = _read(updated)
    assert after["metadata"]["labels"] == {"app": "web", "tier": "front"} and after["spec"] == sent["spec"]
    assert int(after["metadata"]["resourceVersion"]) > int(stored["metadata"]["resourceVersion"])
    assert _read(http.request("GET", f"{PODS}/web-1")) == after  # the JSON a JSON client reads is the same


def _workload_pod(name: str) -> Obj:
    """A pod as a Deployment's pod template often makes it: spread and kept apart from its replicas, with the
    service account token volume kube-apiserver adds, downward API files, lifecycle hooks, a sidecar, a resize
    policy and its own DNS options."""
    pod = _pod(name)
    spec = pod["spec"]
    web = {"matchLabels": {"app": "web"}}
    spec["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100", "h100"]}]}]}},
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "cache"}},
                                               "topologyKey": "topology.kubernetes.io/zone"}}]},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
             "namespaces": ["default"], "topologyKey": "kubernetes.io/hostname",
             "namespaceSelector": {}, "matchLabelKeys": ["pod-template-hash"]}]}}
    spec["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": web, "minDomains": 2, "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore",
         "matchLabelKeys": ["pod-template-hash"]}]
    spec["volumes"] += [
        {"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"secret": {"name": "extra", "optional": True}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                         "fieldPath": "metadata.namespace"}}]}}]}},
        {"name": "podinfo", "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}, "mode": 256},
            {"path": "cpu", "resourceFieldRef": {"containerName": "ctr", "resource": "limits.cpu",
                                                 "divisor": "1m"}}]}}]
    spec["containers"][0]["lifecycle"] = {"postStart": {"exec": {"command": ["warm-up"]}},
                                          "preStop": {"sleep": {"seconds": 5}}}
    spec["containers"][0]["resizePolicy"] = [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]
    spec["initContainers"] = [{"name": "proxy", "image": "registry.example/proxy:1", "restartPolicy": "Always",
                               "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                               "imagePullPolicy": "IfNotPresent"}]
    spec["dnsConfig"] = {"nameservers": ["10.0.0.10"], "searches": ["svc.cluster.local"],
                         "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]}
    return pod


def test_a_workload_pod_with_affinity_spread_projected_volumes_and_hooks_round_trips_in_protobuf(http: Http) -> None:
    sent = _workload_pod("web-2")
    stored = _create_in_protobuf(http, PODS, sent, kube_pb2.Pod)
    assert stored["spec"] == sent["spec"]
    assert http.request("GET", f"{PODS}/web-2").json()["spec"] == sent["spec"]  # what a JSON client reads
    listed = _read(http.request("GET", PODS, headers=ACCEPT))
    assert listed["items"][0]["spec"] == sent["spec"]


def test_a_node_round_trips_in_protobuf_with_its_status(http: Http) -> None:
    sent = _node("worker-7")
    stored = _create_in_protobuf(http, NODES, sent, kube_pb2.Node)
    assert stored["spec"] == sent["spec"] and stored["status"] == sent["status"]
    assert _read(http.request("GET", f"{NODES}/worker-7", headers=ACCEPT)) == stored
    listed = _read(http.request("GET", NODES, headers=ACCEPT))
    assert listed["kind"] == "NodeList" and [n["metadata"]["name"] for n in listed["items"]] == ["worker-7"]
    unschedulable = {**stored, "spec": {**stored["spec"], "unschedulable": True}}
    updated = _read(http.request("PUT", f"{NODES}/worker-7", encode(unschedulable, kube_pb2.Node), PROTOBUF, ACCEPT))
    assert updated["spec"]["unschedulable"] is True and updated["status"] == sent["status"]
    ready = {**updated, "status": {**updated["status"], "allocatable": {"cpu": "7", "memory": "30Gi", "pods": "100"}}}
    status = http.request("PUT", f"{NODES}/worker-7/status", encode(ready, kube_pb2.Node), PROTOBUF, ACCEPT)
    assert _read(status)["status"]["allocatable"] == {"cpu": "7", "memory": "30Gi", "pods": "100"}


def test_a_device_taint_rule_round_trips_in_protobuf_with_its_status(http: Http) -> None:
    sent = _taint_rule("gpu-0-ecc")
    stored = _create_in_protobuf(http, TAINT_RULES, sent, kube_pb2.DeviceTaintRule)
    assert stored["kind"] == "DeviceTaintRule" and stored["spec"] == sent["spec"]
    assert _read(http.request("GET", f"{TAINT_RULES}/gpu-0-ecc", headers=ACCEPT)) == stored
    listed = _read(http.request("GET", TAINT_RULES, headers=ACCEPT))
    assert listed["kind"] == "DeviceTaintRuleList" and [r["metadata"]["name"] for r in listed["items"]] == ["gpu-0-ecc"]
    evicting = {**stored, "spec": {**stored["spec"], "taint": {**stored["spec"]["taint"], "effect": "NoExecute"}}}
    updated = _read(http.request("PUT", f"{TAINT_RULES}/gpu-0-ecc", encode(evicting, kube_pb2.DeviceTaintRule),
                                 PROTOBUF, ACCEPT))
    assert updated["spec"]["taint"]["effect"] == "NoExecute"
    assert updated["spec"]["deviceSelector"] == sent["spec"]["deviceSelector"]
    condition = {"type": "EvictionInProgress", "status": "True", "reason": "PodsPendingEviction",
                 "message": "1 pod to evict", "lastTransitionTime": "2026-11-26T10:05:00Z"}
    reported = {**updated, "status": {"conditions": [condition]}}
    status = http.request("PUT", f"{TAINT_RULES}/gpu-0-ecc/status", encode(reported, kube_pb2.DeviceTaintRule),
                          PROTOBUF, ACCEPT)
    assert status.status == 200, status.body
    assert _read(status)["status"] == {"conditions": [condition]}
    assert http.request("GET", f"{TAINT_RULES}/gpu-0-ecc").json()["status"] == {"conditions": [condition]}


def test_a_device_taint_rule_selector_field_dropped_upstream_is_a_415(http: Http) -> None:
    """The selector's deviceClassName (field 1, alpha only) is not read: refused by name, never dropped."""
    selector = kube_pb2.DeviceTaintSelector(driver="gpu.example.com").SerializeToString() + b"\x0a\x03gpu"
    spec = b"\x0a" + bytes([len(selector)]) + selector
    rule = kube_pb2.DeviceTaintRule(metadata=kube_pb2.ObjectMeta(name="r")).SerializeToString()
    rule += b"\x12" + bytes([len(spec)]) + spec
    envelope = kube_pb2.Unknown(typeMeta=kube_pb2.TypeMeta(apiVersion="resource.k8s.io/v1", kind="DeviceTaintRule"),
                                raw=rule)
    reply = http.request("POST", TAINT_RULES, b"k8s\x00" + envelope.SerializeToString(), PROTOBUF)
    assert reply.status == 415 and "field 1 of DeviceTaintRule.spec.deviceSelector" in reply.json()["message"]
    assert http.request("GET", f"{TAINT_RULES}/r").status == 404


def test_a_protobuf_field_serve_does_not_read_is_a_415_naming_it_and_the_connection_goes_on(http: Http) -> None:
    spec = kube_pb2.PodSpec()
    spec.containers.add(name="ctr", image="app")
    raw = kube_pb2.Pod(metadata=kube_pb2.ObjectMeta(name="p"), spec=spec).SerializeToString()
    raw += b"\x12\x03\x90\x03\x01"  # spec (2) again, holding a field 50 of PodSpec, newer than kube.proto
    envelope = kube_pb2.Unknown(typeMeta=kube_pb2.TypeMeta(apiVersion="v1", kind="Pod"), raw=raw)
    reply = http.request("POST", PODS, b"k8s\x00" + envelope.SerializeToString(), PROTOBUF)
    assert reply.status == 415 and reply.json()["reason"] == "UnsupportedMediaType"
    assert "field 50 of Pod.spec" in reply.json()["message"]
    assert http.request("POST", SLICES, b"not protobuf", PROTOBUF).status == 400
    assert http.request("GET", "/version").status == 200


def test_an_answer_with_a_field_protobuf_would_drop_goes_as_json(http: Http) -> None:
    pod = _pod("dns")
    # a 1.37 field (lightkube-models 1.37 has it) newer than the 1.36 line kube.proto follows: JSON stores it,
    # kube.proto cannot carry it
    pod["spec"]["schedulingGroup"] = {"podGroupName": "training"}
    assert http.request("POST", PODS, pod).status == 201
    reply = http.request("GET", f"{PODS}/dns", headers=ACCEPT)
    assert reply.headers["Content-Type"].startswith("application/json")
    assert reply.json()["spec"]["schedulingGroup"] == {"podGroupName": "training"}
    assert http.request("GET", "/api/v1/namespaces/default/pods/missing", headers=ACCEPT).json()["kind"] == "Status"
    assert http.request("GET", "/version").status == 200


WATCH_LIST = "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"
WATCH_ACCEPT = {"Accept": "application/vnd.kubernetes.protobuf;stream=watch, application/json"}


def _watch_events(reply: Reply) -> list[tuple[str, Obj]]:
    """A protobuf watch stream as client-go reads it: frames of a 4-byte big-endian length and a bare WatchEvent,
    whose object is an enveloped object (an ERROR's a Status), read in the message of the version it names."""
    assert reply.headers["Content-Type"] == "application/vnd.kubernetes.protobuf;stream=watch"
    events, body = [], reply.body
    while body:
        length = int.from_bytes(body[:4], "big")
        event = kube_pb2.WatchEvent.FromString(body[4:4 + length])
        body = body[4 + length:]
        assert event.object.raw.startswith(b"k8s\x00")
        envelope = kube_pb2.Unknown.FromString(event.object.raw[4:])
        kind, version = envelope.typeMeta.kind, envelope.typeMeta.apiVersion
        found = kube_pb2.Status if kind == "Status" else message_type(kind, version)
        assert found is not None, f"no message for {kind} {version}"
        events.append((event.type, {"apiVersion": version, "kind": kind, **to_json(found.FromString(envelope.raw))}))
    return events


def test_an_informer_lists_with_watch_list_in_protobuf_and_syncs_on_the_bookmark(http: Http) -> None:
    stored = _create_in_protobuf(http, SLICES, _slice("a"), kube_pb2.ResourceSlice)
    reply = http.request("GET", f"{SLICES}?{WATCH_LIST}&timeoutSeconds=1", headers=WATCH_ACCEPT)
    events = _watch_events(reply)
    assert [kind for kind, _ in events] == ["ADDED", "BOOKMARK"]
    assert events[0][1] == stored
    bookmark = events[1][1]
    assert bookmark["kind"] == "ResourceSlice" and bookmark["apiVersion"] == "resource.k8s.io/v1"
    assert bookmark["metadata"] == {"resourceVersion": stored["metadata"]["resourceVersion"],
                                    "annotations": {"k8s.io/initial-events-end": "true"}}


def test_a_protobuf_watch_carries_changes_and_a_json_watch_stays_json(http: Http) -> None:
    created = _create_in_protobuf(http, PODS, _workload_pod("web-1"), kube_pb2.Pod)
    rv = created["metadata"]["resourceVersion"]
    changed = {**created, "metadata": {**created["metadata"], "labels": {"app": "web", "tier": "front"}}}
    updated = _read(http.request("PUT", f"{PODS}/web-1", encode(changed, kube_pb2.Pod), PROTOBUF, ACCEPT))
    assert http.request("DELETE", f"{PODS}/web-1").status == 200
    path = f"{PODS}?watch=1&resourceVersion={rv}&timeoutSeconds=1"
    events = _watch_events(http.request("GET", path, headers={"Accept": "application/vnd.kubernetes.protobuf"}))
    assert [kind for kind, _ in events] == ["MODIFIED", "DELETED"]
    assert events[0][1] == updated and events[1][1]["spec"] == created["spec"]
    plain = http.request("GET", path, headers={"Accept": "application/json, application/vnd.kubernetes.protobuf"})
    assert plain.headers["Content-Type"] == "application/json"
    assert [json.loads(line)["type"] for line in plain.body.splitlines()] == ["MODIFIED", "DELETED"]


def test_a_protobuf_watch_sends_a_bookmark_past_changes_it_does_not_carry(http: Http) -> None:
    rv = http.request("GET", PODS).json()["metadata"]["resourceVersion"]
    assert http.request("POST", PODS, _pod("web-1")).status == 201
    other = {**_pod("db-1"), "metadata": {"name": "db-1", "labels": {"app": "db"}}}
    last = http.request("POST", PODS, other).json()["metadata"]["resourceVersion"]
    events = _watch_events(http.request("GET", f"{PODS}?watch=true&resourceVersion={rv}&labelSelector=app%3Dweb"
                                               "&allowWatchBookmarks=true&timeoutSeconds=1", headers=WATCH_ACCEPT))
    assert [(kind, obj["metadata"]["name"] if kind == "ADDED" else obj["metadata"]) for kind, obj in events] == [
        ("ADDED", "web-1"), ("BOOKMARK", {"resourceVersion": last})]


def test_a_protobuf_watch_ends_with_an_error_event_at_an_object_protobuf_cannot_carry(http: Http) -> None:
    assert http.request("POST", PODS, _pod("web-1")).status == 201
    odd = _pod("web-2")
    odd["spec"]["schedulingGroup"] = {"podGroupName": "training"}  # stored from JSON (1.37); not in kube.proto
    assert http.request("POST", PODS, odd).status == 201
    events = _watch_events(http.request("GET", f"{PODS}?{WATCH_LIST}&timeoutSeconds=30", headers=WATCH_ACCEPT))
    assert [kind for kind, _ in events] == ["ADDED", "ERROR"]  # at once: the stream ends with the error
    status = events[1][1]
    assert status["kind"] == "Status" and status["code"] == 500 and "'web-2'" in status["message"]


def test_a_client_that_prefers_json_gets_json_and_one_that_names_protobuf_first_gets_protobuf(http: Http) -> None:
    assert http.request("POST", PODS, _pod("web")).status == 201
    for accept, media in (("application/json, application/vnd.kubernetes.protobuf", "application/json"),
                          ("*/*", "application/json"), ("", "application/json"),
                          ("application/vnd.kubernetes.protobuf, */*", PROTOBUF),
                          ("application/vnd.kubernetes.protobuf", PROTOBUF)):
        reply = http.request("GET", f"{PODS}/web", headers={"Accept": accept} if accept else None)
        assert reply.headers["Content-Type"].startswith(media), accept
        assert _read(reply)["spec"] == _pod("web")["spec"]
