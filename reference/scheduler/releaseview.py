"""What a kube-scheduler of an older release can see of the API: the scheduler's half of the one version-skew
mechanism (the API server's half is the store's decoding of its own release, `apiserver/store.py`).

A real older scheduler decodes API objects into its own Go types, so fields added after its release are
simply gone. Which release knows which field is data: the gated-field table (`draconform.validation.gates`)
with the gate history (`draconform.kube.featuregates`); a field exists from the release its gates appeared
in. The allocation core of an older scheduler reads through this view and so never meets a newer field:
devices with binding conditions look like any other device and bind at once (KEP-5007, docs/decisions.md
D-5007-7), devices and snapshots with compatibility groups look group-less (KEP-5963's "old" column), a
multi-allocatable device looks like an ordinary one. A current scheduler with a gate off sees the fields and
applies the gate-off rule instead (the allocator's business). Adding a KEP's skew is adding its rows to the
table, not code here."""

from __future__ import annotations

import builtins

from draconform.kube.featuregates import FeatureGates, release_tuple
from draconform.reference.apiserver.interface import ApiReader, Watch, WatchEvent
from draconform.sut import Obj
from draconform.validation.gates import GatedField, unknown_fields, without_fields


def hidden_fields(gates: FeatureGates) -> tuple[GatedField, ...]:
    """The fields a scheduler with `gates` cannot see: those its release does not know."""
    return tuple(unknown_fields(gates))


def _removed_before(gated: GatedField, gates: FeatureGates) -> bool:
    """A field a release up to the scheduler's removed (`until`): the API server of the scheduler's release, never
    older than the scheduler under the skew policy, does not store it, so there is nothing to hide."""
    return gated.until is not None and release_tuple(gates.release) >= release_tuple(gated.until)


class _DecodingWatch(Watch):
    """A watch whose events are decoded like the view's reads."""

    def __init__(self, inner: Watch, hidden: tuple[GatedField, ...]) -> None:
        super().__init__(inner.kinds)
        self._inner = inner
        self._hidden = hidden

    def drain(self) -> list[WatchEvent]:
        return [
            WatchEvent(e.type, without_fields(e.object, self._hidden),
                       without_fields(e.old, self._hidden) if e.old else None)
            for e in self._inner.drain()
        ]

    def pending(self) -> bool:
        return self._inner.pending()

    def stop(self) -> None:
        super().stop()
        self._inner.stop()


class _OlderReleaseStore:
    """Reads (get, peek, list, view, watch) through the decoding of a release without the hidden fields."""

    def __init__(self, store: ApiReader, hidden: tuple[GatedField, ...]) -> None:
        self._store = store
        self._hidden = hidden

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        obj = self._store.get(kind, name, namespace)
        return without_fields(obj, self._hidden) if obj is not None else None

    def peek(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return self.get(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None) -> builtins.list[Obj]:
        return [without_fields(obj, self._hidden) for obj in self._store.list(kind, namespace)]

    def view(self, kind: str, namespace: str | None = None) -> builtins.list[Obj]:
        return [without_fields(obj, self._hidden) for obj in self._store.view(kind, namespace)]

    def watch(self, *kinds: str) -> Watch:
        return _DecodingWatch(self._store.watch(*kinds), self._hidden)


def as_seen_by(store: ApiReader, gates: FeatureGates) -> ApiReader:
    """The store itself for a scheduler that knows every field, else the decoding view: the reads an allocation
    core makes, which is all the allocator seam takes."""
    hidden = tuple(gated for gated in hidden_fields(gates) if not _removed_before(gated, gates))
    if not hidden:
        return store
    return _OlderReleaseStore(store, hidden)
