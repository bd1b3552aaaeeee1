"""A reference kubelet on every node of the cluster: one `Kubelet` per Node object, fed by one shared watch of
pods, claims and nodes (one informer instead of one per node, so a 500-node cluster costs no more per event).
A claim change wakes the pods on any node that use it. Pods being deleted on a node that has no kubelet are
removed at once, and the pods of a Node object that is deleted are force-deleted once it has stayed gone for
upstream's quarantine of 40 seconds, as kube-controller-manager's pod garbage collector removes pods of nodes
that are gone (their claims' reservations then go with them, KEP-3063/VANISHED-POD-RELEASED)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.interface import ApiStore, WatchEvent
from draconform.reference.clock import Clock
from draconform.reference.events import EventRecorder
from draconform.reference.kubelet.checkpoint import KubeletCheckpoint
from draconform.reference.kubelet.kubelet import Kubelet, PodKey
from draconform.reference.kubelet.plugins import DEFAULT_CALL_TIMEOUT, PluginRegistry
from draconform.reference.podclaims import pod_claims_with_extended
from draconform.sut import ApiError, Obj

# (driver, node) -> the registration socket of the driver's plugin on that node, or None
PluginLocator = Callable[[str, str], "str | None"]
# How long upstream's pod garbage collector waits before it believes a node is gone (podgc's quarantineTime).
ORPHAN_QUARANTINE = timedelta(seconds=40)


class Kubelets:
    def __init__(self, store: ApiStore, clock: Clock, events: EventRecorder, gates: FeatureGates,
                 args: Mapping[str, Any], checkpoints: dict[str, KubeletCheckpoint], locate: PluginLocator,
                 container_exits: dict[str, str] | None = None) -> None:
        self._store = store
        self._clock = clock
        self._events = events
        self._gates = gates
        self._timeout = float(args.get("pluginCallTimeout", DEFAULT_CALL_TIMEOUT))
        self._checkpoints = checkpoints
        self._locate = locate
        # pod UID -> the phase its containers ended in, as the runtime reports (none in a served cluster)
        self._exits = {} if container_exits is None else container_exits
        self._kubelets: dict[str, Kubelet] = {}
        # The kubelets with a pod to look at, by name, and each kubelet's place in `_kubelets` (they sync in that
        # order): a round asks those few, not all of a cluster's hundreds.
        self._awake: set[str] = set()
        self._rank: dict[str, int] = {}
        self._added = itertools.count()
        self._claim_users: dict[tuple[str, str], set[tuple[str, PodKey]]] = {}  # claim -> (node, pod)
        self._watch = store.watch("Pod", "ResourceClaim", "Node")
        for node in store.view("Node"):  # an informer's initial lists: read only, no copies
            self._add_node(node["metadata"]["name"])
        pods = store.view("Pod")
        for pod in pods:
            self._pod_changed(pod)
        live = {pod["metadata"]["uid"] for pod in pods}
        for kubelet in self._kubelets.values():
            kubelet.forget_missing(live)

    def stop(self) -> None:
        self._watch.stop()
        for kubelet in self._kubelets.values():
            kubelet.stop()

    def sync(self) -> bool:
        events = self._watch.drain()
        for event in events:
            self._handle(event)
        progressed = bool(events)
        awake, self._awake = self._awake, set()
        for name in sorted(awake, key=self._rank.__getitem__):
            kubelet = self._kubelets.get(name)
            if kubelet is not None:
                progressed = kubelet.sync() or progressed
        return progressed

    def _wake(self, node: str) -> None:
        self._awake.add(node)

    def _handle(self, event: WatchEvent) -> None:
        kind = event.object["kind"]
        if kind == "Node":
            name = event.object["metadata"]["name"]
            if event.type == "DELETED":
                kubelet = self._kubelets.pop(name, None)
                if kubelet is not None:
                    kubelet.stop()
                self._clock.call_at(self._clock.now() + ORPHAN_QUARANTINE, lambda: self._collect_orphans(name))
            elif name not in self._kubelets:
                self._add_node(name)
                for pod in self._store.view("Pod"):
                    if (pod.get("spec") or {}).get("nodeName") == name:
                        self._kubelets[name].notice(_key(pod))
        elif kind == "Pod":
            self._pod_changed(event.object, deleted=event.type == "DELETED")
        else:
            meta = event.object["metadata"]
            for node, key in sorted(self._claim_users.get((meta["namespace"], meta["name"]), ())):
                if node in self._kubelets:
                    self._kubelets[node].notice(key)

    def _collect_orphans(self, node: str) -> None:
        """Pod GC: the node is still gone after the quarantine, so its pods are force-deleted."""
        if self._store.peek("Node", node) is not None:
            return
        for pod in self._store.view("Pod"):
            if (pod.get("spec") or {}).get("nodeName") != node:
                continue
            try:
                self._store.delete("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"], grace_period_seconds=0)
            except ApiError as error:
                if error.reason != "NotFound":
                    raise

    def _add_node(self, node: str) -> None:
        plugins = PluginRegistry(lambda driver: self._locate(driver, node), self._timeout)
        checkpoint = self._checkpoints.setdefault(node, KubeletCheckpoint())
        self._kubelets[node] = Kubelet(node, self._store, self._clock, self._events, self._gates, checkpoint, plugins,
                                       self._wake, self._exits)
        self._rank[node] = next(self._added)

    def containers_exited(self, pod: Obj) -> None:
        self._pod_changed(pod)

    def _pod_changed(self, pod: Obj, deleted: bool = False) -> None:
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            return
        key = _key(pod)
        for entry in pod_claims_with_extended(pod):
            if entry.claim:
                users = self._claim_users.setdefault((key[0], entry.claim), set())
                if deleted:
                    users.discard((node, key))
                else:
                    users.add((node, key))
        if node in self._kubelets:
            self._kubelets[node].notice(key)
        elif pod["metadata"].get("deletionTimestamp") and not deleted:
            try:  # nobody on that node will finish the deletion
                self._store.delete("Pod", key[1], key[0], grace_period_seconds=0)
            except ApiError as error:
                if error.reason != "NotFound":
                    raise


def _key(pod: Obj) -> PodKey:
    return pod["metadata"]["namespace"], pod["metadata"]["name"]
