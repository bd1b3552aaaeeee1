"""What a live run is told about its cluster, from two small YAML files, each checked with errors naming
the file and the field:

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

from draconform.kube.featuregates import CURRENT_RELEASE, GATE_HISTORY
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


def _seconds(value: Any, where: str) -> float:
    match = _DURATION.match(str(value).strip())
    if isinstance(value, bool) or match is None:
        raise ConfigError(f"{where}: expected a duration such as 30, 30s, 1.5m or 500ms, got {value!r}")
    return float(match["amount"]) * _UNIT[match["unit"]]


def _mapping(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text()) if path.exists() else None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not YAML: {error}") from None
    if not path.exists():
        raise ConfigError(f"{path}: no such file")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top, got {type(data).__name__}")
    return data


def _unknown(data: dict[str, Any], known: set[str], where: str) -> None:
    extra = sorted(set(data) - known)
    if extra:
        raise ConfigError(f"{where}: unknown field {extra[0]!r}; known: {', '.join(sorted(known))}")


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
        data = _mapping(path)
        fields = {"timeouts", "pollInterval", "settleQuietPeriod", "settleTimeout", "requestTimeout",
                  "cleanupTimeout", "clockBudget"}
        _unknown(data, fields, str(path))
        timeouts = data.get("timeouts") or {}
        if not isinstance(timeouts, dict):
            raise ConfigError(f"{path}: timeouts: expected a mapping of observation to duration")
        _unknown(timeouts, set(OBSERVATIONS), f"{path}: timeouts")
        default = cls()
        observations = dict(default.observations)
        observations.update({name: _seconds(value, f"{path}: timeouts.{name}") for name, value in timeouts.items()})

        def get(name: str, fallback: float) -> float:
            return _seconds(data[name], f"{path}: {name}") if name in data else fallback

        return cls(observations, get("pollInterval", default.poll_interval),
                   get("settleQuietPeriod", default.settle_quiet), get("settleTimeout", default.settle_timeout),
                   get("requestTimeout", default.request_timeout), get("cleanupTimeout", default.cleanup_timeout),
                   get("clockBudget", default.clock_budget))


@dataclass(frozen=True)
class ClusterConfig:
    release: str = CURRENT_RELEASE
    feature_gates: dict[str, bool] = field(default_factory=dict)  # those set away from the release's defaults
    scheduler_args: dict[str, Any] = field(default_factory=dict)  # e.g. bindingTimeout in seconds
    metrics_url: str | None = None  # kube-scheduler's /metrics
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

    @classmethod
    def load(cls, path: Path) -> ClusterConfig:
        data = _mapping(path)
        _unknown(data, {"release", "featureGates", "schedulerArgs", "schedulerMetricsURL", "nodeKubelets",
                       "referencePrograms", "kubeletPluginDir", "kubeconfig", "context"}, str(path))
        release = str(data.get("release", CURRENT_RELEASE))
        if not re.fullmatch(r"1\.\d+", release):
            raise ConfigError(f"{path}: release: expected a Kubernetes release such as 1.37, got {release!r}")
        gates = data.get("featureGates") or {}
        if not isinstance(gates, dict):
            raise ConfigError(f"{path}: featureGates: expected a mapping of gate to true or false")
        for gate, value in gates.items():
            if gate not in GATE_HISTORY:
                raise ConfigError(f"{path}: featureGates.{gate}: unknown feature gate")
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: featureGates.{gate}: expected true or false, got {value!r}")
        args = data.get("schedulerArgs") or {}
        if not isinstance(args, dict):
            raise ConfigError(f"{path}: schedulerArgs: expected a mapping")
        if "bindingTimeout" in args:
            args = {**args, "bindingTimeout": _seconds(args["bindingTimeout"], f"{path}: schedulerArgs.bindingTimeout")}
        url = data.get("schedulerMetricsURL")
        node_kubelets = data.get("nodeKubelets", False)
        if not isinstance(node_kubelets, bool):
            raise ConfigError(f"{path}: nodeKubelets: expected true or false, got {node_kubelets!r}")
        programs = data.get("referencePrograms", False)
        if not isinstance(programs, bool):
            raise ConfigError(f"{path}: referencePrograms: expected true or false, got {programs!r}")
        plugin_dir = data.get("kubeletPluginDir")
        if plugin_dir is not None and not isinstance(plugin_dir, str):
            raise ConfigError(f"{path}: kubeletPluginDir: expected a directory, got {plugin_dir!r}")
        kubeconfig, context = data.get("kubeconfig"), data.get("context")
        for key, value in (("kubeconfig", kubeconfig), ("context", context)):
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"{path}: {key}: expected a string, got {value!r}")
        if kubeconfig is not None:
            kubeconfig = str(path.parent / kubeconfig)  # relative to the cluster config
        return cls(release, dict(gates), dict(args), str(url) if url else None, node_kubelets, programs, plugin_dir,
                   kubeconfig, context)

    def dump(self) -> str:
        data: dict[str, Any] = {"release": self.release, "featureGates": self.feature_gates,
                                "schedulerArgs": self.scheduler_args}
        if self.metrics_url:
            data["schedulerMetricsURL"] = self.metrics_url
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
