"""What a live run is told about its cluster, from two small YAML files, each read by the hardened loader and
checked against its JSON Schema (`schemas/harness/timeout-config.schema.json`, `cluster-config.schema.json`)
through the validation layer's `read_input`, with errors naming the file, line and field:

- the timeout config (Gateway API conformance style): how long each kind of observation may take, how a
  settle is recognised, and how much real time `advance_clock` may spend;
- the cluster config: the release and feature gates the cluster runs, the scheduler's arguments, and where
  its metrics are. A scenario that needs another configuration is skipped, since a live run cannot
  reconfigure or restart the cluster's components."""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from draconform.kube.featuregates import CURRENT_RELEASE, GATE_HISTORY, startup_refusals
from draconform.sut import OBSERVATIONS

# How a live run programs the reference driver and external controllers of `draconform serve`: a ConfigMap in
# the scenario's namespace labelled PROGRAM_LABEL=<program> ("driver", "binding-controller",
# "dynamic-device-scaler"); its data holds PROGRAM_DATA (JSON: a controller's behaviour, a driver's
# {"name", "inventory", "faults"}). What a program creates carries the ConfigMap's labels.
PROGRAM_LABEL = "draconform.io/program"
PROGRAM_DATA = "program.json"
DRIVER_PROGRAM = "driver"
CONTROLLER_PROGRAMS = ("binding-controller", "dynamic-device-scaler")
OPTIONS_VARIABLE = "DRACONFORM_LIVE"  # how `draconform run` hands the options to its (xdist) workers
_DURATION = re.compile(r"^(?P<amount>\d+(?:\.\d+)?)(?P<unit>ms|s|m|h)?$")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


class ConfigError(ValueError):
    """A config file is unreadable or has a bad field; the message names both."""


def _seconds(value: Any) -> float:
    """A duration the schema accepted: seconds, or a number with a unit."""
    if isinstance(value, (int, float)):
        return float(value)
    match = _DURATION.match(str(value).strip())
    assert match is not None, value  # the schema's pattern is the same
    return float(match["amount"]) * _UNIT[match["unit"]]


def _mapping(path: Path, schema: str, what: str) -> dict[str, Any]:
    """The file's one mapping (an empty file is an empty one), valid against its schema."""
    from draconform.validation.inputs import InputError, read_input

    try:
        data: dict[str, Any] = read_input(path, schema, what, empty={})
    except InputError as error:
        raise ConfigError(str(error)) from None
    return data


@dataclass(frozen=True)
class TimeoutConfig:
    observations: dict[str, float] = field(default_factory=lambda: dict.fromkeys(OBSERVATIONS, 30.0))
    poll_interval: float = 0.1
    settle_quiet: float = 0.3  # the cluster has settled when the scenario's objects stop changing this long
    settle_timeout: float = 30.0
    request_timeout: float = 10.0
    cleanup_timeout: float = 60.0
    clock_budget: float = 2.0  # advance_clock spends up to this much real time; a longer wait is Unsupported

    @classmethod
    def load(cls, path: Path) -> TimeoutConfig:
        data = _mapping(path, "timeout-config", "timeout config")
        default = cls()
        observations = dict(default.observations)
        observations.update({name: _seconds(value) for name, value in (data.get("timeouts") or {}).items()})

        def get(name: str, fallback: float) -> float:
            return _seconds(data[name]) if name in data else fallback

        return cls(observations, get("pollInterval", default.poll_interval),
                   get("settleQuietPeriod", default.settle_quiet), get("settleTimeout", default.settle_timeout),
                   get("requestTimeout", default.request_timeout), get("cleanupTimeout", default.cleanup_timeout),
                   get("clockBudget", default.clock_budget))


@dataclass(frozen=True)
class OwnDriver:
    """The cluster's own DRA driver, judged by the devices it publishes (cluster config `driverUnderTest`): its name,
    the node whose devices and kubelet plugin the scenarios use (None: the first, by name, where it publishes a
    slice), and how its devices are claimed: a device class the cluster has, or a CEL selector a scenario's own
    class uses."""

    name: str
    node: str | None = None
    device_class: str | None = None
    selector: str | None = None

    def dump(self) -> dict[str, str]:
        data = {"name": self.name, "node": self.node, "deviceClassName": self.device_class, "selector": self.selector}
        return {key: value for key, value in data.items() if value is not None}


@dataclass(frozen=True)
class ClusterConfig:
    release: str = CURRENT_RELEASE
    feature_gates: dict[str, bool] = field(default_factory=dict)  # those set away from the release's defaults
    scheduler_args: dict[str, Any] = field(default_factory=dict)  # e.g. bindingTimeout in seconds
    metrics_url: str | None = None  # kube-scheduler's /metrics
    # How to trust its serving certificate: kube-scheduler serves /metrics over HTTPS only, by default with a
    # self-signed certificate it makes itself, which no CA bundle vouches for.
    metrics_ca: str | None = None  # a CA bundle file (relative to the cluster config when read from one)
    metrics_insecure: bool = False  # skip verification (a self-signed certificate on loopback)
    # Whether a kubelet serves every Node object, also those a scenario creates (the served reference); on a
    # real cluster they are bare objects, so a deleted pod bound to one is removed at once, as the pod garbage
    # collector removes the pods of a node that has no kubelet.
    node_kubelets: bool = False
    # The cluster runs draconform's programmable reference driver and external controllers (as `draconform
    # serve` does), programmed through ConfigMaps in the scenario's namespace labelled PROGRAM_LABEL.
    reference_programs: bool = False
    # Where this machine reaches each node's kubelet plugins (`draconform serve`: all nodes are local):
    # DIR/<node>/<driver>.sock (DRAPlugin), <driver>-reg.sock (registration) and <driver>.calls.jsonl (what a
    # recording proxy in front of the plugin saw).
    kubelet_plugin_dir: str | None = None
    # The cluster's own kubeconfig (and context), for a cluster given with `--also-cluster`.
    kubeconfig: str | None = None
    context: str | None = None
    # The cluster's own driver, whose devices the driver, kubelet and plugin scenarios take (`driverUnderTest`).
    own_driver: OwnDriver | None = None

    @classmethod
    def load(cls, path: Path) -> ClusterConfig:
        data = _mapping(path, "cluster-config", "cluster config")
        gates = data.get("featureGates") or {}
        unknown = sorted(set(gates) - set(GATE_HISTORY))
        if unknown:
            raise ConfigError(f"{path}: featureGates.{unknown[0]}: unknown feature gate; known: "
                              f"{', '.join(sorted(GATE_HISTORY))}")
        refusals = startup_refusals(gates, str(data.get("release", CURRENT_RELEASE)))
        if refusals:  # no component of that release starts with these gates, so no such cluster exists
            raise ConfigError(f"{path}: featureGates: a component refuses to start with them: {'; '.join(refusals)}")
        args = data.get("schedulerArgs") or {}
        if "bindingTimeout" in args:
            args = {**args, "bindingTimeout": _seconds(args["bindingTimeout"])}
        kubeconfig = data.get("kubeconfig")
        if kubeconfig is not None:
            kubeconfig = str(path.parent / kubeconfig)  # relative to the cluster config
        own = data.get("driverUnderTest")
        if own is not None and ("deviceClassName" in own) == ("selector" in own):
            raise ConfigError(f"{path}: driverUnderTest: give exactly one of deviceClassName (a class the cluster has) "
                              "and selector (a CEL expression selecting the driver's devices)")
        own_driver = None if own is None else OwnDriver(own["name"], own.get("node"), own.get("deviceClassName"),
                                                         own.get("selector"))
        ca = data.get("schedulerMetricsCA")
        return cls(data.get("release", CURRENT_RELEASE), dict(gates), dict(args), data.get("schedulerMetricsURL"),
                   None if ca is None else str(path.parent / ca), bool(data.get("schedulerMetricsInsecureSkipVerify")),
                   data.get("nodeKubelets", False), data.get("referencePrograms", False), data.get("kubeletPluginDir"),
                   kubeconfig, data.get("context"), own_driver)

    def dump(self) -> str:
        data: dict[str, Any] = {"release": self.release, "featureGates": self.feature_gates,
                                "schedulerArgs": self.scheduler_args}
        if self.metrics_url:
            data["schedulerMetricsURL"] = self.metrics_url
        if self.metrics_ca:
            data["schedulerMetricsCA"] = self.metrics_ca
        if self.metrics_insecure:
            data["schedulerMetricsInsecureSkipVerify"] = True
        if self.node_kubelets:
            data["nodeKubelets"] = True
        if self.reference_programs:
            data["referencePrograms"] = True
        if self.kubelet_plugin_dir:
            data["kubeletPluginDir"] = self.kubelet_plugin_dir
        if self.kubeconfig:
            data["kubeconfig"] = self.kubeconfig
        if self.context:
            data["context"] = self.context
        if self.own_driver:
            data["driverUnderTest"] = self.own_driver.dump()
        return yaml.safe_dump(data, sort_keys=False)


@dataclass(frozen=True)
class LiveOptions:
    """`draconform run --kubeconfig ...`, carried to every worker in one environment variable."""

    kubeconfig: str
    context: str | None = None
    namespace_prefix: str = "draconform"
    timeout_config: str | None = None
    cluster_config: str | None = None
    metrics_url: str | None = None
    # Further clusters (cluster configs naming their kubeconfig), for scenarios needing other gates, release or
    # scheduler arguments than the first cluster runs.
    also_clusters: tuple[str, ...] = ()
    # The run's ID: every object of the run carries it (sut.RUN_LABEL), so the run's end can check that none is
    # left; "" outside `draconform run` (each system under test then makes its own).
    run_id: str = ""
    # Where the run's workers take turns on the cluster (draconform.live.isolation); "" for a serial run.
    lock_dir: str = ""

    def environ(self) -> dict[str, str]:
        return {OPTIONS_VARIABLE: json.dumps(asdict(self))}

    @classmethod
    def from_environ(cls) -> LiveOptions:
        text = os.environ.get(OPTIONS_VARIABLE)
        if not text:
            raise ConfigError(f"the live system under test needs {OPTIONS_VARIABLE}; run it with "
                              "`draconform run --kubeconfig PATH`")
        options = json.loads(text)
        return cls(**{**options, "also_clusters": tuple(options.get("also_clusters") or ())})

    def check(self) -> None:
        """Read every file now, so a bad one is one clear error before any scenario runs."""
        from draconform.live.kube import load_config

        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?", self.namespace_prefix):
            raise ConfigError(f"--namespace-prefix: {self.namespace_prefix!r} must be a DNS label of at most 32 "
                              "characters (it starts every scenario's namespace)")
        try:
            load_config(Path(self.kubeconfig), self.context)
        except Exception as error:
            raise ConfigError(f"{self.kubeconfig}: {error}") from None
        if self.timeout_config:
            TimeoutConfig.load(Path(self.timeout_config))
        if self.cluster_config:
            ClusterConfig.load(Path(self.cluster_config))
        for path in self.also_clusters:
            also = ClusterConfig.load(Path(path))
            if not also.kubeconfig:
                raise ConfigError(f"{path}: kubeconfig: --also-cluster needs a cluster config naming its kubeconfig")
            try:
                load_config(Path(also.kubeconfig), also.context)
            except Exception as error:
                raise ConfigError(f"{path}: kubeconfig {also.kubeconfig}: {error}") from None
