"""Reads and writes through `draconform serve` that no test made (found by `.ci/unit-mutation serve`:
docs/suite-power.md, "Unit-test power"): a pod bound through its binding subresource, the rules review
`kubectl auth can-i --list` reads, the ROLES column of `kubectl get nodes`, an Event about a cluster-scoped
object."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from draconform.live.kube import KubeClient, load_config
from draconform.serve.remote import RemoteEventRecorder, WallClock
from draconform.serve.server import ApiServer
from draconform.serve.tables import human_duration
from tests.serve.conftest import Http

PODS = "/api/v1/namespaces/default/pods"
NODES = "/api/v1/nodes"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def _pod(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}


def _node(name: str, labels: dict[str, str]) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def test_a_binding_sets_the_pods_node_and_one_without_a_target_is_refused(http: Http) -> None:
    """kube-scheduler binds through `pods/NAME/binding`: the pod then names the node; a Binding without
    target.name is Invalid (422), naming the field, and binds nothing."""
    assert http.request("POST", NODES, _node("worker-1", {})).status == 201
    assert http.request("POST", PODS, _pod("p")).status == 201
    refused = http.request("POST", f"{PODS}/p/binding", {"apiVersion": "v1", "kind": "Binding",
                                                         "metadata": {"name": "p"}, "target": {}})
    assert refused.status == 422
    assert refused.json()["reason"] == "Invalid"
    assert refused.json()["message"].endswith(" is invalid: target.name: Required value")
    assert refused.json()["details"]["causes"][0]["field"] == "target.name"
    assert not http.request("GET", f"{PODS}/p").json()["spec"].get("nodeName")
    bound = http.request("POST", f"{PODS}/p/binding", {"apiVersion": "v1", "kind": "Binding",
                                                       "metadata": {"name": "p"},
                                                       "target": {"kind": "Node", "name": "worker-1"}})
    assert (bound.status, bound.json()["status"]) == (201, "Success")
    assert http.request("GET", f"{PODS}/p").json()["spec"]["nodeName"] == "worker-1"


def test_access_and_rules_reviews_answer_everything_allowed(http: Http) -> None:
    """`kubectl auth can-i VERB RESOURCE` posts an access review, `kubectl auth can-i --list` a rules review:
    each is answered in its own kind, the first allowed, the second with rules allowing every verb."""
    access = http.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                          {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                           "spec": {"resourceAttributes": {"verb": "create", "resource": "pods"}}})
    assert (access.json()["kind"], access.json()["status"]["allowed"]) == ("SelfSubjectAccessReview", True)
    rules = http.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                         {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
                          "spec": {"namespace": "default"}})
    assert rules.json()["kind"] == "SelfSubjectRulesReview"
    assert rules.json()["status"]["resourceRules"] == [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]


def test_the_nodes_table_shows_roles_from_labels_or_none(http: Http) -> None:
    """`kubectl get nodes` prints ROLES from the node-role.kubernetes.io/ labels, `<none>` without any."""
    http.request("POST", NODES, _node("a", {"node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/gpu": ""}))
    http.request("POST", NODES, _node("b", {"kubernetes.io/hostname": "b"}))
    table = http.request("GET", NODES, headers=TABLE).json()
    roles = [c["name"] for c in table["columnDefinitions"]].index("Roles")
    assert {row["cells"][0]: row["cells"][roles] for row in table["rows"]} == {"a": "gpu,worker", "b": "<none>"}


def test_an_event_about_a_node_is_written_in_the_default_namespace(kubeconfig_file: Path, http: Http) -> None:
    """A cluster-scoped object has no namespace; its Events go to `default`, as client-go's recorder puts them."""
    client = KubeClient(load_config(kubeconfig_file))
    try:
        node = client.create(_node("worker-1", {}))
        RemoteEventRecorder(client, WallClock(), "kubelet").record(node, "Normal", "NodeReady", "ready")
    finally:
        client.close()
    (event,) = http.request("GET", "/api/v1/namespaces/default/events").json()["items"]
    assert (event["reason"], event["involvedObject"]["kind"], event["involvedObject"]["name"]) == \
        ("NodeReady", "Node", "worker-1")


def test_the_openapi_v3_document_describes_bodies_and_query_parameters(http: Http) -> None:
    """What client generators and `kubectl` read of /openapi/v3: a replace (PUT) takes the object as its body,
    and every parameter of an operation is a string in the query."""
    index = http.request("GET", "/openapi/v3").json()["paths"]
    document = http.request("GET", index["apis/resource.k8s.io/v1"]["serverRelativeURL"]).json()
    item = document["paths"]["/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}"]
    assert item["put"]["requestBody"]["content"]["application/json"]["schema"] == \
        {"$ref": "#/components/schemas/io.k8s.api.resource.v1.ResourceClaim"}
    parameters = [p for operations in document["paths"].values() for op in operations.values()
                  for p in op.get("parameters", [])]
    assert parameters and all(p["in"] == "query" and p["schema"] == {"type": "string"} for p in parameters)


def test_the_pods_table_shows_the_phase_or_pending(http: Http) -> None:
    """`kubectl get pods` STATUS: a waiting container's reason, else the phase; a pod without one is Pending."""
    http.request("POST", PODS, _pod("new"))
    running = _pod("running")
    assert http.request("POST", PODS, running).status == 201
    stored = http.request("GET", f"{PODS}/running").json()
    stored["status"] = {"phase": "Running"}
    assert http.request("PUT", f"{PODS}/running/status", stored).status == 200
    table = http.request("GET", PODS, headers=TABLE).json()
    status = [c["name"] for c in table["columnDefinitions"]].index("Status")
    assert {row["cells"][0]: row["cells"][status] for row in table["rows"]} == {"new": "Pending",
                                                                               "running": "Running"}


@pytest.mark.parametrize(("ago", "shown"), [
    (timedelta(minutes=30, seconds=20), "30m"), (timedelta(hours=2, seconds=20), "120m"),
    (timedelta(hours=3, minutes=30, seconds=20), "3h30m"), (timedelta(hours=10, minutes=5), "10h"),
    (timedelta(days=3, hours=5, minutes=5), "3d5h"), (timedelta(days=8, hours=1, minutes=30), "8d"),
    (timedelta(days=400), "400d")])
def test_ages_are_shown_as_kubectl_shows_them(ago: timedelta, shown: str) -> None:
    """Go's HumanDuration, as the AGE column (a margin of whole minutes: the test takes well under one)."""
    stamp = (datetime.now(UTC) - ago).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert human_duration(stamp) == shown


def test_delete_from_primitive_list_removes_only_the_values_named() -> None:
    """`kubectl patch --type strategic` removing one finalizer keeps the others."""
    from draconform.serve.patches import strategic_merge_patch

    pod = {**_pod("p"), "metadata": {"name": "p", "finalizers": ["a", "c"]}}
    patched = strategic_merge_patch("Pod", pod, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}})
    assert patched["metadata"]["finalizers"] == ["c"]


def test_a_table_carries_each_rows_object_as_include_object_asks(http: Http) -> None:
    """Table rows carry the object's metadata by default, the whole object with includeObject=Object (what
    `kubectl get -o wide --show-labels` and watches read), nothing with None."""
    http.request("POST", PODS, _pod("p"))
    def row_object(query: str) -> object:
        return http.request("GET", PODS + query, headers=TABLE).json()["rows"][0].get("object")
    assert row_object("")["kind"] == "PartialObjectMetadata"  # type: ignore[index]
    assert row_object("?includeObject=Object")["spec"]["containers"][0]["name"] == "c"  # type: ignore[index]
    assert row_object("?includeObject=None") is None


def test_apply_conflicts_on_a_containers_field_another_manager_changed() -> None:
    """Server-side apply compares the fields of list items by merge key (`k:{"name":"app"}`): a container image
    another manager set conflicts unless applied with the same value."""
    from draconform.serve.apply import apply, record_update
    from draconform.serve.resources import RESOURCES
    from draconform.sut import ApiError

    pods = RESOURCES["Pod"]
    config = _pod("p")
    created = apply(pods, None, config, "tool", force=False)
    created["metadata"].update(uid="u1", resourceVersion="1")
    edited = {**created, "spec": {"containers": [{"name": "c", "image": "other"}]}}
    record_update(edited, created, "editor", pods)
    with pytest.raises(ApiError) as conflict:
        apply(pods, edited, config, "tool", force=False)
    assert conflict.value.reason == "Conflict" and 'conflict with "editor"' in conflict.value.message
    same = apply(pods, edited, {**config, "spec": {"containers": [{"name": "c", "image": "other"}]}}, "tool",
                 force=False)
    assert same["spec"]["containers"][0]["image"] == "other"


def test_an_applied_resource_version_is_a_precondition(http: Http) -> None:
    """A resourceVersion in an apply's configuration is a precondition, as kube-apiserver's storage treats the
    one the applied object carries: another than the stored one is 409 Conflict and changes nothing; the stored
    one, or none, applies. An apply that creates the object ignores it (storage replaces it on create). One that
    is no string is refused, as kube-apiserver cannot decode it, whether the apply creates the object or not."""
    apply = "application/apply-patch+yaml"
    path = f"{PODS}/p?fieldManager=tool"
    created = http.request("PATCH", path, {**_pod("p"), "metadata": {"name": "p", "resourceVersion": "999"}},
                           content_type=apply)
    assert created.status == 201, created.json()
    version = created.json()["metadata"]["resourceVersion"]
    assert version != "999"
    labelled = {**_pod("p"), "metadata": {"name": "p", "labels": {"a": "b"}, "resourceVersion": "999"}}
    stale = http.request("PATCH", path, labelled, content_type=apply)
    assert (stale.status, stale.json()["reason"]) == (409, "Conflict")
    assert stale.json()["message"] == ('Operation cannot be fulfilled on pods "p": the object has been modified; '
                                       'please apply your changes to the latest version and try again')
    unchanged = http.request("GET", f"{PODS}/p").json()["metadata"]
    assert (unchanged["resourceVersion"], unchanged.get("labels")) == (version, None)
    current = http.request("PATCH", path, {**labelled, "metadata": {**labelled["metadata"],  # type: ignore[dict-item]
                                                                    "resourceVersion": version}},
                           content_type=apply)
    assert (current.status, current.json()["metadata"]["labels"]) == (200, {"a": "b"})
    without = http.request("PATCH", path, {**_pod("p"), "metadata": {"name": "p", "labels": {"a": "c"}}},
                           content_type=apply)
    assert (without.status, without.json()["metadata"]["labels"]) == (200, {"a": "c"})
    numeric = {**_pod("q"), "metadata": {"name": "q", "resourceVersion": 5}}  # not a string: never decoded
    refused = http.request("PATCH", f"{PODS}/q?fieldManager=tool", numeric, content_type=apply)
    assert refused.status == 400 and "resourceVersion" in refused.json()["message"]
    numeric["metadata"] = {"name": "p", "resourceVersion": 5}  # type: ignore[index]
    refused = http.request("PATCH", path, numeric, content_type=apply)
    assert refused.status == 400 and "resourceVersion" in refused.json()["message"]


def test_a_served_component_binds_a_pod_through_the_remote_store(kubeconfig_file: Path, http: Http) -> None:
    """kube-scheduler, as `draconform serve` runs it, binds through RemoteStore: the pod it gets back, and the
    one the API serves, name the node."""
    from draconform.serve.remote import RemoteStore

    http.request("POST", NODES, _node("worker-1", {}))
    http.request("POST", PODS, _pod("p"))
    client = KubeClient(load_config(kubeconfig_file))
    try:
        bound = RemoteStore(client).bind("default", "p", "worker-1")
    finally:
        client.close()
    assert bound["spec"]["nodeName"] == "worker-1"
    assert http.request("GET", f"{PODS}/p").json()["spec"]["nodeName"] == "worker-1"


def test_an_event_about_a_pod_is_written_in_the_pods_namespace(kubeconfig_file: Path, http: Http) -> None:
    """`kubectl describe pod -n team-a` lists the pod's Events: they are written in the pod's namespace."""
    http.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": "team-a"}})
    client = KubeClient(load_config(kubeconfig_file))
    try:
        pod = client.create({**_pod("p"), "metadata": {"name": "p", "namespace": "team-a"}})
        RemoteEventRecorder(client, WallClock(), "kubelet").record(pod, "Normal", "Started", "started")
    finally:
        client.close()
    (event,) = http.request("GET", "/api/v1/namespaces/team-a/events").json()["items"]
    assert (event["reason"], event["involvedObject"]["namespace"]) == ("Started", "team-a")
    assert http.request("GET", "/api/v1/namespaces/default/events").json()["items"] == []


CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def _configmap(name: str, labels: dict[str, str] | None = None,
               data: dict[str, str] | None = None) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels or {}},
            "data": data or {}}


def test_label_selectors_for_a_key_present_and_a_key_absent(http: Http) -> None:
    """`kubectl get -l tier` and `-l '!tier'`."""
    http.request("POST", CONFIGMAPS, _configmap("with", {"tier": "x"}))
    http.request("POST", CONFIGMAPS, _configmap("without"))
    def names(selector: str) -> list[str]:
        return [i["metadata"]["name"] for i in http.request("GET", f"{CONFIGMAPS}?labelSelector={selector}")
                .json()["items"]]
    assert (names("tier"), names("%21tier")) == (["with"], ["without"])


def test_zero_is_a_valid_limit_and_grace_period(http: Http) -> None:
    """`limit=0` lists everything (no limit) and `gracePeriodSeconds=0` deletes at once; a negative one is a Bad
    Request naming the parameter."""
    http.request("POST", CONFIGMAPS, _configmap("a"))
    assert len(http.request("GET", f"{CONFIGMAPS}?limit=0").json()["items"]) == 1
    refused = http.request("GET", f"{CONFIGMAPS}?limit=-1")
    assert (refused.status, refused.json()["message"]) == (400, "limit: Invalid value: -1: must be greater than or "
                                                                "equal to 0")
    assert http.request("DELETE", f"{CONFIGMAPS}/a?gracePeriodSeconds=0").status == 200


def test_a_configmap_holds_at_most_one_mebibyte(http: Http) -> None:
    """Keys and values together: exactly 1 MiB is stored, one byte more is Invalid with the limit named."""
    assert http.request("POST", CONFIGMAPS, _configmap("full", data={"k": "x" * (1024 * 1024 - 1)})).status == 201
    refused = http.request("POST", CONFIGMAPS, _configmap("over", data={"k": "x" * (1024 * 1024)}))
    assert refused.status == 422
    assert refused.json()["details"]["causes"] == [{"reason": "FieldValueTooLong", "field": "data",
                                                    "message": "Too long: must have at most 1048576 bytes"}]


def test_labels_that_are_not_a_map_are_refused_as_go_decodes_them(http: Http) -> None:
    refused = http.request("POST", CONFIGMAPS, {**_configmap("x"), "metadata": {"name": "x", "labels": ["a"]}})
    assert refused.status == 400
    assert "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type " \
           "map[string]string" in refused.json()["message"]


def test_a_delete_whose_body_is_not_delete_options_is_a_bad_request(http: Http) -> None:
    http.request("POST", CONFIGMAPS, _configmap("a"))
    refused = http.request("DELETE", f"{CONFIGMAPS}/a", body=b"[1, 2]")
    assert (refused.status, refused.json()["message"]) == (400, "the body of a delete must be DeleteOptions")


def test_nothing_new_is_created_in_a_namespace_being_deleted(http: Http) -> None:
    """A deleted namespace stays Terminating while its finalizer is there (no namespace controller runs here);
    a create in it is Forbidden, as kube-apiserver says it."""
    http.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}})
    assert http.request("DELETE", "/api/v1/namespaces/gone").status == 200
    refused = http.request("POST", "/api/v1/namespaces/gone/configmaps", _configmap("a"))
    assert (refused.status, refused.json()["reason"]) == (403, "Forbidden")
    assert refused.json()["message"] == ("unable to create new content in namespace gone because it is being "
                                         "terminated")


def test_a_watch_with_resource_version_match_needs_send_initial_events(http: Http) -> None:
    refused = http.request("GET", f"{CONFIGMAPS}?watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=1")
    assert (refused.status, refused.json()["reason"]) == (422, "Invalid")
    assert "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided" in \
        refused.json()["message"]


def test_a_stored_object_is_encoded_once_for_every_list_and_watch_that_sends_it(server: ApiServer,
                                                                                 http: Http) -> None:
    """serve encodes a stored object to JSON once and reuses the bytes while the object is kept (the store
    replaces objects on writes, never changes one in place): a second list and a watch event of the same objects
    encode nothing more. A bookmark or an error, made for one event, is encoded apart and not kept."""
    for name in ("a", "b"):
        http.request("POST", PODS, _pod(name))
    first = http.request("GET", PODS)
    assert server.work["encoded"] == 2
    again = http.request("GET", PODS)
    assert server.work["encoded"] == 2 and again.body == first.body
    stored = server.store.peek("Pod", "a", "default")
    assert stored is not None
    event = server._event("MODIFIED", stored)
    assert server.work["encoded"] == 2
    assert event == b'{"type":"MODIFIED","object":' + json.dumps(stored, separators=(",", ":")).encode() + b"}\n"
    bookmark = {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "9"}}
    assert json.loads(server._event("BOOKMARK", bookmark)) == {"type": "BOOKMARK", "object": bookmark}
    assert server.work["encoded"] == 2


def test_an_apply_carrying_managed_fields_is_refused(http: Http) -> None:
    """Field ownership is the server's to record: an applied configuration with metadata.managedFields (even an
    empty list) is a bad request, as structured-merge-diff's apply says; null is no value."""
    apply = "application/apply-patch+yaml"
    path = f"{PODS}/p?fieldManager=tool"
    for owned in ([], [{"manager": "tool", "operation": "Apply"}]):
        refused = http.request("PATCH", path, {**_pod("p"), "metadata": {"name": "p", "managedFields": owned}},
                               content_type=apply)
        assert (refused.status, refused.json()["message"]) == (400, "metadata.managedFields must be nil")
    assert http.request("GET", f"{PODS}/p").status == 404
    created = http.request("PATCH", path, {**_pod("p"), "metadata": {"name": "p", "managedFields": None}},
                           content_type=apply)
    assert created.status == 201
    assert [e["manager"] for e in created.json()["metadata"]["managedFields"]] == ["tool"]


def _cell(kind: str, obj: Any, column: str) -> object:
    from draconform.serve.tables import table

    made = table(kind, [obj], {})
    index = [c["name"] for c in made["columnDefinitions"]].index(column)
    return made["rows"][0]["cells"][index]


def test_status_columns_in_kubectls_words() -> None:
    """The STATUS of `kubectl get nodes` and `kubectl get pods` and the STATE of ResourceClaims, as upstream's
    printers word them: a node not ready or cordoned, a pod terminating, evicted, gated or waiting, a claim
    pending, allocated, reserved or being deleted."""
    def node(ready: str | None, unschedulable: bool = False) -> dict[str, object]:
        conditions = [{"type": "Ready", "status": ready}] if ready else []
        return {"metadata": {"name": "n"}, "spec": {"unschedulable": unschedulable},
                "status": {"conditions": conditions}}

    assert [_cell("Node", n, "Status") for n in (node("True"), node("False"), node(None), node("False", True))] == [
        "Ready", "NotReady", "Unknown", "NotReady,SchedulingDisabled"]
    gated = {"schedulingGates": [{"name": "g"}], "containers": []}
    pods = [{"metadata": {"name": "p", "deletionTimestamp": "2026-11-29T09:00:00Z"}, "status": {"phase": "Running"}},
            {"metadata": {"name": "p"}, "status": {"phase": "Failed", "reason": "Evicted"}},
            {"metadata": {"name": "p"}, "spec": gated, "status": {}},
            {"metadata": {"name": "p"}, "spec": gated, "status": {"phase": "Running"}},
            {"metadata": {"name": "p"}, "status": {"phase": "Pending", "containerStatuses": [
                {"name": "c", "state": {"waiting": {"reason": "ContainerCreating"}}}]}},
            {"metadata": {"name": "p"}, "status": {}}]
    assert [_cell("Pod", p, "Status") for p in pods] == ["Terminating", "Evicted", "SchedulingGated", "Running",
                                                         "ContainerCreating", "Pending"]
    claims = [{"metadata": {"name": "c"}},
              {"metadata": {"name": "c"}, "status": {"allocation": {}, "reservedFor": []}},
              {"metadata": {"name": "c"}, "status": {"allocation": {"devices": {}}, "reservedFor": [{"name": "p"}]}},
              {"metadata": {"name": "c", "deletionTimestamp": "2026-11-29T09:00:00Z"},
               "status": {"allocation": {"devices": {}}}}]
    assert [_cell("ResourceClaim", c, "State") for c in claims] == ["pending", "pending", "allocated,reserved",
                                                                    "deleted,allocated"]


def test_config_map_keys_are_judged_as_upstream(http: Http) -> None:
    """A key with a character a config key may not have, and a key in both data and binaryData, are each an
    Invalid cause naming the key."""
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"},
            "data": {"bad key": "1", "a": "1"}, "binaryData": {"a": "MQ=="}}
    refused = http.request("POST", CONFIGMAPS, body)
    assert refused.status == 422
    causes = {c["field"]: c["message"] for c in refused.json()["details"]["causes"]}
    assert causes == {"data[bad key]": 'Invalid value: "bad key": a valid config key must consist of alphanumeric '
                                       "characters, '-', '_' or '.'",
                      "data[a]": 'Invalid value: "a": duplicate of key present in binaryData'}
    assert http.request("POST", CONFIGMAPS, {**body, "data": {"b": "1"}}).status == 201


def test_a_list_where_an_object_is_expected_is_refused_in_gos_words(http: Http) -> None:
    refused = http.request("POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                          "spec": {"containers": "c"}})
    assert refused.status == 400
    assert refused.json()["message"].endswith("json: cannot unmarshal string into Go struct field "
                                              "PodSpec.spec.containers of type []v1.Container")


def test_the_version_document_names_the_release_and_this_server(http: Http) -> None:
    """`kubectl version` reads /version: the release serve plays, marked as the reference (not a kube-apiserver
    build), and the platform it runs on."""
    import platform

    version = http.request("GET", "/version").json()
    assert version == {"major": "1", "minor": "37", "gitVersion": "v1.37.0-draconform-reference",
                       "gitCommit": "0" * 40, "gitTreeState": "clean", "buildDate": "1970-01-01T00:00:00Z",
                       "goVersion": f"python{platform.python_version()}", "compiler": "cpython",
                       "platform": f"{platform.system().lower()}/{platform.machine()}",
                       "emulationMajor": "1", "emulationMinor": "37"}


def test_an_event_names_the_component_that_reported_it(kubeconfig_file: Path, http: Http) -> None:
    client = KubeClient(load_config(kubeconfig_file))
    try:
        pod = client.create(_pod("p"))
        recorder = RemoteEventRecorder(client, WallClock(), "kube-scheduler")
        recorder.record(pod, "Warning", "FailedScheduling", "no node fits")
        recorder.record(pod, "Warning", "FailedScheduling", "no node fits")  # the same Event, counted again
    finally:
        client.close()
    events = http.request("GET", "/api/v1/namespaces/default/events").json()["items"]
    assert [(e["source"], e["reportingComponent"], e["count"]) for e in events] == [
        ({"component": "kube-scheduler"}, "kube-scheduler", 2)]


def test_a_refusal_of_a_reason_kube_apiserver_lacks_is_an_internal_error() -> None:
    from draconform.serve.status import failure
    from draconform.sut import ApiError

    assert failure(ApiError("Strange", "something broke")) == (500, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "something broke",
        "reason": "InternalError", "code": 500})


def test_the_openapi_v3_document_lists_every_operation_and_the_merge_keys(http: Http) -> None:
    """kubectl and client generators read each path's operations from /openapi/v3: list (with the watch
    parameters) and create on the collection, read, replace, the four patch types and delete on an object; and
    `kubectl patch` reads a list's merge key there, also of a list inside a list's items (a container's env)."""
    index = http.request("GET", "/openapi/v3").json()["paths"]
    document = http.request("GET", index["api/v1"]["serverRelativeURL"]).json()
    collection = document["paths"]["/api/v1/namespaces/{namespace}/pods"]
    assert sorted(collection) == ["get", "post"]
    assert collection["get"]["x-kubernetes-action"] == "list" and "requestBody" not in collection["get"]
    assert "watch" in [p["name"] for p in collection["get"]["parameters"]]
    assert collection["post"]["requestBody"]["content"]["application/json"]["schema"] == \
        {"$ref": "#/components/schemas/io.k8s.api.core.v1.Pod"}
    one = document["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]
    assert sorted(one) == ["delete", "get", "patch", "put"]
    assert sorted(one["patch"]["requestBody"]["content"]) == [
        "application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
        "application/strategic-merge-patch+json"]
    schemas = document["components"]["schemas"]
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    env = schemas["io.k8s.api.core.v1.Container"]["properties"]["env"]
    for listed in (containers, env):
        assert (listed["x-kubernetes-patch-strategy"], listed["x-kubernetes-patch-merge-key"]) == ("merge", "name")


def test_deleting_a_terminating_namespace_again_changes_nothing() -> None:
    """A second DELETE of a namespace already terminating answers it as it is: the same deletionTimestamp and
    resourceVersion (nothing is written again), before the namespace controller's turn comes."""
    from draconform.kube.kinds import SERVED_KINDS
    from draconform.reference.apiserver.admission import install as install_admission
    from draconform.reference.apiserver.store import Store

    store = Store(WallClock(), kinds=SERVED_KINDS)
    install_admission(store)
    served = ApiServer(store, namespace_grace=3600.0)  # the contents' deletion does not come within the test
    served.serve_in_thread()
    try:
        store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "work"}})
        first = served.delete_namespace("work")
        again = served.delete_namespace("work")
        assert first["status"] == {"phase": "Terminating"}
        assert [(o["metadata"]["deletionTimestamp"], o["metadata"]["resourceVersion"]) for o in (first, again)] == \
            [(first["metadata"]["deletionTimestamp"], first["metadata"]["resourceVersion"])] * 2
    finally:
        served.shutdown()


def test_patches_that_cannot_be_applied_are_bad_requests(http: Http) -> None:
    """A strategic merge patch with a `$patch` directive upstream does not know, and a JSON patch whose
    operation is malformed or that is no list of operations, are refused as bad requests (400), naming what."""
    http.request("POST", CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    strategic = "application/strategic-merge-patch+json"
    for patch, where in (({"$patch": "merge-it"}, "the root"), ({"metadata": {"$patch": "merge-it"}}, "metadata")):
        refused = http.request("PATCH", f"{CONFIGMAPS}/c", patch, content_type=strategic)
        assert (refused.status, refused.json()["reason"]) == (400, "BadRequest")
        assert refused.json()["message"] == f"unknown patch directive 'merge-it' at {where}"
    json_patch = "application/json-patch+json"
    malformed = http.request("PATCH", f"{CONFIGMAPS}/c", [{"op": "jump", "path": "/data"}], content_type=json_patch)
    assert (malformed.status, malformed.json()["reason"]) == (400, "BadRequest")
    assert malformed.json()["message"].startswith("invalid JSON patch: ")
    assert http.request("PATCH", f"{CONFIGMAPS}/c", {"op": "add"}, content_type=json_patch).status == 400


def test_a_watch_from_a_version_older_than_the_kept_history_gets_expired(
        http: Http, monkeypatch: pytest.MonkeyPatch) -> None:
    """serve keeps the latest changes for watches (KEPT_EVENTS, made small here); a watch from before them is
    answered, as kube-apiserver answers it, with one ERROR event carrying a 410 Expired Status, and ends."""
    from draconform.serve import server as served

    monkeypatch.setattr(served, "KEPT_EVENTS", 4)
    for name in "abcdef":
        http.request("POST", CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
    reply = http.request("GET", f"{CONFIGMAPS}?watch=1&resourceVersion=1")
    events = [json.loads(line) for line in reply.body.splitlines()]
    assert [(e["type"], e["object"]["reason"], e["object"]["code"]) for e in events] == [("ERROR", "Expired", 410)]
    assert events[0]["object"]["message"].startswith("too old resource version: 1 (")


def test_paths_serve_does_not_serve_are_not_found_in_kube_apiservers_words(http: Http) -> None:
    """Another version of the core group, a resource the group-version lacks, a namespaced resource named without
    its namespace and a subresource the kind lacks: each 404 NotFound, worded as kube-apiserver words it."""
    for path in ("/api/v2/namespaces/default/pods", "/apis/resource.k8s.io/v1/nothings", "/api/v1/pods/p",
                 f"{PODS}/p/nosuchsubresource"):
        reply = http.request("GET", path)
        assert (reply.status, reply.json()["reason"], reply.json()["message"]) == (
            404, "NotFound", "the server could not find the requested resource"), path
