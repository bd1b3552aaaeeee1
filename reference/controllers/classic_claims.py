"""kube-controller-manager's claim controller for KEP-3063's classic API (seed "kube-controller-manager"
and the PodResourceClaim.Template comments): for each template entry of a pod it creates the claim
`<pod>-<entry>` with the pod as controlling owner, never touches a claim of that name the pod does
not own, retries failed creates with back-off on the cluster clock, counts creates and failures
(resource_controller_create_total, resource_controller_create_failures_total), and, as the seed's
"future extension" allows, drops reservedFor entries of pods that no longer exist."""

from __future__ import annotations

from contextlib import suppress
from datetime import timedelta

from prometheus_client import Counter

from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.clock import Clock
from draconform.reference.events import EventRecorder
from draconform.reference.metrics import MetricsRegistry
from draconform.sut import ApiError, Obj
from draconform.validation.classic import API_VERSION, generated_claim_name

INITIAL_RETRY = timedelta(seconds=1)
MAX_RETRY = timedelta(minutes=5)


class ClassicClaimController:
    def __init__(self, store: ApiStore, clock: Clock, events: EventRecorder, metrics: MetricsRegistry) -> None:
        self._store = store
        self._clock = clock
        self._events = events
        self._creates = _counter(metrics, "resource_controller_create_total", "ResourceClaims created from templates")
        self._failures = _counter(metrics, "resource_controller_create_failures_total",
                                  "Failed attempts to create a ResourceClaim from a template")
        self._watch = store.watch("Pod", "ResourceClaim")
        self._retries: dict[tuple[str, str], int] = {}  # pod key -> failed attempts so far
        self._due: set[tuple[str, str]] = set()  # pods whose retry timer fired
        self._warned: set[tuple[str, str]] = set()  # (pod uid, claim) pairs already reported
        self._stopped = False
        self._resync()

    def stop(self) -> None:
        self._stopped = True
        self._watch.stop()

    def sync(self) -> bool:
        events = self._watch.drain()
        due, self._due = self._due, set()
        if events or due:
            self._resync()
        return bool(events) or bool(due)

    def _resync(self) -> None:
        live = {pod["metadata"]["uid"] for pod in self._store.list("Pod")}
        for pod in self._store.list("Pod"):
            if not pod["metadata"].get("deletionTimestamp"):
                self._create_missing(pod)
        for claim in self._store.list("ResourceClaim"):
            self._drop_gone_users(claim, live)

    # --- claims from templates --------------------------------------------------------------------
    def _create_missing(self, pod: Obj) -> None:
        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
        for entry in pod["spec"].get("resourceClaims") or []:
            template = entry.get("template")
            if template is None:
                continue
            name = generated_claim_name(pod["metadata"]["name"], entry["name"])
            existing = self._store.get("ResourceClaim", name, key[0])
            if existing is not None:
                self._check_owner(pod, existing)
                continue
            try:
                self._store.create(_claim_for(pod, name, template))
            except ApiError as error:
                self._failures.inc()
                self._retry_later(key)
                self._events.record(pod, "Warning", "FailedResourceClaimCreation",
                                    f'creating resource claim "{name}": {error.message}')
                return
            self._creates.inc()
            self._retries.pop(key, None)

    def _check_owner(self, pod: Obj, claim: Obj) -> None:
        owned = any(ref.get("uid") == pod["metadata"]["uid"] for ref in claim["metadata"].get("ownerReferences") or [])
        marker = (pod["metadata"]["uid"], claim["metadata"]["name"])
        if not owned and marker not in self._warned:
            self._warned.add(marker)
            self._events.record(pod, "Warning", "ResourceClaimNotOwned",
                                f'resource claim "{claim["metadata"]["name"]}" exists but was not created for this pod')

    def _retry_later(self, key: tuple[str, str]) -> None:
        attempts = self._retries.get(key, 0) + 1
        self._retries[key] = attempts
        delay = min(INITIAL_RETRY * (1 << min(attempts - 1, 16)), MAX_RETRY)
        self._clock.call_at(self._clock.now() + delay, lambda: self._fire(key, attempts))

    def _fire(self, key: tuple[str, str], attempts: int) -> None:
        if not self._stopped and self._retries.get(key) == attempts:
            self._due.add(key)

    # --- reservations of pods that are gone (the seed's optional fallback) ------------------------
    def _drop_gone_users(self, claim: Obj, live: set[str]) -> None:
        status = claim.get("status") or {}
        reserved = status.get("reservedFor") or []
        kept = [entry for entry in reserved if entry.get("kind") != "Pod" or entry.get("uid") in live]
        if len(kept) != len(reserved):
            status["reservedFor"] = kept
            with suppress(ApiError):  # changed meanwhile: its watch event brings it back
                self._store.update_status(claim)


def _claim_for(pod: Obj, name: str, template: Obj) -> Obj:
    metadata = template.get("metadata") or {}
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "namespace": pod["metadata"]["namespace"],
            **{key: dict(metadata[key]) for key in ("labels", "annotations") if metadata.get(key)},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"],
                                 "uid": pod["metadata"]["uid"], "blockOwnerDeletion": True,
                                 "controller": True}],
        },
        "spec": dict(template.get("spec") or {}),
    }


def _counter(metrics: MetricsRegistry, name: str, documentation: str) -> Counter:
    # prometheus_client adds the _total suffix itself
    return Counter(name.removesuffix("_total"), documentation, registry=metrics.registry)
