"""The Kubernetes semantics clients rely on, as kube-apiserver answers them: watch parameter parsing,
WatchList's end-of-initial-events bookmark, UID preconditions, Status details, pagination, selector errors,
fieldValidation, dry run, the standard namespaces, discovery's short names, and objects that cannot wedge a
list."""

from __future__ import annotations

import json
import time

import pytest

from draconform.serve.server import ApiServer
from tests.serve.conftest import Http

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def _configmap(name: str, **data: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def _lines(reply_body: bytes) -> list[dict[str, object]]:
    return [json.loads(line) for line in reply_body.splitlines() if line.strip()]


@pytest.mark.parametrize("value", ["true", "1", "True", "t", "TRUE"])
def test_watch_is_read_as_go_parses_a_bool(http: Http, value: str) -> None:
    http.request("POST", CONFIGMAPS, _configmap("a"))
    reply = http.request("GET", f"{CONFIGMAPS}?watch={value}&timeoutSeconds=1")
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in _lines(reply.body)] == [("ADDED", "a")]


def test_a_watch_value_go_cannot_parse_is_a_400(http: Http) -> None:
    assert http.request("GET", f"{CONFIGMAPS}?watch=yes").status == 400


def test_watch_list_sends_the_state_then_a_bookmark_marking_its_end(http: Http) -> None:
    for name in ("a", "b"):
        http.request("POST", CONFIGMAPS, _configmap(name))
    reply = http.request("GET", f"{CONFIGMAPS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                                "&allowWatchBookmarks=true&timeoutSeconds=1")
    events = _lines(reply.body)
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK"]
    bookmark = events[-1]["object"]["metadata"]
    assert bookmark["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(bookmark["resourceVersion"]) >= max(int(e["object"]["metadata"]["resourceVersion"])
                                                   for e in events[:2])
    refused = http.request("GET", f"{CONFIGMAPS}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true")
    assert refused.status == 422  # without resourceVersionMatch=NotOlderThan


def test_an_update_carrying_another_uid_is_a_409(http: Http) -> None:
    created = http.request("POST", CONFIGMAPS, _configmap("a")).json()
    created["metadata"]["uid"] = "some-other-uid"
    reply = http.request("PUT", f"{CONFIGMAPS}/a", created)
    assert reply.status == 409 and "Precondition failed: UID in precondition" in reply.json()["message"]


def test_errors_carry_the_name_and_kind_in_their_details(http: Http) -> None:
    status = http.request("GET", f"{CONFIGMAPS}/missing").json()
    assert status["reason"] == "NotFound" and status["message"] == 'configmaps "missing" not found'
    assert status["details"] == {"name": "missing", "group": "", "kind": "configmaps"}
    http.request("POST", CONFIGMAPS, _configmap("a"))
    status = http.request("POST", CONFIGMAPS, _configmap("a")).json()
    assert status["reason"] == "AlreadyExists" and status["details"]["name"] == "a"


def test_limit_and_continue_page_through_one_consistent_list(http: Http) -> None:
    for name in "abcde":
        http.request("POST", CONFIGMAPS, _configmap(name))
    first = http.request("GET", f"{CONFIGMAPS}?limit=2").json()
    assert [i["metadata"]["name"] for i in first["items"]] == ["a", "b"]
    assert first["metadata"]["remainingItemCount"] == 3
    http.request("POST", CONFIGMAPS, _configmap("bb"))  # after the first page: not in this list
    names, token = [], first["metadata"]["continue"]
    while token:
        page = http.request("GET", f"{CONFIGMAPS}?limit=2&continue={token}").json()
        assert page["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
        names += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue")
    assert names == ["c", "d", "e"]
    assert http.request("GET", f"{CONFIGMAPS}?limit=2&continue=bm90LWEtdG9rZW4=").status == 400


def test_field_selectors_on_unsupported_fields_are_a_400(http: Http) -> None:
    reply = http.request("GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx")
    assert reply.status == 400 and "field label not supported" in reply.json()["message"]
    assert http.request("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1").status == 200
    assert http.request("GET", "/api/v1/pods?labelSelector=a%3D%3D%3D").status == 400


def test_field_validation_strict_warn_and_ignore(http: Http) -> None:
    body = {**_configmap("s"), "bogus": 1, "extra": {"x": 1}}
    strict = http.request("POST", f"{CONFIGMAPS}?fieldValidation=Strict", body)
    assert strict.status == 400
    assert 'unknown field "bogus"' in strict.json()["message"] and 'unknown field "extra"' in strict.json()["message"]
    warned = http.request("POST", f"{CONFIGMAPS}?fieldValidation=Warn", body)
    assert warned.status == 201 and "bogus" not in warned.json()
    assert sorted(warned.headers.get_all("Warning") or []) == ['299 - "unknown field \\"bogus\\""',
                                                              '299 - "unknown field \\"extra\\""']
    ignored = http.request("POST", f"{CONFIGMAPS}?fieldValidation=Ignore", {**body, "metadata": {"name": "i"}})
    assert ignored.status == 201 and not ignored.headers.get_all("Warning") and "extra" not in ignored.json()


def test_dry_run_persists_nothing(http: Http) -> None:
    created = http.request("POST", CONFIGMAPS, _configmap("a", k="1")).json()
    revision = http.request("GET", CONFIGMAPS).json()["metadata"]["resourceVersion"]
    assert http.request("POST", f"{CONFIGMAPS}?dryRun=All", _configmap("b")).status == 201
    changed = {**created, "data": {"k": "2"}}
    assert http.request("PUT", f"{CONFIGMAPS}/a?dryRun=All", changed).json()["data"] == {"k": "2"}
    patched = http.request("PATCH", f"{CONFIGMAPS}/a?dryRun=All", {"data": {"k": "3"}},
                           "application/merge-patch+json")
    assert patched.json()["data"] == {"k": "3"}
    assert http.request("DELETE", f"{CONFIGMAPS}/a?dryRun=All").status == 200
    after = http.request("GET", CONFIGMAPS).json()
    assert after["metadata"]["resourceVersion"] == revision
    assert [(i["metadata"]["name"], i["data"]) for i in after["items"]] == [("a", {"k": "1"})]


def test_every_cluster_has_the_standard_namespaces_and_keeps_them(http: Http) -> None:
    names = [n["metadata"]["name"] for n in http.request("GET", "/api/v1/namespaces").json()["items"]]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    assert http.request("DELETE", "/api/v1/namespaces/kube-system").status == 403


def test_a_deleted_namespace_is_terminating_then_gone_with_its_objects(http: Http) -> None:
    http.request("POST", "/api/v1/namespaces", {"metadata": {"name": "work"}})
    http.request("POST", "/api/v1/namespaces/work/configmaps", _configmap("a"))
    deleted = http.request("DELETE", "/api/v1/namespaces/work").json()
    assert deleted["status"]["phase"] == "Terminating"
    deadline = time.monotonic() + 60  # the namespace controller acts after half a second; room for a loaded machine
    while http.request("GET", "/api/v1/namespaces/work").status != 404:
        assert time.monotonic() < deadline, "the namespace was never removed"
    assert http.request("GET", "/api/v1/namespaces/work/configmaps/a").status == 404


def test_discovery_lists_short_names_and_categories(http: Http) -> None:
    resources = {r["name"]: r for r in http.request("GET", "/api/v1").json()["resources"]}
    assert resources["pods"]["shortNames"] == ["po"] and resources["pods"]["categories"] == ["all"]
    assert [resources[n]["shortNames"] for n in ("namespaces", "configmaps", "nodes")] == [["ns"], ["cm"], ["no"]]
    group = http.request("GET", "/apis/resource.k8s.io").json()
    assert group["kind"] == "APIGroup" and group["preferredVersion"]["version"] == "v1"
    assert {"gitVersion", "goVersion", "platform", "buildDate"} <= set(http.request("GET", "/version").json())


def test_no_object_can_wedge_a_list(http: Http) -> None:
    """A name that is a number was stored once, and every list of the kind failed after it (the keys could
    not be sorted): it is a decoding error now, as in kube-apiserver; the name "5" itself is a valid one."""
    assert http.request("POST", CONFIGMAPS, {"metadata": {"name": 5}}).status == 400
    assert http.request("POST", CONFIGMAPS, {"metadata": {"name": "x", "labels": {"a": ["b"]}}}).status == 400
    assert http.request("POST", CONFIGMAPS, {"metadata": {"name": "x"}, "data": {"a": {"b": 1}}}).status == 400
    invalid = http.request("POST", CONFIGMAPS, {"metadata": {"name": "Not_A_Name"}})
    assert invalid.status == 422 and invalid.json()["details"]["causes"][0]["field"] == "metadata.name"
    assert http.request("POST", CONFIGMAPS, _configmap("5")).status == 201
    listed = http.request("GET", CONFIGMAPS)
    assert listed.status == 200 and [i["metadata"]["name"] for i in listed.json()["items"]] == ["5"]


def test_a_bound_pods_spec_is_immutable_but_for_images(http: Http, server: ApiServer) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "one", "command": ["run"]}]}}
    created = http.request("POST", "/api/v1/namespaces/default/pods", pod).json()
    assert created["status"]["phase"] == "Pending"
    image = http.request("PATCH", "/api/v1/namespaces/default/pods/p",
                         {"spec": {"containers": [{"name": "c", "image": "two"}]}},
                         "application/strategic-merge-patch+json").json()
    assert [{k: c[k] for k in ("name", "image", "command")} for c in image["spec"]["containers"]] == [
        {"name": "c", "image": "two", "command": ["run"]}]
    moved = http.request("PATCH", "/api/v1/namespaces/default/pods/p", {"spec": {"nodeName": "elsewhere"}},
                         "application/merge-patch+json")
    assert moved.status == 422 and "pod updates may not change fields" in moved.json()["message"]


def test_a_wrong_type_in_a_dra_kind_is_a_400_naming_the_go_field(http: Http) -> None:
    """As kube-apiserver's decoder answers it: the kind and version, then Go's unmarshal error (the innermost struct's
    type, the path from the root without list indices, the Go type), and no causes."""
    reply = http.request("POST", "/apis/resource.k8s.io/v1/deviceclasses",
                         {"metadata": {"name": "gpu"}, "spec": {"selectors": "device.driver == 'x'"}})
    assert reply.status == 400 and reply.json()["reason"] == "BadRequest"
    assert reply.json()["message"] == ('DeviceClass in version "v1" cannot be handled as a DeviceClass: json: cannot '
                                       'unmarshal string into Go struct field DeviceClassSpec.spec.selectors of type '
                                       '[]v1.DeviceSelector')
    nested = http.request("POST", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", {
        "metadata": {"name": "c"}, "spec": {"devices": {"requests": [{"name": "a", "exactly": {"count": "2"}}]}}})
    assert nested.status == 400 and nested.json()["message"].endswith(
        "Go struct field ExactDeviceRequest.spec.devices.requests.exactly.count of type int64")


DEVICECLASSES = "/apis/resource.k8s.io/v1/deviceclasses"


def _class_with_typos(name: str) -> dict[str, object]:
    return {"metadata": {"name": name}, "spec": {"selector": [{"cel": {"expression": "true"}}], "confg": [],
                                                 "selectors": [{"cel": {"expression": "true", "bogus": 1}}]}}


def test_unknown_fields_of_a_dra_kind_under_each_field_validation(http: Http) -> None:
    """A DRA kind's unknown fields (draconform's schemas say which fields exist) as kube-apiserver answers them:
    Strict lists every one in a 400, Warn (the default) drops each with a warning, Ignore drops them silently."""
    strict = http.request("POST", f"{DEVICECLASSES}?fieldValidation=Strict", _class_with_typos("s"))
    assert strict.status == 400 and strict.json()["reason"] == "BadRequest" and "causes" not in strict.json().get(
        "details", {})
    assert strict.json()["message"] == (
        'DeviceClass in version "v1" cannot be handled as a DeviceClass: strict decoding error: unknown field '
        '"spec.selector", unknown field "spec.confg", unknown field "spec.selectors[0].cel.bogus"')
    for mode in ("Warn", ""):
        name = f"w{mode.lower()}"
        warned = http.request("POST", f"{DEVICECLASSES}?fieldValidation={mode}", _class_with_typos(name))
        assert warned.status == 201, warned.body
        assert sorted(warned.headers.get_all("Warning") or []) == [
            '299 - "unknown field \\"spec.confg\\""', '299 - "unknown field \\"spec.selector\\""',
            '299 - "unknown field \\"spec.selectors[0].cel.bogus\\""']
        assert http.request("GET", f"{DEVICECLASSES}/{name}").json()["spec"] == {
            "selectors": [{"cel": {"expression": "true"}}]}
    ignored = http.request("POST", f"{DEVICECLASSES}?fieldValidation=Ignore", _class_with_typos("i"))
    assert ignored.status == 201 and not ignored.headers.get_all("Warning")
    assert "confg" not in ignored.json()["spec"]


def test_a_watch_asked_for_tables_sends_one_row_tables(http: Http) -> None:
    """What `kubectl get -w` prints: each event a Table of one row, the columns defined in the first."""
    for name in ("a", "b"):
        http.request("POST", CONFIGMAPS, _configmap(name, k="v"))
    reply = http.request("GET", f"{CONFIGMAPS}?watch=1&timeoutSeconds=1",
                         headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    first, second = (event["object"] for event in _lines(reply.body))
    assert first["kind"] == second["kind"] == "Table"
    assert [c["name"] for c in first["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert second["columnDefinitions"] == [] and second["rows"][0]["cells"][:2] == ["b", 1]
    listed = http.request("GET", CONFIGMAPS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert [row["cells"][0] for row in listed.json()["rows"]] == ["a", "b"]


def test_delete_collection_deletes_what_the_selector_matches(http: Http) -> None:
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        http.request("POST", CONFIGMAPS, {**_configmap(name), "metadata": {"name": name, "labels": {"tier": tier}}})
    assert http.request("DELETE", f"{CONFIGMAPS}?labelSelector=tier%3Dx").status == 200
    assert [i["metadata"]["name"] for i in http.request("GET", CONFIGMAPS).json()["items"]] == ["c"]


def test_a_refusals_causes_carry_kube_apiservers_field_paths_and_error_types(http: Http) -> None:
    """A repeated device is reported at the list item as a duplicate, a bad attribute key at the map, as
    kube-apiserver's validateSet and validateMap do (issue 37); each cause's reason is its error type."""
    slices = "/apis/resource.k8s.io/v1/resourceslices"
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-1-gpus"},
            "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                     "pool": {"name": "node-1", "generation": 0, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "attributes": {"gpu-model": {"string": "a"}}}, {"name": "gpu-0"}]}}
    refused = http.request("POST", slices, body)
    assert refused.status == 422
    causes = {(c["field"], c["reason"]) for c in refused.json()["details"]["causes"]}
    assert causes == {("spec.devices[1]", "FieldValueDuplicate"), ("spec.devices[0].attributes", "FieldValueInvalid")}
    body["spec"]["devices"] = [{"name": "gpu-0", "capacity": {"memory": {"value": "lots"}}}]
    undecodable = http.request("POST", slices, body)
    assert undecodable.status == 400 and "causes" not in undecodable.json().get("details", {})
    assert "quantities must match the regular expression" in undecodable.json()["message"]


def test_a_refused_pod_names_each_cause_with_upstreams_reason(http: Http) -> None:
    """A container without an image, an extended resource requested without its limit: each cause at upstream's
    field with the reason kube-apiserver gives its error type (issue 37)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "no-image"},
           "spec": {"containers": [{"name": "main", "resources": {"requests": {"example.com/gpu": "1"}}}]}}
    refused = http.request("POST", "/api/v1/namespaces/default/pods", pod)
    assert refused.status == 422
    causes = {(c["field"], c["reason"]) for c in refused.json()["details"]["causes"]}
    assert causes == {("spec.containers[0].image", "FieldValueRequired"),
                      ("spec.containers[0].resources.limits", "FieldValueRequired")}
