"""The reference kubelet for KEP-3063's classic protocol (seed "kubelet": Managing resources, and the
NodePrepareResource / NodeUnprepareResource calls with their errors), on every node of a classic
cluster. A pod bound to a node runs (phase Running) only when each of its claims exists, lists the pod
in reservedFor and has been prepared on the node by its driver's plugin over the classic protocol, once
per claim however many pods share it; otherwise an event says why and failed calls are retried with
exponential back-off on the cluster clock. When the last pod using a claim on the node has finished or
is being deleted, the claim is unprepared, then the pod leaves reservedFor, and only then is a deleted
pod removed. With DynamicResourceAllocation off the kubelet knows nothing of claims and starts the pod
without its resources (Version Skew Strategy; docs/decisions.md D-3063-7). Prepared claims are
checkpointed per node, so a restarted kubelet neither prepares again nor forgets to unprepare."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TypeVar

from draconform.kube.featuregates import FeatureGates
from draconform.kubeletplugin.classic import ClassicPluginClient
from draconform.kubeletplugin.client import PluginCallError
from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.clock import Clock
from draconform.reference.events import EventRecorder
from draconform.reference.scheduler.classic import claim_names
from draconform.sut import ApiError, Obj

T = TypeVar("T")

GATE = "DynamicResourceAllocation"
INITIAL_BACKOFF = timedelta(seconds=1)
MAX_BACKOFF = timedelta(minutes=5)
CALL_TIMEOUT_SECONDS = 45.0  # as upstream's kubelet; far above a healthy call's time on any load

# Event reasons a user reads with `kubectl describe pod`.
CLAIM_NOT_FOUND = "ResourceClaimNotFound"
CLAIM_NOT_RESERVED = "ResourceClaimNotReserved"
PREPARE_FAILED = "FailedPrepareResource"
UNPREPARE_FAILED = "FailedUnprepareResource"


@dataclass
class PreparedClaim:
    driver: str
    cdi_devices: tuple[str, ...]
    pods: set[str] = field(default_factory=set)  # UIDs of the pods on the node using it


@dataclass
class ClassicCheckpoint:
    """Per node, per claim UID: what was prepared there. Lives with the node, not the kubelet process."""

    claims: dict[str, PreparedClaim] = field(default_factory=dict)


Endpoint = Callable[[str, str], str]  # (driver, node) -> the plugin's unix socket


class ClassicKubelets:
    def __init__(self, store: ApiStore, clock: Clock, events: EventRecorder, gates: FeatureGates,
                 endpoint: Endpoint, checkpoints: dict[str, ClassicCheckpoint],
                 container_exits: dict[str, str] | None = None) -> None:
        self._store = store
        self._clock = clock
        self._events = events
        self._gates = gates
        self._endpoint = endpoint
        self._checkpoints = checkpoints
        self._exits = {} if container_exits is None else container_exits  # pod UID -> phase, as the runtime says
        self._watch = store.watch("Pod", "ResourceClaim")
        self._attempts: dict[str, int] = {}  # pod UID -> failed attempts in a row
        self._waiting: set[str] = set()  # pod UIDs in back-off
        self._due = False
        self._said: set[tuple[str, str]] = set()  # (pod UID, reason) already reported
        self._stopped = False
        self._first = True

    def stop(self) -> None:
        self._stopped = True
        self._watch.stop()

    def sync(self) -> bool:
        changed = bool(self._watch.drain()) or self._due or self._first
        self._due = self._first = False
        if not changed:
            return False
        acted = False
        for pod in self._store.list("Pod"):
            node = (pod.get("spec") or {}).get("nodeName")
            if not node or pod["metadata"]["uid"] in self._waiting:
                continue
            checkpoint = self._checkpoints.setdefault(node, ClassicCheckpoint())
            if pod["metadata"].get("deletionTimestamp") or _finished(pod):
                acted = self._tear_down(pod, node, checkpoint) or acted
            elif (pod.get("status") or {}).get("phase", "Pending") == "Pending":
                acted = self._start(pod, node, checkpoint) or acted
            elif pod["metadata"]["uid"] in self._exits:  # Running, and the runtime says its containers ended
                acted = self._record_exit(pod) or acted
        return acted

    def containers_exited(self, pod: Obj) -> None:
        self._due = True

    def _record_exit(self, pod: Obj) -> bool:
        pod.setdefault("status", {})["phase"] = self._exits[pod["metadata"]["uid"]]
        with suppress(ApiError):  # changed meanwhile: its watch event brings it back
            self._store.update_status(pod)
        return True

    # --- starting a pod ---------------------------------------------------------------------------
    def _start(self, pod: Obj, node: str, checkpoint: ClassicCheckpoint) -> bool:
        uid = pod["metadata"]["uid"]
        if self._gates.enabled(GATE):
            for _, name, _ in claim_names(pod):
                claim = self._store.get("ResourceClaim", name, pod["metadata"]["namespace"])
                if claim is None:
                    return self._say(pod, CLAIM_NOT_FOUND, f'resource claim "{name}" does not exist')
                reserved = {entry.get("uid") for entry in (claim.get("status") or {}).get("reservedFor") or []}
                if uid not in reserved:
                    return self._say(pod, CLAIM_NOT_RESERVED, f'resource claim "{name}" is not reserved for this pod')
                if not self._prepare(pod, node, claim, checkpoint):
                    return True
        pod.setdefault("status", {})["phase"] = "Running"
        with suppress(ApiError):  # changed meanwhile: its watch event brings it back
            self._store.update_status(pod)
        self._attempts.pop(uid, None)
        return True

    def _prepare(self, pod: Obj, node: str, claim: Obj, checkpoint: ClassicCheckpoint) -> bool:
        claim_uid = claim["metadata"]["uid"]
        record = checkpoint.claims.get(claim_uid)
        if record is None:
            driver = str((claim.get("status") or {}).get("driverName", ""))
            try:
                devices = self._call(driver, node, lambda client: client.prepare(claim_uid))
            except (PluginCallError, ValueError) as failure:
                self._retry(pod, PREPARE_FAILED, f'preparing resource claim "{claim["metadata"]["name"]}": {failure}')
                return False
            record = checkpoint.claims[claim_uid] = PreparedClaim(driver, tuple(devices))
        record.pods.add(pod["metadata"]["uid"])
        return True

    # --- tearing a pod down -------------------------------------------------------------------------
    def _tear_down(self, pod: Obj, node: str, checkpoint: ClassicCheckpoint) -> bool:
        uid = pod["metadata"]["uid"]
        for claim_uid, record in list(checkpoint.claims.items()):
            if uid not in record.pods:
                continue
            if record.pods == {uid}:  # the last user on this node: unprepare first
                try:
                    self._unprepare(record.driver, node, claim_uid, record.cdi_devices)
                except (PluginCallError, ValueError) as failure:
                    self._retry(pod, UNPREPARE_FAILED, f"unpreparing resource claim {claim_uid}: {failure}")
                    return True
                del checkpoint.claims[claim_uid]
            else:
                record.pods.discard(uid)
        acted = self._unreserve(pod)
        if pod["metadata"].get("deletionTimestamp"):
            with suppress(ApiError):
                self._store.delete("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"], grace_period_seconds=0)
            acted = True
        return acted

    def _unreserve(self, pod: Obj) -> bool:
        acted = False
        for _, name, _ in claim_names(pod):
            claim = self._store.get("ResourceClaim", name, pod["metadata"]["namespace"])
            if claim is None:
                continue
            status = claim.get("status") or {}
            kept = [entry for entry in status.get("reservedFor") or [] if entry.get("uid") != pod["metadata"]["uid"]]
            if len(kept) != len(status.get("reservedFor") or []):
                status["reservedFor"] = kept
                with suppress(ApiError):
                    self._store.update_status(claim)
                    acted = True
        return acted

    # --- plumbing ---------------------------------------------------------------------------------
    def _call(self, driver: str, node: str, call: Callable[[ClassicPluginClient], T]) -> T:
        client = ClassicPluginClient(self._endpoint(driver, node), timeout=CALL_TIMEOUT_SECONDS)
        try:
            return call(client)
        finally:
            client.close()

    def _unprepare(self, driver: str, node: str, claim_uid: str, cdi_devices: tuple[str, ...]) -> None:
        self._call(driver, node, lambda client: client.unprepare(claim_uid, cdi_devices))

    def _say(self, pod: Obj, reason: str, message: str) -> bool:
        key = (pod["metadata"]["uid"], reason)
        if key in self._said:
            return False
        self._said.add(key)
        self._events.record(pod, "Warning", reason, message)
        return True

    def _retry(self, pod: Obj, reason: str, message: str) -> None:
        uid = pod["metadata"]["uid"]
        self._events.record(pod, "Warning", reason, message)
        attempts = self._attempts.get(uid, 0) + 1
        self._attempts[uid] = attempts
        self._waiting.add(uid)
        delay = min(INITIAL_BACKOFF * (1 << min(attempts - 1, 16)), MAX_BACKOFF)
        self._clock.call_at(self._clock.now() + delay, lambda: self._wake(uid))

    def _wake(self, uid: str) -> None:
        if not self._stopped:
            self._waiting.discard(uid)
            self._due = True


def _finished(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
