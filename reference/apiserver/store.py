"""An in-memory API server: typed object storage with resourceVersions, optimistic concurrency,
status subresources, finalizers, owner-reference garbage collection, watches, admission
(validation) and feature-gate field stripping. Models kube-apiserver as the DRA KEPs assume it, of the
release its gates name: an older release serves stored objects without the fields it does not know."""

from __future__ import annotations

import builtins
import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal

from draconform.kube.featuregates import FeatureGates
from draconform.kube.kinds import KINDS, KindInfo
from draconform.reference.apiserver.interface import EventType, Watch, WatchEvent
from draconform.reference.clock import FakeClock, format_time
from draconform.sut import ApiError, FieldCause, Obj, copy_object
from draconform.validation.gates import GatedField, unknown_fields, without_fields

Operation = Literal["CREATE", "UPDATE"]
Key = tuple[str, str | None, str]  # kind, namespace, name

DEFAULT_NAMESPACE = "default"
DEFAULT_GRACE_PERIOD_SECONDS = 30  # a pod's terminationGracePeriodSeconds by default
# Kinds whose create keeps the status it carries (upstream's pod and node strategies; a kubelet registers its
# Node with capacity and allocatable); every other kind's status is written through its subresource only
CREATED_WITH_STATUS = frozenset({"Pod", "Node"})


def object_key(obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    return obj["kind"], meta.get("namespace"), meta.get("name", "")


# An admission check sees the operation, the incoming object and the stored one (None on create) and
# returns every problem it finds. A mutator rewrites the incoming object before the checks run.
AdmissionCheck = Callable[[Operation, Obj, Obj | None], list[FieldCause]]
Mutator = Callable[[Operation, Obj, Obj | None, FeatureGates], Obj]


class Store:
    """The API server's storage. Every read returns a copy, except `view`, `peek` and watch events, which hand
    the stored objects to readers that never modify them; every write bumps the global resourceVersion and
    notifies watchers synchronously, in write order."""

    def __init__(
        self, clock: FakeClock, gates: FeatureGates | None = None, kinds: dict[str, KindInfo] | None = None
    ) -> None:
        self.clock = clock
        self.kinds = kinds if kinds is not None else KINDS  # the kinds this API server serves
        self._objects: dict[Key, Obj] = {}
        self._keys_of_kind: dict[str, set[Key]] = {}  # so listing one kind does not walk every object
        self._uids: dict[str, Key] = {}  # uid -> key of every live object
        self._dependents: dict[str, set[Key]] = {}  # owner uid -> keys of objects naming it as owner
        self._revision = itertools.count(1)
        self._uid_counter = itertools.count(1)
        self._generated_names = itertools.count(1)
        self._watches: list[Watch] = []
        self._watches_of_kind: dict[str, list[Watch]] = {}  # per kind, the watches that may want it: made on first use
        self._admission: list[AdmissionCheck] = []
        self._mutators: list[Mutator] = []
        self._unknown: tuple[GatedField, ...] = ()  # gated fields this release does not know
        # `_unknown` by kind, made from the tuple it names: every read asks, and most kinds have none of them
        self._unknown_by_kind: tuple[tuple[GatedField, ...], dict[str, tuple[GatedField, ...]]] = ((), {})
        # Keys whose stored object came through this store's mutators and checks under its current gates (or from
        # such an object by a binding or a deletion mark, which add no null and no gated field): admission asks
        # (`admitted`) so that a write leaving parts of such an object as they are does not walk them again.
        # `load`, a gates change and a new mutator or check forget it.
        self._admitted: set[Key] = set()
        self.gates = gates or FeatureGates()
        self._history: dict[Key, list[Obj]] | None = None  # every stored version, once keep_history() is called
        self._dry_run = False
        self._namespace_labels: dict[str, dict[str, str]] = {}  # where namespaces are no objects (in process)
        # Work counted where it is done, for the cost checks (tests/test_costs.py): objects deep-copied for a reader
        # or a writer's answer ("copied"), stored objects handed out without a copy ("handed"), keys looked at to
        # list a kind ("scanned"), objects stored ("writes"), watch events queued for a stream ("events"), objects or
        # statuses a write deep-copies ("copied on write": the caller's, or the stored one's where it cannot be
        # shared), new versions sharing the stored one's unchanged parts ("shared on write") and statuses a caller
        # handed over, stored as given ("handed over on write"). An addition per call: cheap enough to stay on.
        self.work: Counter[str] = Counter()

    def keep_history(self) -> None:
        """From now on remember every version stored, for `history`. Off unless asked for (a scenario's SUT asks),
        so that a store used on its own pays nothing; on, it costs a reference per write, since stored objects are
        replaced on every write and never changed in place."""
        if self._history is None:
            self._history = {}

    @contextmanager
    def dry_run(self) -> Iterator[None]:
        """Writes made inside run every check and mutation and return what they would store, but store nothing,
        use no resourceVersion and notify no watch (the API's dryRun=All)."""
        self._dry_run = True
        try:
            yield
        finally:
            self._dry_run = False

    # --- the release it is ---------------------------------------------------------------------
    @property
    def gates(self) -> FeatureGates:
        return self._gates

    @gates.setter
    def gates(self, gates: FeatureGates) -> None:
        """An API server restart with `gates` (and the release they name); storage survives. A release
        without some gated fields decodes stored objects without them: they are not served, and the next
        write of an object loses them (docs/decisions.md D-5963-5); watchers see every object whose served
        form changed, as their relist after the restart would."""
        before = self._unknown
        self._gates = gates
        self._admitted.clear()
        self._unknown = unknown_fields(gates)
        if self._unknown == before:
            return
        for key in sorted(self._objects, key=lambda k: (k[0], k[1] or "", k[2])):
            stored = self._objects[key]
            was, now = without_fields(stored, before), self._served(stored)
            if was != now:
                self._push("MODIFIED", copy_object(now), copy_object(was))

    def _served(self, stored: Obj) -> Obj:
        """`stored` as this release decodes it: the object itself, or a copy without the unknown fields."""
        unknown = self._unknown
        if not unknown:
            return stored
        made_from, by_kind = self._unknown_by_kind
        if made_from is not unknown:
            by_kind = {}
            self._unknown_by_kind = (unknown, by_kind)
        kind = stored["kind"]
        fields = by_kind.get(kind)
        if fields is None:
            fields = by_kind[kind] = tuple(gated for gated in unknown if gated.kind == kind)
        return without_fields(stored, fields) if fields else stored

    # --- extension -----------------------------------------------------------------------------
    def add_admission(self, check: AdmissionCheck) -> None:
        self._admission.append(check)
        self._admitted.clear()

    def add_mutator(self, mutator: Mutator) -> None:
        self._mutators.append(mutator)
        self._admitted.clear()

    def admitted(self, obj: Obj | None) -> bool:
        """Whether `obj` is the stored object itself (as a write's `old` is) and was stored through this store's
        mutators and checks under its current gates, so that what it holds needs no stripping or defaulting again."""
        if obj is None:
            return False
        key = object_key(obj)
        return key in self._admitted and self._objects.get(key) is obj

    def watch(self, *kinds: str) -> Watch:
        stream = Watch(frozenset(kinds) if kinds else None)
        self._watches.append(stream)
        self._watches_of_kind.clear()
        return stream

    # --- reads ---------------------------------------------------------------------------------
    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        stored = self._objects.get(self._key(kind, name, namespace))
        if stored is None:
            return None
        self.work["copied"] += 1
        copied: Obj = copy_object(self._served(stored))
        return copied

    def peek(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """The stored object itself, without a copy, for readers that never modify it (as `view` for a list);
        as this release serves it, like every read."""
        stored = self._objects.get(self._key(kind, name, namespace))
        if stored is None:
            return None
        self.work["handed"] += 1
        return self._served(stored)

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        copies = [copy_object(self._served(obj)) for obj in self._iter(kind, namespace)]
        self.work["copied"] += len(copies)
        return copies

    def history(self, kind: str, name: str, namespace: str | None = None) -> builtins.list[Obj]:
        """Copies of every version stored under this key since `keep_history()`, oldest first, as this release
        serves them; a deletion adds none. A store that keeps no history raises ValueError."""
        if self._history is None:
            raise ValueError("this store keeps no history of writes; call keep_history() before the first write")
        return [copy_object(self._served(obj)) for obj in self._history.get(self._key(kind, name, namespace), ())]

    def view(self, kind: str, namespace: str | None = None) -> builtins.list[Obj]:
        """The stored objects themselves, without copies, for readers that never modify them (an informer's
        initial list). Safe to keep: the store replaces an object on every write, never changes it in place."""
        found = [self._served(obj) for obj in self._iter(kind, namespace)] if self._unknown else list(
            self._iter(kind, namespace))
        self.work["handed"] += len(found)
        return found

    def _iter(self, kind: str, namespace: str | None = None) -> Iterator[Obj]:
        """Stored objects of a kind, sorted by namespace and name; callers must not modify them."""
        of_kind = self._keys_of_kind.get(kind, ())
        self.work["scanned"] += len(of_kind)
        keys = sorted(
            (key for key in of_kind if namespace is None or key[1] == namespace),
            key=lambda key: (key[1] or "", key[2]),
        )
        return (self._objects[key] for key in keys)

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        """The labels of `namespace`: its Namespace object's where this API server serves Namespaces (`serve`),
        else those `label_namespace` gave it (in process every namespace exists and none is an object)."""
        if "Namespace" in self.kinds:
            stored = self._objects.get(("Namespace", None, namespace))
            return dict(((stored or {}).get("metadata") or {}).get("labels") or {})
        return dict(self._namespace_labels.get(namespace, {}))

    def label_namespace(self, namespace: str, labels: dict[str, str]) -> None:
        """Add `labels` to `namespace`, as a cluster administrator labels it."""
        if "Namespace" not in self.kinds:
            self._namespace_labels.setdefault(namespace, {}).update(labels)
            return
        stored = self.get("Namespace", namespace)
        if stored is None:
            raise ApiError("NotFound", f'namespaces "{namespace}" not found')
        stored["metadata"].setdefault("labels", {}).update(labels)
        self.update(stored)

    # --- writes --------------------------------------------------------------------------------
    # A write returns the object as now stored, a copy of the caller's own; a caller that does not use it or only
    # reads it passes `copy_result=False` and gets the stored object itself, not to be changed (as `view`, `peek`).
    def create(self, obj: Obj, *, copy_result: bool = True) -> Obj:
        obj = self._decode(obj)
        info = self._kind_info(obj)
        new = copy_object(obj)
        self.work["copied on write"] += 1
        meta = new.setdefault("metadata", {})
        if info.namespaced:
            meta.setdefault("namespace", DEFAULT_NAMESPACE)
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = f"{meta['generateName']}{next(self._generated_names):05d}"
        if not meta.get("name"):
            raise ApiError("Invalid", f"{new['kind']}: metadata.name is required",
                           [FieldCause("metadata.name", "Required value")])
        key = object_key(new)
        if key in self._objects:
            raise ApiError("AlreadyExists", f"{new['kind']} {self._display(key)} already exists")
        if info.has_status and "status" in obj and new["kind"] not in CREATED_WITH_STATUS:
            new.pop("status")  # status is written through its subresource only
        if info.has_status and not isinstance(new.get("status"), dict):
            new["status"] = {}  # a Go struct, never omitted: kube-apiserver answers `status: {}` for an empty one
        new = self._admit("CREATE", new, None)
        meta = new["metadata"]
        meta["uid"] = f"uid-{next(self._uid_counter):06d}"
        while meta["uid"] in self._uids:  # taken by an object `load` brought back
            meta["uid"] = f"uid-{next(self._uid_counter):06d}"
        meta["creationTimestamp"] = format_time(self.clock.now())
        meta["generation"] = 1
        meta.pop("deletionTimestamp", None)
        return self._store(key, new, None, "ADDED", copy_result, admitted=True)

    def load(self, obj: Obj) -> Obj:
        """Store an object exactly as given, as if read back from etcd: no admission, no stripping,
        status kept. For tools that take manifests "as the API server stored them"."""
        obj = self._decode(obj)
        self._kind_info(obj)
        new = copy_object(obj)
        meta = new.setdefault("metadata", {})
        if self.kinds[new["kind"]].namespaced:
            meta.setdefault("namespace", DEFAULT_NAMESPACE)
        meta.setdefault("uid", f"uid-{next(self._uid_counter):06d}")
        meta.setdefault("creationTimestamp", format_time(self.clock.now()))
        meta.setdefault("generation", 1)
        key = object_key(new)
        old = self._objects.get(key)
        return self._store(key, new, old, "MODIFIED" if old else "ADDED")

    def update(self, obj: Obj, *, copy_result: bool = True, if_changed: bool = False) -> Obj:
        """Replace everything but status (for kinds with a status subresource) and system metadata. With
        `if_changed`, a write that leaves the object as it is stores nothing and answers the stored object, as
        kube-apiserver's storage does (same resourceVersion, no watch event)."""
        obj = self._decode(obj)
        key, old = self._existing(obj)
        self.work["copied on write"] += 1
        if self.kinds[key[0]].has_status:
            new = _copy_without_status(obj)  # the status written is replaced by the stored one: not copied
            if "status" in old and self.admitted(old):
                new["status"] = old["status"]  # an admitted object's status is shared (see `_sharing`)
                self.work["shared on write"] += 1
            elif "status" in old:
                new["status"] = copy_object(old["status"])
                self.work["copied on write"] += 1
            else:
                new.pop("status", None)
        else:
            new = copy_object(obj)
        self._keep_system_metadata(new, old)
        new = self._admit("UPDATE", new, old)
        if new.get("spec") != old.get("spec"):  # compared once defaulted, as upstream's decoder defaults first
            new["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
        if old.get("metadata", {}).get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            self._remove(key, new)  # the last finalizer went: the object is deleted now
            return new
        if if_changed and _unchanged(new, old):
            return self._answer(old, copy_result)
        return self._store(key, new, old, "MODIFIED", copy_result, admitted=True)

    def update_status(self, obj: Obj, *, copy_result: bool = True, if_changed: bool = False,
                      copy_status: bool = True) -> Obj:
        """Replace only the status of an object whose kind has a status subresource (`if_changed` as for
        `update`). With `copy_status=False` the caller hands over the status it built for this write (it keeps
        and changes it no more): where the stored object is `admitted`, it is stored as given, not copied."""
        key, old = self._existing(obj)
        if not self.kinds[key[0]].has_status:
            raise ApiError("NotFound", f"{key[0]} has no status subresource")
        # the stored status is replaced by the one written: not copied; the rest is shared where it may be
        shared = self.admitted(old)
        new = _sharing(old) if shared else _copy_without_status(old)
        self.work["shared on write" if shared else "copied on write"] += 1
        status = obj.get("status")
        if not isinstance(status, dict):
            new["status"] = {}
        elif copy_status or not shared:
            # A status handed over may hold parts of the stored one: kept as given only where the mutators leave
            # the parts a write does not change alone (an admitted object, see `_sharing`), else copied.
            new["status"] = copy_object(status)
            self.work["copied on write"] += 1
        else:
            new["status"] = status
            self.work["handed over on write"] += 1
        new = self._admit("UPDATE", new, old)
        if if_changed and _unchanged(new, old):
            return self._answer(old, copy_result)
        return self._store(key, new, old, "MODIFIED", copy_result, admitted=True)

    def bind(self, namespace: str, name: str, node: str, *, copy_result: bool = True) -> Obj:
        """The pods/binding subresource: set spec.nodeName once."""
        key = self._key("Pod", name, namespace)
        old = self._objects.get(key)
        if old is None:
            raise ApiError("NotFound", f"Pod {namespace}/{name} not found")
        if old["spec"].get("nodeName"):
            raise ApiError("Conflict", f"Pod {namespace}/{name} is already bound to {old['spec']['nodeName']}")
        # No mutator or check runs on a binding: the new version shares all but what it changes (see `_sharing`).
        new = _sharing(old)
        self.work["shared on write"] += 1
        new["spec"] = {**old["spec"], "nodeName": node}
        # as kube-apiserver's binding does: the pod's PodScheduled condition becomes True in the same write
        conditions = [c for c in (old.get("status") or {}).get("conditions") or [] if c.get("type") != "PodScheduled"]
        conditions.append({"type": "PodScheduled", "status": "True",
                           "lastTransitionTime": format_time(self.clock.now())})
        new["status"] = {**(old.get("status") or {}), "conditions": conditions}
        return self._store(key, new, old, "MODIFIED", copy_result, admitted=key in self._admitted)

    def delete(self, kind: str, name: str, namespace: str | None = None,
               grace_period_seconds: int | None = None) -> None:
        """Delete now, or mark for deletion while finalizers remain; dependents are collected. A pod bound to
        a node is deleted gracefully, as kube-apiserver does: it is marked for deletion and stays until its
        node's kubelet has finished with it and deletes it again with a grace period of 0."""
        key = self._key(kind, name, namespace)
        old = self._objects.get(key)
        if old is None:
            raise ApiError("NotFound", f"{kind} {self._display(key)} not found")
        if kind == "Pod" and old["spec"].get("nodeName") and grace_period_seconds != 0:
            if not old["metadata"].get("deletionTimestamp"):
                new = _sharing(old)  # a deletion mark runs no mutator or check
                new["metadata"]["deletionTimestamp"] = format_time(self.clock.now())
                new["metadata"]["deletionGracePeriodSeconds"] = (
                    DEFAULT_GRACE_PERIOD_SECONDS if grace_period_seconds is None else grace_period_seconds
                )
                self._store(key, new, old, "MODIFIED", copy_result=False,  # delete returns nothing
                            admitted=key in self._admitted)
            return
        if old["metadata"].get("finalizers"):
            if not old["metadata"].get("deletionTimestamp"):
                new = _sharing(old)
                new["metadata"]["deletionTimestamp"] = format_time(self.clock.now())
                self._store(key, new, old, "MODIFIED", copy_result=False, admitted=key in self._admitted)
            return
        self._remove(key, _sharing(old))  # the last version only gets a new resourceVersion

    # --- internals -----------------------------------------------------------------------------
    def _decode(self, obj: Obj) -> Obj:
        """An object written in another version its release serves (resource.k8s.io/v1beta1, v1beta2) is
        converted to the stored one, as kube-apiserver decodes every served version into one form."""
        from draconform.validation.versions import served_versions, to_v1, version_of

        version = version_of(obj)
        if version in (None, "v1") or version not in served_versions(str(obj.get("kind")), self.gates.release):
            return obj  # stored as is, or refused by _kind_info
        converted, problems = to_v1(obj)
        if problems:
            raise ApiError("Invalid", f"{obj.get('kind')} is invalid: "
                                      + "; ".join(f"{p.field}: {p.message}" for p in problems),
                           [FieldCause(p.field, p.message, p.rule) for p in problems])
        return converted

    def _kind_info(self, obj: Obj) -> KindInfo:
        kind = obj.get("kind")
        if kind not in self.kinds:
            raise ApiError("NotFound", f"the server does not serve kind {kind!r}")
        expected = self.kinds[kind].api_version
        if obj.get("apiVersion", expected) != expected:
            raise ApiError("NotFound", f"{kind} is served as {expected}, not {obj.get('apiVersion')}")
        return self.kinds[kind]

    def _key(self, kind: str, name: str, namespace: str | None) -> Key:
        if kind not in self.kinds:
            raise ApiError("NotFound", f"the server does not serve kind {kind!r}")
        return kind, (namespace or DEFAULT_NAMESPACE) if self.kinds[kind].namespaced else None, name

    def _existing(self, obj: Obj) -> tuple[Key, Obj]:
        self._kind_info(obj)
        meta = obj.get("metadata") or {}
        key = self._key(obj["kind"], meta.get("name", ""), meta.get("namespace"))
        old = self._objects.get(key)
        if old is None:
            raise ApiError("NotFound", f"{key[0]} {self._display(key)} not found")
        wanted = meta.get("resourceVersion")
        if wanted and wanted != old["metadata"]["resourceVersion"]:
            raise ApiError(
                "Conflict",
                f"{key[0]} {self._display(key)}: the object has been modified; please apply your changes "
                f"to the latest version (have {wanted}, stored {old['metadata']['resourceVersion']})",
            )
        return key, self._served(old)  # what this release decodes from storage is what the write starts from

    @staticmethod
    def _keep_system_metadata(new: Obj, old: Obj) -> None:
        meta = new.setdefault("metadata", {})
        for field_name in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                           "namespace"):
            if field_name in old["metadata"]:
                meta[field_name] = old["metadata"][field_name]

    def _admit(self, operation: Operation, new: Obj, old: Obj | None) -> Obj:
        for mutate in self._mutators:
            new = mutate(operation, new, old, self.gates)
        causes = [cause for check in self._admission for cause in check(operation, new, old)]
        if causes:
            kind, name = new["kind"], new["metadata"].get("name", "")
            summary = "; ".join(f"{cause.field}: {cause.message}" for cause in causes)
            raise ApiError("Invalid", f"{kind} {name!r} is invalid: {summary}", causes)
        return new

    def _store(self, key: Key, new: Obj, old: Obj | None, event: EventType, copy_result: bool = True,
               admitted: bool = False) -> Obj:
        if self._dry_run:
            new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"] if old is not None else ""
            answer: Obj = copy_object(self._served(new))  # a dry run stores nothing
            return answer
        new["metadata"]["resourceVersion"] = str(next(self._revision))
        self.work["writes"] += 1
        if old is not None:
            self._unindex(key, old)
        self._objects[key] = new
        if admitted:
            self._admitted.add(key)
        else:
            self._admitted.discard(key)
        if self._history is not None:
            self._history.setdefault(key, []).append(new)
        self._keys_of_kind.setdefault(key[0], set()).add(key)
        self._index(key, new)
        self._notify(event, new, old)
        return self._answer(self._served(new), copy_result)

    def _answer(self, obj: Obj, copy_result: bool) -> Obj:
        """What a write answers: a copy of its own for the caller, or the stored object for one that only reads it."""
        self.work["copied" if copy_result else "handed"] += 1
        return copy_object(obj) if copy_result else obj

    def _remove(self, key: Key, last: Obj) -> None:
        if self._dry_run:
            return
        old = self._objects.pop(key)
        self._admitted.discard(key)
        self._keys_of_kind[key[0]].discard(key)
        self._unindex(key, old)
        last["metadata"]["resourceVersion"] = str(next(self._revision))
        self._notify("DELETED", last, old)
        self._collect_dependents(last["metadata"]["uid"])

    def _index(self, key: Key, obj: Obj) -> None:
        self._uids[obj["metadata"]["uid"]] = key
        for ref in obj["metadata"].get("ownerReferences") or []:
            self._dependents.setdefault(ref.get("uid", ""), set()).add(key)

    def _unindex(self, key: Key, obj: Obj) -> None:
        self._uids.pop(obj["metadata"]["uid"], None)
        for ref in obj["metadata"].get("ownerReferences") or []:
            dependents = self._dependents.get(ref.get("uid", ""))
            if dependents is not None:
                dependents.discard(key)
                if not dependents:
                    del self._dependents[ref.get("uid", "")]

    def _collect_dependents(self, owner_uid: str) -> None:
        """Background cascading deletion: an object goes once none of its owners exist any more."""
        for key in sorted(self._dependents.get(owner_uid, ()), key=lambda k: (k[0], k[1] or "", k[2])):
            obj = self._objects.get(key)
            if obj is None:
                continue
            owners = obj["metadata"].get("ownerReferences") or []
            if not any(ref.get("uid") in self._uids for ref in owners):
                self.delete(key[0], key[2], key[1])

    def _notify(self, event_type: EventType, new: Obj, old: Obj | None) -> None:
        """One event for the watches that want the kind. It carries the stored objects themselves, as `view` and
        `peek` do: watchers only read what they are sent (an informer's cache), and the store never changes an
        object in place, so neither the object written nor the one it replaced needs a copy."""
        self._push(event_type, self._served(new), self._served(old) if old is not None else None)

    def _push(self, event_type: EventType, new: Obj, old: Obj | None) -> None:
        kind = new["kind"]
        streams = self._watches_of_kind.get(kind)
        if streams is None or any(stream.stopped for stream in streams):
            # a stopped watch wants nothing again: it is dropped, and the list of the kind's watches made anew
            self._watches = [stream for stream in self._watches if not stream.stopped]
            self._watches_of_kind.clear()
            streams = self._watches_of_kind[kind] = [stream for stream in self._watches if stream.wants(kind)]
        if not streams:
            return
        event = WatchEvent(event_type, new, old)
        for stream in streams:
            stream.push(event)
        self.work["events"] += len(streams)

    @staticmethod
    def _display(key: Key) -> str:
        return f"{key[1]}/{key[2]}" if key[1] else key[2]


def _sharing(stored: Obj) -> Obj:
    """A new version of a stored object that shares everything with it but the top level and the metadata's top
    level, where the store writes (resourceVersion, generation, deletion marks); the caller replaces what it
    changes rather than changing it in place. Safe because no stored object is ever changed in place (readers of
    `peek`, `view` and watch events only read), and used only where nothing walks the shared parts to change them:
    a binding or a deletion mark, which run no mutator, and a status write to an object `admitted` under the
    current mutators, which leave the parts a write does not change alone (drop_disabled_fields_changed)."""
    return {**stored, "metadata": dict(stored["metadata"])}


def _copy_without_status(obj: Obj) -> Obj:
    """A copy of `obj` whose status is None (in its place, so the keys keep their order), for a write that puts
    another status there: the status about to be replaced is not copied."""
    copied: Obj = copy_object(obj if "status" not in obj else
                              {key: None if key == "status" else value for key, value in obj.items()})
    return copied


def _unchanged(new: Obj, old: Obj) -> bool:
    """Whether a write leaves the object as stored: resourceVersion aside, and managed fields' timestamps aside
    (upstream keeps the old ones when nothing else changed)."""
    return _comparable(new) == _comparable(old)


def _comparable(obj: Obj) -> Obj:
    meta = {key: value for key, value in (obj.get("metadata") or {}).items() if key != "resourceVersion"}
    if "managedFields" in meta:
        meta["managedFields"] = [{k: v for k, v in entry.items() if k != "time"} if isinstance(entry, dict)
                                 else entry for entry in meta["managedFields"] or []]
    return {**obj, "metadata": meta}
