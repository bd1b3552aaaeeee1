"""The resourceclaim controller of kube-controller-manager (KEP-3063 "kube-controller-manager"):
creates a pod's ResourceClaims from its ResourceClaimTemplates with the pod as owner, removes pods that
are gone from `status.reservedFor` (and finished or deleted pods that no node's kubelet will release),
deallocates a claim when it removes its last consumer or the claim is being deleted (as upstream does: an
allocated claim that nobody has reserved yet keeps its allocation), and deletes generated claims of finished
pods."""

from __future__ import annotations

from draconform.kube.kinds import DELETE_PROTECTION_FINALIZER
from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.events import EventRecorder
from draconform.reference.podclaims import (
    POD_CLAIM_NAME_ANNOTATION,
    claim_from_template,
    pod_claims,
    pod_is_terminal,
)
from draconform.sut import ApiError, Obj

STATUS_WRITE_ATTEMPTS = 5  # a pod's status written by a second component in between: read it again and retry


class ResourceClaimController:
    def __init__(self, store: ApiStore, events: EventRecorder) -> None:
        self._store = store
        self._events = events
        self._watch = store.watch("Pod", "ResourceClaim", "ResourceClaimTemplate")
        # (owning pod uid, pod claim entry) -> (namespace, name) of each generated claim seen, as upstream's
        # informer index finds a pod's claims by owner without listing every claim
        self._generated: dict[tuple[str, str], tuple[str, str]] = {}
        self._resync_all()  # an informer's initial list

    def stop(self) -> None:
        self._watch.stop()

    def sync(self) -> bool:
        """Handle queued watch events; True when any arrived."""
        events = self._watch.drain()
        for event in events:
            kind = event.object["kind"]
            if kind == "Pod":
                self._sync_pod(event.object, deleted=event.type == "DELETED")
            elif kind == "ResourceClaim" and event.type == "DELETED":
                self._remember(event.object, forget=True)
            elif kind == "ResourceClaim":
                self._remember(event.object)
                claim = self._store.peek("ResourceClaim", event.object["metadata"]["name"],
                                         event.object["metadata"]["namespace"])
                if claim is not None:
                    self._sync_claim(claim)
            elif kind == "ResourceClaimTemplate":
                for pod in self._store.view("Pod", event.object["metadata"]["namespace"]):  # read only
                    self._create_missing_claims(pod)
        return bool(events)

    def _resync_all(self) -> None:
        for claim in self._store.view("ResourceClaim"):
            self._remember(claim)
        # Read only (a write starts from its own copy): the store's objects, not copies of them
        for pod in self._store.view("Pod"):
            self._sync_pod(pod, deleted=False)
        for claim in self._store.view("ResourceClaim"):
            self._sync_claim(claim)

    # --- pods ----------------------------------------------------------------------------------
    def _sync_pod(self, pod: Obj, deleted: bool) -> None:
        namespace = pod["metadata"]["namespace"]
        if not deleted:
            # Work from the newest state, as an informer cache would: a queued event may be stale.
            latest = self._store.peek("Pod", pod["metadata"]["name"], namespace)
            if latest is None or latest["metadata"]["uid"] != pod["metadata"]["uid"]:
                return
            pod = latest
        if not deleted and not pod["metadata"].get("deletionTimestamp") and not pod_is_terminal(pod):
            self._create_missing_claims(pod)
            return
        # The pod is gone or finished: its claims may lose their reservation or be deleted.
        generated = [(entry.claim, entry.template is not None) for entry in pod_claims(pod) if entry.claim]
        extended = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
        if extended:  # KEP-5004: the claim the scheduler wrote for the pod's extended resources
            generated.append((extended, True))
        for name, owned in generated:
            claim = self._store.peek("ResourceClaim", name, namespace)
            if claim is None:
                continue
            if owned and _owned_by(claim, pod) and not deleted:
                self._delete(claim)  # a finished pod's generated claim; deleted pods rely on GC
            self._sync_claim(claim)

    def _create_missing_claims(self, pod: Obj) -> None:
        namespace = pod["metadata"]["namespace"]
        statuses: list[Obj] = list((pod.get("status") or {}).get("resourceClaimStatuses") or [])
        created = False
        for entry in pod_claims(pod):
            if entry.template is None or entry.claim is not None:
                continue
            template = self._store.peek("ResourceClaimTemplate", entry.template, namespace)
            if template is None:
                self._events.record(
                    pod, "Warning", "FailedResourceClaimCreation",
                    f"resourceclaimtemplate {entry.template!r} not found",
                )
                continue
            # A claim generated earlier whose name never reached the pod's status (the status write lost a
            # race) is adopted, as upstream finds it by owner and annotation, rather than made twice.
            claim = self._generated_claim(pod, entry.entry) or self._store.create(
                claim_from_template(pod, entry.entry, template), copy_result=False)  # only its name is read
            self._remember(claim)
            statuses.append({"name": entry.entry, "resourceClaimName": claim["metadata"]["name"]})
            created = True
        for _ in range(STATUS_WRITE_ATTEMPTS if created else 0):
            latest = self._store.peek("Pod", pod["metadata"]["name"], namespace)  # read only: the write is new
            if latest is None:
                return
            try:
                self._store.update_status({**latest, "status": {**(latest.get("status") or {}),
                                                                "resourceClaimStatuses": statuses}},
                                          copy_result=False, copy_status=False)
                return
            except ApiError as error:
                if error.reason != "Conflict":  # another writer (the scheduler) got there first: read again
                    raise

    def _generated_claim(self, pod: Obj, entry: str) -> Obj | None:
        uid = pod["metadata"]["uid"]
        known = self._generated.get((uid, entry))
        claim = self._store.peek("ResourceClaim", known[1], known[0]) if known is not None else None
        if claim is None:
            return None
        meta = claim["metadata"]
        if (meta.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) == entry and any(
                ref.get("uid") == uid for ref in meta.get("ownerReferences") or []):
            return claim
        return None

    def _remember(self, claim: Obj, forget: bool = False) -> None:
        """Index a claim generated for a pod's claim entry by its owner and entry (or drop it once deleted)."""
        meta = claim["metadata"]
        entry = (meta.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION)
        if entry is None:
            return
        where = (str(meta.get("namespace", "")), str(meta["name"]))
        for ref in meta.get("ownerReferences") or []:
            key = (str(ref.get("uid", "")), str(entry))
            if forget:
                if self._generated.get(key) == where:
                    del self._generated[key]
            elif ref.get("uid"):
                self._generated[key] = where

    # --- claims --------------------------------------------------------------------------------
    def _sync_claim(self, claim: Obj) -> None:
        status = claim.get("status") or {}
        reserved = status.get("reservedFor") or []
        valid = [entry for entry in reserved if self._consumer_active(claim, entry)]
        deleting = bool(claim["metadata"].get("deletionTimestamp"))
        if valid == reserved and not (deleting and not valid and status.get("allocation")):
            if deleting and not valid:
                self._release_finalizer_if_done(claim)
            return
        written = {**claim["status"], "reservedFor": valid}  # the claim read is the store's own: not changed
        if not valid and (reserved or deleting):
            # Deallocation follows the transition from "in use" to "unused" (this write), or a deletion; an
            # allocated claim that nobody reserved yet is left alone, as upstream does: a driver or an
            # administrator may allocate a claim before anyone reserves it.
            written.pop("reservedFor")
            if DELETE_PROTECTION_FINALIZER in (claim["metadata"].get("finalizers") or []) or deleting:
                written.pop("allocation", None)
                written.pop("devices", None)
        try:
            updated = self._store.update_status({**claim, "status": written}, copy_result=False,  # only read
                                                copy_status=False)
        except ApiError as error:
            if error.reason in ("Conflict", "NotFound"):
                return  # a newer event for this claim is queued and will be handled
            raise
        self._release_finalizer_if_done(updated)

    def _consumer_active(self, claim: Obj, entry: Obj) -> bool:
        if entry.get("resource") != "pods":
            return True  # only pods are tracked here; other consumers manage themselves
        pod = self._store.peek("Pod", entry.get("name", ""), claim["metadata"]["namespace"])
        if pod is None or pod["metadata"]["uid"] != entry.get("uid"):
            return False
        node = pod["spec"].get("nodeName")
        if node and self._store.peek("Node", node) is not None:
            # The node's kubelet drops the pod once it has unprepared the claim (KEP-3063 "kubelet /
            # Managing resources"); a deleted pod stays until then, a finished one is left to it.
            return True
        return not pod_is_terminal(pod) and not pod["metadata"].get("deletionTimestamp")

    def _release_finalizer_if_done(self, claim: Obj) -> None:
        """The delete-protection finalizer goes once the claim is no longer allocated: called after this
        controller deallocated it or when it is being deleted, never merely because it is not allocated (the
        scheduler adds the finalizer before it writes the allocation)."""
        finalizers = claim["metadata"].get("finalizers") or []
        if DELETE_PROTECTION_FINALIZER not in finalizers or (claim.get("status") or {}).get("allocation"):
            return
        kept = [f for f in finalizers if f != DELETE_PROTECTION_FINALIZER]
        try:  # a new object: the claim read is the store's own
            self._store.update({**claim, "metadata": {**claim["metadata"], "finalizers": kept}}, copy_result=False)
        except ApiError as error:
            if error.reason not in ("Conflict", "NotFound"):
                raise

    def _delete(self, claim: Obj) -> None:
        try:
            self._store.delete("ResourceClaim", claim["metadata"]["name"], claim["metadata"]["namespace"])
        except ApiError as error:
            if error.reason != "NotFound":
                raise


def _owned_by(claim: Obj, pod: Obj) -> bool:
    return any(ref.get("uid") == pod["metadata"]["uid"] for ref in claim["metadata"].get("ownerReferences") or [])

