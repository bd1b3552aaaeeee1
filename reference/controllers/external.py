"""What the reference's external controllers (KEP-5007 "External controllers": the binding controller
and the dynamic device scaler) share: they follow ResourceClaims through a watch, act on each new
allocation of their driver's devices after a delay on the cluster clock, and write claim status the
way a real controller does, through the API store only. They keep no state the store does not hold
beyond timers, so a restarted controller starts again from what it lists."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol

from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.clock import Clock, format_time
from draconform.reference.scheduler.bindingconditions import (
    DeviceId,
    allocated_results,
    device_id,
    results_with_conditions,
)
from draconform.sut import ApiError, Obj, copy_object

CONFLICT_RETRIES = 5

# An allocation is told apart from an earlier one of the same claim by the claim's UID, its
# allocationTimestamp and its devices, so a cleared and re-allocated claim counts as new.
AllocationKey = tuple[str, str, tuple[DeviceId, ...]]


class ExternalController(Protocol):
    def sync(self) -> bool:
        """Handle what happened since the last call; True when anything was done."""
        ...

    def stop(self) -> None: ...


class NodeAgents(ExternalController, Protocol):
    """The kubelets of every node as the cluster drives them: also told when a pod's containers have ended."""

    def containers_exited(self, pod: Obj) -> None: ...


def allocation_key(claim: Obj) -> AllocationKey | None:
    allocation = (claim.get("status") or {}).get("allocation")
    if not allocation:
        return None
    devices = tuple(device_id(result) for result in allocated_results(claim))
    return claim["metadata"]["uid"], str(allocation.get("allocationTimestamp") or ""), devices


def results_of(claim: Obj, driver: str | None) -> list[Obj]:
    """Allocated results with binding conditions, of one driver (None: any)."""
    return [
        result for result in results_with_conditions(claim) if driver is None or result.get("driver") == driver
    ]


def condition(type_: str, status: str, reason: str, message: str, now: str) -> Obj:
    """A metav1.Condition with every standard field set (KEP-5007: standard condition semantics)."""
    return {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}


@dataclass
class ClaimFollower:
    """Calls `act(claim)` once per new allocation that `wants(claim)`, `delay` after first seeing it,
    with the claim as it is then; an allocation that changed in between is not acted on."""

    store: ApiStore
    clock: Clock
    delay: timedelta
    wants: Callable[[Obj], bool]
    act: Callable[[Obj], None]
    _seen: set[AllocationKey] = field(default_factory=set)
    _due: dict[AllocationKey, tuple[str, str]] = field(default_factory=dict)  # key -> (namespace, name)
    _stopped: bool = False

    def __post_init__(self) -> None:
        self._watch = self.store.watch("ResourceClaim")
        for claim in self.store.list("ResourceClaim"):
            self._saw(claim)

    def stop(self) -> None:
        self._stopped = True
        self._watch.stop()

    def sync(self) -> bool:
        events = self._watch.drain()
        for event in events:
            if event.type != "DELETED":
                self._saw(event.object)
        due, self._due = self._due, {}
        for key, (namespace, name) in due.items():
            claim = self.store.get("ResourceClaim", name, namespace)
            if claim is not None and allocation_key(claim) == key:
                self.act(claim)
        return bool(events) or bool(due)

    def _saw(self, claim: Obj) -> None:
        key = allocation_key(claim)
        if key is None or key in self._seen or not self.wants(claim):
            return
        self._seen.add(key)
        where = (claim["metadata"]["namespace"], claim["metadata"]["name"])
        if self.delay <= timedelta(0):
            self._due[key] = where
            return
        self.clock.call_at(self.clock.now() + self.delay, lambda: self._fire(key, where))

    def _fire(self, key: AllocationKey, where: tuple[str, str]) -> None:
        if not self._stopped:
            self._due[key] = where


def modify(store: ApiStore, kind: str, name: str, namespace: str | None, change: Callable[[Obj], bool],
           status: bool = False) -> Obj | None:
    """Read-modify-write with conflict retries; `change` edits the latest object in place and returns
    False when there is nothing (more) to do. Returns what was written, or None."""
    for _ in range(CONFLICT_RETRIES):
        latest = store.get(kind, name, namespace)
        if latest is None or not change(latest):
            return None
        try:
            return store.update_status(latest) if status else store.update(latest)
        except ApiError as error:
            if error.reason != "Conflict":
                raise
    raise ApiError("Conflict", f"{kind} {name}: gave up after {CONFLICT_RETRIES} conflicting updates")


def set_device_conditions(store: ApiStore, claim: Obj, updates: Mapping[DeviceId, list[Obj]]) -> None:
    """Merge conditions into the per-device status entries of a claim (replacing same-type ones);
    nothing is written if the claim's allocation changed meanwhile."""

    def change(latest: Obj) -> bool:
        if allocation_key(latest) != allocation_key(claim) or not updates:
            return False
        entries: list[Obj] = latest["status"].setdefault("devices", [])
        for (driver, pool, device), conditions in updates.items():
            entry = next((e for e in entries if device_id(e) == (driver, pool, device)), None)
            if entry is None:
                entry = {"driver": driver, "pool": pool, "device": device, "conditions": []}
                entries.append(entry)
            types = {c["type"] for c in conditions}
            entry["conditions"] = [c for c in entry.get("conditions") or [] if c.get("type") not in types]
            entry["conditions"].extend(copy_object(conditions))
        return True

    modify(store, "ResourceClaim", claim["metadata"]["name"], claim["metadata"]["namespace"], change, status=True)


def remove_device(store: ApiStore, driver: str, pool: str, device: str) -> Obj | None:
    """Take a device out of the slice that publishes it; returns the device as it was published."""
    removed: list[Obj] = []

    def change(slice_: Obj) -> bool:
        removed.clear()
        removed.extend(d for d in slice_["spec"].get("devices") or [] if d.get("name") == device)
        slice_["spec"]["devices"] = [d for d in slice_["spec"].get("devices") or [] if d.get("name") != device]
        return bool(removed)

    for slice_ in store.list("ResourceSlice"):
        if slice_pool(slice_) == (driver, pool) and modify(
            store, "ResourceSlice", slice_["metadata"]["name"], None, change
        ):
            return removed[0]
    return None


def slice_pool(slice_: Obj) -> tuple[str, str]:
    spec = slice_.get("spec") or {}
    return str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", ""))


def seconds(behaviour: Mapping[str, Any], key: str) -> timedelta:
    value = behaviour.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"{key} must be a number of seconds >= 0, got {value!r}")
    return timedelta(seconds=value)


def now_text(clock: Clock) -> str:
    return format_time(clock.now())
