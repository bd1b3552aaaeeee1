"""The reference kubelet of one node, as far as DRA goes (KEP-3063 "kubelet", KEP-5322).

A pod bound to the node starts (phase Running) only when it is listed in status.reservedFor of every claim it
uses and every driver of those claims has prepared them over the DRAPlugin protocol; otherwise it stays
Pending and an event says why; so does a pod whose template entry names a claim the pod does not own. Taking
a pod up, the kubelet first writes its status once as upstream's does before preparing (not ready, containers
waiting in ContainerCreating); retries write nothing more. A claim is prepared once per node however many pods
share it. Errors are
retried with exponential backoff on the cluster clock, including calls that fail as a whole (a crashed
plugin, a deadline passed), unless the plugin marks a claim's error permanent and DRAHandlePermanentDriverFailures
is on: then the pod fails (phase Failed, in one status write), is never prepared again, and is neither
deleted nor evicted. With DynamicResourceAllocation off the kubelet knows nothing of claims and starts the pod
without its resources (KEP-3063 Version Skew Strategy). With DRAExtendedResource on, the claim the scheduler
wrote for the pod's extended resources (KEP-5004) is one of its claims, as upstream's kubelet appends it.

When a pod finishes or is being deleted, the claims it was the last user of on the node are unprepared (those
whose preparation was attempted, failed ones included); only then is the pod dropped from the claims'
reservedFor, and a deleted pod is removed from the API server (the end of graceful deletion). Failed
unprepare calls are retried with backoff and hold the reservation."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from draconform.kube.featuregates import FeatureGates
from draconform.kube.kinds import DELETE_PROTECTION_FINALIZER
from draconform.kubeletplugin.client import PluginCallError
from draconform.kubeletplugin.types import ClaimRef
from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.clock import Clock, format_time
from draconform.reference.events import EventRecorder
from draconform.reference.kubelet.checkpoint import ClaimRecord, KubeletCheckpoint
from draconform.reference.kubelet.plugins import PluginRegistry, PluginUnavailable
from draconform.reference.podclaims import PodClaim, is_reserved_for, pod_claims, pod_claims_with_extended
from draconform.sut import ApiError, Obj

PodKey = tuple[str, str]  # namespace, name; a namespace of "" marks a pod known only by UID (see `forget`)

INITIAL_BACKOFF = timedelta(seconds=1)
MAX_BACKOFF = timedelta(minutes=5)

# Upstream's kubelet reports DRA failures of a pod under these event reasons.
PREPARE_FAILED = "FailedPrepareDynamicResources"
UNPREPARE_FAILED = "FailedUnprepareDynamicResources"
PERMANENT_GATE = "DRAHandlePermanentDriverFailures"


@dataclass
class PodState:
    uid: str
    attempts: int = 0  # failed attempts in a row, for the backoff
    retry_at: datetime | None = None
    terminating: bool = False
    waiting_for: str = ""  # why the pod may not run yet, recorded as an event once per reason


class Kubelet:
    def __init__(self, node: str, store: ApiStore, clock: Clock, events: EventRecorder, gates: FeatureGates,
                 checkpoint: KubeletCheckpoint, plugins: PluginRegistry,
                 wake: Callable[[str], None] | None = None, container_exits: dict[str, str] | None = None) -> None:
        self.node = node
        self._wake = wake  # told this node's name whenever a pod is marked for the next sync
        self._store = store
        self._clock = clock
        self._events = events
        self._gates = gates
        self._checkpoint = checkpoint
        self._plugins = plugins
        self._exits = {} if container_exits is None else container_exits  # pod UID -> phase, as the runtime says
        self._pods: dict[PodKey, PodState] = {}
        self._dirty: set[PodKey] = set()
        self._stopped = False

    def stop(self) -> None:
        self._stopped = True
        self._plugins.close()

    def notice(self, key: PodKey) -> None:
        """Something about this pod (or one of its claims) changed."""
        self._mark(key)

    def forget_missing(self, live_uids: set[str]) -> None:
        """After a restart: claims the checkpoint holds for pods that no longer exist get unprepared."""
        for record in list(self._checkpoint.claims.values()):
            for uid in sorted(record.pods - live_uids):
                self._pods.setdefault(("", uid), PodState(uid, terminating=True))
                self._mark(("", uid))

    def _mark(self, key: PodKey) -> None:
        """Look at this pod at the next sync."""
        self._dirty.add(key)
        if self._wake is not None:
            self._wake(self.node)

    def sync(self) -> bool:
        keys = sorted(self._dirty)
        self._dirty.clear()
        progressed = False
        for key in keys:
            progressed = self._sync_pod(key) or progressed
        return progressed

    # --- one pod ---------------------------------------------------------------------------------------
    def _sync_pod(self, key: PodKey) -> bool:
        namespace, name = key
        pod = self._store.peek("Pod", name, namespace) if namespace else None  # read only; _set_phase copies
        state = self._pods.get(key)
        if pod is None or (pod.get("spec") or {}).get("nodeName") != self.node:
            if state is None:
                return False
            return self._forget(key, state)
        uid = pod["metadata"]["uid"]
        if state is None or state.uid != uid:
            if state is not None:  # a new pod under the same name; the old one is gone
                self._pods[("", state.uid)] = PodState(state.uid, terminating=True)
                self._mark(("", state.uid))
            state = self._pods[key] = PodState(uid)
        phase = (pod.get("status") or {}).get("phase")
        finishing = bool(pod["metadata"].get("deletionTimestamp")) or phase in ("Succeeded", "Failed")
        if finishing and not state.terminating:
            state.terminating, state.attempts, state.retry_at = True, 0, None  # termination does not wait
        if state.retry_at is not None and self._clock.now() < state.retry_at:
            return False
        if finishing:
            return self._terminate(pod, state)
        if phase == "Running":  # its containers run until the runtime reports them ended
            ended = self._exits.get(uid)
            return self._set_phase(pod, ended) if ended else False
        return self._start(pod, state)

    def _forget(self, key: PodKey, state: PodState) -> bool:
        """The pod object is gone: release what the checkpoint still holds for its UID."""
        if state.retry_at is not None and self._clock.now() < state.retry_at:
            return False
        progressed, done = self._unprepare_for(key, state, None)
        if done:
            del self._pods[key]
        return progressed

    def _start(self, pod: Obj, state: PodState) -> bool:
        if not self._gates.enabled("DynamicResourceAllocation"):
            return self._set_phase(pod, "Running")  # the skew row: started without its resources
        taken_up = self._report_waiting(pod)
        if taken_up is None:
            return True  # the write met a newer pod; the next sync starts from it
        wrote, pod = taken_up is not pod, taken_up
        return self._start_with_claims(pod, state) or wrote

    def _report_waiting(self, pod: Obj) -> Obj | None:
        """Upstream's kubelet writes a pod's status before it prepares the pod's resources: not ready, its
        containers waiting to be created. Written when that changes the status (once, not at every retry);
        returns the pod as stored, or None when the write met a newer version of the pod."""
        # the write changes the status only, and only its top level (each changed field gets a new value): the
        # status is copied one level deep, its untouched parts stay the stored object's (admission walks them no more)
        status = dict(pod.get("status") or {})
        waiting = {**pod, "status": status}
        status["phase"] = "Pending"
        _set_conditions(status, waiting, "Pending", self._clock.now())
        _set_container_statuses(status, waiting, "Pending", self._clock.now())
        if status == (pod.get("status") or {}):
            return pod
        try:
            return self._store.update_status(waiting, copy_result=False, copy_status=False)  # our own copy
        except ApiError as error:
            if error.reason not in ("Conflict", "NotFound"):
                raise
            self._mark((pod["metadata"]["namespace"], pod["metadata"]["name"]))
            return None

    def _start_with_claims(self, pod: Obj, state: PodState) -> bool:
        namespace, uid = pod["metadata"]["namespace"], pod["metadata"]["uid"]
        claims: list[Obj] = []
        for entry in self._claims_of(pod):
            if entry.claim is None:
                return self._wait(pod, state, f"the ResourceClaim of entry {entry.entry!r} has not been created yet")
            claim = self._store.peek("ResourceClaim", entry.claim, namespace)  # read only
            if claim is None:
                return self._wait(pod, state, f"ResourceClaim {namespace}/{entry.claim} does not exist")
            if entry.template is not None and not any(
                    ref.get("uid") == uid for ref in claim["metadata"].get("ownerReferences") or []):
                # KEP-3063 PodResourceClaim.Template: a claim of that name the pod does not own is not used
                return self._wait(pod, state, f"ResourceClaim {namespace}/{entry.claim} of entry {entry.entry!r} is "
                                              f"not owned by the pod, so it may not use the claim")
            if not is_reserved_for(claim, uid):
                return self._wait(
                    pod, state,
                    f"the pod is not in status.reservedFor of ResourceClaim {namespace}/{entry.claim}, so it may "
                    f"not use the claim",
                )
            if not (claim.get("status") or {}).get("allocation"):
                return self._wait(pod, state, f"ResourceClaim {namespace}/{entry.claim} is not allocated")
            claims.append(claim)
        records = [self._record(claim, uid) for claim in claims]
        transient, permanent = self._prepare(records)
        if permanent:
            return self._fail(pod, permanent)
        if transient:
            self._events.record(pod, "Warning", PREPARE_FAILED, "; ".join(transient) + " (will retry)")
            self._back_off((namespace, pod["metadata"]["name"]), state)
            return True
        state.attempts = 0
        return self._set_phase(pod, "Running")

    def _record(self, claim: Obj, pod_uid: str) -> ClaimRecord:
        meta = claim["metadata"]
        record = self._checkpoint.claims.get(meta["uid"])
        if record is None:
            results = claim["status"]["allocation"].get("devices", {}).get("results") or []
            drivers = tuple(sorted({str(result.get("driver")) for result in results}))
            record = ClaimRecord(ClaimRef(meta["namespace"], meta["name"], meta["uid"]), drivers)
            self._checkpoint.claims[meta["uid"]] = record
        record.pods.add(pod_uid)
        return record

    def _prepare(self, records: list[ClaimRecord]) -> tuple[list[str], list[str]]:
        """Ask each driver, in one call, for the pod's claims it has not prepared yet. Returns the transient
        and the permanent failures; after a permanent one no further driver is asked."""
        transient: list[str] = []
        permanent: list[str] = []
        for driver in sorted({d for record in records for d in record.drivers if d not in record.prepared}):
            pending = [r for r in records if driver in r.drivers and driver not in r.prepared]
            try:
                client = self._plugins.client(driver)
            except PluginUnavailable as err:
                transient.append(str(err))
                continue
            for record in pending:
                record.sent.add(driver)
            try:
                results = client.prepare([record.ref for record in pending])
            except PluginCallError as err:
                transient.append(str(err))
                continue
            for record in pending:
                result = results.get(record.ref.uid)
                where = f"ResourceClaim {record.ref.namespace}/{record.ref.name}"
                if result is None:
                    transient.append(f"DRA driver {driver} left {where} out of its NodePrepareResources answer")
                elif not result.failed:
                    record.prepared.add(driver)
                elif result.permanent and self._gates.enabled(PERMANENT_GATE):
                    permanent.append(f"DRA driver {driver} reported a permanent error preparing {where}: "
                                     f"{result.error}")
                else:
                    transient.append(f"DRA driver {driver} failed to prepare {where}: {result.error}")
            if permanent:
                break
        return transient, permanent

    def _fail(self, pod: Obj, permanent: list[str]) -> bool:
        """KEP-5322 "Pod Admission Failure": give up on the pod, in one status write."""
        message = "; ".join(permanent) + "; the error is permanent and the pod will not be retried"
        self._events.record(pod, "Warning", PREPARE_FAILED, message)
        failed = self._set_phase(pod, "Failed", reason=PREPARE_FAILED, message=message)
        return failed

    def _terminate(self, pod: Obj, state: PodState) -> bool:
        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
        progressed, done = self._unprepare_for(key, state, pod)
        if not done:
            return progressed
        progressed = self._drop_reservations(pod) or progressed
        if pod["metadata"].get("deletionTimestamp"):
            try:
                self._store.delete("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"],
                                   grace_period_seconds=0)
            except ApiError as error:
                if error.reason != "NotFound":
                    raise
            progressed = True
        return progressed

    def _unprepare_for(self, key: PodKey, state: PodState, pod: Obj | None) -> tuple[bool, bool]:
        """Unprepare the claims this pod is the last user of on the node. Returns (progressed, done)."""
        release = []
        records = self._checkpoint.of_pod(state.uid)
        for record in records:
            if record.pods - {state.uid}:
                record.pods.discard(state.uid)  # another pod on the node still uses the claim
            else:
                release.append(record)
        if not release:
            return False, True
        failures: list[str] = []
        by_driver: dict[str, list[ClaimRecord]] = defaultdict(list)
        for record in release:
            for driver in sorted(record.sent):
                by_driver[driver].append(record)
        for driver, held in sorted(by_driver.items()):
            try:
                errors = self._plugins.client(driver).unprepare([record.ref for record in held])
            except (PluginUnavailable, PluginCallError) as err:
                failures.append(str(err))
                continue
            for record in held:
                error = errors.get(record.ref.uid)
                if error is None or error:
                    failures.append(f"DRA driver {driver} failed to unprepare ResourceClaim {record.ref.namespace}/"
                                    f"{record.ref.name}: {error or 'no answer for the claim'}")
                else:
                    record.sent.discard(driver)
                    record.prepared.discard(driver)
        for record in release:
            if not record.sent:
                del self._checkpoint.claims[record.ref.uid]
        if failures:
            if pod is not None:
                self._events.record(pod, "Warning", UNPREPARE_FAILED, "; ".join(failures) + " (will retry)")
            self._back_off(key, state)
            return True, False
        return True, True

    def _drop_reservations(self, pod: Obj) -> bool:
        namespace, uid = pod["metadata"]["namespace"], pod["metadata"]["uid"]
        wrote = False
        for entry in self._claims_of(pod):
            # read only (the store's own object): the status written is a new dict, the answer is only read
            claim = self._store.peek("ResourceClaim", entry.claim, namespace) if entry.claim else None
            if claim is None or not is_reserved_for(claim, uid):
                continue
            status = dict(claim["status"])
            remaining = [r for r in status["reservedFor"] if r.get("uid") != uid]
            if remaining:
                status["reservedFor"] = remaining
            else:
                # The last consumer goes: the write upstream's resourceclaim controller makes once the pod is
                # gone, so it deallocates too (the controller deallocates only when it removes the last one).
                del status["reservedFor"]
                if DELETE_PROTECTION_FINALIZER in (claim["metadata"].get("finalizers") or []):
                    status.pop("allocation", None)
                    status.pop("devices", None)
            try:
                written = self._store.update_status({**claim, "status": status}, copy_result=False,
                                                    copy_status=False)
                if not remaining:
                    self._drop_finalizer(written)
            except ApiError as error:
                if error.reason not in ("Conflict", "NotFound"):
                    raise
                self._mark((namespace, pod["metadata"]["name"]))  # try again with the newer claim
            wrote = True
        return wrote

    def _drop_finalizer(self, claim: Obj) -> None:
        """The delete-protection finalizer goes with the allocation, as upstream's controller removes it."""
        finalizers = claim["metadata"].get("finalizers") or []
        if DELETE_PROTECTION_FINALIZER in finalizers and not (claim.get("status") or {}).get("allocation"):
            kept = [f for f in finalizers if f != DELETE_PROTECTION_FINALIZER]
            self._store.update({**claim, "metadata": {**claim["metadata"], "finalizers": kept}}, copy_result=False)

    # --- helpers ---------------------------------------------------------------------------------------
    def _claims_of(self, pod: Obj) -> list[PodClaim]:
        """The pod's claims, with the claim for its extended resources while DRAExtendedResource is on."""
        return pod_claims_with_extended(pod) if self._gates.enabled("DRAExtendedResource") else pod_claims(pod)

    def _wait(self, pod: Obj, state: PodState, reason: str) -> bool:
        """The pod may not run yet; say why once. A change of the pod or its claims brings it back here."""
        if state.waiting_for != reason:
            state.waiting_for = reason
            self._events.record(pod, "Warning", PREPARE_FAILED, reason)
        return False

    def _back_off(self, key: PodKey, state: PodState) -> None:
        delay = min(INITIAL_BACKOFF * 2 ** state.attempts, MAX_BACKOFF)
        state.attempts += 1
        state.retry_at = self._clock.now() + delay
        self._clock.call_at(state.retry_at, lambda: self._retry(key))

    def _retry(self, key: PodKey) -> None:
        if not self._stopped:
            self._mark(key)

    def _set_phase(self, pod: Obj, phase: str, reason: str | None = None, message: str | None = None) -> bool:
        # the pod as the store handed it out is not ours to change: the status the write changes is copied one
        # level deep (only its top-level fields get new values; the conditions kept are the stored ones, unchanged)
        status = dict(pod.get("status") or {})
        pod = {**pod, "status": status}
        status["phase"] = phase
        _set_conditions(status, pod, phase, self._clock.now())
        _set_container_statuses(status, pod, phase, self._clock.now())
        if reason is not None:
            status["reason"] = reason
        if message is not None:
            status["message"] = message
        try:
            self._store.update_status(pod, copy_result=False, copy_status=False)  # the status is our own copy
        except ApiError as error:
            if error.reason not in ("Conflict", "NotFound"):
                raise
            self._mark((pod["metadata"]["namespace"], pod["metadata"]["name"]))
        return True


def _set_conditions(status: Obj, pod: Obj, phase: str, now: datetime) -> None:
    """The conditions a kubelet reports with a phase (`kubectl wait --for=condition=Ready` reads them): a pod
    whose containers are not created yet is neither ready nor (with init containers) initialized, naming the
    containers it waits for as upstream's kubelet does; a running pod is initialized and ready; a finished one not
    ready. PodScheduled, set by the binding, stays."""
    running = phase == "Running"
    ready = "True" if running else "False"
    types = {"PodReadyToStartContainers": ready, "Initialized": "True", "ContainersReady": ready, "Ready": ready}
    waits: dict[str, tuple[str, str]] = {}  # condition type -> the reason and message of a Pending pod's False
    if phase == "Pending":
        init, main = _containers(pod, "initContainers"), _containers(pod, "containers")
        if init:
            types["Initialized"] = "False"
            names = " ".join(c.get("name", "") for c in init)
            waits["Initialized"] = ("ContainersNotInitialized", f"containers with incomplete status: [{names}]")
        # restartable init containers (sidecars) count towards readiness, as in upstream's kubelet
        unready = [c.get("name", "") for c in init if c.get("restartPolicy") == "Always"]
        unready += [c.get("name", "") for c in main]
        for kind in ("ContainersReady", "Ready"):
            waits[kind] = ("ContainersNotReady", f"containers with unready status: [{' '.join(unready)}]")
    kept = [c for c in status.get("conditions") or [] if c.get("type") not in types]
    previous = {c.get("type"): c for c in status.get("conditions") or []}
    for kind, value in types.items():
        old = previous.get(kind)
        moment = old.get("lastTransitionTime") if old and old.get("status") == value else format_time(now)
        condition: Obj = {"type": kind, "status": value, "lastTransitionTime": moment}
        if value == "False" and phase in ("Succeeded", "Failed") and kind != "PodReadyToStartContainers":
            condition["reason"] = "PodCompleted"
        if kind in waits:
            condition["reason"], condition["message"] = waits[kind]
        kept.append(condition)
    status["conditions"] = kept


def _containers(pod: Obj, field: str) -> list[Obj]:
    return [c for c in (pod.get("spec") or {}).get(field) or [] if isinstance(c, dict)]


def _set_container_statuses(status: Obj, pod: Obj, phase: str, now: datetime) -> None:
    """The containers as a kubelet reports them (the READY and STATUS columns of `kubectl get pods` read them).
    Pending: each waiting to be created (PodInitializing while the pod has init containers), never started.
    Running: started, ready, never restarted, init containers completed (sidecars running). The reference runs
    no processes, so there is nothing else to say; a finished pod keeps what it had."""
    init, main = _containers(pod, "initContainers"), _containers(pod, "containers")
    if phase == "Pending":
        reason = "PodInitializing" if init else "ContainerCreating"
        status["containerStatuses"] = [_waiting(c, reason) for c in main]
        if init:
            status["initContainerStatuses"] = [_waiting(c, reason) for c in init]
        return
    current = status.get("containerStatuses") or []
    if phase != "Running" or (current and all("running" in (s.get("state") or {}) for s in current)):
        return
    started = format_time(now)
    status["containerStatuses"] = [_running(c, started) for c in main]
    if init:
        status["initContainerStatuses"] = [
            _running(c, started) if c.get("restartPolicy") == "Always" else _completed(c, started) for c in init]


def _waiting(container: Obj, reason: str) -> Obj:
    return {"name": container.get("name", ""), "image": container.get("image", ""), "imageID": "", "ready": False,
            "started": False, "restartCount": 0, "state": {"waiting": {"reason": reason}}}


def _running(container: Obj, started: str) -> Obj:
    return {"name": container.get("name", ""), "image": container.get("image", ""), "imageID": "", "ready": True,
            "started": True, "restartCount": 0, "state": {"running": {"startedAt": started}}}


def _completed(container: Obj, at: str) -> Obj:
    """An init container that ran to completion: ready, no longer started, exit code 0."""
    return {**_running(container, at), "started": False,
            "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": at, "finishedAt": at}}}
