"""Builders for allocator tests: a store holding classes, slices and claims, and short object makers."""

from __future__ import annotations

from typing import Any

from draconform.kube.featuregates import FeatureGates
from draconform.kube.kinds import with_pod_room
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.sut import Obj

DRIVER = "gpu.example.com"


def store_with(*objects: Obj) -> Store:
    store = Store(FakeClock())
    for obj in objects:
        store.load(obj)
    return store


def node(name: str, **labels: str) -> Obj:
    return with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(labels)}})


def device_class(name: str, *expressions: str, config: list[Obj] | None = None) -> Obj:
    spec: Obj = {"selectors": [{"cel": {"expression": e}} for e in expressions]}
    if config:
        spec["config"] = config
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}



# The class most tests ask for: every device of the test driver.
GPU_CLASS = device_class("gpu", f'device.driver == "{DRIVER}"')
# The gates that choose upstream's stable allocator (neither of the newer variants' gates on).
STABLE = {"DRAConsumableCapacity": False, "DRADeviceBindingConditions": False}


def resource_slice(name: str, devices: list[Obj], *, driver: str = DRIVER, pool: str | None = None,
                   generation: int = 0, count: int = 1, **where: Any) -> Obj:
    if not where:
        where = {"nodeName": "node-1"}
    spec: Obj = {"driver": driver, "pool": {"name": pool or name, "generation": generation,
                                            "resourceSliceCount": count}, **where}
    if devices:
        spec["devices"] = devices
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def dev(name: str, **fields: Any) -> Obj:
    return {"name": name, **fields}


def claim(name: str, *requests: Obj, constraints: list[Obj] | None = None, config: list[Obj] | None = None,
          allocation: Obj | None = None) -> Obj:
    devices: Obj = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    obj: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}}
    if allocation is not None:
        obj["status"] = {"allocation": allocation}
    return obj


def exactly(name: str, class_name: str = "gpu", count: int | None = None, **fields: Any) -> Obj:
    spec: Obj = {"deviceClassName": class_name, **fields}
    if count is not None:
        spec["count"] = count
    return {"name": name, "exactly": spec}


def first_available(name: str, *subs: Obj) -> Obj:
    return {"name": name, "firstAvailable": [{"name": s["name"], **s["exactly"]} for s in subs]}


def allocated(*devices: tuple[str, str, str], request: str = "req") -> Obj:
    return {"devices": {"results": [{"request": request, "driver": d, "pool": p, "device": n} for d, p, n in devices]}}


def gates(**values: bool) -> FeatureGates:
    return FeatureGates(values)


def picked(allocation: Obj) -> list[tuple[str, str, str, str]]:
    return [(r["request"], r["driver"], r["pool"], r["device"]) for r in allocation["devices"]["results"]]
