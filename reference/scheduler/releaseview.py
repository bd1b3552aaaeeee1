"""What a kube-scheduler of an older release can see of the API (KEP-5007 "Version Skew Strategy").

A real older scheduler decodes API objects into its own Go types, so fields added after its release
are simply gone: devices with binding conditions look like any other device and it binds at once
(docs/decisions.md D-5007-7, "older scheduler"). This view gives the allocation core exactly that picture; a current
scheduler with the gate off sees the fields and refuses such devices instead (the allocator's rule)."""

from __future__ import annotations

import builtins
from typing import cast

from draconform import faults
from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.store import Store, Watch, WatchEvent
from draconform.sut import Obj, copy_object

BINDING_GATE = "DRADeviceBindingConditions"
DEVICE_FIELDS = ("bindsToNode", "bindingConditions", "bindingFailureConditions")
RESULT_FIELDS = ("bindingConditions", "bindingFailureConditions")


def without_binding_fields(obj: Obj) -> Obj:
    """The object as a release without KEP-5007 decodes it."""
    if obj.get("kind") == "ResourceSlice":
        obj = copy_object(obj)
        for device in (obj.get("spec") or {}).get("devices") or []:
            for name in DEVICE_FIELDS:
                device.pop(name, None)
    elif obj.get("kind") == "ResourceClaim" and (obj.get("status") or {}).get("allocation"):
        obj = copy_object(obj)
        allocation = obj["status"]["allocation"]
        allocation.pop("allocationTimestamp", None)
        for result in (allocation.get("devices") or {}).get("results") or []:
            for name in RESULT_FIELDS:
                result.pop(name, None)
    return obj


class _DecodingWatch:
    """A watch whose events are decoded like the view's reads."""

    def __init__(self, inner: Watch) -> None:
        self._inner = inner

    def drain(self) -> list[WatchEvent]:
        return [
            WatchEvent(e.type, without_binding_fields(e.object), without_binding_fields(e.old) if e.old else None)
            for e in self._inner.drain()
        ]

    def pending(self) -> bool:
        return self._inner.pending()

    def stop(self) -> None:
        self._inner.stop()


class _OlderReleaseStore:
    """Reads (get, list, view, watch) through the decoding of a release without binding conditions."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        obj = self._store.get(kind, name, namespace)
        return without_binding_fields(obj) if obj is not None else None

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return [without_binding_fields(obj) for obj in self._store.list(kind, namespace)]

    def view(self, kind: str, namespace: str | None = None) -> builtins.list[Obj]:
        return [without_binding_fields(obj) for obj in self._store.view(kind, namespace)]

    def watch(self, *kinds: str) -> Watch:
        return cast(Watch, _DecodingWatch(self._store.watch(*kinds)))


def as_seen_by(store: Store, gates: FeatureGates) -> Store:
    """The store itself for a release that knows KEP-5007 (gate on or off), else the decoding view.
    The view implements only the reads an allocation core makes; it is cast to Store for the
    allocator seam, which takes a Store."""
    if gates.known(BINDING_GATE) or faults.on("older-scheduler-sees-binding-fields"):
        return store
    return cast(Store, _OlderReleaseStore(store))
