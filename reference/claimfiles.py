"""Allocated ResourceClaims for a kubelet plugin to prepare, as the cluster's API server stores them (metadata.uid
and status.allocation set): read from files, or derived from a ResourceSlice file of the driver by giving each
claim one device on the node with the reference allocator, the UIDs derived from driver, node and claim name so
that deriving twice gives the same claims. `draconform plugin-check` and the reference plugin run as a process of
its own (`standalone_driver.py`) both read their claims here, so they agree on what a claim file means."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from draconform.kube.kinds import with_pod_room
from draconform.kubeletplugin.types import ClaimRef
from draconform.sut import Obj

if TYPE_CHECKING:
    from draconform.reference.apiserver.interface import ApiStore
    from draconform.validation.loader import Document

CLAIM_NAMESPACE = "default"
UID_NAMESPACE = uuid.UUID("6f1d3c2a-5b7e-4a90-8c1d-2e3f4a5b6c7d")


class CheckInputError(ValueError):
    """Unusable input: the message names the file, object and field."""


@dataclass(frozen=True)
class TestClaim:
    obj: Obj

    @property
    def ref(self) -> ClaimRef:
        meta = self.obj["metadata"]
        return ClaimRef(namespace=meta.get("namespace", CLAIM_NAMESPACE), name=meta["name"], uid=meta["uid"])

    def results(self, driver: str) -> list[Obj]:
        allocation = self.obj["status"]["allocation"]
        return [r for r in (allocation.get("devices") or {}).get("results") or [] if r.get("driver") == driver]


def load_objects(path: Path, kind: str) -> list[Obj]:
    """The objects of `kind` in the file (a `kind: List` expanded), each read by the hardened loader and valid
    against its kind's JSON Schema in the validation layer, as `draconform validate` checks it."""
    from draconform.validation.inputs import InputError, read_documents

    try:
        documents = read_documents(path)
    except InputError as err:
        raise CheckInputError(str(err)) from err
    objects: list[Obj] = []
    for number, document in enumerate(documents, 1):
        data = document.data
        listed = isinstance(data, dict) and data.get("kind") == "List" and isinstance(data.get("items"), list)
        items = data["items"] if listed else [data]
        for index, item in enumerate(items):
            if not isinstance(item, dict) or item.get("kind") != kind:
                got = item.get("kind") if isinstance(item, dict) else type(item).__name__
                raise CheckInputError(f"{path}:{document.line}: document {number}: expected kind {kind}, got {got!r}")
            objects.append(_check_object(path, document, ("items", index) if listed else (), item))
    return objects


def _check_object(path: Path, document: Document, at: tuple[str | int, ...], obj: Obj) -> Obj:
    """The object in resource.k8s.io/v1 (converted from an older served version as `draconform validate`
    converts it); CheckInputError naming file, line, object and field for what its JSON Schema refuses."""
    from draconform.validation.problems import format_path
    from draconform.validation.schema import kind_schema, schema_problems
    from draconform.validation.versions import path_in, to_v1, version_of

    version = version_of(obj)
    converted, problems = to_v1(obj)
    schema = kind_schema(str(converted.get("apiVersion")), str(obj.get("kind")))
    if schema is None:
        raise CheckInputError(f"{path}:{document.line_of(at)}: {obj.get('kind')}: apiVersion: Unsupported value: "
                              f"{obj.get('apiVersion')!r}: expected resource.k8s.io/v1, v1beta2 or v1beta1")
    found = [(problem.path, problem.message) for problem in problems]  # already at the paths as written
    found += [(path_in(version, obj["kind"], problem.path), problem.message)
              for problem in schema_problems(schema, converted) if problem.severity == "error"]
    if found:
        name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), dict) else None
        raise CheckInputError("\n".join(f"{path}:{document.line_of((*at, *field))}: {obj['kind']}/{name}: "
                                        f"{format_path(field)}: {message}" for field, message in found))
    return converted


def load_claims(paths: Sequence[Path], driver: str) -> list[TestClaim]:
    claims: list[TestClaim] = []
    for path in paths:
        for obj in load_objects(path, "ResourceClaim"):
            meta = obj.get("metadata") or {}
            where = f"{path}: ResourceClaim {meta.get('name')!r}"
            if not meta.get("name"):
                raise CheckInputError(f"{path}: a ResourceClaim has no metadata.name")
            if not meta.get("uid"):
                raise CheckInputError(f"{where}: metadata.uid is required (read the claim back from the cluster)")
            allocation = (obj.get("status") or {}).get("allocation")
            if not allocation:
                raise CheckInputError(f"{where}: status.allocation is required (the claim must be allocated)")
            claim = TestClaim(obj)
            if not claim.results(driver):
                raise CheckInputError(f"{where}: status.allocation.devices.results has no device of driver {driver}")
            claims.append(claim)
    if not claims:
        raise CheckInputError("no claims: pass allocated ResourceClaims with --claims, or the driver's slices "
                              "with --slices")
    return claims


def derive_claims(slices_file: Path, driver: str, node: str) -> list[TestClaim]:
    """One claim per device of `driver` that the reference allocator can give `node`, each claim allocated."""
    return allocate_claims(load_objects(slices_file, "ResourceSlice"), driver, node, str(slices_file))


def allocate_claims(slices: Sequence[Obj], driver: str, node: str, where: str, limit: int | None = None,
                    node_labels: dict[str, str] | None = None) -> list[TestClaim]:
    """One claim per device of `driver` (at most `limit`) that the reference allocator can give `node` (with
    `node_labels`, for slices that select nodes by label)."""
    from draconform.reference.cluster import ReferenceCluster

    devices = [device for obj in slices if (obj.get("spec") or {}).get("driver") == driver
               for device in obj["spec"].get("devices") or []]
    if not devices:
        raise CheckInputError(f"{where}: no ResourceSlice of driver {driver} lists a device")
    if limit is not None:
        devices = devices[:limit]
    cluster = ReferenceCluster()
    try:
        names = [f"plugin-check-{index}" for index in range(len(devices))]
        _create_objects(cluster.store, slices, driver, node, node_labels or {}, names)
        cluster.settle()
        claims = []
        for name in names:
            claim = cluster.store.get("ResourceClaim", name, CLAIM_NAMESPACE)
            if claim is not None and (claim.get("status") or {}).get("allocation"):
                claims.append(_portable(claim, driver, node))
    except CheckInputError:
        raise
    except Exception as err:
        raise CheckInputError(f"{where}: cannot derive claims: {err}") from err
    finally:
        cluster.close()
    if not claims:
        raise CheckInputError(f"{where}: the allocator could give node {node} no device of driver {driver}")
    return claims


def _create_objects(store: ApiStore, slices: Sequence[Obj], driver: str, node: str, node_labels: dict[str, str],
                    names: list[str]) -> None:
    """The node, a class of every device of `driver`, the slices, and per name a claim for one device of that
    class with a pod using it (the reference allocates a claim only for a pod)."""
    store.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": node_labels}}))
    store.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "plugin-check"},
                  "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    for obj in slices:
        store.create({key: value for key, value in obj.items() if key not in ("status", "metadata")}
                     | {"metadata": {"name": obj["metadata"]["name"]}})
    for name in names:
        spec = {"devices": {"requests": [{"name": "device", "exactly": {"deviceClassName": "plugin-check"}}]}}
        store.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                      "metadata": {"name": name, "namespace": CLAIM_NAMESPACE}, "spec": spec})
        store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": CLAIM_NAMESPACE},
                      "spec": {"containers": [{"name": "c", "image": "pause"}],
                               "resourceClaims": [{"name": "device", "resourceClaimName": name}]}})


def _portable(claim: Obj, driver: str, node: str) -> TestClaim:
    """The claim as a user would create it: stable UID, allocation only (no reservation of the helper pod)."""
    name = claim["metadata"]["name"]
    return TestClaim({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": CLAIM_NAMESPACE,
                     "uid": str(uuid.uuid5(UID_NAMESPACE, f"{driver}/{node}/{name}"))},
        "spec": claim["spec"],
        "status": {"allocation": claim["status"]["allocation"]},
    })
