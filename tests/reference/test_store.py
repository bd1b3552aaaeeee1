"""The API store: resourceVersions, optimistic concurrency, status subresource, watches, finalizers,
owner-reference garbage collection and gated-field mutators."""

from __future__ import annotations

from typing import Any

import pytest

from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.interface import Watch, WatchEvent
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.sut import ApiError, FieldCause, Obj


def claim(name: str, **extra: Any) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, **extra},
        "spec": {"devices": {"requests": []}},
    }


def pod(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": []}}


@pytest.fixture
def store() -> Store:
    return Store(FakeClock())


def test_create_assigns_identity_and_increasing_resource_versions(store: Store) -> None:
    first = store.create(claim("a"))
    second = store.create(claim("b"))
    assert first["metadata"]["namespace"] == "default"
    assert first["metadata"]["uid"] != second["metadata"]["uid"]
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    with pytest.raises(ApiError) as error:
        store.create(claim("a"))
    assert error.value.reason == "AlreadyExists"


def test_reads_return_copies(store: Store) -> None:
    store.create(claim("a"))
    copy = store.get("ResourceClaim", "a")
    assert copy is not None
    copy["spec"]["devices"]["requests"].append({"name": "sneaky"})
    stored = store.get("ResourceClaim", "a")
    assert stored is not None and stored["spec"]["devices"]["requests"] == []


def test_stale_update_conflicts_and_fresh_update_succeeds(store: Store) -> None:
    created = store.create(claim("a", labels={"v": "1"}))
    fresh = store.update({**created, "metadata": {**created["metadata"], "labels": {"v": "2"}}})
    with pytest.raises(ApiError) as error:
        store.update({**created, "metadata": {**created["metadata"], "labels": {"v": "3"}}})
    assert error.value.reason == "Conflict"
    assert int(fresh["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])


def test_status_subresource_separates_spec_and_status(store: Store) -> None:
    created = store.create({**claim("a"), "status": {"allocation": {"devices": {"results": []}}}})
    assert created["status"] == {}, "status is not writable on create (read back as the empty struct)"
    with_status = store.update_status({**created, "status": {"reservedFor": []}})
    updated = store.update({**with_status, "status": {"something": "else"}})
    assert updated["status"] == {"reservedFor": []}, "update must not touch status"
    assert updated["metadata"]["generation"] == 1, "spec did not change"


def test_generation_increments_when_spec_changes(store: Store) -> None:
    created = store.create(claim("a"))
    updated = store.update({**created, "spec": {"devices": {"requests": [{"name": "x"}]}}})
    assert updated["metadata"]["generation"] == 2


def test_watch_sees_added_modified_deleted_in_order(store: Store) -> None:
    watch = store.watch("ResourceClaim")
    created = store.create(claim("a"))
    store.create(pod("ignored"))
    store.update_status({**created, "status": {"reservedFor": []}})
    store.delete("ResourceClaim", "a")
    events = watch.drain()
    assert [e.type for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    assert events[1].old is not None and events[1].old["status"] == {}
    assert not watch.pending()
    watch.stop()
    store.create(claim("b"))
    assert watch.drain() == []


def test_finalizers_delay_deletion_until_removed(store: Store) -> None:
    store.create(claim("a", finalizers=["example.com/keep"]))
    store.delete("ResourceClaim", "a")
    marked = store.get("ResourceClaim", "a")
    assert marked is not None and marked["metadata"]["deletionTimestamp"]
    store.update({**marked, "metadata": {**marked["metadata"], "finalizers": []}})
    assert store.get("ResourceClaim", "a") is None


def test_dependents_are_garbage_collected_with_their_last_owner(store: Store) -> None:
    owner = store.create(pod("owner"))
    other = store.create(pod("other"))
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "owner", "uid": owner["metadata"]["uid"]}
    other_ref = {"apiVersion": "v1", "kind": "Pod", "name": "other", "uid": other["metadata"]["uid"]}
    store.create(claim("single", ownerReferences=[ref]))
    store.create(claim("double", ownerReferences=[ref, other_ref]))
    store.delete("Pod", "owner")
    assert store.get("ResourceClaim", "single") is None
    assert store.get("ResourceClaim", "double") is not None, "another owner still exists"
    store.delete("Pod", "other")
    assert store.get("ResourceClaim", "double") is None


def test_admission_refuses_with_every_cause(store: Store) -> None:
    store.add_admission(lambda op, new, old: [FieldCause("spec.a", "bad"), FieldCause("spec.b", "worse")])
    with pytest.raises(ApiError) as error:
        store.create(claim("a"))
    assert error.value.reason == "Invalid"
    assert [c.field for c in error.value.causes] == ["spec.a", "spec.b"]
    assert store.get("ResourceClaim", "a") is None


def test_mutator_sees_gates_and_old_object(store: Store) -> None:
    seen: list[tuple[str, bool]] = []

    def strip_label(op: str, new: Obj, old: Obj | None, gates: FeatureGates) -> Obj:
        seen.append((op, old is not None))
        if not gates.enabled("DRADeviceCompatibilityGroups"):
            new["metadata"].get("labels", {}).pop("gated", None)
        return new

    store.add_mutator(strip_label)
    created = store.create(claim("a", labels={"gated": "x", "kept": "y"}))
    assert created["metadata"]["labels"] == {"kept": "y"}
    store.update(created)
    assert seen == [("CREATE", False), ("UPDATE", True)]


def test_bind_sets_node_once(store: Store) -> None:
    store.create(pod("p"))
    bound = store.bind("default", "p", "worker-1")
    assert bound["spec"]["nodeName"] == "worker-1"
    with pytest.raises(ApiError) as error:
        store.bind("default", "p", "worker-2")
    assert error.value.reason == "Conflict"


def test_history_is_kept_only_when_asked_for(store: Store) -> None:
    store.create(claim("a"))
    assert store._history is None, "a store used on its own remembers no versions"
    with pytest.raises(ValueError, match="keeps no history"):
        store.history("ResourceClaim", "a")


def test_history_holds_every_stored_version_oldest_first(store: Store) -> None:
    store.keep_history()
    created = store.create(claim("a"))
    labelled = store.update({**created, "metadata": {**created["metadata"], "labels": {"v": "2"}}})
    with_status = store.update_status({**labelled, "status": {"reservedFor": []}})
    store.delete("ResourceClaim", "a")
    again = store.create(claim("a"))
    versions = store.history("ResourceClaim", "a")
    assert [v["metadata"]["resourceVersion"] for v in versions] == [
        o["metadata"]["resourceVersion"] for o in (created, labelled, with_status, again)
    ], "each write one version, the deletion none, a new object under the name after it"
    assert [v.get("status") for v in versions] == [{}, {}, {"reservedFor": []}, {}]
    assert versions[0]["metadata"]["uid"] != versions[-1]["metadata"]["uid"]
    versions[2]["status"]["reservedFor"].append({"name": "sneaky"})
    assert store.history("ResourceClaim", "a")[2]["status"] == {"reservedFor": []}, "history hands out copies"
    assert store.history("ResourceClaim", "b") == []


def test_writes_sharing_unchanged_parts_leave_earlier_versions_as_they_were(store: Store) -> None:
    """A status write, an update, a binding and a deletion mark share the stored object's unchanged parts (no deep
    copy) and a status handed over is kept as given, yet every earlier version stays exactly as it was stored."""
    store.keep_history()
    created = store.create(claim("a", finalizers=["keep"]))
    spec = store.peek("ResourceClaim", "a")["spec"]
    status = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}
    reserved = store.update_status({**created, "status": status}, copy_status=False)
    assert store.peek("ResourceClaim", "a")["spec"] is spec, "a status write shares the stored spec"
    assert store.peek("ResourceClaim", "a")["status"] is status, "a status handed over is stored as given"
    assert store.work["copied on write"] == 1 and store.work["handed over on write"] == 1  # the create's copy
    labelled = store.update({**reserved, "metadata": {**reserved["metadata"], "labels": {"v": "2"}}})
    assert store.peek("ResourceClaim", "a")["status"] is status, "an update shares the stored status"
    store.delete("ResourceClaim", "a")  # marked: a finalizer is left
    versions = store.history("ResourceClaim", "a")
    assert [v.get("status") for v in versions] == [{}, status, status, status]
    assert [v["metadata"].get("labels") for v in versions] == [None, None, {"v": "2"}, {"v": "2"}]
    assert [bool(v["metadata"].get("deletionTimestamp")) for v in versions] == [False, False, False, True]
    assert [v["metadata"]["resourceVersion"] for v in versions[:3]] == [
        o["metadata"]["resourceVersion"] for o in (created, reserved, labelled)]
    store.create(pod("p"))
    unbound = store.peek("Pod", "p")
    store.bind("default", "p", "node-a")
    assert "nodeName" not in unbound["spec"] and not unbound["status"], "the binding left the pod it replaced alone"
    assert store.peek("Pod", "p")["spec"]["nodeName"] == "node-a"


def test_a_status_handed_over_is_copied_where_the_stored_object_was_not_admitted(store: Store) -> None:
    """An object `load`ed as given never went through the mutators, which may walk a written status whole: a status
    handed over for it is copied, so no part of the stored object can change in place."""
    loaded = store.load({**claim("a"), "status": {}})
    status = {"reservedFor": []}
    store.update_status({**loaded, "status": status}, copy_status=False)
    stored = store.peek("ResourceClaim", "a")
    assert stored["status"] == status and stored["status"] is not status
    assert store.work["copied on write"] >= 2 and not store.work["handed over on write"]


def test_unknown_kind_is_refused(store: Store) -> None:
    with pytest.raises(ApiError) as error:
        store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    assert error.value.reason == "NotFound"


def test_no_component_changes_an_object_the_store_handed_out_without_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """`peek`, `view` and watch events give readers the stored objects themselves: pods scheduled from claim
    templates, bound, deleted and their claims released leave every object handed out that way exactly as it was."""
    from draconform.bench.dra import Shape, Workbench
    from draconform.reference.allocator.columnar import ColumnarAllocator
    from draconform.sut import copy_object

    handed: list[tuple[Obj, Obj]] = []
    peek, view = Store.peek, Store.view

    def recording_peek(self: Store, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        found = peek(self, kind, name, namespace)
        if found is not None:
            handed.append((found, copy_object(found)))
        return found

    def recording_view(self: Store, kind: str, namespace: str | None = None) -> list[Obj]:
        found = view(self, kind, namespace)
        handed.extend((obj, copy_object(obj)) for obj in found)
        return found

    def recording_drain(self: Watch) -> list[WatchEvent]:
        events = drain(self)
        handed.extend((obj, copy_object(obj)) for event in events for obj in (event.object, event.old) if obj)
        return events

    drain = Watch.drain
    monkeypatch.setattr(Store, "peek", recording_peek)
    monkeypatch.setattr(Store, "view", recording_view)
    monkeypatch.setattr(Watch, "drain", recording_drain)
    bench = Workbench(Shape(3, 2), ColumnarAllocator)
    bench.steady_state(8, batch=4)
    assert len({id(obj) for obj, _ in handed}) > 20
    assert all(obj == before for obj, before in handed)
