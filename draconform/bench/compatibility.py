"""KEP-5963 workloads for `draconform bench`: partitionable GPUs whose partitions declare compatibility groups,
run through the reference scheduler in-process with DRADeviceCompatibilityGroups on (KEP "Performance tests":
the scheduling-throughput impact of the compatibility check).

- `PartitionableCompatibilityGroups/2000pods_100nodes`: 100 nodes with 4 GPUs each; every GPU is one counter
  set of 100 units exposing 10 MIG-like partitions (group "mig") and 10 vGPU-like profiles (group "vgpu"),
  10 units each. 2000 pods, a seeded mix of MIG and vGPU claims, are scheduled. The same cluster without
  groups is measured beside it, so the difference is the cost of the check (and of the search it steers).
- `PartitionableCompatibilityGroups/backtracking`: one GPU per node listing 12 vGPU profiles before 12 MIG
  partitions; each pod's claim asks for any 4 partitions and then 4 MIG partitions, so the first request's
  vGPU choices are rejected only when the second request runs, and the search backtracks through every
  combination of vGPU profiles before it takes MIG partitions. Without groups it never backtracks.

Throughput is measured pods over the wall-clock time from creating them to the last one bound (pods/s)."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from draconform.bench.registry import BenchOptions, Measurement, workload
from draconform.kube.kinds import with_pod_room
from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.cluster import ReferenceCluster
from draconform.sut import ComponentConfig, Obj

DRIVER = "gpu.example.com"
NAMESPACE = "default"
GATE = "DRADeviceCompatibilityGroups"
SEED = 5963
MAX_DEVICES_PER_SLICE = 64  # slices with consumesCounters hold at most 64 devices


def _core(name: str) -> AllocatorFactory:
    from draconform.reference.allocator.columnar import ColumnarAllocator
    from draconform.reference.allocator.oracle import OracleAllocator

    return ColumnarAllocator if name == "columnar" else OracleAllocator


@dataclass(frozen=True)
class GpuShape:
    nodes: int
    gpus: int  # counter sets per node
    mig: int  # MIG-like partitions per GPU
    vgpu: int  # vGPU-like profiles per GPU
    vgpu_first: bool  # list vGPU profiles before MIG partitions (steers the search into backtracking)
    groups: bool  # whether partitions declare compatibility groups


def _partition(gpu: int, kind: str, index: int, groups: bool) -> Obj:
    consumption: Obj = {"counterSet": f"gpu-{gpu}", "counters": {"units": {"value": "10"}}}
    if groups:
        consumption["compatibilityGroups"] = [kind]
    return {"name": f"gpu-{gpu}-{kind}-{index}", "attributes": {"type": {"string": kind}},
            "consumesCounters": [consumption]}


def _cluster(shape: GpuShape, core: AllocatorFactory) -> ReferenceCluster:
    """Nodes, their pools (one counter-set slice plus device slices of at most 64 devices) and the classes."""
    gates = ComponentConfig(feature_gates={GATE: True})
    cluster = ReferenceCluster({"kube-apiserver": gates, "kube-scheduler": gates}, allocator_factory=core)
    store = cluster.store
    for name, selector in (("gpu", f'device.driver == "{DRIVER}"'),
                           ("mig", f'device.attributes["{DRIVER}"].type == "mig"'),
                           ("vgpu", f'device.attributes["{DRIVER}"].type == "vgpu"')):
        store.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                      "spec": {"selectors": [{"cel": {"expression": selector}}]}})
    for n in range(shape.nodes):
        node = f"node-{n}"
        store.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}))
        devices: list[Obj] = []
        for gpu in range(shape.gpus):
            mig = [_partition(gpu, "mig", i, shape.groups) for i in range(shape.mig)]
            vgpu = [_partition(gpu, "vgpu", i, shape.groups) for i in range(shape.vgpu)]
            devices += vgpu + mig if shape.vgpu_first else mig + vgpu
        chunks = [devices[i:i + MAX_DEVICES_PER_SLICE] for i in range(0, len(devices), MAX_DEVICES_PER_SLICE)]
        pool = {"name": node, "generation": 1, "resourceSliceCount": len(chunks) + 1}
        store.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                      "metadata": {"name": f"{node}-counters"},
                      "spec": {"driver": DRIVER, "pool": pool, "nodeName": node, "sharedCounters": [
                          {"name": f"gpu-{g}", "counters": {"units": {"value": "100"}}} for g in range(shape.gpus)]}})
        for index, chunk in enumerate(chunks):
            store.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                          "metadata": {"name": f"{node}-devices-{index}"},
                          "spec": {"driver": DRIVER, "pool": pool, "nodeName": node, "devices": chunk}})
    cluster.settle()
    return cluster


def _template(cluster: ReferenceCluster, name: str, requests: list[Obj]) -> None:
    cluster.store.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                          "metadata": {"name": name, "namespace": NAMESPACE},
                          "spec": {"spec": {"devices": {"requests": requests}}}})


def _schedule(cluster: ReferenceCluster, templates: list[str]) -> float:
    """Create one pod per template entry, settle, check every pod is bound; the seconds it took."""
    started = time.perf_counter()
    for index, template in enumerate(templates):
        cluster.store.create({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{index}", "namespace": NAMESPACE},
            "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}]},
        })
    cluster.settle()
    elapsed = time.perf_counter() - started
    unbound = [i for i in range(len(templates))
               if not (cluster.store.get("Pod", f"pod-{i}", NAMESPACE) or {}).get("spec", {}).get("nodeName")]
    if unbound:
        raise RuntimeError(f"{len(unbound)} of {len(templates)} measured pods were not scheduled "
                           f"(first: pod-{unbound[0]})")
    return elapsed


def _figures(name: str, core: str, pods: int, plain: float, grouped: float, detail: str) -> list[Measurement]:
    return [
        Measurement(name, "pods/s", pods / plain, f"without groups; {detail}; {pods} pods in {plain:.1f} s", core),
        Measurement(name, "pods/s", pods / grouped, f"with groups; {detail}; {pods} pods in {grouped:.1f} s", core),
        Measurement(name, "x", grouped / plain, "slowdown with groups: throughput without groups / with", core),
    ]


@workload("PartitionableCompatibilityGroups/2000pods_100nodes",
          "100 nodes x 4 GPUs (counter sets) x (10 MIG-like + 10 vGPU-like partitions); 2000 pods mixing MIG and "
          "vGPU claims, with and without compatibility groups")
def mixed(options: BenchOptions) -> list[Measurement]:
    name = "PartitionableCompatibilityGroups/2000pods_100nodes"
    nodes = max(1, round(100 * options.scale))
    pods = max(1, round(2000 * options.scale))
    kinds = [random.Random(SEED + i).choice(("mig", "vgpu")) for i in range(pods)]
    results = []
    for core in options.allocators:
        seconds = {}
        for groups in (False, True):
            cluster = _cluster(GpuShape(nodes, 4, 10, 10, vgpu_first=False, groups=groups), _core(core))
            for kind in ("mig", "vgpu"):
                _template(cluster, kind, [{"name": "gpu", "exactly": {"deviceClassName": kind}}])
            seconds[groups] = _schedule(cluster, kinds)
        detail = f"{nodes} nodes x 4 GPUs x 20 partitions, {kinds.count('mig')} MIG and {kinds.count('vgpu')} vGPU pods"
        results += _figures(name, core, pods, seconds[False], seconds[True], detail)
    return results


@workload("PartitionableCompatibilityGroups/backtracking",
          "10 nodes x 1 GPU listing 12 vGPU-like before 12 MIG-like partitions; 10 pods each asking for any 4 "
          "partitions, then 4 MIG partitions: with groups the search backtracks through the vGPU combinations")
def backtracking(options: BenchOptions) -> list[Measurement]:
    name = "PartitionableCompatibilityGroups/backtracking"
    nodes = max(1, round(10 * options.scale))
    results = []
    for core in options.allocators:
        seconds = {}
        for groups in (False, True):
            cluster = _cluster(GpuShape(nodes, 1, 12, 12, vgpu_first=True, groups=groups), _core(core))
            _template(cluster, "any-then-mig", [{"name": "any", "exactly": {"deviceClassName": "gpu", "count": 4}},
                                                {"name": "mig", "exactly": {"deviceClassName": "mig", "count": 4}}])
            seconds[groups] = _schedule(cluster, ["any-then-mig"] * nodes)
        results += _figures(name, core, nodes, seconds[False], seconds[True],
                            f"{nodes} nodes x 1 GPU x 24 partitions, one 8-device claim per pod")
    return results
