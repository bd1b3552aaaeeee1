"""What closing a live scenario removes, and how what is left is named.

A scenario's objects must all go whatever the scenario did, or they stay in the cluster for every later scenario:
a pod bound to a node no kubelet serves (or to another scenario's node) stays Terminating after a graceful
delete, an object carrying a finalizer nobody removes (one the scenario wrote, or a claim's delete protection a
controller keeps while the claim looks reserved) stays for ever, and its namespace with it. So clean-up deletes
every pod of the scenario's namespace at once (grace 0, wherever bound), deletes the namespace's other objects
that can hold a finalizer or program a component, and the scenario's labelled cluster-scoped objects, and then
removes the finalizers of whatever is still there; the namespace itself is then deleted and left to the
cluster's namespace controller, checked later (`ScenarioCleanup`); the run's end waits for the rest
(`run_leftovers`)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from draconform.live.config import ClusterConfig, LiveOptions, TimeoutConfig
from draconform.live.kube import KubeClient, shared_client
from draconform.live.names import CLUSTER_KINDS, RUN_LABEL, SCENARIO_LABEL
from draconform.live.releases import ReleaseView
from draconform.sut import ApiError, Obj

# The namespaced kinds clean-up deletes itself, in this order: the programs' ConfigMaps first (the programmed
# driver and controllers stop writing), then the pods (nothing then consumes a claim), then the claims.
NAMESPACED = ("ConfigMap", "Pod", "ResourceClaim", "ResourceClaimTemplate")
# Per cluster (kubeconfig, context): namespace -> (when its deletion began, its scenario), until seen gone.
_DELETING: dict[tuple[str, str | None], dict[str, tuple[float, str]]] = {}
OVERDUE_BATCH = 8  # look for gone namespaces once this many wait (and whenever one is overdue)


@dataclass(frozen=True)
class Removal:
    """One object to remove: delete it (`grace_period_seconds` 0 for a pod: gone at once, as the pod garbage
    collector removes the pods of a node without a kubelet), then take off the finalizers it still carries."""

    kind: str
    name: str
    namespace: str | None = None
    grace_period_seconds: int | None = None
    finalizers: tuple[str, ...] = ()
    deleting: bool = False  # the deletion already began (a deletionTimestamp)

    def describe(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        held = f" (finalizers {', '.join(self.finalizers)})" if self.finalizers else ""
        state = " marked for deletion" if self.deleting else ""
        return f"{self.kind}/{where}{self.name}{state}{held}"


def _removal(kind: str, obj: Obj) -> Removal:
    meta = obj.get("metadata") or {}
    return Removal(kind, str(meta.get("name", "")), meta.get("namespace"), 0 if kind == "Pod" else None,
                   tuple(meta.get("finalizers") or ()), bool(meta.get("deletionTimestamp")))


def plan(namespaced: Mapping[str, Sequence[Obj]], cluster_scoped: Mapping[str, Sequence[Obj]]) -> list[Removal]:
    """What is left to remove: every object of the scenario's namespace of the NAMESPACED kinds (each pod with
    grace 0, whichever node it is bound to or none), then every cluster-scoped object labelled as the
    scenario's. An empty plan: nothing of the scenario is left but its namespace."""
    removals = [_removal(kind, obj) for kind in NAMESPACED for obj in namespaced.get(kind, ())]
    removals += [_removal(kind, obj) for kind in sorted(cluster_scoped) for obj in cluster_scoped[kind]]
    return removals


def left_over(removals: Sequence[Removal], refused: Mapping[Removal, str]) -> str:
    """The objects a clean-up could not remove, named (with the API server's refusal, if it refused), for the
    error that stops a run from carrying on."""
    return ", ".join(removal.describe() + (f" (refused: {refused[removal]})" if removal in refused else "")
                     for removal in removals)


def deleting(cluster: ClusterConfig) -> dict[str, tuple[float, str]]:
    """The namespaces this process's scenarios on this cluster left to the namespace controller."""
    return _DELETING.setdefault((str(cluster.kubeconfig), cluster.context), {})


class ScenarioCleanup:
    """Closing one scenario on its cluster: remove everything it created (see `plan`) and check it is gone; start
    the deletion of its namespace (`namespace`, None when it was never created) without waiting for the cluster's
    namespace controller, and fail on an earlier scenario's namespace (in `deleting`) that is still there
    cleanupTimeout after its deletion began."""

    def __init__(self, client: KubeClient, release: ReleaseView, timeouts: TimeoutConfig, scenario: str,
                 namespace: str | None, cluster_kinds: Collection[str],
                 deleting: dict[str, tuple[float, str]]) -> None:
        self.client, self.release, self.timeouts = client, release, timeouts
        self.scenario, self.namespace, self.cluster_kinds, self.deleting = scenario, namespace, cluster_kinds, deleting

    def run(self) -> None:
        deadline = time.monotonic() + self.timeouts.cleanup_timeout
        first = True
        refused: dict[Removal, str] = {}
        while left := self._plan():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the scenario's objects still exist {self.timeouts.cleanup_timeout:g}s after "
                                   f"clean-up began: {left_over(left, refused)}")
            if not first:
                time.sleep(self.timeouts.poll_interval)
            first = False
            for removal in left:  # a program the scenario started may have written one since the last look
                if (refusal := self._remove(removal)) is not None:
                    refused[removal] = refusal
        if self.namespace is not None:
            namespace = self.namespace
            _ignore_missing(lambda: self.client.delete("Namespace", namespace))
            self.deleting[namespace] = (time.monotonic(), self.scenario)
        self._check_earlier_namespaces()

    def _plan(self) -> list[Removal]:
        # ConfigMaps: only the scenario's own; a real cluster publishes its own into every namespace (kube-root-ca.crt,
        # which kube-controller-manager writes again at once, or a distribution's CA bundle), gone with the namespace.
        namespaced = {kind: self.client.list(kind, self.namespace,
                                             labels={SCENARIO_LABEL: self.scenario} if kind == "ConfigMap" else None)[0]
                      for kind in NAMESPACED} if self.namespace is not None else {}
        labelled = {kind: self.client.list(kind, labels={SCENARIO_LABEL: self.scenario},
                                           api_version=self.release.api_version(kind))[0]
                    for kind in self.cluster_kinds}
        return plan(namespaced, labelled)

    def _remove(self, removal: Removal) -> str | None:
        """Remove one object; the API server's refusal, if it refused (the others are removed all the same)."""
        try:
            # again when its deletion began already: a pod deleted gracefully waits for a kubelet that may never come
            _ignore_missing(functools.partial(self.client.delete, removal.kind, removal.name, removal.namespace,
                                              removal.grace_period_seconds,
                                              self.release.api_version(removal.kind)))
            if removal.finalizers:
                self._drop_finalizers(removal.kind, removal.name, removal.namespace)
        except ApiError as error:
            return str(error)
        return None

    def _drop_finalizers(self, kind: str, name: str, namespace: str | None) -> None:
        """Take every finalizer off an object being deleted: nothing else will once the scenario is over."""
        for _ in range(3):  # a controller may write the object in between: read it again
            obj = self.client.get(kind, name, namespace, self.release.api_version(kind))
            if obj is None or not obj["metadata"].get("finalizers"):
                return
            obj["metadata"]["finalizers"] = []
            try:
                self.client.update(obj)
                return
            except ApiError as error:
                if error.reason == "NotFound":
                    return
                if error.reason != "Conflict":
                    raise

    def _check_earlier_namespaces(self) -> None:
        """Forget the namespaces gone; fail, naming them and what they still hold, on those still there
        cleanupTimeout after their deletion began (the run's end waits for the rest: `run_leftovers`)."""
        deleting = self.deleting
        now = time.monotonic()
        if len(deleting) < OVERDUE_BATCH and all(now - since <= self.timeouts.cleanup_timeout
                                                 for since, _ in deleting.values()):
            return  # nothing to look at yet: one list per scenario would only cost
        present = {obj["metadata"]["name"] for obj in self.client.list("Namespace")[0]}
        for name in [name for name in deleting if name not in present]:
            del deleting[name]
        overdue = sorted(name for name, (since, _) in deleting.items() if now - since > self.timeouts.cleanup_timeout)
        if not overdue:
            return
        for name in overdue:
            del deleting[name]  # named once, in this error
        held = [removal.describe() for name in overdue for kind in NAMESPACED
                for removal in plan({kind: self.client.list(kind, name)[0]}, {})]
        raise RuntimeError(f"namespaces of earlier scenarios still exist {self.timeouts.cleanup_timeout:g}s after "
                           f"their deletion began: {', '.join(overdue)}"
                           f"{'; they hold ' + ', '.join(held) if held else ''}")


def run_leftovers(options: LiveOptions) -> list[str]:
    """What a run left on its clusters (namespaces and cluster-scoped objects labelled with its ID), once the
    cleanup timeout has passed without it going: every scenario's clean-up checked its own objects, but its
    namespace was only being deleted."""
    timeouts = TimeoutConfig.load(Path(options.timeout_config)) if options.timeout_config else TimeoutConfig()
    clusters = [(options.kubeconfig, options.context)] + [
        (str(c.kubeconfig), c.context) for c in map(ClusterConfig.load, map(Path, options.also_clusters))]
    deadline = time.monotonic() + timeouts.cleanup_timeout
    while True:
        left = []
        for kubeconfig, context in clusters:
            client = shared_client(kubeconfig, context, timeouts.request_timeout)
            for kind in ("Namespace", *sorted(CLUSTER_KINDS)):
                try:
                    items = client.list(kind, labels={RUN_LABEL: options.run_id})[0]
                except ApiError as error:
                    if error.reason == "NotFound":
                        continue  # a kind the cluster does not serve
                    raise
                left += [plan({}, {kind: [item]})[0].describe() for item in items]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(timeouts.poll_interval)


def _ignore_missing(delete: Callable[[], None]) -> None:
    try:
        delete()
    except ApiError as error:
        if error.reason != "NotFound":
            raise
