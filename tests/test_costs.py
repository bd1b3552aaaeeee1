"""The cost check (issue 38): complexity guarded by counting work, never by timing. The same shape runs at two
sizes, 50 and 400 nodes with ten pods per node, and the work the components count where they do it (the store's
objects copied, handed out and scanned, the scheduler's nodes filtered, the allocation core's rows, serve's
encodings and history entries) is divided by what was done (pods scheduled, objects listed, events sent, devices
read). The larger size may cost more per pod only as kube-scheduler's cluster-size rule allows: a pod's Filter
stops after max(100, n x percentageOfNodesToScore) feasible nodes, so that many at most are found per pod, the
work per node visited stays flat, and so does the work per pod that has nothing to do with nodes. Each component
has its own figures: the scheduler's cycle, the controllers' settle (the resourceclaim controller, the reference
driver's slice publisher and the kubelets), serve's list and watch paths, and `draconform allocate` on a dump.

The quadratic NodeResourcesFit of f81dc9e (every pod listed and copied for every pod filtered) fails the first
figure: store objects per scheduled pod grew eightfold from 50 to 400 nodes."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from draconform.bench.dra import DRIVER, Shape, Workbench
from draconform.commands import allocate
from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.columnar import ColumnarAllocator
from draconform.reference.drivers.driver import ReferenceDriver
from draconform.reference.drivers.plugin import Checkpoint
from draconform.reference.scheduler.scheduler import feasible_nodes_to_find

SMALL, LARGE = 50, 400
PODS_PER_NODE = 10
DEVICES_PER_NODE = 20
BATCH = 10  # pods created between two settles
FLAT = 1.5  # work that must not grow with the cluster may differ this much between the sizes (rounding, names)


@dataclass
class Figures:
    """One component's counted work divided by what it did, at one size."""

    per_unit: dict[str, float]
    units: int


def _delta(after: Counter[str], before: Counter[str]) -> Counter[str]:
    return Counter({key: after[key] - before[key] for key in after if after[key] != before[key]})


def _check(name: str, small: Figures, large: Figures) -> None:
    """Each figure at LARGE at most FLAT times what it is at SMALL."""
    failures = []
    for figure in sorted(set(small.per_unit) | set(large.per_unit)):
        before, after = small.per_unit.get(figure, 0.0), large.per_unit.get(figure, 0.0)
        if after > max(before, 1.0) * FLAT:
            failures.append(f"{figure}: {before:.1f} at {SMALL} nodes, {after:.1f} at {LARGE} (allowed x{FLAT:g})")
    assert not failures, f"{name}: work grows with the cluster: " + "; ".join(failures)


# --- the scheduler's cycle and the controllers' settle -----------------------------------------------------------

def _scheduler_work(bench: Workbench) -> Counter[str]:
    """The scheduler's own counts and its allocation core's."""
    scheduler = bench.cluster.scheduler
    core = getattr(scheduler.dra, "allocator", None)
    return scheduler.work + getattr(core, "work", Counter())


def _publishing_driver(bench: Workbench) -> ReferenceDriver:
    """The reference driver publishing the bench's slices, settled: its publisher follows claim changes (its kubelet
    plugins are not registered, so the kubelets prepare nothing, as in the bench)."""
    driver = ReferenceDriver(DRIVER, bench.store, FeatureGates(), Checkpoint())
    driver.set_inventory(bench.store.list("ResourceSlice"))
    driver.sync()
    bench.cluster.settle()  # the scheduler takes in what the driver wrote before anything is counted
    return driver


def _settle_counted(bench: Workbench, driver: ReferenceDriver) -> tuple[Counter[str], Counter[str]]:
    """The cluster's settle loop (ReferenceCluster.settle), with the store's work split between the scheduler and
    the other components (the resourceclaim controller, the driver, the kubelets); the scheduler's and the
    allocation core's own counts join its share."""
    cluster, store = bench.cluster, bench.store
    scheduling: Counter[str] = Counter()
    settling: Counter[str] = Counter()
    own_before = _scheduler_work(bench)
    for _ in range(1000):
        before = Counter(store.work)
        progressed = cluster.controller.sync()
        settling.update(_delta(store.work, before))
        before = Counter(store.work)
        progressed = cluster.scheduler.sync() or progressed
        progressed = cluster.scheduler.schedule_pending() or progressed
        scheduling.update(_delta(store.work, before))
        before = Counter(store.work)
        progressed = driver.sync() or progressed
        progressed = cluster.kubelets.sync() or progressed
        settling.update(_delta(store.work, before))
        if not progressed:
            break
    else:
        raise AssertionError("the cluster did not settle")
    scheduling.update(_delta(_scheduler_work(bench), own_before))
    return scheduling, settling


@pytest.fixture(scope="module")
def cluster_figures() -> dict[int, tuple[Figures, Figures]]:
    figures = {}
    feasible_found.clear()
    visits.clear()
    for nodes in (SMALL, LARGE):
        bench = Workbench(Shape(nodes, DEVICES_PER_NODE), ColumnarAllocator)
        driver = _publishing_driver(bench)
        pods = nodes * PODS_PER_NODE
        # Pods arrive ten at a time, each batch settled, so that work done once per settle round or per watch event
        # (not only per pod) is counted as often as a cluster with pods coming and going makes it.
        names: list[str] = []
        scheduling, settling = Counter[str](), Counter[str]()
        for _ in range(0, pods, BATCH):
            names.extend(bench.create_pods(BATCH))
            for counted, into in zip(_settle_counted(bench, driver), (scheduling, settling), strict=True):
                into.update(counted)
        bench._check_bound(names)
        assert scheduling["cycles"] == pods  # each pod scheduled at its first attempt
        visited = scheduling.pop("nodes filtered")
        # work done for each node a Filter visits is judged per node visited; the rest per pod
        per_pod = {k: v / pods for k, v in scheduling.items() if k not in PER_NODE_VISITED}
        per_pod.update({f"{k} per node visited": scheduling[k] / visited for k in PER_NODE_VISITED})
        figures[nodes] = (Figures(per_pod, pods), Figures({k: v / pods for k, v in settling.items()}, pods))
        feasible_found[nodes] = scheduling["nodes scored"] / pods
        visits[nodes] = visited / pods
    return figures


PER_NODE_VISITED = ("nodes scored", "nodes judged", "nodes counted from kept free counts")
feasible_found: dict[int, float] = {}  # per pod, at each size (filled by the fixture)
visits: dict[int, float] = {}


def test_scheduler_cycle_finds_no_more_feasible_nodes_than_the_rule(
        cluster_figures: dict[int, tuple[Figures, Figures]]) -> None:
    """kube-scheduler's cluster-size rule itself: Filter stops once max(100, n x percentageOfNodesToScore)
    feasible nodes are found; a pod visits more nodes only where nodes do not fit it."""
    for nodes in (SMALL, LARGE):
        assert feasible_found[nodes] <= feasible_nodes_to_find(nodes), (nodes, feasible_found[nodes])
        assert visits[nodes] <= nodes


def test_scheduler_cycle_cost_per_pod_is_flat(cluster_figures: dict[int, tuple[Figures, Figures]]) -> None:
    small, large = cluster_figures[SMALL][0], cluster_figures[LARGE][0]
    assert small.per_unit.get("copied", 0) + small.per_unit.get("handed", 0) > 0  # the store's counters count
    _check("scheduler cycle", small, large)


def test_scheduler_cycle_judges_every_visited_node_from_kept_free_counts(
        cluster_figures: dict[int, tuple[Figures, Figures]]) -> None:
    """Removed work that must not come back: the one-device pods of this shape are judged, on every node Filter
    visits, from the core's kept per-node free counts (one look-up a node), not by recounting candidates and
    held devices node by node."""
    for nodes in (SMALL, LARGE):
        figures = cluster_figures[nodes][0].per_unit
        assert figures["nodes judged per node visited"] > 0
        assert (figures["nodes counted from kept free counts per node visited"]
                == figures["nodes judged per node visited"]), figures


# Deep copies a write makes, per pod, at both sizes (the store's "copied on write", exact here): in the scheduler's
# cycle only the claim's finalizer write (the caller's object; the status is shared), as the binding shares the pod
# and PreBind hands over the status it writes; in the controllers' settle only the claim the resourceclaim
# controller creates, as its pod status write and the kubelet's hand over theirs. Before issue 38's last round each
# status write also copied the stored object and the status written, each binding and deletion mark the whole pod,
# and an update the stored status.
COPIES_ON_WRITE = {"scheduler cycle": 1.0, "controllers' settle": 1.0}


def test_writes_share_what_they_do_not_change(cluster_figures: dict[int, tuple[Figures, Figures]]) -> None:
    for nodes in (SMALL, LARGE):
        for name, figures in zip(COPIES_ON_WRITE, cluster_figures[nodes], strict=True):
            copies = figures.per_unit.get("copied on write", 0.0)
            assert copies <= COPIES_ON_WRITE[name], (nodes, name, copies, figures.per_unit)
            assert figures.per_unit.get("shared on write", 0.0) >= 1.0, (nodes, name, figures.per_unit)


def test_controllers_settle_cost_per_pod_is_flat(cluster_figures: dict[int, tuple[Figures, Figures]]) -> None:
    small, large = cluster_figures[SMALL][1], cluster_figures[LARGE][1]
    assert small.per_unit.get("writes", 0) > 0  # the controller and the kubelets wrote for every pod
    _check("controllers' settle", small, large)


# --- serve's list and watch paths ----------------------------------------------------------------------------

def _served_figures(nodes: int) -> tuple[Figures, Figures]:
    """A served store holding `nodes` x PODS_PER_NODE pods: a full list, a paged list, then a watch from a recent
    resourceVersion that reads the last few changes, and a watch from the start of state."""
    from draconform.kube.kinds import SERVED_KINDS
    from draconform.reference.apiserver.admission import install as install_admission
    from draconform.reference.apiserver.store import Store
    from draconform.serve.remote import WallClock
    from draconform.serve.server import ApiServer
    from tests.serve.conftest import Http

    store = Store(WallClock(), kinds=SERVED_KINDS)
    install_admission(store)
    server = ApiServer(store)
    pods = nodes * PODS_PER_NODE
    for index in range(pods):
        server.call(lambda index=index: store.create(_pod(f"pod-{index}")))  # type: ignore[misc]
    server.serve_in_thread()
    http = Http(server.url)
    try:
        before_store, before_server = Counter(store.work), Counter(server.work)
        listed = http.request("GET", "/api/v1/namespaces/default/pods").json()
        assert len(listed["items"]) == pods
        page = http.request("GET", "/api/v1/namespaces/default/pods?limit=100").json()
        while page["metadata"].get("continue"):
            page = http.request("GET", "/api/v1/namespaces/default/pods?limit=100&continue="
                                + page["metadata"]["continue"]).json()
        listing = _delta(store.work, before_store) + _delta(server.work, before_server)
        revision = listed["metadata"]["resourceVersion"]
        changed = 20
        for index in range(changed):
            server.run(lambda index=index: store.update(_labelled(store.get("Pod", f"pod-{index}", "default"))))
        before_store, before_server = Counter(store.work), Counter(server.work)
        assert len(_watch(server.url, f"resourceVersion={revision}", changed)) == changed
        assert len(_watch(server.url, "resourceVersion=0", pods)) == pods
        watching = _delta(store.work, before_store) + _delta(server.work, before_server)
    finally:
        http.close()
        server.shutdown()
    return (Figures({k: v / (2 * pods) for k, v in listing.items()}, 2 * pods),
            Figures({k: v / (changed + pods) for k, v in watching.items()}, changed + pods))


def _watch(url: str, query: str, count: int) -> list[dict[str, Any]]:
    """The first `count` events of a watch of pods (they are all there already: nothing waits for time)."""
    from http import client as http_client

    host, port = url.removeprefix("http://").split(":")
    connection = http_client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request("GET", f"/api/v1/namespaces/default/pods?watch=true&{query}")
        response = connection.getresponse()
        events = []
        while len(events) < count:
            events.append(json.loads(response.readline()))
        return events
    finally:
        connection.close()


def _pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]}}


def _labelled(pod: dict[str, Any] | None) -> dict[str, Any]:
    assert pod is not None
    pod["metadata"].setdefault("labels", {})["changed"] = "yes"
    return pod


@pytest.fixture(scope="module")
def served_figures() -> dict[int, tuple[Figures, Figures]]:
    return {nodes: _served_figures(nodes) for nodes in (SMALL, LARGE)}


def test_serve_list_cost_per_object_is_flat(served_figures: dict[int, tuple[Figures, Figures]]) -> None:
    small, large = served_figures[SMALL][0], served_figures[LARGE][0]
    assert small.per_unit.get("handed", 0) > 0
    _check("serve list", small, large)


def test_serve_watch_cost_per_event_is_flat(served_figures: dict[int, tuple[Figures, Figures]]) -> None:
    small, large = served_figures[SMALL][1], served_figures[LARGE][1]
    assert small.per_unit.get("watch events sent", 0) > 0
    _check("serve watch", small, large)


# --- draconform allocate on a dump ------------------------------------------------------------------------------

def _dump(folder: Path, nodes: int) -> list[str]:
    from draconform.bench.allocator import _claim, _class, _slice
    from draconform.bench.dra import _device

    items = [_slice(f"node-{n}-slice", f"node-{n}", 1, f"node-{n}", [_device(i) for i in range(DEVICES_PER_NODE)])
             for n in range(nodes)]
    dump = folder / f"slices-{nodes}.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    extra = folder / "claim.yaml"
    extra.write_text(yaml.safe_dump_all([_class(), _claim("wanted")]))
    return [str(dump), str(extra)]


def _allocate_figures(folder: Path, nodes: int, capsys: pytest.CaptureFixture[str]) -> Figures:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    allocate.register(subparsers)
    args = parser.parse_args(["allocate", *_dump(folder, nodes), "-o", "json"])
    work: Counter[str] = Counter()
    assert allocate.run(args, work) == allocate.EXIT_ALLOCATED
    assert '"allocation"' in capsys.readouterr().out
    devices = nodes * DEVICES_PER_NODE
    # reading the dump is work per device; the allocation is one scheduling cycle's Filter over the nodes, which
    # visits what the cluster-size rule allows (checked on its own) and is judged per node visited
    visited = work.pop("nodes judged", 0) + work.pop("nodes searched", 0)
    assert 0 < visited <= feasible_nodes_to_find(nodes) + 1, (nodes, visited)  # + the allocation on the chosen one
    return Figures({k: v / devices for k, v in work.items()}, devices)


def test_allocate_on_a_dump_cost_per_device_is_flat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    small, large = (_allocate_figures(tmp_path, nodes, capsys) for nodes in (SMALL, LARGE))
    assert small.per_unit.get("device rows", 0) > 0
    _check("allocate on a dump", small, large)
