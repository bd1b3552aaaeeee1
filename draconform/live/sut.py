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
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from draconform.kube.cdi import read_dirs
from draconform.kube.featuregates import CURRENT_RELEASE, GATE_HISTORY, FeatureGates
from draconform.live import cleanup, metrics
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
from draconform.live.kube import KINDS, KubeClient, is_older_version, shared_client
from draconform.live.names import (
    CLUSTER_KINDS,
    SCENARIO_LABEL,
    STEPS_NAMESPACE,
    ScenarioNames,
)
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

SCHEDULER_DEFAULTS = {"bindingTimeout": 600.0}  # kube-scheduler's DRA plugin defaults


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
        self._namespace_created = False
        self._since = ""  # the resourceVersion of the scenario's namespace, written before anything in it
        self._cluster_kinds: set[str] = set()  # what clean-up looks for (a cluster may not serve every kind)
        self._drivers: dict[str, dict[str, Any]] = {}  # what each reference driver was programmed with
        self.names = ScenarioNames(self.scenario, self.run, self.namespace)  # the steps' names <-> the cluster's
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
            self._cluster = next(c for c in self._clusters if _first_mismatch(c, self._wanted) is None)
            # The metrics address given on the command line is the first cluster's.
            first = self._cluster is self._clusters[0]
            self.metrics_url = (self._metrics_option if first else None) or self._cluster.metrics_url
        return self._cluster

    @property
    def client(self) -> KubeClient:
        if self._client is None:
            cluster = self.cluster
            assert cluster.kubeconfig is not None  # every cluster here has one (LiveOptions.check)
            self._client = shared_client(cluster.kubeconfig, cluster.context, self.timeouts.request_timeout)
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

    def _where(self, kind: str, name: str, namespace: str | None) -> tuple[str, str | None]:
        if kind in CLUSTER_KINDS:
            return self.names.out(name), None
        return name, self._namespace(namespace)

    def _namespace(self, namespace: str | None) -> str:
        if namespace not in (None, STEPS_NAMESPACE):
            raise Unsupported(f"a live scenario works in its own namespace only, not in {namespace!r}")
        return self.namespace

    def _ensure_namespace(self) -> None:
        if not self._namespace_created:
            created = self.client.create({"apiVersion": "v1", "kind": "Namespace",
                                          "metadata": {"name": self.namespace, "labels": self.names.labels()}})
            # every object of the scenario's namespace is written after this version: object_writes replays from it
            self._since = str(created["metadata"].get("resourceVersion") or "")
            self._namespace_created = True

    # --- set-up -------------------------------------------------------------------------------------
    def configure(self, component: str, config: ComponentConfig) -> None:
        """Accepted when a cluster config says the component already runs so (before the scenario connects: any
        of the clusters, with what was asked before; after: the one it runs on); else the scenario is skipped."""
        wanted = [*self._wanted, (component, config)]

        def runs(cluster: ClusterConfig) -> bool:
            return _first_mismatch(cluster, wanted) is None

        candidates = [self._cluster] if self._cluster is not None else self._clusters
        if not any(runs(c) for c in candidates):
            elsewhere = next((c for c in self._clusters if runs(c)), None)
            if elsewhere is not None and self._journal is not None:
                self._wanted = wanted
                self._move_to(elsewhere)
                return
            reason = _mismatch(candidates[0], component, config) or _first_mismatch(candidates[0], wanted) or ""
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
        self._cluster_kinds, self._drivers, self.names.aliases, self.names.driver_aliases = set(), {}, {}, {}
        self.names.own_node = None
        self.metrics_url = cluster.metrics_url
        if cleanup.deleting(self.cluster).pop(self.namespace, None) is not None:
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
        out = release.to_cluster(self.names.to_cluster(obj))
        try:
            created = self.client.create(out, self._validation(release, obj))
            return self.names.from_cluster(release.from_cluster(created))
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
                      and _first_mismatch(c, self._wanted) is None), None)
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
        return self.names.from_cluster(self._release().from_cluster(obj))

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
            written = self.client.update(release.to_cluster(self.names.to_cluster(obj)), self._validation(release, obj))
        except ApiError as error:
            raise release.error_from_cluster(error) from None
        return self.names.from_cluster(release.from_cluster(written))

    def update_status(self, obj: Obj) -> Obj:
        self._acted()
        release = self._release(obj)
        try:
            written = self.client.update_status(release.to_cluster(self.names.to_cluster(obj)),
                                                self._validation(release, obj))
        except ApiError as error:
            raise release.error_from_cluster(error) from None
        return self.names.from_cluster(release.from_cluster(written))

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
        return str(pod["spec"].get("nodeName") or "").startswith(self.names.prefix)

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
                                        "labels": {**self.names.labels(), PROGRAM_LABEL: program}},
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
        if own is not None and (name in self.names.driver_aliases or not self.cluster.reference_programs):
            raise Unsupported(f"the scenario needs driver {name!r} to publish devices it is handed; the cluster's "
                              f"driver under test {own.name!r} publishes its own (cluster config driverUnderTest)")
        if not self.cluster.reference_programs:
            raise Unsupported(f"a live run cannot hand driver {name!r} an inventory; it publishes its own devices")
        if self._journal is not None:
            self._journal.append(functools.partial(self.run_driver, name, [copy_object(o) for o in inventory]))
        self._cluster_kinds.add("ResourceSlice")  # what it publishes carries the scenario's label
        faults = self._drivers.get(name, {}).get("faults", [])
        self._drivers[name] = {"name": name, "inventory": [self.names.to_cluster(obj) for obj in inventory],
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
            self.names.aliases[node] = real_node
            self.names.own_node = real_node
            self.names.driver_aliases[driver] = own.name
            if own.device_class is not None:
                self.names.aliases[device_class] = own.device_class
            else:
                assert own.selector is not None  # the schema asks for one of the two
                self.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                             "metadata": {"name": device_class},
                             "spec": {"selectors": [{"cel": {"expression": own.selector}}]}})
            answer = DriverUnderTest(own.name, real_node, self.names.out(device_class), self.namespace)
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
        path = Path(self.cluster.kubelet_plugin_dir) / self.names.out(node) / f"{self.names.driver_out(driver)}{suffix}"
        # Only a driver the scenario started or adopted will serve one: none comes for any other driver.
        wait = wait and (driver in self._drivers or driver in self.names.driver_aliases)
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
        """The cluster's name of a scenario's pool (prefixed, see `names.rename_references`) back as the scenario
        names it; the pools of the cluster's driver under test are its own and keep their names, as in the objects
        read back."""
        if driver in self.names.driver_aliases or driver in self.names.driver_aliases.values():
            return pool
        return self.names.back(pool)

    def kubelet_plugin_calls(self, driver: str, node: str) -> builtins.list[PluginCall]:
        """What the recording proxy in front of the plugin logged, as the steps name things."""
        if not self.cluster.kubelet_plugin_dir:
            raise Unsupported("a live run sees no calls to a kubelet plugin (that needs a recording proxy beside "
                              "the plugin on the node)")
        log = self._plugin_file(driver, node, ".calls.jsonl", wait=False)
        if driver in self.names.driver_aliases and not log.exists():
            # A vendor's plugin logs nothing itself: without a recording proxy beside it, "asked 0 times" would be
            # a verdict on a log nobody writes.
            raise Unsupported(f"no recording proxy logs the calls to the kubelet plugin of driver "
                              f"{self.names.driver_out(driver)!r} on node {self.names.out(node)!r} (nothing at {log}; "
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
        return read_dirs([Path(self.cluster.kubelet_plugin_dir) / self.names.out(node) / "cdi"])

    def inject_plugin_fault(self, driver: str, node: str, fault: PluginFault | None) -> None:
        self._acted()
        if not self.cluster.reference_programs or driver not in self._drivers:
            raise Unsupported(f"a live run cannot make driver {driver!r}'s kubelet plugin fail on purpose; only a "
                              "driver built for testing can")
        self._drivers[driver]["faults"].append(
            {"node": self.names.out(node), "fault": None if fault is None else dataclasses.asdict(fault)})
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
                name=self.names.back(name) if kind in CLUSTER_KINDS else name,
                type=item.get("type", ""), reason=item.get("reason", ""),
                message=item.get("message", "").replace(self.names.prefix, ""),
                timestamp=_parse_time(stamp),
            ))
        return found

    def _scrape(self) -> str:
        assert self.metrics_url is not None
        return metrics.scrape(self.metrics_url, self._metrics_verify(), self.timeouts.request_timeout)

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
        return metrics.metrics_delta(self._baseline, self._scrape())

    def patience(self, observation: str) -> Patience:
        return Patience(self.timeouts.observations[observation], self.timeouts.poll_interval)

    # --- clean-up -------------------------------------------------------------------------------------
    def close(self) -> None:
        """Remove everything the scenario created and check it is gone (`cleanup.ScenarioCleanup`); the shared
        client stays open for the process's next scenario."""
        if self._client is None:
            return  # never connected: nothing was created
        try:
            cleanup.ScenarioCleanup(self.client, self._release(), self.timeouts, self.scenario,
                                    self.namespace if self._namespace_created else None, self._cluster_kinds,
                                    cleanup.deleting(self.cluster)).run()
        finally:
            self._client = None  # the shared client stays open for the process's next scenario
            if self._programs is not None:
                self._programs.give_back()  # once its programs' ConfigMaps are gone


# Components that read what kube-apiserver stored. A scenario turning off, in one of them, a gate that is on by
# default and leaving kube-apiserver alone asks for a component behind an API server that keeps the gated fields;
# a cluster config's gates apply to every component, and an API server with the gate off drops the fields the
# scenario counts on the component to see (and to ignore).
READERS_OF_STORED_FIELDS = ("kube-scheduler", "kubelet", "kube-controller-manager")


def _first_mismatch(cluster: ClusterConfig, wanted: list[tuple[str, ComponentConfig]]) -> str | None:
    """Why `cluster` does not run what the scenario asked for (None: it does), kube-apiserver's implied
    defaults included."""
    asked = dict(wanted)
    implied: list[tuple[str, ComponentConfig]] = []
    if "kube-apiserver" not in asked:
        current = FeatureGates({}, release=CURRENT_RELEASE)
        gates = {gate: True for name, config in wanted if name in READERS_OF_STORED_FIELDS
                 for gate, on in config.feature_gates.items() if not on and current.enabled(gate)}
        if gates:
            implied.append(("kube-apiserver", ComponentConfig(feature_gates=gates)))
    for component, config in [*wanted, *implied]:
        reason = _mismatch(cluster, component, config)
        if reason is not None:
            if (component, config) in implied:
                reason += (" (the scenario turns the gate off in another component only, behind a kube-apiserver "
                           "that keeps the fields it guards)")
            return reason
    return None


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


def _creation_order(obj: Obj) -> tuple[int, str]:
    version = obj["metadata"].get("resourceVersion", "")
    return (int(version), "") if version.isdigit() else (0, version)


def _parse_time(text: str | None) -> datetime:
    if not text:
        return datetime.now(UTC)
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def live_system() -> LiveSystem:
    """The factory `draconform run --kubeconfig` names as its SUT; the options come from the environment."""
    return LiveSystem.from_environ()
