"""Admission of an update to an object the store admitted walks only the top-level fields the write changes
(reference/apiserver/admission.py, `drop_disabled_fields_changed`): the objects stored and the writes refused must
be exactly those of the whole walk, and the shortcut must be taken where it may and only there (counted in
`Store.work`, so that a return to walking every object on every status write shows)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.admission import install
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.sut import ApiError, Obj

CLAIM: Obj = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
    "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "adminAccess": None}}]}},
}
ALLOCATION: Obj = {
    "devices": {"results": [{"request": "r", "driver": "d.example.com", "pool": "p", "device": "x",
                             "adminAccess": None}]},
    "nodeSelector": None,
}


def _store(gates: FeatureGates, shortcut: bool, monkeypatch: pytest.MonkeyPatch) -> Store:
    store = Store(FakeClock(), gates)
    install(store)
    if not shortcut:
        monkeypatch.setattr(store, "admitted", lambda obj: False)
    return store


def _writes(store: Store) -> list[Any]:
    """A claim's life through the writes the components make, with nulls and gated fields on the way; what each
    write answered (or the refusal), then every stored object."""
    answers: list[Any] = []

    def attempt(write: Callable[[], Obj]) -> None:
        try:
            answers.append(write())
        except ApiError as error:
            answers.append((error.reason, [(c.field, c.message) for c in error.causes]))

    attempt(lambda: store.create(CLAIM))
    claim = store.get("ResourceClaim", "c", "default") or {}
    claim["status"] = {"allocation": ALLOCATION, "devices": [{"driver": "d.example.com", "pool": "p", "device": "x",
                                                                "conditions": None}]}
    attempt(lambda: store.update_status(claim))
    claim = store.get("ResourceClaim", "c", "default") or {}
    claim["metadata"]["finalizers"] = ["f"]
    claim["metadata"]["labels"] = None
    attempt(lambda: store.update(claim))
    claim = store.get("ResourceClaim", "c", "default") or {}
    claim["spec"]["devices"]["requests"][0]["name"] = "changed"  # immutable: refused alike
    attempt(lambda: store.update(claim))
    claim = store.get("ResourceClaim", "c", "default") or {}
    claim["status"]["reservedFor"] = [{"resource": "pods", "name": "p", "uid": "u"}, None]
    attempt(lambda: store.update_status(claim))
    claim = store.get("ResourceClaim", "c", "default") or {}
    claim["status"]["allocation"]["devices"]["results"][0]["device"] = "y"  # immutable once set: refused alike
    attempt(lambda: store.update_status(claim))
    return [*answers, store.list("ResourceClaim")]


@pytest.mark.parametrize("gates", [{}, {"DRAResourceClaimDeviceStatus": False, "DRAAdminAccess": False}])
def test_changed_parts_only_store_what_the_whole_walk_stores(gates: dict[str, bool],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _store(FeatureGates(gates), False, monkeypatch)
    short = _store(FeatureGates(gates), True, monkeypatch)
    assert _writes(short) == _writes(whole)
    assert short.work["admitted-changed"] >= 2 and whole.work["admitted-changed"] == 0


def test_status_write_of_an_admitted_object_walks_only_its_status(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(FeatureGates(), True, monkeypatch)
    store.create(CLAIM)
    claim = store.get("ResourceClaim", "c", "default") or {}
    claim["status"] = {"allocation": ALLOCATION}
    before = store.work.copy()
    store.update_status(claim)
    assert store.work["admitted-changed"] - before["admitted-changed"] == 1
    assert store.work["admitted-whole"] == before["admitted-whole"]


def test_objects_not_admitted_under_these_gates_are_walked_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """`load` stores objects as given (nulls, disabled fields): the next write walks them whole; so after the
    gates change, where what the stored object holds was admitted under other gates."""
    store = _store(FeatureGates({"DRAAdminAccess": True}), True, monkeypatch)
    store.load({**CLAIM, "metadata": {"name": "loaded", "namespace": "default", "labels": None},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                    "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}})
    store.create(CLAIM)
    store.gates = FeatureGates({"DRAAdminAccess": False})
    for name in ("loaded", "c"):
        claim = store.get("ResourceClaim", name, "default") or {}
        claim["status"] = {"allocation": ALLOCATION}
        store.update_status(claim)
    assert store.work["admitted-changed"] == 0 and store.work["admitted-whole"] == 3
    stored = store.get("ResourceClaim", "loaded", "default") or {}
    assert "labels" not in stored["metadata"]  # the null went


def test_status_sharing_the_stored_parts_loses_the_nulls_of_its_new_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A status handed over (`copy_status=False`) that shares the stored status's parts and adds new ones, as the
    components write it: the shared parts (stored without nulls) are not walked again (`drop_nulls`' `stored`), the
    new ones lose their nulls, and what is stored is what the whole walk stores."""
    stored = []
    for shortcut in (True, False):
        store = _store(FeatureGates(), shortcut, monkeypatch)
        store.create(CLAIM)
        claim = store.get("ResourceClaim", "c", "default") or {}
        claim["status"] = {"allocation": ALLOCATION}
        store.update_status(claim)
        latest = store.peek("ResourceClaim", "c", "default") or {}
        status = {**latest["status"], "reservedFor": [{"resource": "pods", "name": "p", "uid": "u", "apiGroup": None}]}
        store.update_status({**latest, "status": status}, copy_status=False)
        stored.append(store.list("ResourceClaim"))
    assert stored[0] == stored[1]
    assert stored[0][0]["status"]["reservedFor"] == [{"resource": "pods", "name": "p", "uid": "u"}]
    assert "adminAccess" not in stored[0][0]["status"]["allocation"]["devices"]["results"][0]
