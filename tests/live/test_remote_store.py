"""The served components read and write through `RemoteStore` where the in-process ones use `Store`: a
component that starts calling a new Store method would crash-loop in `draconform serve` (each round failing
with AttributeError) while every in-process test stays green. This test names the gap at once."""

from __future__ import annotations

from draconform.reference.apiserver.store import Store
from draconform.serve.remote import RemoteStore

# What only the API server itself does: its admission chain, its feature gates, loading its storage.
SERVER_SIDE = {"add_admission", "add_mutator", "gates", "load"}


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def test_the_remote_store_offers_every_store_method_a_component_may_call() -> None:
    missing = _public(Store) - _public(RemoteStore) - SERVER_SIDE
    assert not missing, f"RemoteStore lacks {sorted(missing)}: served components calling them would fail"


def test_the_server_side_list_names_only_real_store_methods() -> None:
    assert _public(Store) >= SERVER_SIDE
