"""What a new user's first session with serve found, with manifests like the public DRA demos (a namespace, a
claim template whose request leaves its count and mode to the defaults, pods using it) and each kubectl: a write
that changes nothing stores nothing (kubectl diff is empty, patch says "no change"), as kube-apiserver's storage
skips it; a replaced Namespace stays Active."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from draconform.live.kube import KubeClient, load_config
from draconform.serve.remote import RemoteEventRecorder, WallClock
from tests.serve.conftest import Http
from tests.serve.test_kubectl import Kubectl, kubectl  # noqa: F401 (the fixture, parametrized by kubectl binary)

TEMPLATES = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates"
# A template as a demo writes it: the request names a class and leaves allocationMode and count to the defaults.
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-accel", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "accel",
                                                         "exactly": {"deviceClassName": "accel.example"}}]}}}}
DEMO = """\
apiVersion: v1
kind: Namespace
metadata: {name: trial}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-accel, namespace: trial}
spec:
  spec:
    devices:
      requests:
      - name: accel
        exactly: {deviceClassName: accel.example}
---
apiVersion: v1
kind: Pod
metadata: {name: worker, namespace: trial, labels: {app: trial}}
spec:
  containers:
  - name: main
    image: registry.example/main:1
    resources:
      claims: [{name: accel}]
  resourceClaims:
  - name: accel
    resourceClaimTemplateName: one-accel
"""


def test_a_write_that_changes_nothing_keeps_the_resource_version_and_sends_no_event(http: Http) -> None:
    created = http.request("POST", TEMPLATES, TEMPLATE).json()
    version = created["metadata"]["resourceVersion"]
    again = http.request("PUT", f"{TEMPLATES}/one-accel", TEMPLATE)  # the defaults left out once more
    assert again.status == 200
    assert again.json()["metadata"]["resourceVersion"] == version
    assert again.json()["metadata"]["generation"] == 1  # the spec is the same once defaulted
    patched = http.request("PATCH", f"{TEMPLATES}/one-accel", {"metadata": {"labels": None}},
                           content_type="application/merge-patch+json")
    assert patched.json()["metadata"]["resourceVersion"] == version
    watched = http.request("GET", f"{TEMPLATES}?watch=1&resourceVersion={version}&timeoutSeconds=1")
    assert [json.loads(line)["type"] for line in watched.body.splitlines() if line.strip()] == []
    changed = http.request("PATCH", f"{TEMPLATES}/one-accel", {"metadata": {"labels": {"a": "b"}}},
                           content_type="application/merge-patch+json").json()
    assert int(changed["metadata"]["resourceVersion"]) > int(version) and changed["metadata"]["generation"] == 1


def test_kubectl_sees_no_difference_after_applying_the_same_file(kubectl: Kubectl,  # noqa: F811
                                                                 tmp_path: Path) -> None:
    manifest = tmp_path / "demo.yaml"
    manifest.write_text(DEMO)
    kubectl.run("apply", "-f", str(manifest))
    kubectl.run("apply", "-f", str(manifest))
    diff = kubectl.run("diff", "-f", str(manifest), check=False)
    assert (diff.returncode, diff.stdout) == (0, ""), diff.stdout + diff.stderr
    version = kubectl.run("get", "pod", "worker", "-n", "trial", "-o", "jsonpath={.metadata.resourceVersion}").stdout
    patched = kubectl.run("patch", "pod", "worker", "-n", "trial", "-p", '{"metadata":{"labels":{"app":"trial"}}}')
    assert "patched (no change)" in patched.stdout
    assert kubectl.run("get", "pod", "worker", "-n", "trial", "-o",
                       "jsonpath={.metadata.resourceVersion}").stdout == version


def test_replacing_a_namespace_keeps_its_phase_finalizers_and_name_label(http: Http) -> None:
    http.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "trial"}})
    # `kubectl replace -f` of the file that created it: no status, no finalizers, no labels
    replaced = http.request("PUT", "/api/v1/namespaces/trial", {"apiVersion": "v1", "kind": "Namespace",
                                                                "metadata": {"name": "trial"}})
    assert replaced.status == 200
    stored = http.request("GET", "/api/v1/namespaces/trial").json()
    assert stored["status"] == {"phase": "Active"}
    assert stored["spec"] == {"finalizers": ["kubernetes"]}
    assert stored["metadata"]["labels"] == {"kubernetes.io/metadata.name": "trial"}


def test_kubectl_replace_of_a_namespace_leaves_it_active(kubectl: Kubectl, tmp_path: Path) -> None:  # noqa: F811
    manifest = tmp_path / "ns.yaml"
    manifest.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: trial, labels: {team: a}}\n")
    kubectl.run("create", "-f", str(manifest))
    kubectl.run("replace", "-f", str(manifest))
    table = kubectl.run("get", "namespace", "trial", "--show-labels").stdout.splitlines()
    assert table[1].split()[:2] == ["trial", "Active"]
    assert "team=a" in table[1] and "kubernetes.io/metadata.name=trial" in table[1]


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker"},
       "spec": {"containers": [{"name": "main", "image": "registry.example/main:1"}]}}


@pytest.mark.parametrize("sub", ["log", "exec", "attach", "portforward"])
def test_a_pods_container_subresources_say_why_they_cannot_answer(http: Http, sub: str) -> None:
    http.request("POST", "/api/v1/namespaces/default/pods", POD)
    reply = http.request("GET", f"/api/v1/namespaces/default/pods/worker/{sub}")
    assert reply.status == 400 and "runs none" in reply.json()["message"]
    missing = http.request("GET", f"/api/v1/namespaces/default/pods/nobody/{sub}")
    assert missing.status == 404 and missing.json()["details"]["name"] == "nobody"


def test_a_path_not_served_is_a_404_with_details(http: Http) -> None:
    reply = http.request("PATCH", "/api/v1/namespaces/default/pods/worker/ephemeralcontainers", {},
                         content_type="application/strategic-merge-patch+json")
    assert reply.status == 404 and reply.json()["details"] == {}


def test_kubectl_logs_exec_debug_and_whoami_answer_clearly(kubectl: Kubectl, tmp_path: Path) -> None:  # noqa: F811
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(json.dumps(POD))
    kubectl.run("create", "-f", str(manifest))
    for args in (["logs", "worker"], ["exec", "worker", "--", "true"]):
        done = kubectl.run(*args, check=False)
        assert done.returncode == 1 and "runs none" in done.stderr, done.stderr
    debug = kubectl.run("debug", "worker", "--image=busybox", check=False)
    assert debug.returncode == 1 and "ephemeral containers are disabled" in debug.stderr, debug.stderr
    minor = json.loads(kubectl.run("version", "--client", "-o", "json").stdout)["clientVersion"]["minor"]
    version = int(minor.rstrip("+"))  # the machine image's kubectl says "32+"
    whoami = kubectl.run("auth", "whoami", check=False)
    if version >= 28:  # 1.27 asks only for the alpha and beta versions, which 1.37 does not serve either
        assert whoami.returncode == 0 and "system:anonymous" in whoami.stdout, whoami.stderr


def test_a_new_pod_gets_the_spec_defaults_upstream_decodes_it_with(http: Http) -> None:
    pod = {**POD, "spec": {"containers": [{"name": "main", "image": "registry.example:5000/main",
                                           "ports": [{"containerPort": 80}]},
                                          {"name": "side", "image": "registry.example/side:2"}]}}
    spec = http.request("POST", "/api/v1/namespaces/default/pods", pod).json()["spec"]
    assert {k: spec[k] for k in ("restartPolicy", "dnsPolicy", "securityContext", "terminationGracePeriodSeconds",
                                 "schedulerName", "enableServiceLinks")} == {
        "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "securityContext": {},
        "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler", "enableServiceLinks": True}
    main, side = spec["containers"]
    assert (main["imagePullPolicy"], side["imagePullPolicy"]) == ("Always", "IfNotPresent")  # no tag: latest
    assert main["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert side["terminationMessagePath"] == "/dev/termination-log" and side["terminationMessagePolicy"] == "File"
    # the manifest written again without the defaults is the same pod: not a forbidden spec change
    assert http.request("PUT", "/api/v1/namespaces/default/pods/worker", pod).status == 200


def test_a_node_created_through_the_api_is_registered_as_its_kubelet_would(http: Http) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-2"}}  # as a user writes a second node
    status = http.request("POST", "/api/v1/nodes", node).json()["status"]
    assert status["allocatable"]["pods"] == status["capacity"]["pods"] == "110"
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [("Ready", "True", "KubeletReady")]
    written = {**node, "metadata": {"name": "worker-3"},
               "status": {"allocatable": {"pods": "4"}, "conditions": [{"type": "Ready", "status": "False"}]}}
    kept = http.request("POST", "/api/v1/nodes", written).json()["status"]
    assert kept["allocatable"]["pods"] == "4" and kept["conditions"] == [{"type": "Ready", "status": "False"}]


def test_kubectl_shows_a_new_node_ready(kubectl: Kubectl, tmp_path: Path) -> None:  # noqa: F811
    manifest = tmp_path / "node.yaml"
    manifest.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: worker-2}\n")
    kubectl.run("apply", "-f", str(manifest))
    assert kubectl.run("get", "nodes").stdout.splitlines()[1].split()[:2] == ["worker-2", "Ready"]


def test_openapi_types_timestamps_as_strings(http: Http) -> None:
    definitions = http.request("GET", "/openapi/v2").json()["definitions"]
    meta = definitions["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
    assert meta["creationTimestamp"]["type"] == "string" and meta["creationTimestamp"]["format"] == "date-time"
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.Time" not in definitions  # never an object
    device = definitions["io.k8s.api.resource.v1.Device"]["properties"]
    for field, kind in (("attributes", "DeviceAttribute"), ("capacity", "DeviceCapacity")):
        assert device[field]["additionalProperties"] == {"$ref": f"#/definitions/io.k8s.api.resource.v1.{kind}"}


def test_kubectl_replaces_a_list_it_saved(kubectl: Kubectl, tmp_path: Path) -> None:  # noqa: F811
    manifest = tmp_path / "demo.yaml"
    manifest.write_text(DEMO)
    kubectl.run("apply", "-f", str(manifest))
    saved = tmp_path / "saved.yaml"
    # a kind: List, which kubectl checks against /openapi/v2 itself (no server-side field validation for List)
    saved.write_text(kubectl.run("get", "resourceclaimtemplates,pods", "-n", "trial", "-o", "yaml").stdout)
    replaced = kubectl.run("replace", "-f", str(saved)).stdout
    assert "resourceclaimtemplate.resource.k8s.io/one-accel replaced" in replaced and "pod/worker replaced" in replaced
    slices = tmp_path / "slices.yaml"
    slices.write_text(SLICE)
    kubectl.run("apply", "-f", str(slices))
    saved.write_text(kubectl.run("get", "resourceslices", "-o", "yaml").stdout)
    assert "resourceslice.resource.k8s.io/node-a-accel replaced" in kubectl.run("replace", "-f", str(saved)).stdout
    assert "<map[string]DeviceAttribute>" in kubectl.run("explain", "resourceslice.spec.devices.attributes").stdout


# A slice as an example driver publishes it: typed attributes and a capacity.
SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-a-accel}
spec:
  driver: accel.example
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices:
  - name: accel-0
    attributes:
      index: {int: 0}
      model: {string: model-x}
      firmware: {version: 2.1.0}
    capacity:
      memory: {value: 40Gi}
"""


def test_discovery_lists_deletecollection_where_it_is_served(http: Http) -> None:
    verbs = {r["name"]: r["verbs"] for r in http.request("GET", "/api/v1").json()["resources"] if "/" not in r["name"]}
    assert "deletecollection" in verbs["pods"] and "deletecollection" in verbs["configmaps"]
    assert "deletecollection" not in verbs["namespaces"]
    slices = http.request("GET", "/apis/resource.k8s.io/v1").json()["resources"]
    assert all("deletecollection" in r["verbs"] for r in slices if "/" not in r["name"])
    assert http.request("DELETE", "/api/v1/namespaces").status == 405
    assert http.request("GET", "/api/v1/namespaces/default").status == 200


def test_a_repeated_event_raises_the_count_of_the_first(kubeconfig_file: Path, http: Http) -> None:
    """As client-go's correlator: the kubelet retrying a prepare every second writes one Event counting them."""
    client = KubeClient(load_config(kubeconfig_file))
    try:
        pod = client.create(POD)
        recorder = RemoteEventRecorder(client, WallClock(), "kubelet")
        for _ in range(3):
            recorder.record(pod, "Warning", "FailedPrepareDynamicResources", "driver not registered (will retry)")
        recorder.record(pod, "Normal", "Started", "started")
        events = http.request("GET", "/api/v1/namespaces/default/events").json()["items"]
        assert sorted((e["reason"], e["count"]) for e in events) == [("FailedPrepareDynamicResources", 3),
                                                                     ("Started", 1)]
        http.request("DELETE", "/api/v1/namespaces/default/events/" + events[0]["metadata"]["name"])
        http.request("DELETE", "/api/v1/namespaces/default/events/" + events[1]["metadata"]["name"])
        recorder.record(pod, "Normal", "Started", "started")  # its Event is gone: written again
        assert [e["count"] for e in http.request("GET", "/api/v1/namespaces/default/events").json()["items"]] == [1]
    finally:
        client.close()
