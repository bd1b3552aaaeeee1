"""What `draconform serve` otherwise runs only in its child processes, run here in the test's own process (a
mutant can only be killed by what a test runs in its own process: docs/suite-power.md, "Unit-test power"): the
command's defaults, the supervisor starting a component's process, each component built against the served API,
and a programmed driver adjusted in place when its ConfigMap changes."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from draconform.cli import build_parser
from draconform.kube.featuregates import CURRENT_RELEASE, FeatureGates
from draconform.kube.kinds import with_pod_room
from draconform.live.config import PROGRAM_DATA, PROGRAM_LABEL, ClusterConfig
from draconform.live.kube import KubeClient, load_config
from draconform.reference.metrics import MetricsRegistry
from draconform.serve import component, control
from draconform.serve.control import Supervised
from draconform.serve.programs import ControllerHost, DriverHost
from draconform.serve.remote import RemoteEventRecorder, RemoteStore, WallClock
from tests.live.helpers import FakeTime, wait_until


def test_the_serve_command_defaults() -> None:
    """`draconform serve` with no options: any free port, its files under .draconform-serve, the current
    release with its default gates, and --driver's node and device count as its help says."""
    args = build_parser("serve").parse_args(["serve"])
    assert (args.port, args.dir, args.release, args.feature_gates, args.runtime_config) == (
        0, Path(".draconform-serve"), CURRENT_RELEASE, "", "")
    assert (args.data, args.binding_timeout, args.driver, args.driver_node, args.driver_devices) == (
        None, None, None, "worker-1", 4)


# --- the supervisor --------------------------------------------------------------------------------------------

REPORTS = "import os, sys; print(os.environ.get('PYTHONUNBUFFERED'), flush=True); print('to the log', file=sys.stderr)"


def test_a_supervised_process_starts_with_its_stdout_piped_then_again_without_it(tmp_path: Path) -> None:
    """The first start pipes the component's standard output (serve reads its ready line there) and begins its
    log afresh; a start after an exit adds to the log and reads no output. Each runs unbuffered, so what it
    says reaches the log at once."""
    log = tmp_path / "c.log"
    log.write_text("an earlier serve's log\n")
    supervised = Supervised("c", [sys.executable, "-c", REPORTS], log)
    first = supervised.start()
    assert first.stdout is not None
    assert first.stdout.read() == "1\n"
    assert first.wait() == 0
    first.stdout.close()
    assert log.read_text() == "to the log\n"
    supervised.restarts = 1
    again = supervised.start()
    assert again.stdout is None and again.wait() == 0
    assert supervised.process is again
    assert log.read_text() == "to the log\nto the log\n"


class Clock(FakeTime):
    """The supervisor's `time`: a monotonic clock only the test moves, and a fixed wall-clock time of day."""

    def strftime(self, form: str) -> str:
        return "12:00:00"


def test_an_exited_process_is_said_and_started_again_after_its_pause(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A component's process that exits is reported on serve's standard error and in its log, and started again
    once its pause (half a second the first time) has passed, unless serve is stopping."""
    clock = Clock()
    monkeypatch.setattr(control, "time", clock)
    log = tmp_path / "c.log"
    supervised = Supervised("c", [sys.executable, "-c", ""], log)
    supervised.start().wait()
    stopping = threading.Event()
    supervised.check(stopping)
    said = f"serve: c exited with status 0 at 12:00:00; starting it again in 0.5s (see {log})"
    assert (supervised.restarts, supervised.process) == (1, None)
    assert supervised.problem() == "exited with status 0 at 12:00:00; restarts so far: 1"
    assert capsys.readouterr() == ("", said + "\n")
    assert log.read_text() == said + "\n"
    supervised.check(stopping)
    assert supervised.process is None  # its pause has not passed
    clock.now += 0.5
    supervised.check(stopping)
    assert supervised.process is not None and supervised.process.wait() == 0
    assert capsys.readouterr() == ("", "serve: c started again (restart 1)\n")
    stopping.set()
    supervised.check(stopping)
    assert supervised.restarts == 1, "an exit while serve stops is not a restart"


# --- the components, built in this process ---------------------------------------------------------------------

@pytest.fixture
def client(kubeconfig_file: Path) -> Iterator[KubeClient]:
    kube = KubeClient(load_config(kubeconfig_file))
    yield kube
    kube.close()


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory for unix sockets, whose paths must fit in about 100 bytes (pytest's tmp_path may not)."""
    directory = Path(tempfile.mkdtemp(prefix="dcf-", dir="/tmp"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def _build(name: str, client: KubeClient, cluster: ClusterConfig, own_devices: int = 0) -> tuple[RemoteStore, object]:
    store = RemoteStore(client, threading.Event())
    clock = WallClock()
    events = RemoteEventRecorder(client, clock, name)
    work, stop = component.build(name, store, clock, events, MetricsRegistry(), cluster, own_devices)
    with store.lock:
        store.catch_up()
        work()
    owner = getattr(stop, "__self__", None)
    stop()
    return store, owner


def test_each_component_is_built_as_the_reference_component_of_its_name(client: KubeClient, short_dir: Path) -> None:
    """`python -m draconform.serve.component NAME` runs, for each NAME, the reference's component of that name;
    one round of each runs against the served API."""
    cluster = ClusterConfig(kubelet_plugin_dir=str(short_dir))
    built = {name: type(_build(name, client, cluster)[1]).__name__ for name in component.COMPONENTS}
    assert built["dra-driver"] == DriverHost.__name__
    assert built["dra-controllers"] == ControllerHost.__name__
    assert "Scheduler" in built["kube-scheduler"]
    assert "Kubelet" in built["kubelet"]
    assert "Claim" in built["kube-controller-manager"] or "ResourceClaim" in built["kube-controller-manager"]
    assert len(set(built.values())) == len(built)


def test_the_driver_component_needs_the_kubelet_plugin_directory(client: KubeClient) -> None:
    with pytest.raises(ValueError, match="dra-driver needs kubeletPluginDir in its cluster config"):
        _build("dra-driver", client, ClusterConfig())


def test_a_kubelet_finds_a_plugin_by_its_registration_socket_only(short_dir: Path) -> None:
    """The kubelet's plugin watcher finds a driver on a node by DIR/NODE/DRIVER-reg.sock; without a plugin
    directory, or without that socket, there is none."""
    assert component._registration(None, "gpu.example.com", "node-1") is None
    assert component._registration(short_dir, "gpu.example.com", "node-1") is None
    (short_dir / "node-1").mkdir()
    (short_dir / "node-1" / "gpu.example.com-reg.sock").touch()
    found = component._registration(short_dir, "gpu.example.com", "node-1")
    assert found == f"unix://{short_dir}/node-1/gpu.example.com-reg.sock"


def test_the_scheduler_round_says_whether_it_did_anything(client: KubeClient) -> None:
    """A round of the scheduler is its sync and its scheduling together, busy when either was: one that only
    learnt of a new Node (nothing to schedule) did something; an idle one did not."""
    store = RemoteStore(client, threading.Event())
    clock = WallClock()
    work, stop = component.build("kube-scheduler", store, clock, RemoteEventRecorder(client, clock, "s"),
                                 MetricsRegistry(), ClusterConfig())

    def round_() -> bool:
        with store.lock:
            store.catch_up()
            return work()

    def seen() -> bool:
        with store.lock:
            store.catch_up()
            return store.get("Node", "worker-1") is not None

    try:
        assert round_() is False
        client.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}))
        wait_until(seen, 300, "the store seeing the new Node")
        assert round_() is True
        assert round_() is False
        # a pod no node fits: its FailedScheduling event is written through the component's recorder
        client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                       "spec": {"nodeSelector": {"no": "such-node"}, "containers": [{"name": "c", "image": "i"}]}})
        wait_until(lambda: round_() and any(e.get("reason") == "FailedScheduling" for e in client.list("Event")[0]),
                   300, "the scheduler reporting the pod it cannot place")
    finally:
        stop()


def _controllers_with_program(client: KubeClient, name: str,
                              program: dict[str, str]) -> tuple[RemoteStore, Any, Any]:
    """The dra-controllers component built in this process (its store, work and stop), and a binding-controller
    program for it."""
    store = RemoteStore(client, threading.Event())
    clock = WallClock()
    work, stop = component.build("dra-controllers", store, clock, RemoteEventRecorder(client, clock, "c"),
                                 MetricsRegistry(), ClusterConfig())
    client.create({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": name, "namespace": "default",
                                "labels": {PROGRAM_LABEL: "binding-controller"}},
                   "data": {PROGRAM_DATA: json.dumps(program)}})
    return store, work, stop


def test_the_external_controllers_log_as_their_component(
        client: KubeClient, capsys: pytest.CaptureFixture[str]) -> None:
    """dra-controllers says on its standard error, under its name, which programs it runs or cannot run."""
    store, work, stop = _controllers_with_program(client, "typo", {"drvier": "gpu.example.com"})
    said: list[str] = []

    def logged() -> bool:
        with store.lock:
            store.catch_up()
            work()
        said.extend(capsys.readouterr().err.splitlines())
        return bool(said)

    try:
        wait_until(logged, 300, "the controllers host seeing the ConfigMap")
        assert said[0].startswith("[dra-controllers] ConfigMap default/typo: cannot run binding-controller: ")
    finally:
        stop()


class Done(BaseException):
    """Ends a component's endless loop in a test (no `except Exception` of the loop catches it)."""


def test_a_component_process_loads_its_cluster_config_says_it_is_ready_and_works(
        kubeconfig_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m draconform.serve.component NAME`, run in this process: it builds the component from the
    cluster config it is given, prints the ready line serve waits for, and runs rounds of its work."""
    config = tmp_path / "cluster.yaml"
    config.write_text(ClusterConfig(release="1.36", feature_gates={"DRAExtendedResource": False}).dump())
    built: list[tuple[str, ClusterConfig, int]] = []
    real = component.build

    def build(name: str, store: RemoteStore, clock: WallClock, events: RemoteEventRecorder,
              metrics: MetricsRegistry, cluster: ClusterConfig, own_devices: int = 0) -> tuple[Any, Any]:
        built.append((name, cluster, own_devices))
        work, stop = real(name, store, clock, events, metrics, cluster, own_devices)

        def one_round() -> bool:
            work()
            stop()
            raise Done

        return one_round, stop

    monkeypatch.setattr(component, "build", build)
    with pytest.raises(Done):
        component.main(["kube-controller-manager", "--kubeconfig", str(kubeconfig_file),
                        "--cluster-config", str(config), "--own-driver-devices", "2"])
    assert built == [("kube-controller-manager", ClusterConfig.load(config), 2)]
    assert json.loads(capsys.readouterr().out) == {"component": "kube-controller-manager"}


# --- a programmed driver, adjusted in place ------------------------------------------------------------------------

def _slice(node: str, devices: int) -> dict[str, object]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": "gpu.example.com", "nodeName": node, "devices": [{"name": f"gpu-{n}"} for n in
                                                                                   range(devices)],
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}}


def _program(data: dict[str, object]) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "driver", "namespace": "default", "labels": {PROGRAM_LABEL: "driver"}},
            "data": {PROGRAM_DATA: json.dumps(data)}}


def test_a_changed_driver_program_is_applied_in_place(client: KubeClient, short_dir: Path) -> None:
    """A driver's ConfigMap changed (same driver name) adjusts the running driver: the new inventory is published
    and only the faults added since are applied (each once); a new name restarts the program as another driver."""
    client.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}))
    client.create(_program({"name": "gpu.example.com", "inventory": [_slice("node-1", 1)],
                            "faults": [{"node": "node-1", "fault": {"kind": "transient"}}]}))
    logged: list[str] = []
    remote = RemoteStore(client, threading.Event())
    host = DriverHost(remote, FeatureGates(), short_dir, logged.append)
    key = ("default", "driver")

    def synced(done: Callable[[], bool]) -> Callable[[], bool]:
        def condition() -> bool:
            with remote.lock:
                remote.catch_up()
                host.sync()
            return done()
        return condition

    def slices() -> dict[str, int]:
        found, _ = client.list("ResourceSlice")
        return {s["spec"]["nodeName"]: len(s["spec"]["devices"]) for s in found}

    def faults(node: str) -> list[str]:
        return [active.fault.kind for active in running.faults(node)._active]

    try:
        wait_until(synced(lambda: key in host.running and slices() == {"node-1": 1}), 300,
                   "the driver publishing its first inventory")
        running = host._drivers[key]
        assert faults("node-1") == ["transient"]
        changed = _program({"name": "gpu.example.com", "inventory": [_slice("node-1", 2), _slice("node-2", 1)],
                            "faults": [{"node": "node-1", "fault": {"kind": "transient"}},
                                       {"node": "node-2", "fault": {"kind": "permanent"}}]})
        stored = client.get("ConfigMap", "driver", "default")
        assert stored is not None
        client.update({**stored, "data": changed["data"]})
        wait_until(synced(lambda: slices() == {"node-1": 2, "node-2": 1}), 300,
                   "the driver publishing its new inventory")
        assert host._drivers[key] is running, "the driver was restarted, not adjusted"
        assert (faults("node-1"), faults("node-2")) == (["transient"], ["permanent"])
        assert [line for line in logged if line.startswith("started")] == [
            "started driver for ConfigMap default/driver"]
        renamed = client.get("ConfigMap", "driver", "default")
        assert renamed is not None
        client.update({**renamed, "data": _program({"name": "other.example.com", "inventory": []})["data"]})
        wait_until(synced(lambda: key in host._drivers and host._drivers[key].name == "other.example.com"),
                   300, "the program restarted as another driver")
        assert [line for line in logged if line.startswith(("started", "stopped"))] == [
            "started driver for ConfigMap default/driver", "stopped driver of ConfigMap default/driver",
            "started driver for ConfigMap default/driver"]
    finally:
        host.stop()


def test_the_scheduler_process_serves_its_metrics_where_it_is_told(
        kubeconfig_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """kube-scheduler serves its metrics on 127.0.0.1 at --metrics-port (a restarted one keeps the first one's)
    from the registry its component writes, and its ready line says where."""
    config = tmp_path / "cluster.yaml"
    config.write_text(ClusterConfig().dump())
    served: list[tuple[int, str, object]] = []

    class Listening:
        server_port = 43210

    def start_http_server(port: int, addr: str, registry: object) -> tuple[Listening, None]:
        served.append((port, addr, registry))
        return Listening(), None

    registries: list[object] = []

    def build(name: str, store: RemoteStore, clock: WallClock, events: RemoteEventRecorder,
              metrics: MetricsRegistry, cluster: ClusterConfig, own_devices: int = 0) -> tuple[Any, Any]:
        registries.append(metrics.registry)

        def done() -> bool:
            raise Done

        return done, lambda: None

    monkeypatch.setattr(component, "start_http_server", start_http_server)
    monkeypatch.setattr(component, "build", build)
    with pytest.raises(Done):
        component.main(["kube-scheduler", "--kubeconfig", str(kubeconfig_file), "--cluster-config", str(config),
                        "--metrics-port", "43210"])
    assert served == [(43210, "127.0.0.1", registries[0])]
    assert json.loads(capsys.readouterr().out) == {"component": "kube-scheduler",
                                                   "metrics": "http://127.0.0.1:43210/metrics"}


def test_the_external_controllers_run_on_the_components_clock(client: KubeClient) -> None:
    """A binding controller programmed through a ConfigMap, in the dra-controllers component, answers an
    allocated device's binding condition, stamped with the component's clock."""
    store, work, stop = _controllers_with_program(client, "binder", {"driver": "gpu.example.com"})
    claim = client.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                           "metadata": {"name": "c", "namespace": "default"},
                           "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "g"}}]}}})
    result = {"request": "r", "driver": "gpu.example.com", "pool": "p", "device": "gpu-0",
              "bindingConditions": ["Attached"], "bindingFailureConditions": ["Failed"]}
    client.update_status({**claim, "status": {"allocation": {"devices": {"results": [result]}}}})

    def answered() -> list[Any]:
        with store.lock:
            store.catch_up()
            work()
        stored = client.get("ResourceClaim", "c", "default") or {}
        return [c for d in (stored.get("status") or {}).get("devices") or [] for c in d.get("conditions") or []]

    try:
        wait_until(lambda: bool(answered()), 300, "the binding controller answering the claim")
        assert [(c["type"], c["status"]) for c in answered()] == [("Attached", "True")]
    finally:
        stop()
