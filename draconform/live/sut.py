"""A live cluster as the system under test, reached through a kubeconfig (`draconform run --kubeconfig`).

Each scenario gets its own namespace (the steps' "default" namespace is mapped to it both ways) and labels
everything it creates with its ID. Cluster-scoped objects (nodes, device classes, slices) are named per
scenario: `<id>-<name>` in the cluster, in every field that names one (metadata.name, deviceClassName,
nodeName, the hostname label and metadata.name node selectors, the extended resource named after a class),
and read back under the scenario's own names. Closing the scenario deletes its namespace and its labelled
cluster-scoped objects and waits (bounded) until they are gone.

A live cluster runs the components it runs: a scenario asking for other feature gates, another release or
other scheduler arguments than the cluster config declares, for a component restart, for one of the
reference's programmable controllers or drivers, or for more cluster time than the timeout config's clock
budget is skipped with the reason (`Unsupported`)."""

from __future__ import annotations

import builtins
import dataclasses
import functools
import json
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
from prometheus_client.parser import text_string_to_metric_families

from draconform.kube.cdi import read_dirs
from draconform.kube.featuregates import GATE_HISTORY, FeatureGates
from draconform.live import cleanup
from draconform.live.config import (
    CONTROLLER_PROGRAMS,
    DRIVER_PROGRAM,
    PROGRAM_DATA,
    PROGRAM_LABEL,
    ClusterConfig,
    LiveOptions,
    TimeoutConfig,
)
from draconform.live.isolation import ProgramsLock
from draconform.live.kube import KINDS, KubeClient, is_older_version, load_config
from draconform.live.releases import ReleaseView
from draconform.live.releases import view as release_view
from draconform.sut import (
    ApiError,
    ComponentConfig,
    DriverUnderTest,
    Event,
    Obj,
    Patience,
    PluginCall,
    PluginFault,
    Unsupported,
    copy_object,
)

SCENARIO_LABEL = "draconform.io/scenario"
RUN_LABEL = "draconform.io/run"  # the run a scenario's objects belong to: what the run's final check looks for
STEPS_NAMESPACE = "default"  # the namespace the steps write; each scenario's own namespace in the cluster
# Cluster-scoped kinds a scenario may create (all but Namespace): named and cleaned up per scenario.
CLUSTER_KINDS = frozenset(kind for kind, info in KINDS.items() if not info.namespaced and kind != "Namespace")
HOSTNAME_LABEL = "kubernetes.io/hostname"
CLASS_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"  # + a class name: the class as a resource
MAX_NAME = 253
SCHEDULER_DEFAULTS = {"bindingTimeout": 600.0}  # kube-scheduler's DRA plugin defaults
COUNTING_TYPES = ("counter", "histogram", "summary")  # read as the change since the scenario began


class LiveSystem:
    """Connects on first use (anything but `configure`) to the first cluster that runs what the scenario's
    `configure` calls asked for so far: the `--kubeconfig` one, else each `--also-cluster` in turn."""

    def __init__(self, options: LiveOptions) -> None:
        self.timeouts = TimeoutConfig.load(Path(options.timeout_config)) if options.timeout_config else TimeoutConfig()
        first = ClusterConfig.load(Path(options.cluster_config)) if options.cluster_config else ClusterConfig()
        first = dataclasses.replace(first, kubeconfig=options.kubeconfig, context=options.context)
        self._clusters = [first, *(ClusterConfig.load(Path(path)) for path in options.also_clusters)]
        self._wanted: list[tuple[str, ComponentConfig]] = []  # what configure() asked for before connecting
        self._metrics_option = options.metrics_url
        self._cluster: ClusterConfig | None = None
        self._client: KubeClient | None = None
        self.metrics_url: str | None = None
        self.scenario = secrets.token_hex(3)
        self.run = options.run_id or secrets.token_hex(4)
        self.namespace = f"{options.namespace_prefix}-{self.scenario}"
        self._prefix = f"{self.scenario}-"
        self._namespace_created = False
        self._since = ""  # the resourceVersion of the scenario's namespace, written before anything in it
        self._cluster_kinds: set[str] = set()  # what clean-up looks for (a cluster may not serve every kind)
        self._drivers: dict[str, dict[str, Any]] = {}  # what each reference driver was programmed with
        # The scenario's names for the cluster's own driver under test, its node and class -> the cluster's names.
        self._aliases: dict[str, str] = {}
        self._own_node: str | None = None  # the driver under test's node, which the scenario's pods are kept to
        self._driver_aliases: dict[str, str] = {}
        # What the scenario did so far, while it has only created objects and programmed components: it can then
        # move to another cluster when it asks for gates this one does not run (None once it did anything else).
        self._journal: list[Callable[[], Any]] | None = []
        self._replaying = False  # replaying the journal on another cluster (draconform/live/releases.py)
        self._baseline = ""
        self._baseline_error: ConnectionError | None = None  # the scrape at connection failed
        self._programs = ProgramsLock(Path(options.lock_dir)) if options.lock_dir else None

    @property
    def cluster(self) -> ClusterConfig:
        """The cluster the scenario runs on; asking for it chooses it."""
        if self._cluster is None:
            self._cluster = next(c for c in self._clusters if not any(
                _mismatch(c, component, config) for component, config in self._wanted))
            # The metrics address given on the command line is the first cluster's.
            first = self._cluster is self._clusters[0]
            self.metrics_url = (self._metrics_option if first else None) or self._cluster.metrics_url
        return self._cluster

    @property
    def client(self) -> KubeClient:
        if self._client is None:
            cluster = self.cluster
            assert cluster.kubeconfig is not None  # every cluster here has one (LiveOptions.check)
            self._client = _shared_client(cluster.kubeconfig, cluster.context, self.timeouts.request_timeout)
            self._baseline, self._baseline_error = "", None
            if self.metrics_url:
                # a scenario that never reads metrics does not depend on the endpoint (a scheduler restarting
                # just now): the failure is raised by metrics_text(), which needs the baseline
                try:
                    self._baseline = self._scrape()
                except ConnectionError as error:
                    self._baseline_error = error
        return self._client

    @classmethod
    def from_environ(cls) -> LiveSystem:
        return cls(LiveOptions.from_environ())

    # --- names: the steps' view <-> the cluster's ----------------------------------------------------
    def _out(self, name: str) -> str:
        if name in self._aliases:
            return self._aliases[name]
        return self._prefix + name if name and len(self._prefix + name) <= MAX_NAME else name

    def _back(self, name: str) -> str:
        for alias, real in self._aliases.items():
            if name == real:
                return alias
        return name.removeprefix(self._prefix)

    def _driver_out(self, driver: str) -> str:
        return self._driver_aliases.get(driver, driver)

    def _driver_back(self, driver: str) -> str:
        return next((alias for alias, real in self._driver_aliases.items() if real == driver), driver)

    def _map(self, obj: Obj, rename: Callable[[str], str], namespace: str,
             rename_driver: Callable[[str], str]) -> Obj:
        """Every field naming a cluster-scoped object or the driver under test renamed, and the namespace set."""
        obj = copy_object(obj)
        meta = obj.setdefault("metadata", {})
        kind = obj.get("kind", "")
        if kind in CLUSTER_KINDS and meta.get("name"):
            meta["name"] = rename(meta["name"])
        if KINDS.get(kind) is not None and KINDS[kind].namespaced:
            meta["namespace"] = namespace
        own_drivers = frozenset(self._driver_aliases) | frozenset(self._driver_aliases.values())
        _rename_references(obj, rename, rename_driver if self._driver_aliases else None, own_drivers)
        return obj

    def _to_cluster(self, obj: Obj) -> Obj:
        mapped = self._map(obj, self._out, self.namespace, self._driver_out)
        mapped["metadata"].setdefault("labels", {}).update(self._labels())
        if mapped.get("kind") == "Pod" and not self._aliases and isinstance(mapped.get("spec"), dict):
            # Scheduled only onto the scenario's own nodes (they carry its label), never onto a node of a
            # scenario running beside it; a scenario on the cluster's own driver's node runs alone instead.
            selector = mapped["spec"].get("nodeSelector")
            if selector is None or isinstance(selector, dict):
                mapped["spec"]["nodeSelector"] = {**(selector or {}), SCENARIO_LABEL: self.scenario}
        elif (mapped.get("kind") == "Pod" and self._own_node is not None and isinstance(mapped.get("spec"), dict)
              and not mapped["spec"].get("nodeName") and "affinity" not in mapped["spec"]):
            # A real driver publishes on every node (a DaemonSet): the scenario's pods stay on the node under
            # test, whose devices and plugin the scenario reads, as its own nodes would (issue 42)
            mapped["spec"]["affinity"] = _pinned(self._own_node)
        return mapped

    def _labels(self) -> dict[str, str]:
        return {SCENARIO_LABEL: self.scenario, RUN_LABEL: self.run}

    def _from_cluster(self, obj: Obj) -> Obj:
        namespace = (obj.get("metadata") or {}).get("namespace")
        mapped = self._map(obj, self._back, STEPS_NAMESPACE if namespace == self.namespace else namespace or "",
                           self._driver_back)
        _unprefix_messages(mapped, self._prefix)
        labels = mapped["metadata"].get("labels")
        if labels is not None:
            labels.pop(SCENARIO_LABEL, None)
            labels.pop(RUN_LABEL, None)
            if not labels:
                del mapped["metadata"]["labels"]
        if (mapped.get("kind") == "Pod" and self._own_node is not None
                and (obj.get("spec") or {}).get("affinity") == _pinned(self._own_node)):  # as stored, unrenamed
            del mapped["spec"]["affinity"]
        selector = (mapped.get("spec") or {}).get("nodeSelector") if mapped.get("kind") == "Pod" else None
        if isinstance(selector, dict) and selector.get(SCENARIO_LABEL) == self.scenario:
            del selector[SCENARIO_LABEL]
            if not selector:
                del mapped["spec"]["nodeSelector"]
        return mapped

    def _where(self, kind: str, name: str, namespace: str | None) -> tuple[str, str | None]:
        if kind in CLUSTER_KINDS:
            return self._out(name), None
        return name, self._namespace(namespace)

    def _namespace(self, namespace: str | None) -> str:
        if namespace not in (None, STEPS_NAMESPACE):
            raise Unsupported(f"a live scenario works in its own namespace only, not in {namespace!r}")
        return self.namespace

    def _ensure_namespace(self) -> None:
        if not self._namespace_created:
            created = self.client.create({"apiVersion": "v1", "kind": "Namespace",
                                          "metadata": {"name": self.namespace, "labels": self._labels()}})
            # every object of the scenario's namespace is written after this version: object_writes replays from it
            self._since = str(created["metadata"].get("resourceVersion") or "")
            self._namespace_created = True

    # --- set-up -------------------------------------------------------------------------------------
    def configure(self, component: str, config: ComponentConfig) -> None:
        """Accepted when a cluster config says the component already runs so (before the scenario connects: any
        of the clusters, with what was asked before; after: the one it runs on); else the scenario is skipped."""
        wanted = [*self._wanted, (component, config)]

        def runs(cluster: ClusterConfig) -> bool:
            return not any(_mismatch(cluster, name, want) for name, want in wanted)

        candidates = [self._cluster] if self._cluster is not None else self._clusters
        if not any(runs(c) for c in candidates):
            elsewhere = next((c for c in self._clusters if runs(c)), None)
            if elsewhere is not None and self._journal is not None:
                self._wanted = wanted
                self._move_to(elsewhere)
                return
            reason = _mismatch(candidates[0], component, config) or next(
                filter(None, (_mismatch(candidates[0], name, want) for name, want in wanted)))
            if len(self._clusters) > 1 and self._cluster is None:
                reason += " (nor does any --also-cluster)"
            elif elsewhere is not None:
                reason += (" (an --also-cluster does, but the scenario asked once the control plane had acted on "
                           "what it created here)")
            raise Unsupported(reason)
        self._wanted = wanted

    def _move_to(self, cluster: ClusterConfig) -> None:
        """Start the scenario again on `cluster`: clean up here, then create there what was created here (the
        scenario has only created objects and programmed components so far, so that is all it has seen)."""
        journal, self._journal = self._journal or [], []
        self.close()
        self._cluster, self._client, self._namespace_created = cluster, None, False
        self._cluster_kinds, self._drivers, self._aliases, self._driver_aliases = set(), {}, {}, {}
        self._own_node = None
        self.metrics_url = cluster.metrics_url
        if self._deleting().pop(self.namespace, None) is not None:
            # the same cluster under another config (as tests have it): the namespace's name comes free first
            deadline = time.monotonic() + self.timeouts.cleanup_timeout
            while self.client.get("Namespace", self.namespace) is not None and time.monotonic() < deadline:
                time.sleep(self.timeouts.poll_interval)
        for replay in journal:
            replay()

    def _acted(self) -> None:
        """The control plane may have acted on what the scenario created: it can no longer move."""
        self._journal = None

    def restart(self, component: str) -> None:
        raise Unsupported(f"a live run does not restart the cluster's {component}")

    def stop(self, component: str) -> None:
        raise Unsupported(f"a live run does not stop the cluster's {component}")

    def serve_api(self, api: str) -> None:
        if api != "structured":
            raise Unsupported(f"a live run judges the cluster's resource.k8s.io API, not the {api} one (KEP-3063's "
                              "classic cdi.k8s.io/v1alpha1 API was removed upstream in 1.32)")

    # --- API objects --------------------------------------------------------------------------------
    def create(self, obj: Obj) -> Obj:
        self._move_for(obj)
        if self._journal is not None:
            self._journal.append(functools.partial(self.create, copy_object(obj)))
        self._ensure_namespace()
        release = self._release(obj)
        if obj.get("kind") in CLUSTER_KINDS:
            self._cluster_kinds.add(obj["kind"])
        out = release.to_cluster(self._to_cluster(obj))
        try:
            return self._from_cluster(release.from_cluster(self.client.create(out, self._validation(release, obj))))
        except ApiError as error:
            if error.reason == "NotFound" and is_older_version(out):
                self._cluster_kinds.discard(obj["kind"])  # nothing to clean up where nothing is served
                # kube-apiserver 1.37 serves resource.k8s.io/v1beta1 and v1beta2 only when --runtime-config turns
                # them on: a cluster without them cannot judge a rule about objects written in them
                raise Unsupported(f"the cluster does not serve {out['apiVersion']} (no {obj['kind']} endpoint "
                                  f"there; --runtime-config {out['apiVersion']}=true turns it on)") from None
            raise release.error_from_cluster(error) from None

    # --- releases: what an older cluster serves (draconform/live/releases.py) ---------------------------
    def _release(self, obj: Obj | None = None) -> ReleaseView:
        """The cluster's release against the scenario's; with `obj`, skips the scenario when the release lacks
        something `obj` needs."""
        release = self._view(self.cluster)
        lacking = release.lacks(obj) if obj is not None else None
        if lacking:
            if len(self._clusters) > 1 and self._journal is not None:
                lacking += " (nor does any --also-cluster)"
            raise Unsupported(lacking)
        return release

    def _view(self, cluster: ClusterConfig) -> ReleaseView:
        return release_view(cluster.release, cluster.feature_gates, self._wanted)

    def _move_for(self, obj: Obj) -> None:
        """Before creating `obj` that this cluster's release lacks something for, move (while the scenario still
        can) to an --also-cluster that runs what the scenario asked and has what `obj` needs."""
        if self._journal is None or self._replaying or not self._view(self.cluster).lacks(obj):
            return
        other = next((c for c in self._clusters if c is not self.cluster and self._view(c).lacks(obj) is None
                      and not any(_mismatch(c, name, want) for name, want in self._wanted)), None)
        if other is not None:
            self._replaying = True  # what is replayed there was fine here: no moving on from it
            try:
                self._move_to(other)
            finally:
                self._replaying = False

    @staticmethod
    def _validation(release: ReleaseView, obj: Obj) -> str | None:
        return None if release.strict(obj) else "Warn"

    def _read(self, obj: Obj) -> Obj:
        return self._from_cluster(self._release().from_cluster(obj))

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        found = self.client.get(kind, *self._where(kind, name, namespace), self._release().api_version(kind))
        return self._read(found) if found is not None else None

    def list(self, kind: str, namespace: str | None = None) -> builtins.list[Obj]:
        """Namespaced kinds: the scenario's namespace only; cluster-scoped kinds: all of them."""
        scope = self.namespace if KINDS[kind].namespaced else None
        items, _ = self.client.list(kind, scope, api_version=self._release().api_version(kind))
        return sorted((self._read(item) for item in items if self._visible(item)),
                      key=lambda o: o["metadata"]["name"])

    def _visible(self, obj: Obj) -> bool:
        """Whether the scenario sees a cluster-scoped object: all but another scenario's (those running beside
        it on the cluster)."""
        owner = ((obj.get("metadata") or {}).get("labels") or {}).get(SCENARIO_LABEL)
        return owner is None or owner == self.scenario

    def update(self, obj: Obj) -> Obj:
        self._acted()
        release = self._release(obj)
        try:
            written = self.client.update(release.to_cluster(self._to_cluster(obj)), self._validation(release, obj))
        except ApiError as error:
            raise release.error_from_cluster(error) from None
        return self._from_cluster(release.from_cluster(written))

    def update_status(self, obj: Obj) -> Obj:
        self._acted()
        release = self._release(obj)
        try:
            written = self.client.update_status(release.to_cluster(self._to_cluster(obj)),
                                                self._validation(release, obj))
        except ApiError as error:
            raise release.error_from_cluster(error) from None
        return self._from_cluster(release.from_cluster(written))

    def delete(self, kind: str, name: str, namespace: str | None = None,
               grace_period_seconds: int | None = None) -> None:
        self._acted()
        where = self._where(kind, name, namespace)
        if kind in CLUSTER_KINDS and self._release().api_version(kind):
            self.client.delete(kind, *where, grace_period_seconds, self._release().api_version(kind))
            return
        if grace_period_seconds is not None:
            self.client.delete(kind, *where, grace_period_seconds=grace_period_seconds)
            return
        if kind == "Pod" and not self.cluster.node_kubelets:
            pod = self.client.get(kind, *where)
            if pod is not None and self._on_own_node(pod):
                self.client.delete(kind, *where, grace_period_seconds=0)
                return
        self.client.delete(kind, *where)

    def label_namespace(self, namespace: str, labels: Mapping[str, str]) -> None:
        """The scenario's own namespace gets the labels (created first if the scenario has written nothing yet)."""
        if self._journal is not None:
            self._journal.append(functools.partial(self.label_namespace, namespace, dict(labels)))
        name = self._namespace(namespace)
        self._ensure_namespace()
        stored = self.client.get("Namespace", name)
        if stored is None:
            raise ApiError("NotFound", f'namespaces "{name}" not found')
        stored["metadata"].setdefault("labels", {}).update(labels)
        self.client.update(stored)

    def _on_own_node(self, pod: Obj) -> bool:
        """Bound to a Node object this scenario created: no kubelet will ever finish the pod's deletion."""
        return str(pod["spec"].get("nodeName") or "").startswith(self._prefix)

    # --- the control plane at work --------------------------------------------------------------------
    def _snapshot(self) -> builtins.list[tuple[str, str, str]]:
        """Every object the scenario's control plane may be changing, by resourceVersion."""
        seen = []
        for kind in ("Pod", "ResourceClaim", "Event"):
            seen += [(kind, o["metadata"]["name"], o["metadata"].get("resourceVersion", ""))
                     for o in self.client.list(kind, self.namespace)[0]] if self._namespace_created else []
        seen += [("ResourceSlice", o["metadata"]["name"], o["metadata"].get("resourceVersion", ""))
                 for o in self.client.list("ResourceSlice")[0] if self._visible(o)]
        return sorted(seen)

    def settle(self) -> None:
        """Wait until nothing the scenario can see changes for the quiet period (bounded by settleTimeout;
        a cluster still busy then is left to the Then steps' patience). Looks every poll interval, so the
        quiet period counts from the look that saw the last change rather than from a look a whole period
        later: the same quiet period, without a second one spent after components that reacted at once."""
        self._acted()
        deadline = time.monotonic() + self.timeouts.settle_timeout
        before = self._snapshot()
        quiet_since = time.monotonic()  # the end of the look that first saw the state `before`
        step = min(self.timeouts.poll_interval, self.timeouts.settle_quiet)
        while time.monotonic() < deadline:
            time.sleep(step)
            looked = time.monotonic()  # the look begins: unchanged now means unchanged since quiet_since
            after = self._snapshot()
            if after != before:
                before, quiet_since = after, time.monotonic()
            elif looked - quiet_since >= self.timeouts.settle_quiet:
                return

    def finish_pod(self, name: str, namespace: str, phase: str) -> None:
        raise Unsupported("a live run cannot make a pod's containers end: the scenario's images are placeholders, "
                          "and writing the pod's phase itself would judge the harness, not the kubelet")

    def advance_clock(self, seconds: float) -> None:
        self._acted()
        if seconds > self.timeouts.clock_budget:
            raise Unsupported(f"{seconds:g}s of cluster time exceed the live clock budget of "
                              f"{self.timeouts.clock_budget:g}s (clockBudget in the timeout config)")
        time.sleep(seconds)  # real time is the only clock a live cluster has
        self.settle()

    def now(self) -> datetime:
        return datetime.now(UTC)

    def _program(self, name: str, program: str, data: Mapping[str, Any]) -> None:
        """Create or replace the ConfigMap that programs one of the cluster's reference components."""
        if self._programs is not None:
            self._programs.take()  # the cluster runs each program once: a scenario beside this one waits its turn
        self._ensure_namespace()
        config_map: Obj = {"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": name, "namespace": self.namespace,
                                        "labels": {**self._labels(), PROGRAM_LABEL: program}},
                           "data": {PROGRAM_DATA: json.dumps(data, sort_keys=True)}}
        existing = self.client.get("ConfigMap", name, self.namespace)
        if existing is None:
            self.client.create(config_map)
        else:
            config_map["metadata"]["resourceVersion"] = existing["metadata"]["resourceVersion"]
            self.client.update(config_map)

    def run_controller(self, name: str, behaviour: Mapping[str, Any]) -> None:
        if not self.cluster.reference_programs:
            raise Unsupported(f"a live run does not deploy the reference's programmable {name}; the cluster's own "
                              "controllers are the ones judged")
        if name not in CONTROLLER_PROGRAMS:
            raise Unsupported(f"the cluster's reference programs have no external controller {name!r}")
        if self._journal is not None:
            self._journal.append(functools.partial(self.run_controller, name, dict(behaviour)))
        self._program(f"controller-{name}", name, dict(behaviour))

    def race_next_write(self, component: str, kind: str, name: str, status: Obj) -> None:
        raise Unsupported(f"a live run cannot step in between the cluster's {component} reading {kind} {name!r} and "
                          "writing it")

    # --- a DRA driver ---------------------------------------------------------------------------------
    def run_driver(self, name: str, inventory: Sequence[Obj]) -> None:
        own = self.cluster.own_driver
        if own is not None and (name in self._driver_aliases or not self.cluster.reference_programs):
            raise Unsupported(f"the scenario needs driver {name!r} to publish devices it is handed; the cluster's "
                              f"driver under test {own.name!r} publishes its own (cluster config driverUnderTest)")
        if not self.cluster.reference_programs:
            raise Unsupported(f"a live run cannot hand driver {name!r} an inventory; it publishes its own devices")
        if self._journal is not None:
            self._journal.append(functools.partial(self.run_driver, name, [copy_object(o) for o in inventory]))
        self._cluster_kinds.add("ResourceSlice")  # what it publishes carries the scenario's label
        faults = self._drivers.get(name, {}).get("faults", [])
        self._drivers[name] = {"name": name, "inventory": [self._to_cluster(obj) for obj in inventory],
                               "faults": faults}
        self._program(f"driver-{name}", DRIVER_PROGRAM, self._drivers[name])

    def driver_under_test(self, driver: str, node: str, device_class: str) -> DriverUnderTest | None:
        """The cluster config's driverUnderTest, if any: from now on the scenario's `driver`, `node` and
        `device_class` are that driver, its node (the configured one, else the first by name where it publishes a
        slice) and its class (the configured one, else a class of the scenario's with the configured selector)."""
        own = self.cluster.own_driver
        if own is None:
            return None
        journal, self._journal = self._journal, None  # a move replays this call as a whole (`_adopt_again`)
        try:
            real_node = own.node or self._first_node(own.name)
            self._ensure_namespace()
            self._aliases[node] = real_node
            self._own_node = real_node
            self._driver_aliases[driver] = own.name
            if own.device_class is not None:
                self._aliases[device_class] = own.device_class
            else:
                assert own.selector is not None  # the schema asks for one of the two
                self.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                             "metadata": {"name": device_class},
                             "spec": {"selectors": [{"cel": {"expression": own.selector}}]}})
            answer = DriverUnderTest(own.name, real_node, self._out(device_class), self.namespace)
        finally:
            self._journal = journal
        if journal is not None:
            journal.append(functools.partial(self._adopt_again, driver, node, device_class, answer))
        return answer

    def _adopt_again(self, driver: str, node: str, device_class: str, first: DriverUnderTest) -> None:
        """On the cluster a scenario moved to, the same driver, node and class as the scenario was given (whose
        devices it has already chosen), or the scenario cannot run there."""
        again = self.driver_under_test(driver, node, device_class)
        if again != first:
            raise Unsupported(f"the scenario took the devices of driver {first.driver!r} on node {first.node!r}; "
                              f"the cluster it needs runs {again or 'no driver of its own'}")

    def _first_node(self, driver: str) -> str:
        nodes = sorted({str(obj["spec"]["nodeName"]) for obj in self.client.list("ResourceSlice")[0]
                        if obj["spec"].get("driver") == driver and obj["spec"].get("nodeName")})
        if not nodes:
            raise Unsupported(f"the cluster's driver under test {driver!r} publishes no ResourceSlice of a node")
        return nodes[0]

    def _plugin_file(self, driver: str, node: str, suffix: str, wait: bool = True) -> Path:
        """A file of `driver`'s kubelet plugin on `node`, where the cluster config says this machine reaches
        it; waits (bounded) for a socket the driver has not served yet."""
        if not self.cluster.kubelet_plugin_dir:
            raise Unsupported("the kubelet-plugin scenarios reach a plugin's socket on the node itself: run them "
                              "with a SUT on that node (docs/testing-a-driver.md)")
        path = Path(self.cluster.kubelet_plugin_dir) / self._out(node) / f"{self._driver_out(driver)}{suffix}"
        # Only a driver the scenario started or adopted will serve one: none comes for any other driver.
        wait = wait and (driver in self._drivers or driver in self._driver_aliases)
        deadline = time.monotonic() + self.timeouts.observations["object"]
        while wait and not path.exists() and time.monotonic() < deadline:
            time.sleep(self.timeouts.poll_interval)
        return path

    def kubelet_plugin_endpoint(self, driver: str, node: str) -> str:
        return f"unix://{self._plugin_file(driver, node, '.sock')}"

    def kubelet_plugin_registration_endpoint(self, driver: str, node: str) -> str:
        if not self.cluster.kubelet_plugin_dir:
            return self.kubelet_plugin_endpoint(driver, node)
        return f"unix://{self._plugin_file(driver, node, '-reg.sock')}"

    def pool_name(self, driver: str, pool: str) -> str:
        """The cluster's name of a scenario's pool (prefixed, see `_rename_pool`) back as the scenario names it;
        the pools of the cluster's driver under test are its own and keep their names, as in the objects read
        back (`_rename_references`)."""
        if driver in self._driver_aliases or driver in self._driver_aliases.values():
            return pool
        return self._back(pool)

    def kubelet_plugin_calls(self, driver: str, node: str) -> builtins.list[PluginCall]:
        """What the recording proxy in front of the plugin logged, as the steps name things."""
        if not self.cluster.kubelet_plugin_dir:
            raise Unsupported("a live run sees no calls to a kubelet plugin (that needs a recording proxy beside "
                              "the plugin on the node)")
        log = self._plugin_file(driver, node, ".calls.jsonl", wait=False)
        if driver in self._driver_aliases and not log.exists():
            # A vendor's plugin logs nothing itself: without a recording proxy beside it, "asked 0 times" would be
            # a verdict on a log nobody writes.
            raise Unsupported(f"no recording proxy logs the calls to the kubelet plugin of driver "
                              f"{self._driver_out(driver)!r} on node {self._out(node)!r} (nothing at {log}; "
                              "docs/testing-a-cluster.md)")
        calls = []
        for line in log.read_text().splitlines() if log.exists() else []:
            record = json.loads(line)
            claims = tuple(claim.replace(f"{self.namespace}/", f"{STEPS_NAMESPACE}/", 1) for claim in record["claims"])
            calls.append(PluginCall(record["method"], claims, tuple(record["uids"]), _parse_time(record["time"])))
        return calls

    def node_cdi_spec_files(self, node: str) -> dict[str, str]:
        """The spec files in the node's CDI directory beside its plugin sockets (<kubeletPluginDir>/<node>/cdi),
        where `draconform serve`'s driver writes them."""
        if not self.cluster.kubelet_plugin_dir:
            raise Unsupported("a live run cannot read a node's CDI spec files; run `draconform plugin-check "
                              "--cdi-dir /etc/cdi --cdi-dir /var/run/cdi` on the node instead")
        return read_dirs([Path(self.cluster.kubelet_plugin_dir) / self._out(node) / "cdi"])

    def inject_plugin_fault(self, driver: str, node: str, fault: PluginFault | None) -> None:
        self._acted()
        if not self.cluster.reference_programs or driver not in self._drivers:
            raise Unsupported(f"a live run cannot make driver {driver!r}'s kubelet plugin fail on purpose; only a "
                              "driver built for testing can")
        self._drivers[driver]["faults"].append(
            {"node": self._out(node), "fault": None if fault is None else dataclasses.asdict(fault)})
        self._program(f"driver-{driver}", DRIVER_PROGRAM, self._drivers[driver])

    # --- observation ----------------------------------------------------------------------------------
    def events(self) -> builtins.list[Event]:
        if not self._namespace_created:
            return []
        items, _ = self.client.list("Event", self.namespace)
        items.sort(key=_creation_order)
        found = []
        for item in items:
            involved = item.get("involvedObject") or {}
            kind = involved.get("kind", "")
            name = involved.get("name", "")
            stamp = item.get("lastTimestamp") or item.get("eventTime") or item.get("firstTimestamp")
            found.append(Event(
                kind=kind,
                namespace=STEPS_NAMESPACE if involved.get("namespace") == self.namespace else involved.get("namespace"),
                name=self._back(name) if kind in CLUSTER_KINDS else name,
                type=item.get("type", ""), reason=item.get("reason", ""),
                message=item.get("message", "").replace(self._prefix, ""),
                timestamp=_parse_time(stamp),
            ))
        return found

    def _scrape(self) -> str:
        assert self.metrics_url is not None
        try:
            response = _metrics_client(self._metrics_verify()).get(self.metrics_url,
                                                                   timeout=self.timeouts.request_timeout)
            response.raise_for_status()
        except httpx2.HTTPError as error:
            hint = ("; kube-scheduler serves /metrics with a self-signed certificate unless given one: name its CA "
                    "with schedulerMetricsCA in the cluster config, or set schedulerMetricsInsecureSkipVerify: true"
                    if "CERTIFICATE_VERIFY_FAILED" in str(error) else "")
            raise ConnectionError(f"scraping {self.metrics_url}: {type(error).__name__}: {error}{hint}") from None
        return response.text

    def _metrics_verify(self) -> str | bool:
        """How the metrics endpoint's certificate is checked: the cluster config's CA bundle, not at all, or
        against the usual public CAs."""
        cluster = self.cluster
        return False if cluster.metrics_insecure else (cluster.metrics_ca or True)

    def object_writes(self, kind: str, name: str, namespace: str | None = None) -> builtins.list[Obj]:
        """The versions of an object of the scenario's namespace as the API server's watch replays them from the
        namespace's creation on (kube-apiserver's watch cache keeps each change for a while, minutes on a quiet
        cluster); a cluster-scoped object, or one whose history the server no longer holds, is `Unsupported`."""
        if not KINDS[kind].namespaced:
            raise Unsupported(f"a live run sees the earlier versions of objects in its own namespace only, not of the "
                              f"cluster-scoped {kind} {name!r}")
        if not self._namespace_created:
            return []
        real, where = self._where(kind, name, namespace)
        api_version = self._release().api_version(kind)
        current = self.client.get(kind, real, where, api_version)
        until = None if current is None else current["metadata"].get("resourceVersion")
        try:
            events = self.client.history(kind, real, where, self._since, until, api_version)
        except ApiError as error:
            if error.reason in ("Expired", "Gone") or "too old" in error.message:
                raise Unsupported(f"the API server no longer holds the earlier versions of {kind} {name!r} (its "
                                  f"watch cache has moved past the scenario's start: {error.message})") from None
            raise
        return [self._read(obj) for event, obj in events if event != "DELETED"]

    def metrics_text(self) -> str:
        """The scheduler's metrics as this scenario changed them: counters, histograms and summaries as the
        change since the scenario began (the cluster's scheduler outlives scenarios), gauges as they are."""
        self.client  # noqa: B018 - connecting chooses the cluster, and so its metrics address
        if not self.metrics_url:
            raise Unsupported("no scheduler metrics address was given (--metrics-url, or schedulerMetricsURL in "
                              "the cluster config)")
        if self._baseline_error is not None:
            raise ConnectionError(f"no baseline of the scheduler's metrics for this scenario: "
                                  f"{self._baseline_error}") from None
        return _metrics_delta(self._baseline, self._scrape())

    def patience(self, observation: str) -> Patience:
        return Patience(self.timeouts.observations[observation], self.timeouts.poll_interval)

    # --- clean-up -------------------------------------------------------------------------------------
    def _cleanup_plan(self) -> builtins.list[cleanup.Removal]:
        # ConfigMaps: only the scenario's own; a real cluster publishes its own into every namespace (kube-root-ca.crt,
        # which kube-controller-manager writes again at once, or a distribution's CA bundle), gone with the namespace.
        namespaced = {kind: self.client.list(kind, self.namespace,
                                             labels={SCENARIO_LABEL: self.scenario} if kind == "ConfigMap" else None)[0]
                      for kind in cleanup.NAMESPACED} if self._namespace_created else {}
        release = self._release()
        labelled = {kind: self.client.list(kind, labels={SCENARIO_LABEL: self.scenario},
                                           api_version=release.api_version(kind))[0]
                    for kind in self._cluster_kinds}
        return cleanup.plan(namespaced, labelled)

    def _remove(self, removal: cleanup.Removal) -> str | None:
        """Remove one object; the API server's refusal, if it refused (the others are removed all the same)."""
        try:
            # again when its deletion began already: a pod deleted gracefully waits for a kubelet that may never come
            _ignore_missing(functools.partial(self.client.delete, removal.kind, removal.name, removal.namespace,
                                              removal.grace_period_seconds,
                                              self._release().api_version(removal.kind)))
            if removal.finalizers:
                self._drop_finalizers(removal.kind, removal.name, removal.namespace)
        except ApiError as error:
            return str(error)
        return None

    def _drop_finalizers(self, kind: str, name: str, namespace: str | None) -> None:
        """Take every finalizer off an object being deleted: nothing else will once the scenario is over."""
        for _ in range(3):  # a controller may write the object in between: read it again
            obj = self.client.get(kind, name, namespace, self._release().api_version(kind))
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

    def close(self) -> None:
        """Remove everything the scenario created (see `cleanup`) and check it is gone; start the deletion of
        its namespace without waiting for the cluster's namespace controller, and fail on an earlier scenario's
        namespace that is still there cleanupTimeout after its deletion began."""
        if self._client is None:
            return  # never connected: nothing was created
        try:
            deadline = time.monotonic() + self.timeouts.cleanup_timeout
            first = True
            refused: dict[cleanup.Removal, str] = {}
            while left := self._cleanup_plan():
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the scenario's objects still exist {self.timeouts.cleanup_timeout:g}s after "
                                       f"clean-up began: {cleanup.left_over(left, refused)}")
                if not first:
                    time.sleep(self.timeouts.poll_interval)
                first = False
                for removal in left:  # a program the scenario started may have written one since the last look
                    if (refusal := self._remove(removal)) is not None:
                        refused[removal] = refusal
            if self._namespace_created:
                _ignore_missing(lambda: self.client.delete("Namespace", self.namespace))
                self._deleting()[self.namespace] = (time.monotonic(), self.scenario)
            self._check_earlier_namespaces()
        finally:
            self._client = None  # the shared client stays open for the process's next scenario
            if self._programs is not None:
                self._programs.give_back()  # once its programs' ConfigMaps are gone

    def _deleting(self) -> dict[str, tuple[float, str]]:
        """The namespaces this process's scenarios on this cluster left to the namespace controller."""
        cluster = self.cluster
        return _DELETING.setdefault((str(cluster.kubeconfig), cluster.context), {})

    def _check_earlier_namespaces(self) -> None:
        """Forget the namespaces gone; fail, naming them and what they still hold, on those still there
        cleanupTimeout after their deletion began (the run's end waits for the rest: `run_leftovers`)."""
        deleting = self._deleting()
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
        held = [removal.describe() for name in overdue for kind in cleanup.NAMESPACED
                for removal in cleanup.plan({kind: self.client.list(kind, name)[0]}, {})]
        raise RuntimeError(f"namespaces of earlier scenarios still exist {self.timeouts.cleanup_timeout:g}s after "
                           f"their deletion began: {', '.join(overdue)}"
                           f"{'; they hold ' + ', '.join(held) if held else ''}")


# One client per cluster for the whole process (a run's scenarios follow one another in it): building one costs
# tens of milliseconds of CPU (its TLS context reads the CA bundle), once per scenario a sizeable part of a run's
# CPU on a loaded machine; sharing also keeps its connections open from one scenario to the next.
_CLIENTS: dict[tuple[str, str | None, float], KubeClient] = {}
# Per cluster (kubeconfig, context): namespace -> (when its deletion began, its scenario), until seen gone.
_DELETING: dict[tuple[str, str | None], dict[str, tuple[float, str]]] = {}
OVERDUE_BATCH = 8  # look for gone namespaces once this many wait (and whenever one is overdue)
_METRICS: dict[str | bool, httpx2.Client] = {}


def _shared_client(kubeconfig: str, context: str | None, request_timeout: float) -> KubeClient:
    key = (kubeconfig, context, request_timeout)
    if key not in _CLIENTS:
        # kubectl's default: a field the API server does not know refuses the write (DRA-API/OBJECT-SCHEMA)
        _CLIENTS[key] = KubeClient(load_config(Path(kubeconfig), context), context, request_timeout,
                                   field_validation="Strict")
    return _CLIENTS[key]


def _metrics_client(verify: str | bool = True) -> httpx2.Client:
    """One client per way of checking the endpoint's certificate, for the whole process."""
    if verify not in _METRICS:
        _METRICS[verify] = httpx2.Client(trust_env=False, verify=verify)
    return _METRICS[verify]


def _mismatch(cluster: ClusterConfig, component: str, config: ComponentConfig) -> str | None:
    """Why `cluster` does not run `component` as `config` asks (None: it does), as its cluster config says."""
    # A component the scenario does not pin to a release is the current one, or an older one where the scenario
    # uses nothing it lacks (the objects it writes are judged one by one: draconform/live/releases.py).
    if config.version is not None and config.version != cluster.release:
        return (f"the scenario needs {component} at release {config.version}; the cluster runs {cluster.release} "
                "(cluster config) and a live run cannot change it")
    running = FeatureGates(cluster.feature_gates, release=cluster.release)
    for gate, wanted in sorted(config.feature_gates.items()):
        if wanted and not running.known(gate):
            return (f"the scenario needs {component} with {gate}=on; Kubernetes {cluster.release} has no such "
                    f"feature gate (from {GATE_HISTORY[gate][0]})")
        if (running.enabled(gate) if running.known(gate) else False) != wanted:
            return (f"the scenario needs {component} with {gate}={'on' if wanted else 'off'}; the cluster config "
                    f"says it is {'on' if running.enabled(gate) else 'off'}")
    if component == "kube-scheduler":
        for arg, wanted in sorted(config.args.items()):
            have = cluster.scheduler_args.get(arg, SCHEDULER_DEFAULTS.get(arg))
            if have != wanted:
                return f"the scenario needs kube-scheduler {arg}={wanted}; the cluster config says {arg}={have}"
    return None


def _ignore_missing(delete: Callable[[], None]) -> None:
    try:
        delete()
    except ApiError as error:
        if error.reason != "NotFound":
            raise


def _rename_references(value: Any, rename: Callable[[str], str],
                       rename_driver: Callable[[str], str] | None = None,
                       own_drivers: frozenset[str] = frozenset()) -> None:
    """Rename, in place, every field below `value` that names a node, a device class or a pool (and, with
    `rename_driver`, a driver: of a slice, an allocation result, a device status, a configuration). The pools
    of `own_drivers` (the cluster's driver under test, by either name) are the cluster's own: kept."""
    if isinstance(value, list):
        for item in value:
            _rename_references(item, rename, rename_driver, own_drivers)
        return
    if not isinstance(value, dict):
        return
    if rename_driver is not None and isinstance(value.get("driver"), str):
        value["driver"] = rename_driver(value["driver"])
    _rename_own_fields(value, rename)
    # A device's attributes are a map of the driver's own names: one may be called "driver" (a GPU's kernel
    # driver), whose value is an attribute, not a driver's name.
    driver = value.get("driver")
    if not isinstance(driver, str) or driver not in own_drivers:
        _rename_pool(value, rename)
    for key, item in value.items():
        if key != "metadata":
            _rename_references(item, rename, rename_driver, own_drivers)
    if isinstance(value.get("metadata"), dict):
        _rename_references({k: v for k, v in value["metadata"].items() if k == "labels"}, rename)


def _rename_pool(value: dict[str, Any], rename: Callable[[str], str]) -> None:
    """A pool is cluster-wide (a driver's pool of one name gathers the slices of every scenario): its name in a
    slice (`spec.pool.name`) and where a device is named by driver, pool and device (allocation results, device
    statuses, a DeviceTaintRule's selector) is the scenario's own."""
    pool = value.get("pool")
    if isinstance(pool, str):
        value["pool"] = rename(pool)
    elif isinstance(pool, dict) and isinstance(pool.get("name"), str):
        pool["name"] = rename(pool["name"])


def _rename_own_fields(value: dict[str, Any], rename: Callable[[str], str]) -> None:
    """Rename the fields of this one object (not those below it) that name a node or a device class: class and
    node names, extended resources named after a class, hostname labels and selector terms on node names."""
    for key in ("deviceClassName", "nodeName"):
        if isinstance(value.get(key), str):
            value[key] = rename(value[key])
    for key in ("requests", "limits"):  # a container's resources may name a class (KEP-5004)
        amounts = value.get(key)
        if isinstance(amounts, dict):
            value[key] = {_rename_resource(name, rename): amount for name, amount in amounts.items()}
    if isinstance(value.get("resourceName"), str):
        value["resourceName"] = _rename_resource(value["resourceName"], rename)
    for key in ("labels", "nodeSelector", "matchLabels"):
        labels = value.get(key)
        if isinstance(labels, dict) and isinstance(labels.get(HOSTNAME_LABEL), str):
            labels[HOSTNAME_LABEL] = rename(labels[HOSTNAME_LABEL])
    if value.get("key") in ("metadata.name", HOSTNAME_LABEL) and isinstance(value.get("values"), list):
        value["values"] = [rename(v) if isinstance(v, str) else v for v in value["values"]]


def _rename_resource(name: str, rename: Callable[[str], str]) -> str:
    """The extended resource a device class stands for implicitly is named after the class."""
    if name.startswith(CLASS_RESOURCE_PREFIX):
        return CLASS_RESOURCE_PREFIX + rename(name.removeprefix(CLASS_RESOURCE_PREFIX))
    return name


def _unprefix_messages(value: Any, prefix: str) -> None:
    """Messages (of conditions, say) name cluster-scoped objects as the cluster calls them; show the
    scenario's names instead."""
    if isinstance(value, list):
        for item in value:
            _unprefix_messages(item, prefix)
    elif isinstance(value, dict):
        if isinstance(value.get("message"), str):
            value["message"] = value["message"].replace(prefix, "")
        for item in value.values():
            _unprefix_messages(item, prefix)


def _creation_order(obj: Obj) -> tuple[int, str]:
    version = obj["metadata"].get("resourceVersion", "")
    return (int(version), "") if version.isdigit() else (0, version)


def _parse_time(text: str | None) -> datetime:
    if not text:
        return datetime.now(UTC)
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, str]]:
    return {(s.name, tuple(sorted(s.labels.items()))): (s.value, family.type)
            for family in text_string_to_metric_families(text) for s in family.samples}


def _metrics_delta(baseline: str, current: str) -> str:
    before = _samples(baseline)
    lines = []
    for (name, labels), (value, kind) in _samples(current).items():
        if kind in COUNTING_TYPES:
            value -= before.get((name, labels), (0.0, kind))[0]
        rendered = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
        lines.append(f"{name}{{{rendered}}} {value!r}" if labels else f"{name} {value!r}")
    return "\n".join(lines) + "\n"


def _escape(value: str) -> str:
    return re.sub(r'(["\\])', r"\\\1", value).replace("\n", "\\n")


def live_system() -> LiveSystem:
    """The factory `draconform run --kubeconfig` names as its SUT; the options come from the environment."""
    return LiveSystem.from_environ()


def run_leftovers(options: LiveOptions) -> builtins.list[str]:
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
            client = _shared_client(kubeconfig, context, timeouts.request_timeout)
            for kind in ("Namespace", *sorted(CLUSTER_KINDS)):
                try:
                    items = client.list(kind, labels={RUN_LABEL: options.run_id})[0]
                except ApiError as error:
                    if error.reason == "NotFound":
                        continue  # a kind the cluster does not serve
                    raise
                left += [cleanup.plan({}, {kind: [item]})[0].describe() for item in items]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(timeouts.poll_interval)


# kube-scheduler's gauge of its running binding cycles (PreBind included); a cycle waiting for binding conditions
# polls every few seconds and ends, and is counted in the metrics, some seconds after its pod is gone.
_BINDING_CYCLES = re.compile(r'^scheduler_goroutines\{[^}]*operation="binding"[^}]*\}\s+(\S+)', re.MULTILINE)


def wait_for_idle_schedulers(options: LiveOptions) -> None:
    """Before a scenario that runs alone (`draconform.live.isolation`): wait, up to the cleanup timeout, until no
    binding cycle of an earlier scenario's pods is running in any cluster's kube-scheduler, so that what those
    cycles count when they end does not land in this scenario's metrics. A scheduler whose metrics cannot be read
    is not waited for (the scenario reading them says why)."""
    timeouts = TimeoutConfig.load(Path(options.timeout_config)) if options.timeout_config else TimeoutConfig()
    first = ClusterConfig.load(Path(options.cluster_config)) if options.cluster_config else ClusterConfig()
    clusters = [(options.metrics_url or first.metrics_url, first),
                *((c.metrics_url, c) for c in map(ClusterConfig.load, map(Path, options.also_clusters)))]
    deadline = time.monotonic() + timeouts.cleanup_timeout
    for url, cluster in clusters:
        if not url:
            continue
        verify = False if cluster.metrics_insecure else (cluster.metrics_ca or True)
        while True:
            try:
                text = _metrics_client(verify).get(url, timeout=timeouts.request_timeout).text
            except httpx2.HTTPError:
                break
            running = sum(float(value) for value in _BINDING_CYCLES.findall(text))
            if running <= 0 or time.monotonic() > deadline:
                break
            time.sleep(timeouts.poll_interval)


def _pinned(node: str) -> Obj:
    """A pod's affinity to one node by name (nodes need no label for it)."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
