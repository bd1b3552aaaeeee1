"""The claims of `draconform plugin-check --kubeconfig`, made in the cluster by draconform itself: from the
ResourceSlices the driver publishes for the node, the reference allocator picks one device per claim; each
claim is created (the API server assigns its UID), then allocated through the status subresource and reserved
for a placeholder pod that never runs (a scheduling gate holds it), as the kubelet would find it. Everything
carries the label `draconform.io/plugin-check` and is deleted when the run ends, whatever happened."""

from __future__ import annotations

import contextlib
import copy
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draconform.live.kube import KubeClient, Unanswered, load_config
from draconform.plugincheck.claims import NeedsCluster
from draconform.reference.claimfiles import CheckInputError, TestClaim, allocate_claims
from draconform.sut import ApiError, Obj

LABEL = "draconform.io/plugin-check"
# Enough claims for every check that needs more than one, few enough that a node with many devices is quick.
MAX_CLAIMS = 4
OTHER_DRIVER = "other.plugin-check.draconform.io"


def _on_node(slice_: Obj, node: str) -> bool:
    return (slice_.get("spec") or {}).get("nodeName") == node


@dataclass
class ClusterClaims:
    """Claims created in the cluster behind `client`; `close()` deletes everything the run created."""

    client: KubeClient
    driver: str
    node: str
    namespace: str
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    claims: list[TestClaim] = field(default_factory=list)
    _slices: list[Obj] = field(default_factory=list)
    _created: list[tuple[str, str]] = field(default_factory=list)  # kind, name
    _pod: Obj | None = None
    _count: int = 0

    @classmethod
    def connect(cls, kubeconfig: Path, driver: str, node: str, namespace: str, timeout: float) -> ClusterClaims:
        try:
            client = KubeClient(load_config(kubeconfig), request_timeout=timeout)
        except Exception as err:  # lightkube's ConfigError, a file that is not a kubeconfig
            raise CheckInputError(f"{kubeconfig}: not a usable kubeconfig: {err}") from err
        made = cls(client, driver, node, namespace)
        try:
            made._start()
        except BaseException:
            made.close()
            raise
        return made

    # --- set-up ------------------------------------------------------------------------------------------
    def _start(self) -> None:
        try:
            slices, _ = self.client.list("ResourceSlice")
        except (ApiError, Unanswered) as err:
            raise CheckInputError(f"cannot list ResourceSlices at {self.client.server}: {err}") from err
        self._slices = [s for s in slices if (s.get("spec") or {}).get("driver") == self.driver]
        if not self._slices:
            raise CheckInputError(f"the cluster at {self.client.server} has no ResourceSlice of driver {self.driver}")
        try:
            node = self.client.get("Node", self.node)
        except (ApiError, Unanswered):
            node = None  # not allowed to read nodes: slices that select nodes by label will not match
        labels = dict(((node or {}).get("metadata") or {}).get("labels") or {})
        # The allocator decides which slices reach the node: by name, by label, or all nodes.
        where = f"the ResourceSlices of driver {self.driver} for node {self.node}"
        derived = allocate_claims(self._slices, self.driver, self.node, where, limit=MAX_CLAIMS, node_labels=labels)
        self._pod = self._create({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"plugin-check-{self.run}", "namespace": self.namespace},
            "spec": {"schedulingGates": [{"name": "draconform.io/plugin-check"}],
                     "containers": [{"name": "placeholder", "image": "registry.k8s.io/pause:3.10"}]},
        })
        self.claims = [self._claim(c.obj["spec"], c.obj["status"]["allocation"]) for c in derived]

    def _create(self, obj: Obj) -> Obj:
        obj = copy.deepcopy(obj)
        obj["metadata"].setdefault("labels", {})[LABEL] = self.run
        created = self.client.create(obj)
        self._created.append((obj["kind"], obj["metadata"]["name"]))
        return created

    def _claim(self, spec: Obj, allocation: Obj | None, name: str | None = None) -> TestClaim:
        """A claim created with `spec`, then allocated with `allocation` (None: left unallocated) and
        reserved for the placeholder pod."""
        self._count += 1
        name = name or f"plugin-check-{self.run}-{self._count}"
        created = self._create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                "metadata": {"name": name, "namespace": self.namespace}, "spec": spec})
        if allocation is not None:
            assert self._pod is not None
            pod = self._pod["metadata"]
            created["status"] = {"allocation": allocation,
                                 "reservedFor": [{"resource": "pods", "name": pod["name"], "uid": pod["uid"]}]}
            created = self.client.update_status(created)
        return TestClaim(created)

    # --- extra claims --------------------------------------------------------------------------------------
    def extra(self, kind: str) -> TestClaim:
        first = self.claims[0].obj
        spec, allocation = copy.deepcopy(first["spec"]), copy.deepcopy(first["status"]["allocation"])
        results = allocation["devices"]["results"]
        if kind == "unallocated":
            return self._claim(spec, None)
        if kind in ("same-device", "to-recreate", "fresh"):  # a new claim with the first claim's allocation
            return self._claim(spec, allocation)
        if kind == "other-node":
            # The device's own name, in a pool of another node: a plugin that looks devices up by name alone
            # would prepare its own device for it.
            other = next((s for s in self._slices if not _on_node(s, self.node)
                          and (s.get("spec") or {}).get("nodeName")), None)
            pool = other["spec"]["pool"]["name"] if other else f"{results[0]['pool']}-plugin-check-elsewhere"
            node = other["spec"]["nodeName"] if other else f"{self.node}-plugin-check-elsewhere"
            for result in results:
                result["pool"] = pool
            allocation["nodeSelector"] = {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
            return self._claim(spec, allocation)
        if kind == "other-driver-too":
            spec["devices"]["requests"].append(
                {"name": "other", "exactly": {"deviceClassName": "plugin-check-other-driver"}})
            results.append({"request": "other", "driver": OTHER_DRIVER, "pool": "elsewhere", "device": "device-0"})
            return self._claim(spec, allocation)
        raise ValueError(f"unknown extra claim {kind!r}")

    def with_config(self, driver: str, parameters: Any) -> TestClaim:
        first = self.claims[0].obj
        spec, allocation = copy.deepcopy(first["spec"]), copy.deepcopy(first["status"]["allocation"])
        requests = [r["name"] for r in spec["devices"]["requests"]]
        opaque = {"driver": driver, "parameters": parameters}
        spec["devices"]["config"] = [{"requests": requests, "opaque": opaque}]
        allocation["devices"]["config"] = [{"source": "FromClaim", "requests": requests, "opaque": opaque}]
        claim = self._claim(spec, allocation, f"plugin-check-{self.run}-refused-config")
        self.claims.append(claim)
        return claim

    def recreate(self, claim: TestClaim) -> TestClaim:
        """Delete `claim` and create it again under its name, allocated the device of the second claim."""
        if len(self.claims) < 2:
            raise NeedsCluster("deleting and re-creating a claim needs two devices of the driver on the node")
        second = self.claims[1].obj
        self.client.delete("ResourceClaim", claim.ref.name, self.namespace, grace_period_seconds=0)
        return self._claim(copy.deepcopy(second["spec"]), copy.deepcopy(second["status"]["allocation"]),
                           claim.ref.name)

    # --- clean-up ------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Delete every object this run created (claims first, then the pod); keep going past failures."""
        for kind, name in sorted(set(self._created), key=lambda item: item[0] != "ResourceClaim"):
            with contextlib.suppress(ApiError, Unanswered):  # already gone, or the server is: nothing more to do
                self.client.delete(kind, name, self.namespace, grace_period_seconds=0)
        self._created.clear()
        self.client.close()

