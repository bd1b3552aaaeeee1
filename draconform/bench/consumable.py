"""A `draconform bench` shape for KEP-5075 consumable capacity: many pods sharing multi-allocatable devices,
the shape of upstream scheduler_perf's consumable-capacity workloads. Each node publishes two NICs that allow
multiple allocations (100G of bandwidth each, handed out in 1G steps); every pod takes its claim from one
template asking for 10G, so each NIC carries ten shares and the allocator checks what every earlier share
consumes. Throughput is upstream's pods/s over the measured pods, as in `dra.py`."""

from __future__ import annotations

import time

from draconform.bench.dra import NAMESPACE, _core
from draconform.bench.registry import BenchOptions, Measurement, workload
from draconform.kube.kinds import with_pod_room
from draconform.reference.cluster import ReferenceCluster

NAME = "SchedulingWithConsumableCapacity/2000pods_100nodes"
DRIVER = "nic.example.com"
NICS_PER_NODE = 2
SHARES_PER_NIC = 10  # 100G in 10G shares


def _cluster(nodes: int, core: str) -> ReferenceCluster:
    cluster = ReferenceCluster(allocator_factory=_core(core))
    store = cluster.store
    for index in range(nodes):
        node = f"node-{index}"
        store.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}))
        store.create({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-{DRIVER}"},
            "spec": {"driver": DRIVER, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "nodeName": node, "devices": [{
                         "name": f"eth{nic}", "allowMultipleAllocations": True,
                         "attributes": {"pciRoot": {"string": f"0000:{nic:02d}"}},
                         "capacity": {"bandwidth": {"value": "100G", "requestPolicy": {
                             "default": "1G", "validRange": {"min": "1G", "step": "1G"}}}},
                     } for nic in range(NICS_PER_NODE)]},
        })
    store.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "nic"},
                  "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    store.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                  "metadata": {"name": "ten-gig", "namespace": NAMESPACE},
                  "spec": {"spec": {"devices": {"requests": [{"name": "nic", "exactly": {
                      "deviceClassName": "nic", "capacity": {"requests": {"bandwidth": "10G"}}}}]}}}})
    cluster.settle()
    return cluster


def _schedule(cluster: ReferenceCluster, first: int, count: int) -> float:
    started = time.perf_counter()
    names = [f"pod-{index}" for index in range(first, first + count)]
    for name in names:
        cluster.store.create({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                     "resourceClaims": [{"name": "net", "resourceClaimTemplateName": "ten-gig"}]}})
    cluster.settle()
    elapsed = time.perf_counter() - started
    unbound = [n for n in names if not (cluster.store.get("Pod", n, NAMESPACE) or {}).get("spec", {}).get("nodeName")]
    if unbound:
        raise RuntimeError(f"{len(unbound)} of {count} measured pods were not scheduled (first: {unbound[0]})")
    return elapsed


@workload(NAME, "100 nodes x 2 NICs shared by bandwidth (10 shares of 10G each); 1000 pods scheduled, then "
                "1000 measured, the last of them filling every NIC")
def _consumable(options: BenchOptions) -> list[Measurement]:
    results = []
    nodes = max(1, round(100 * options.scale))
    capacity = nodes * NICS_PER_NODE * SHARES_PER_NIC
    for core in options.allocators:
        cluster = _cluster(nodes, core)
        before = capacity // 2
        _schedule(cluster, 0, before)
        count = capacity - before
        seconds = _schedule(cluster, before, count)
        results.append(Measurement(NAME, "pods/s", count / seconds,
                                   f"{nodes} nodes x {NICS_PER_NODE} shared NICs, {before} pods scheduled before; "
                                   f"{count} measured pods in {seconds:.1f} s", core))
    return results
