"""A resource driver's control-plane controller in KEP-3063's classic protocol (seed "Implementing a
plugin for node resources" and the API comments): it allocates the claims of its classes, Immediate
ones at once and Delayed ones on the node the scheduler selects, answers potentialNodes with
unsuitableNodes, frees claims set to Reallocate or deleted, and guards every allocation with its
finalizer. Programmable for scenarios, like the reference's other external controllers; it acts only
through the API store, and what it has allocated is read back from the claims' status, so a restart
loses nothing.

Behaviour (a mapping; see `ClassicDriverBehaviour`):
  driver: the driver name (required)
  capacity: {node: how many claims it can allocate there}; other nodes have none
  refuse: [nodes] where allocating for a selected node fails although they looked suitable
  on_failure: "unset" (unset selectedNode) or "unsuitable" (list the node; the default)
  user_limit: the userLimit it gives an allocated claim (default: leave the claim's)
  early_available_on: set availableOnNodes to the nodes with room before allocating (default off)
  stalled: do nothing at all (default off)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.clock import Clock
from draconform.reference.nodeselector import pinned_to
from draconform.sut import ApiError, Obj

NODE_ATTRIBUTE = "node"


@dataclass(frozen=True)
class ClassicDriverBehaviour:
    driver: str
    capacity: dict[str, int] = field(default_factory=dict)
    refuse: frozenset[str] = frozenset()
    on_failure: str = "unsuitable"
    user_limit: int | None = None
    early_available_on: bool = False
    stalled: bool = False

    @classmethod
    def from_mapping(cls, behaviour: Mapping[str, Any]) -> ClassicDriverBehaviour:
        unknown = set(behaviour) - {"driver", "capacity", "refuse", "on_failure", "user_limit",
                                    "early_available_on", "stalled"}
        if unknown or "driver" not in behaviour:
            raise ValueError(f"classic driver behaviour needs 'driver' and knows no {sorted(unknown)}")
        if behaviour.get("on_failure", "unsuitable") not in ("unset", "unsuitable"):
            raise ValueError("on_failure is 'unset' or 'unsuitable'")
        return cls(
            driver=str(behaviour["driver"]),
            capacity={str(node): int(count) for node, count in (behaviour.get("capacity") or {}).items()},
            refuse=frozenset(behaviour.get("refuse") or ()),
            on_failure=str(behaviour.get("on_failure", "unsuitable")),
            user_limit=behaviour.get("user_limit"),
            early_available_on=bool(behaviour.get("early_available_on", False)),
            stalled=bool(behaviour.get("stalled", False)),
        )


def finalizer_of(driver: str) -> str:
    return f"{driver}/allocation"


class ClassicDriverController:
    def __init__(self, store: ApiStore, clock: Clock, behaviour: Mapping[str, Any]) -> None:
        self._store = store
        self.behaviour = ClassicDriverBehaviour.from_mapping(behaviour)
        self._watch = store.watch("ResourceClaim", "ResourceClass")
        self._first = True  # a new controller looks at every claim once, as an informer's list would

    def stop(self) -> None:
        self._watch.stop()

    def sync(self) -> bool:
        changed = bool(self._watch.drain()) or self._first
        self._first = False
        if not changed or self.behaviour.stalled:
            return False
        acted = False
        for claim in self._store.list("ResourceClaim"):
            if self._mine(claim):
                acted = self._handle(claim) or acted
        return acted

    # --- which claims ----------------------------------------------------------------------------
    def _mine(self, claim: Obj) -> bool:
        recorded = (claim.get("status") or {}).get("driverName")
        if recorded:
            return bool(recorded == self.behaviour.driver)
        resource_class = self._store.get("ResourceClass", claim["spec"].get("resourceClassName", ""))
        return resource_class is not None and resource_class.get("driverName") == self.behaviour.driver

    # --- one claim ----------------------------------------------------------------------------------
    def _handle(self, claim: Obj) -> bool:
        status = claim.get("status") or {}
        phase = status.get("phase", "Pending")
        if claim["metadata"].get("deletionTimestamp"):
            return self._free(claim)
        if phase == "Reallocate":
            return self._free(claim)
        if phase == "Allocated":
            return False
        immediate = claim["spec"].get("allocationMode", "Delayed") == "Immediate"
        if immediate:
            node = next((n for n in sorted(self.behaviour.capacity) if self._room_on(n)), None)
            return node is not None and self._allocate(claim, node)
        return self._negotiate(claim)

    def _negotiate(self, claim: Obj) -> bool:
        status = claim.setdefault("status", {})
        scheduling = status.setdefault("scheduling", {})
        scheduler = scheduling.setdefault("scheduler", {})
        driver = scheduling.setdefault("driver", {})
        selected = scheduler.get("selectedNode")
        if selected and self._can_allocate_on(selected):
            return self._allocate(claim, selected)
        # Judge the scheduler's candidates (kept fresh as allocations come and go) ...
        potential = scheduler.get("potentialNodes") or []
        unsuitable = {node for node in potential if not self._can_allocate_on(node)}
        if selected and self.behaviour.on_failure == "unsuitable":
            unsuitable.add(selected)  # ... and say no to a selected node one of two ways (D-3063-4)
        changed = sorted(unsuitable) != (driver.get("unsuitableNodes") or [])
        driver["unsuitableNodes"] = sorted(unsuitable)
        if selected and self.behaviour.on_failure == "unset":
            scheduler.pop("selectedNode")
            changed = True
        if self.behaviour.early_available_on:
            available = _nodes_selector(sorted(n for n in self.behaviour.capacity if self._room_on(n)))
            changed = changed or driver.get("availableOnNodes") != available
            driver["availableOnNodes"] = available
        if not changed or not self._write_status(claim):
            return False
        if selected:  # the attempt for that node definitely failed: nothing is held any more
            self._set_finalizer(claim["metadata"]["name"], claim["metadata"]["namespace"], present=False)
        return True

    def _allocate(self, claim: Obj, node: str) -> bool:
        name, namespace = claim["metadata"]["name"], claim["metadata"]["namespace"]
        if finalizer_of(self.behaviour.driver) not in (claim["metadata"].get("finalizers") or []):
            # The finalizer goes on first, in its own write: a claim must not vanish while held.
            return self._set_finalizer(name, namespace, present=True)
        status = claim.setdefault("status", {})
        status["phase"] = "Allocated"
        status["driverName"] = self.behaviour.driver
        # Negotiation is over: only availableOnNodes stays, saying where the resource is usable.
        status["scheduling"] = {"driver": {"availableOnNodes": pinned_to(node)}}
        status["attributes"] = {NODE_ATTRIBUTE: node, "resource": f"{node}/{claim['metadata']['uid']}"}
        if self.behaviour.user_limit is not None:
            status["userLimit"] = self.behaviour.user_limit
        return self._write_status(claim)

    def _free(self, claim: Obj) -> bool:
        """Give back what the claim holds and return it to Pending, then drop the finalizer; a claim
        still reserved for a pod waits (a claim being deleted goes once the finalizer is gone)."""
        status = claim.get("status") or {}
        if status.get("reservedFor"):
            return False
        wrote = False
        if status.get("phase") != "Pending" or status.get("attributes") or status.get("scheduling"):
            kept = ("userLimit", "driverName")
            claim["status"] = {key: status[key] for key in kept if key in status}
            claim["status"]["phase"] = "Pending"
            if not self._write_status(claim):
                return False
            wrote = True
        name, namespace = claim["metadata"]["name"], claim["metadata"]["namespace"]
        return self._set_finalizer(name, namespace, present=False) or wrote

    # --- capacity, read back from the claims -----------------------------------------------------
    def _can_allocate_on(self, node: str) -> bool:
        return node not in self.behaviour.refuse and self._room_on(node)

    def _room_on(self, node: str) -> bool:
        used = sum(
            1
            for claim in self._store.list("ResourceClaim")
            if (claim.get("status") or {}).get("driverName") == self.behaviour.driver
            and (claim.get("status") or {}).get("attributes", {}).get(NODE_ATTRIBUTE) == node
        )
        return used < self.behaviour.capacity.get(node, 0)

    # --- writes ---------------------------------------------------------------------------------
    def _write_status(self, claim: Obj) -> bool:
        try:
            self._store.update_status(claim)
        except ApiError:
            return False  # changed meanwhile: the next watch event brings the claim back
        return True

    def _set_finalizer(self, name: str, namespace: str, present: bool) -> bool:
        claim = self._store.get("ResourceClaim", name, namespace)
        if claim is None:
            return False
        finalizers = [f for f in claim["metadata"].get("finalizers") or [] if f != finalizer_of(self.behaviour.driver)]
        if present:
            finalizers.append(finalizer_of(self.behaviour.driver))
        if finalizers == (claim["metadata"].get("finalizers") or []):
            return False
        claim["metadata"]["finalizers"] = finalizers
        try:
            self._store.update(claim)
        except ApiError:
            return False
        return True


def _nodes_selector(nodes: list[str]) -> Obj:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": nodes}]}]}
