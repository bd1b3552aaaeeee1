"""A reference dynamic device scaler: the composable-infrastructure flow of the CoHDI field feedback
(KEP-5007 Beta graduation criteria; shared/seeds/cohdi-dynamic-device-scaling-feedback.md), modelled
through the API store only. It stands for three parts of that system at once: the fabric manager that
moves a device from the resource pool to a node, the vendor driver that then publishes it node-locally,
and the dynamic-device-scaler controller that watches claims.

- The resource pool is published by `pool_driver` as slices of devices by model (no identity beyond
  that), with binding conditions, `bindsToNode` and no node (allNodes or a node selector).
- When such a device is allocated (the allocation names the chosen node), after `after` seconds it
  takes the device out of the pool, publishes it on that node as a device of `node_driver` without
  binding conditions, and sets a binding failure condition, so the scheduler clears the claim and the
  pod is rescheduled onto the node-local device.
- A device allocated from the pool that vanishes from the pool while the pod waits (the pool shrank)
  gets a binding failure condition too, so the pod is rescheduled with what is left.
- An attached device that no claim holds once the pod it was attached for has ended goes back to the
  pool. Which pod a device was attached for is recorded in an annotation of the node-local slice, so
  a restarted scaler knows it too.

Behaviour (the seam's `run_controller("dynamic-device-scaler", behaviour)`): pool_driver, node_driver,
after (seconds, default 0), reschedule_condition (default: the device's first failure condition)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.clock import Clock
from draconform.reference.controllers.external import (
    ClaimFollower,
    condition,
    modify,
    now_text,
    remove_device,
    results_of,
    seconds,
    set_device_conditions,
    slice_pool,
)
from draconform.reference.podclaims import pod_is_terminal
from draconform.reference.scheduler.bindingconditions import (
    DeviceId,
    allocated_results,
    device_id,
    failed_condition,
)
from draconform.sut import Obj, copy_object

NAME = "dynamic-device-scaler"
ANNOTATION = "dynamic-device-scaler.example.com/attached"
KNOWN_KEYS = {"pool_driver", "node_driver", "after", "reschedule_condition"}
BINDING_FIELDS = ("bindsToNode", "bindingConditions", "bindingFailureConditions")


class DynamicDeviceScaler:
    def __init__(self, store: ApiStore, clock: Clock, behaviour: Mapping[str, Any]) -> None:
        unknown = set(behaviour) - KNOWN_KEYS
        missing = {"pool_driver", "node_driver"} - set(behaviour)
        if unknown or missing:
            raise ValueError(f"{NAME}: unknown keys {sorted(unknown)}, missing keys {sorted(missing)}")
        self.pool_driver = str(behaviour["pool_driver"])
        self.node_driver = str(behaviour["node_driver"])
        self.reschedule_condition: str | None = behaviour.get("reschedule_condition")
        self._store = store
        self._clock = clock
        self._follower = ClaimFollower(
            store, clock, seconds(behaviour, "after"),
            wants=lambda claim: bool(results_of(claim, self.pool_driver)),
            act=self._attach,
        )
        self._watch = store.watch("Pod", "ResourceClaim", "ResourceSlice")

    def stop(self) -> None:
        self._follower.stop()
        self._watch.stop()

    def sync(self) -> bool:
        acted = self._follower.sync()
        events = self._watch.drain()
        if any(event.object["kind"] == "ResourceSlice" for event in events):
            self._reschedule_vanished()
        if events:
            self._detach_unused()
        return acted or bool(events)

    # --- attaching -------------------------------------------------------------------------------
    def _attach(self, claim: Obj) -> None:
        node = _pinned_node(claim)
        if node is None:
            return  # without bindsToNode the scaler cannot know where to attach; the wait times out
        updates: dict[DeviceId, list[Obj]] = {}
        for result in results_of(claim, self.pool_driver):
            if failed_condition(claim, result) is not None:
                continue
            published = remove_device(self._store, result["driver"], result["pool"], result["device"])
            if published is None:
                reason, message = "DeviceUnavailable", "the device left the resource pool before it was attached"
            else:
                name = self._publish_on_node(node, published, claim, result)
                reason, message = "DeviceAttached", f"attached to node {node} as {name}; reschedule to use it"
            updates[device_id(result)] = [self._reschedule(result, reason, message)]
        set_device_conditions(self._store, claim, updates)

    def _publish_on_node(self, node: str, published: Obj, claim: Obj, result: Obj) -> str:
        """Add the device to the scaler's node-local slice for `node`, recording what it came from."""
        slice_name = f"{node}-{self.node_driver}-attached"
        if self._store.get("ResourceSlice", slice_name) is None:
            self._store.create({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": slice_name, "annotations": {ANNOTATION: "{}"}},
                "spec": {"driver": self.node_driver, "pool": {"name": f"{node}-attached", "generation": 1,
                                                              "resourceSliceCount": 1},
                         "nodeName": node, "devices": []},
            })
        consumer: Obj = next(iter((claim.get("status") or {}).get("reservedFor") or []), {})
        chosen: list[str] = []

        def change(slice_: Obj) -> bool:
            records = _records(slice_)
            taken = {d.get("name") for d in slice_["spec"].get("devices") or []}
            name = next(f"attached-{i}" for i in range(len(taken) + 1) if f"attached-{i}" not in taken)
            device = {k: copy_object(v) for k, v in published.items()
                      if k not in BINDING_FIELDS}
            device["name"] = name
            slice_["spec"].setdefault("devices", []).append(device)
            records[name] = {
                "pod": f"{claim['metadata']['namespace']}/{consumer.get('name', '')}",
                "podUID": consumer.get("uid", ""),
                "from": {"driver": result["driver"], "pool": result["pool"], "device": copy_object(published)},
            }
            slice_["metadata"].setdefault("annotations", {})[ANNOTATION] = json.dumps(records, sort_keys=True)
            chosen[:] = [name]
            return True

        modify(self._store, "ResourceSlice", slice_name, None, change)
        return chosen[0]

    def _reschedule(self, result: Obj, reason: str, message: str) -> Obj:
        wanted = self.reschedule_condition or (result.get("bindingFailureConditions") or [""])[0]
        return condition(wanted, "True", reason, message, now_text(self._clock))

    # --- the pool shrinking ----------------------------------------------------------------------
    def _reschedule_vanished(self) -> None:
        """A pool device that went away under a waiting claim: reschedule the pod rather than attach."""
        published = {
            (*slice_pool(s), str(d.get("name", "")))
            for s in self._store.list("ResourceSlice")
            if slice_pool(s)[0] == self.pool_driver
            for d in s["spec"].get("devices") or []
        }
        for claim in self._store.list("ResourceClaim"):
            updates: dict[DeviceId, list[Obj]] = {}
            for result in results_of(claim, self.pool_driver):
                device = device_id(result)
                if device not in published and not failed_condition(claim, result) is not None:
                    updates[device] = [
                        self._reschedule(result, "DeviceUnavailable", "the device left the resource pool")
                    ]
            if updates:
                set_device_conditions(self._store, claim, updates)

    # --- detaching -------------------------------------------------------------------------------
    def _detach_unused(self) -> None:
        held = {device_id(result) for claim in self._store.list("ResourceClaim") for result in allocated_results(claim)}
        for slice_ in self._store.list("ResourceSlice"):
            for name, record in _records(slice_).items():
                if (*slice_pool(slice_), name) in held or self._pod_running(record):
                    continue
                self._detach(slice_["metadata"]["name"], name, record)

    def _pod_running(self, record: Obj) -> bool:
        namespace, _, name = str(record.get("pod", "")).partition("/")
        pod = self._store.get("Pod", name, namespace) if name else None
        return pod is not None and pod["metadata"]["uid"] == record.get("podUID") and not pod_is_terminal(pod)

    def _detach(self, slice_name: str, device: str, record: Obj) -> None:
        def take(slice_: Obj) -> bool:
            records = _records(slice_)
            if records.pop(device, None) is None:
                return False
            slice_["spec"]["devices"] = [d for d in slice_["spec"].get("devices") or [] if d.get("name") != device]
            slice_["metadata"]["annotations"][ANNOTATION] = json.dumps(records, sort_keys=True)
            return True

        if modify(self._store, "ResourceSlice", slice_name, None, take) is None:
            return
        origin = record["from"]

        def give_back(slice_: Obj) -> bool:
            if slice_pool(slice_) != (origin["driver"], origin["pool"]):
                return False
            slice_["spec"].setdefault("devices", []).append(copy_object(origin["device"]))
            return True

        for candidate in self._store.list("ResourceSlice"):
            if modify(self._store, "ResourceSlice", candidate["metadata"]["name"], None, give_back) is not None:
                return


def _records(slice_: Obj) -> dict[str, Obj]:
    raw = ((slice_.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
    records: dict[str, Obj] = json.loads(raw) if raw else {}
    return records


def _pinned_node(claim: Obj) -> str | None:
    """The node a `bindsToNode` allocation was pinned to (metadata.name In [node])."""
    selector = ((claim.get("status") or {}).get("allocation") or {}).get("nodeSelector") or {}
    for term in selector.get("nodeSelectorTerms") or []:
        for requirement in term.get("matchFields") or []:
            values = requirement.get("values") or []
            if requirement.get("key") == "metadata.name" and requirement.get("operator") == "In" and len(values) == 1:
                return str(values[0])
    return None
