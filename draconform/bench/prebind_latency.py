"""The binding-conditions workload of `draconform bench` (KEP-5007 test plan: "stress test with 1000
Pods waiting in PreBind"): N pods, each with one claim for a fabric device with a binding condition,
all parked in PreBind; then the condition of every claim is set True in a seeded random order, and
the in-process time from each update to its pod being bound is measured. Waiting is event-driven, so
the latency at N waiting pods and at the last few should be alike; both are reported."""

from __future__ import annotations

import math
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass

from draconform.kube.kinds import with_pod_room
from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.cluster import ReferenceCluster

DRIVER = "gpu.example.com"
CONDITION = "dra.example.com/attached"
FAILURE = "dra.example.com/attach-failed"
NAMESPACE = "bench"
DEVICES_PER_SLICE = 100  # below the API's 128 devices per slice
SEED = 5007


@dataclass(frozen=True)
class BindingConditionsFigures:
    pods: int
    setup_seconds: float  # creating the objects and scheduling every pod into PreBind
    median_latency: float  # seconds from a condition update to its pod being bound
    p99_latency: float
    median_latency_first_tenth: float  # while the most pods are still waiting
    median_latency_last_tenth: float  # while the fewest are
    total_seconds: float  # all updates, one after another, each followed by the binding
    peak_bytes: float | None  # tracemalloc's peak over setup and updates, when measured


def _default_core() -> AllocatorFactory:
    from draconform.reference.allocator.columnar import ColumnarAllocator

    return ColumnarAllocator


def _populate(cluster: ReferenceCluster, pods: int) -> None:
    store = cluster.store
    store.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}))
    store.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "fabric-gpu"},
                  "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    slices = max(1, -(-pods // DEVICES_PER_SLICE))
    for index in range(slices):
        names = range(index * DEVICES_PER_SLICE, min(pods, (index + 1) * DEVICES_PER_SLICE))
        store.create({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"fabric-{index}"},
            "spec": {"driver": DRIVER, "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": slices},
                     "allNodes": True,
                     "devices": [{"name": f"gpu-{n}", "bindsToNode": True, "bindingConditions": [CONDITION],
                                  "bindingFailureConditions": [FAILURE]} for n in names]},
        })
    request = {"name": "gpu", "exactly": {"deviceClassName": "fabric-gpu"}}
    for index in range(pods):
        store.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                      "metadata": {"name": f"claim-{index}", "namespace": NAMESPACE},
                      "spec": {"devices": {"requests": [request]}}})
        store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{index}", "namespace": NAMESPACE},
                      "spec": {"containers": [{"name": "main", "image": "registry.example/app:1"}],
                               "resourceClaims": [{"name": "gpu", "resourceClaimName": f"claim-{index}"}]}})
    cluster.settle()
    waiting = len(cluster.scheduler.waiting)
    if waiting != pods:
        raise RuntimeError(f"expected {pods} pods waiting in PreBind, found {waiting}")


def _mark_ready(cluster: ReferenceCluster, index: int) -> None:
    """What a binding controller does: one status update with the device's condition True."""
    claim = cluster.store.get("ResourceClaim", f"claim-{index}", NAMESPACE)
    assert claim is not None
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    claim["status"]["devices"] = [{
        "driver": result["driver"], "pool": result["pool"], "device": result["device"],
        "conditions": [{"type": CONDITION, "status": "True", "reason": "Attached", "message": "attached",
                        "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    }]
    cluster.store.update_status(claim)


def _run(pods: int, seed: int, core: AllocatorFactory, clock: Callable[[], float]) -> tuple[float, list[float], float]:
    started = clock()
    cluster = ReferenceCluster(allocator_factory=core)
    _populate(cluster, pods)
    setup = clock() - started
    order = list(range(pods))
    random.Random(seed).shuffle(order)
    latencies: list[float] = []
    flips_started = clock()
    for index in order:
        _mark_ready(cluster, index)
        updated = clock()
        cluster.settle()
        latencies.append(clock() - updated)
        pod = cluster.store.get("Pod", f"pod-{index}", NAMESPACE)
        if pod is None or pod["spec"].get("nodeName") != "worker-1":
            raise RuntimeError(f"pod-{index} was not bound after its condition became True")
    return setup, latencies, clock() - flips_started


def binding_conditions_latency(
    pods: int = 1000, seed: int = SEED, core: AllocatorFactory | None = None, measure_memory: bool = True
) -> BindingConditionsFigures:
    """Latencies come from a run without tracemalloc (which slows Python several-fold); the peak
    memory from a second, identical run under tracemalloc."""
    factory = core or _default_core()
    setup, latencies, total = _run(pods, seed, factory, time.perf_counter)
    peak: float | None = None
    if measure_memory:
        tracemalloc.start()
        try:
            _run(pods, seed, factory, time.perf_counter)
            peak = float(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    tenth = max(1, pods // 10)
    return BindingConditionsFigures(
        pods=pods,
        setup_seconds=setup,
        median_latency=statistics.median(latencies),
        p99_latency=_percentile(latencies, 0.99),
        median_latency_first_tenth=statistics.median(latencies[:tenth]),
        median_latency_last_tenth=statistics.median(latencies[-tenth:]),
        total_seconds=total,
        peak_bytes=peak,
    )


def _percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(fraction * len(ordered))) - 1]
