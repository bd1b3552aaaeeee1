"""DRA scheduling workloads for `draconform bench`, shaped like upstream scheduler_perf's
(test/integration/scheduler_perf/dra): nodes with one ResourceSlice each (pool = node name, driver
test-driver.cdi.k8s.io, devices instance-N with model/family/driverVersion/numa attributes and 1Gi of
memory), one DeviceClass selecting the driver, and pods with one claim from a ResourceClaimTemplate, all run
through the reference scheduler and resourceclaim controller in-process.

Throughput is upstream's definition: the measured pods divided by the wall-clock time from creating them to
the last one being bound (pods/s, averaged over the measured pods); set-up and pre-filled pods are not
timed. Pre-allocated claims (steady-state half/full) belong to running pods so the controller keeps them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from draconform.bench.registry import BenchOptions, Measurement, settled_heap, workload
from draconform.kube.kinds import with_pod_room
from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.cluster import ReferenceCluster
from draconform.sut import Obj

DRIVER = "test-driver.cdi.k8s.io"
CLASS = "test-class"
TEMPLATE = "test-claim-template"
NAMESPACE = "default"


def _core(name: str) -> AllocatorFactory:
    from draconform.reference.allocator.columnar import ColumnarAllocator
    from draconform.reference.allocator.oracle import OracleAllocator

    return ColumnarAllocator if name == "columnar" else OracleAllocator


@dataclass(frozen=True)
class Shape:
    nodes: int
    devices: int  # per node

    def scaled(self, scale: float) -> Shape:
        return Shape(max(1, round(self.nodes * scale)), self.devices)


class Workbench:
    """A reference cluster holding the scheduler_perf objects, with helpers to add pods and time them."""

    def __init__(self, shape: Shape, core: AllocatorFactory) -> None:
        self.shape = shape
        self.cluster = ReferenceCluster(allocator_factory=core)
        self.store = self.cluster.store
        self._pods = 0
        self.cpu = 0.0  # the CPU time of the last timed phase, in seconds: a shared machine's wall clock waits
        for index in range(shape.nodes):
            node = f"node-{index}"
            self.store.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}))
            self.store.create({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": f"{node}-{DRIVER}"},
                "spec": {"driver": DRIVER, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                         "nodeName": node, "devices": [_device(i) for i in range(shape.devices)]},
            })
        self.store.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": CLASS},
                           "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
        self.store.create({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": TEMPLATE, "namespace": NAMESPACE},
            "spec": {"spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": CLASS}}]}}},
        })
        self.cluster.settle()

    def create_pods(self, count: int) -> list[str]:
        names = []
        for _ in range(count):
            name = f"pod-{self._pods}"
            self._pods += 1
            self.store.create({
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE},
                "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                         "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": TEMPLATE}]},
            })
            names.append(name)
        return names

    def schedule(self, count: int) -> float:
        """Create `count` pods and let the cluster settle; the seconds it took. Every pod must be bound."""
        with settled_heap():
            started, cpu = time.perf_counter(), time.process_time()
            names = self.create_pods(count)
            self.cluster.settle()
            elapsed, self.cpu = time.perf_counter() - started, time.process_time() - cpu
        self._check_bound(names)
        return elapsed

    def warm_up(self) -> None:
        """One pod scheduled and deleted again, untimed, before a timed phase (as the cost curve does): the
        scheduler's core builds its pool view on its first question, as kube-scheduler fills its caches before it
        schedules; the cluster is left as it was."""
        names = self.create_pods(1)
        self.cluster.settle()
        self._check_bound(names)
        self.store.delete("Pod", names[0], NAMESPACE)
        self.cluster.settle()

    def _check_bound(self, names: list[str]) -> None:
        unbound = [n for n in names if not (self.store.peek("Pod", n, NAMESPACE) or {}).get("spec", {}).get("nodeName")]
        if unbound:
            raise RuntimeError(f"{len(unbound)} of {len(names)} measured pods were not scheduled "
                               f"(first: {unbound[0]})")

    def preallocate(self, count: int) -> None:
        """`count` claims allocated (node by node, device by device), each held by a running pod."""
        for index in range(count):
            node, device = divmod(index, self.shape.devices)
            pod = self.store.create({
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"running-{index}", "namespace": NAMESPACE},
                "spec": {"nodeName": f"node-{node}", "containers": [{"name": "main", "image": "pause"}],
                         "resourceClaims": [{"name": "resource", "resourceClaimName": f"prefilled-{index}"}]},
                "status": {"phase": "Running"},
            })
            claim = self.store.create({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": f"prefilled-{index}", "namespace": NAMESPACE},
                "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": CLASS}}]}},
            })
            claim["status"] = {
                "allocation": {
                    "devices": {"results": [{"request": "req-0", "driver": DRIVER, "pool": f"node-{node}",
                                             "device": f"instance-{device}"}]},
                    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": [f"node-{node}"]}]}]},
                },
                "reservedFor": [{"resource": "pods", "name": pod["metadata"]["name"],
                                 "uid": pod["metadata"]["uid"]}],
            }
            self.store.update_status(claim)
        self.cluster.settle()

    def steady_state(self, total: int, batch: int = 10) -> float:
        """scheduler_perf's steady state: `batch` pods at a time are created, scheduled and deleted again
        (their generated claims go with them), until `total` pods were scheduled; the seconds it took."""
        with settled_heap():
            started, cpu = time.perf_counter(), time.process_time()
            done = 0
            while done < total:
                names = self.create_pods(min(batch, total - done))
                self.cluster.settle()
                self._check_bound(names)
                for name in names:
                    self.store.delete("Pod", name, NAMESPACE)
                self.cluster.settle()
                done += len(names)
            self.cpu = time.process_time() - cpu
            return time.perf_counter() - started


def _device(index: int) -> Obj:
    return {"name": f"instance-{index}",
            "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                           "driverVersion": {"version": "1.2.3"}, "dra.example.com/numa": {"int": index}},
            "capacity": {"memory": {"value": "1Gi"}}}


def _throughput(name: str, core: str, pods: int, seconds: float, detail: str,
                options: BenchOptions | None = None, cpu: float | None = None) -> Measurement:
    """Pods/s, with the shape's target (issue 38) when the full shape ran with the production core; with the CPU
    time, also pods per CPU second (what a quiet machine's wall clock would about show)."""
    target = TARGETS.get(name) if options is not None and options.scale == 1 and core == "columnar" else None
    used = f", CPU time {cpu:.1f} s: {pods / cpu:,.0f} pods per CPU second" if cpu else ""
    return Measurement(name, "pods/s", pods / seconds, f"{detail}; {pods} measured pods in {seconds:.1f} s{used}",
                       core, at_least=target)


# Pods/s each full scheduler_perf shape must reach on a quiet 2-core machine (issue 38)
TARGETS = {
    "SchedulingWithResourceClaimTemplate/5000pods_500nodes": 1000,
    "SteadyStateClusterResourceClaimTemplate/empty_500nodes": 1000,
    "SteadyStateClusterResourceClaimTemplate/half_500nodes": 600,
    "SteadyStateClusterResourceClaimTemplate/full_500nodes": 600,
    "SchedulingWithResourceClaimTemplate/5000nodes_1device": 500,
}


def _fill_and_measure(name: str, shape: Shape, init: int, measured: int) -> Callable[[BenchOptions], list[Measurement]]:
    def run(options: BenchOptions) -> list[Measurement]:
        results = []
        for core in options.allocators:
            scaled = shape.scaled(options.scale)
            bench = Workbench(scaled, _core(core))
            first = max(0, round(init * options.scale))
            bench.schedule(first) if first else None
            bench.warm_up()
            count = max(1, round(measured * options.scale))
            seconds = bench.schedule(count)
            results.append(_throughput(name, core, count, seconds,
                                       f"{scaled.nodes} nodes x {scaled.devices} devices, {first} pods scheduled "
                                       "before", options, bench.cpu))
        return results

    return run


def _steady(name: str, shape: Shape, prefilled: int, measured: int) -> Callable[[BenchOptions], list[Measurement]]:
    def run(options: BenchOptions) -> list[Measurement]:
        results = []
        for core in options.allocators:
            scaled = shape.scaled(options.scale)
            bench = Workbench(scaled, _core(core))
            capacity = scaled.nodes * scaled.devices
            filled = min(capacity - 10, round(prefilled * options.scale)) if prefilled else 0
            bench.preallocate(max(0, filled))
            bench.warm_up()
            count = max(10, round(measured * options.scale))
            seconds = bench.steady_state(count)
            results.append(_throughput(name, core, count, seconds,
                                       f"{scaled.nodes} nodes x {scaled.devices} devices, {filled} claims "
                                       "pre-allocated, 10 pods at a time", options, bench.cpu))
        return results

    return run


# The scheduler_perf shapes: (name, summary, runner, shape, pods allocated first, pods measured). The name
# is written once, so the registry entry and the measurements it reports cannot drift apart.
SHAPES = [
    ("SchedulingWithResourceClaimTemplate/5000pods_500nodes",
     "500 nodes x 10 devices; 2500 single-device pods from a claim template scheduled, then 2500 measured",
     _fill_and_measure, Shape(500, 10), 2500, 2500),
    ("SteadyStateClusterResourceClaimTemplate/empty_500nodes",
     "500 nodes x 10 devices, nothing allocated; pods created, scheduled and deleted 10 at a time",
     _steady, Shape(500, 10), 0, 500),
    ("SteadyStateClusterResourceClaimTemplate/half_500nodes",
     "500 nodes x 10 devices, 2500 claims pre-allocated; pods created, scheduled and deleted 10 at a time",
     _steady, Shape(500, 10), 2500, 500),
    ("SteadyStateClusterResourceClaimTemplate/full_500nodes",
     "500 nodes x 10 devices, 4990 claims pre-allocated (room for 10 pods); 10 pods at a time",
     _steady, Shape(500, 10), 4990, 500),
    ("SchedulingWithResourceClaimTemplate/5000nodes_1device",
     "5000 nodes x 1 device (upstream's large-cluster report); 250 single-device pods measured",
     _fill_and_measure, Shape(5000, 1), 0, 250),
]
for _name, _summary, _runner, _shape, _before, _measured in SHAPES:
    workload(_name, _summary)(_runner(_name, _shape, _before, _measured))


@workload("AllocatorComparison/500nodes_half",
          "the polars core against the oracle on one workload: 500 nodes x 10 devices, 2500 claims "
          "pre-allocated, the same N pods (--oracle-pods) scheduled with each core")
def _comparison(options: BenchOptions) -> list[Measurement]:
    name = "AllocatorComparison/500nodes_half"
    shape = Shape(500, 10).scaled(options.scale)
    prefilled = min(shape.nodes * shape.devices - options.oracle_pods, round(2500 * options.scale))
    figures: dict[str, Measurement] = {}
    for core in ("columnar", "oracle"):
        bench = Workbench(shape, _core(core))
        bench.preallocate(max(0, prefilled))
        seconds = bench.schedule(options.oracle_pods)
        figures[core] = _throughput(name, core, options.oracle_pods, seconds,
                                    f"{shape.nodes} nodes x {shape.devices} devices, {prefilled} claims pre-allocated")
    ratio = figures["columnar"].value / figures["oracle"].value
    return [figures["columnar"], figures["oracle"],
            Measurement(name, "x", ratio, "polars core throughput / oracle throughput", "columnar/oracle")]
