"""The patch types and server-side apply on their own: strategic merge patch by the served kinds' merge keys
and directives, JSON patch errors, and field ownership with conflicts."""

from __future__ import annotations

import pytest

from draconform.serve.apply import apply, fields_of, record_update, to_fields_v1
from draconform.serve.patches import json_patch, merge_patch, strategic_merge_patch
from draconform.serve.resources import RESOURCES
from draconform.sut import ApiError

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "finalizers": ["a"]},
       "spec": {"containers": [{"name": "app", "image": "one", "command": ["run"],
                                "resources": {"claims": [{"name": "gpu"}]}, "env": [{"name": "A", "value": "1"}]},
                               {"name": "side", "image": "side"}],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]}}


def test_a_container_is_patched_by_name_and_keeps_what_the_patch_does_not_name() -> None:
    patched = strategic_merge_patch("Pod", POD, {"spec": {"containers": [
        {"name": "app", "image": "two", "env": [{"name": "B", "value": "2"}]}]}})
    app, side = patched["spec"]["containers"]
    assert app["image"] == "two" and app["command"] == ["run"] and app["resources"]["claims"] == [{"name": "gpu"}]
    assert app["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}] and side["image"] == "side"
    merged = merge_patch(POD, {"spec": {"containers": [{"name": "app", "image": "two"}]}})
    assert merged["spec"]["containers"] == [{"name": "app", "image": "two"}]  # a merge patch replaces lists


def test_directives_delete_replace_and_order() -> None:
    deleted = strategic_merge_patch("Pod", POD, {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}})
    assert [c["name"] for c in deleted["spec"]["containers"]] == ["app"]
    replaced = strategic_merge_patch("Pod", POD, {"spec": {"containers": [{"name": "only"}, {"$patch": "replace"}]}})
    assert replaced["spec"]["containers"] == [{"name": "only"}]
    ordered = strategic_merge_patch("Pod", POD, {"spec": {"$setElementOrder/containers": [{"name": "side"},
                                                                                           {"name": "app"}]}})
    assert [c["name"] for c in ordered["spec"]["containers"]] == ["side", "app"]
    finalizers = strategic_merge_patch("Pod", POD, {"metadata": {"finalizers": ["b"],
                                                                 "$deleteFromPrimitiveList/finalizers": ["a"]}})
    assert finalizers["metadata"]["finalizers"] == ["b"]
    assert strategic_merge_patch("Pod", POD, {"metadata": {"finalizers": ["b"]}})["metadata"]["finalizers"] == [
        "a", "b"]  # a set: merged, not replaced
    with pytest.raises(ApiError):
        strategic_merge_patch("Pod", POD, {"spec": {"containers": [{"image": "no-name"}]}})


def test_json_patch_errors_say_why() -> None:
    assert json_patch(POD, [{"op": "replace", "path": "/spec/containers/1/image", "value": "x"}])["spec"][
        "containers"][1]["image"] == "x"
    with pytest.raises(ApiError) as malformed:
        json_patch(POD, [{"op": "frobnicate", "path": "/x"}])
    assert malformed.value.reason == "BadRequest"
    with pytest.raises(ApiError) as failed:
        json_patch(POD, [{"op": "test", "path": "/metadata/name", "value": "other"}])
    assert failed.value.reason == "Invalid"


def test_apply_owns_fields_removes_what_it_no_longer_applies_and_conflicts_with_other_managers() -> None:
    configmaps = RESOURCES["ConfigMap"]
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}
    created = apply(configmaps, None, config, "tool", force=False)
    assert created["metadata"]["managedFields"][0]["fieldsV1"] == {"f:data": {"f:a": {}, "f:b": {}}}
    created["metadata"].update(uid="u1", resourceVersion="1")
    shrunk = apply(configmaps, created, {**config, "data": {"a": "1"}}, "tool", force=False)
    assert shrunk["data"] == {"a": "1"}  # b was the tool's alone
    edited = {**shrunk, "data": {"a": "9"}}
    record_update(edited, shrunk, "editor", configmaps)
    with pytest.raises(ApiError) as conflict:
        apply(configmaps, edited, {**config, "data": {"a": "1"}}, "tool", force=False)
    assert conflict.value.reason == "Conflict" and 'conflict with "editor"' in conflict.value.message
    taken = apply(configmaps, edited, {**config, "data": {"a": "1"}}, "tool", force=True)
    assert taken["data"] == {"a": "1"} and [e["manager"] for e in taken["metadata"]["managedFields"]] == ["tool"]
    same = apply(configmaps, edited, {**config, "data": {"a": "9"}}, "tool", force=False)  # same value: shared
    assert same["data"] == {"a": "9"}


def test_list_items_are_owned_by_their_merge_key() -> None:
    fields = fields_of("Pod", POD)
    tree = to_fields_v1(fields)
    app = tree["f:spec"]["f:containers"]['k:{"name":"app"}']
    assert app["."] == {} and "f:image" in app and tree["f:metadata"]["f:finalizers"] == {'v:"a"': {}}
