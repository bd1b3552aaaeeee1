"""A classic driver's kubelet plugin on one node (KEP-3063 "NodePrepareResource" and
"NodeUnprepareResource", served over the project's classic_v1alpha1 protocol): it prepares a claim
its driver allocated for this node and answers with one CDI device name; a second prepare answers the
same (idempotent); unprepare forgets it and is idempotent too; a UID the driver never knew is NOT_FOUND,
and a claim allocated elsewhere is FAILED_PRECONDITION (docs/decisions.md D-3063-6). Before it answers, it
writes the CDI spec file defining that device name on the node, and removes it at unprepare."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from draconform.kube.cdi import spec_text
from draconform.kubeletplugin.classic import ClassicPluginError
from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.clock import Clock
from draconform.reference.drivers.classic_controller import NODE_ATTRIBUTE
from draconform.sut import Obj, PluginCall, PluginFault

METHODS = {"prepare": "NodePrepareResource", "unprepare": "NodeUnprepareResource"}


@dataclass
class ClassicNodePlugin:
    store: ApiStore
    clock: Clock
    driver: str
    node: str
    calls: list[PluginCall] = field(default_factory=list)  # what a recording proxy at its socket would see
    faults: list[PluginFault] = field(default_factory=list)  # transient failures a scenario asked for
    prepared: dict[str, tuple[str, ...]] = field(default_factory=dict)  # claim UID -> CDI device names
    known: set[str] = field(default_factory=set)  # every claim UID it has prepared at some time
    cdi: dict[str, str] = field(default_factory=dict)  # the CDI spec files it wrote on the node: name -> text

    def _claim(self, uid: str) -> Obj | None:
        for claim in self.store.list("ResourceClaim"):
            if claim["metadata"]["uid"] == uid and (claim.get("status") or {}).get("driverName") == self.driver:
                return claim
        return None

    def _received(self, verb: str, resource_uid: str) -> None:
        claim = self._claim(resource_uid)
        name = f"{claim['metadata']['namespace']}/{claim['metadata']['name']}" if claim else ""
        self.calls.append(PluginCall(METHODS[verb], (name,), (resource_uid,), self.clock.now()))
        for fault in self.faults:
            if fault.method == verb and fault.times != 0:
                if fault.times is not None:
                    self.faults[self.faults.index(fault)] = PluginFault(fault.kind, verb, fault.times - 1)
                raise ClassicPluginError("UNAVAILABLE", f"injected transient failure of {METHODS[verb]}")

    def prepare(self, resource_uid: str) -> Sequence[str]:
        self._received("prepare", resource_uid)
        if resource_uid in self.prepared:
            return self.prepared[resource_uid]
        claim = self._claim(resource_uid)
        if claim is None:
            raise ClassicPluginError("NOT_FOUND", f"driver {self.driver} has no resource claim {resource_uid}")
        status = claim.get("status") or {}
        if status.get("phase") != "Allocated" or (status.get("attributes") or {}).get(NODE_ATTRIBUTE) != self.node:
            raise ClassicPluginError("FAILED_PRECONDITION",
                                     f"resource claim {resource_uid} is not allocated on node {self.node}")
        devices = (f"k8s.{self.driver}/resource={resource_uid}",)
        self.cdi[f"k8s.{self.driver}-{resource_uid}.json"] = spec_text(
            f"k8s.{self.driver}/resource", {resource_uid: {"DRA_RESOURCE": resource_uid}})
        self.prepared[resource_uid] = devices
        self.known.add(resource_uid)
        return devices

    def unprepare(self, resource_uid: str, cdi_devices: Sequence[str]) -> None:
        self._received("unprepare", resource_uid)
        self.cdi.pop(f"k8s.{self.driver}-{resource_uid}.json", None)
        if self.prepared.pop(resource_uid, None) is not None:
            return
        if resource_uid not in self.known and self._claim(resource_uid) is None:
            raise ClassicPluginError("NOT_FOUND", f"driver {self.driver} never knew resource claim {resource_uid}")
