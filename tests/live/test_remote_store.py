"""The served components read and write through `RemoteStore` where the in-process ones use `Store`: a
component that starts calling a new Store method would crash-loop in `draconform serve` (each round failing
with AttributeError) while every in-process test stays green. This test names the gap at once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from draconform.live.kube import KubeClient, load_config
from draconform.reference.apiserver.store import Store
from draconform.serve.remote import RemoteStore, StaleView
from draconform.sut import Obj
from tests.live.helpers import wait_until

# What only the API server itself does: its admission chain, its feature gates, loading its storage, and the
# history of stored versions it keeps for the seam's object_writes (read by the SUT, never by a component), and
# the dry runs of API requests.
SERVER_SIDE = {"add_admission", "add_mutator", "gates", "load", "keep_history", "history", "dry_run",
               "namespace_labels", "label_namespace",  # these two: admission and the in-process seam
               "admitted"}  # admission's shortcut for objects it stored itself


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def test_the_remote_store_offers_every_store_method_a_component_may_call() -> None:
    missing = _public(Store) - _public(RemoteStore) - SERVER_SIDE
    assert not missing, f"RemoteStore lacks {sorted(missing)}: served components calling them would fail"


def test_the_server_side_list_names_only_real_store_methods() -> None:
    assert _public(Store) >= SERVER_SIDE


class HeldBack(KubeClient):
    """The API client with one kind's watch stream held back until `release` is set, as a stream on a busy
    machine can lag behind the others: the other kinds' streams run freely."""

    def __init__(self, kubeconfig: Path, held: str) -> None:
        super().__init__(load_config(kubeconfig))
        self.held = held
        self.release = threading.Event()

    def watch(self, kind: str, resource_version: str, namespace: str | None = None, bookmarks: bool = False
              ) -> Iterator[tuple[str, Obj]]:
        for change in super().watch(kind, resource_version, namespace, bookmarks):
            if kind == self.held:
                self.release.wait()  # no timer: it goes on when the test lets it
            yield change


CLASS: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}
POD: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "registry.example/app"}]}}


def test_a_round_never_sees_a_change_before_an_earlier_one_of_another_kind(api: Path) -> None:
    """The class is written before the pod; the class's stream lags. The pod's change has arrived, but a round
    cannot begin on it (it would schedule the pod without the class): catch_up refuses loudly while the class's
    stream is behind, and once it has caught up passes both on, in the order they were written."""
    writer = KubeClient(load_config(api))
    client = HeldBack(api, held="DeviceClass")
    store = RemoteStore(client)
    watch = store.watch("DeviceClass", "Pod")
    try:
        writer.create(CLASS)
        pod = writer.create(POD)
        written = int(pod["metadata"]["resourceVersion"])
        wait_until(lambda: "Pod" not in store.behind(written), 300, "the pod's stream delivering the pod")
        assert store.behind(written) == ["DeviceClass"]
        with store.lock, pytest.raises(StaleView, match="DeviceClass"):
            store.catch_up(timeout=0)
        assert watch.drain() == [], "a change was passed on before an earlier one of another kind"
        client.release.set()
        with store.lock:
            store.catch_up()
        assert [(event.type, event.object["kind"]) for event in watch.drain()] == [("ADDED", "DeviceClass"),
                                                                                    ("ADDED", "Pod")]
    finally:
        client.release.set()
        writer.close()


def test_a_watch_with_bookmarks_learns_the_revision_of_a_change_to_another_kind(api: Path) -> None:
    """The served API server bookmarks a stream past a change it does not show (Kubernetes' allowWatchBookmarks):
    how a stream of a quiet kind tells catch_up it has reached the server's revision."""
    client = KubeClient(load_config(api))
    try:
        start = int(client.create(CLASS)["metadata"]["resourceVersion"])  # a watch from "0" would list first
        pod = client.create(POD)
        assert client.revision() == int(pod["metadata"]["resourceVersion"]) > start
        seen: list[tuple[str, Obj]] = []
        stream = client.watch("DeviceClass", str(start), bookmarks=True)
        threading.Thread(target=lambda: seen.append(next(stream)), daemon=True).start()
        wait_until(lambda: bool(seen), 300, "the DeviceClass stream saying where it is")
        event_type, obj = seen[0]
        assert event_type == "BOOKMARK"
        assert obj["metadata"]["resourceVersion"] == pod["metadata"]["resourceVersion"]
    finally:
        client.close()


class Broken(KubeClient):
    """The API client whose DeviceClass stream breaks as soon as it starts."""

    def watch(self, kind: str, resource_version: str, namespace: str | None = None, bookmarks: bool = False
              ) -> Iterator[tuple[str, Obj]]:
        if kind == "DeviceClass":
            raise ConnectionResetError("the stream broke")
        yield from super().watch(kind, resource_version, namespace, bookmarks)


def test_a_round_does_not_begin_once_a_stream_has_ended_and_says_which(api: Path) -> None:
    client = Broken(load_config(api))
    store = RemoteStore(client)
    store.watch("DeviceClass", "Pod")

    def refused() -> bool:
        try:
            store.catch_up(timeout=0)
        except StaleView as error:
            return "ended" in str(error)
        return False

    try:
        wait_until(refused, 300, "catch_up refusing after the DeviceClass stream ended")
        with pytest.raises(StaleView, match="DeviceClass: ConnectionResetError: the stream broke"):
            store.catch_up()
    finally:
        client.close()


def test_a_components_own_write_reaches_its_watches_at_once_and_once_only(api: Path) -> None:
    """What a component writes through RemoteStore reaches its own watches before the write returns; the same
    change replayed by the API's stream is not passed on again. Another writer's change comes with the state
    the watch had before it."""
    client = KubeClient(load_config(api))
    other = KubeClient(load_config(api))
    store = RemoteStore(client)
    watch = store.watch("ConfigMap")
    try:
        created = store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
                                                                                     "namespace": "default"}})
        assert [(e.type, e.object["metadata"]["resourceVersion"]) for e in watch.drain()] == [
            ("ADDED", created["metadata"]["resourceVersion"])]
        with store.lock:
            store.catch_up()
        assert watch.drain() == [], "the stream's replay of this process's own write was passed on again"
        changed = other.update({**created, "data": {"a": "1"}})
        with store.lock:
            store.catch_up()
        events = watch.drain()
        assert [(e.type, e.object["metadata"]["resourceVersion"]) for e in events] == [
            ("MODIFIED", changed["metadata"]["resourceVersion"])]
        assert events[0].old is not None and events[0].old["metadata"]["resourceVersion"] == \
            created["metadata"]["resourceVersion"]
    finally:
        watch.stop()
        other.close()
        client.close()
