"""The live system under test against the served store alone (in this process, no scheduler or controller),
and against a server that never answers: per-scenario namespaces and names, clean-up, what it refuses, and
failing with the last state seen instead of hanging."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
import yaml

from draconform.claims import REFERENCE_IMPLEMENTATION
from draconform.cli import build_parser
from draconform.commands.run import claims_of
from draconform.kube.kinds import with_pod_room
from draconform.live.config import ClusterConfig, ConfigError, LiveOptions, OwnDriver, TimeoutConfig
from draconform.live.kube import KubeClient, Unanswered, load_config
from draconform.live.sut import LiveSystem
from draconform.serve.control import kubeconfig
from draconform.serve.handlers import STANDARD_NAMESPACES
from draconform.serve.server import merge_patch, parse_selector
from draconform.steps.scheduling import pod_bound
from draconform.sut import ApiError, ComponentConfig, Unsupported
from tests.live.helpers import FakeTime, wait_until


def _timeouts(directory: Path, **fields: object) -> str:
    path = directory / "timeouts.yaml"
    path.write_text(yaml.safe_dump({"pollInterval": "20ms", "settleQuietPeriod": "50ms", **fields}))
    return str(path)


def _live(kubeconfig_path: Path, tmp_path: Path, **timeouts: object) -> LiveSystem:
    return LiveSystem(LiveOptions(str(kubeconfig_path), timeout_config=_timeouts(tmp_path, **timeouts)))


def _node(name: str) -> dict[str, object]:
    return with_pod_room({"apiVersion": "v1", "kind": "Node",
                          "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}})


def _claim(name: str, device_class: str) -> dict[str, object]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": device_class}}]}}}


def test_scenarios_see_only_their_own_objects_and_leave_nothing_behind(api: Path, tmp_path: Path) -> None:
    first, second = _live(api, tmp_path), _live(api, tmp_path)
    first.create(_node("worker-1"))
    first.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}})
    created = first.create(_claim("c", "gpu"))
    assert created["metadata"]["namespace"] == "default"
    assert created["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu"
    assert "labels" not in created["metadata"]
    assert second.get("Node", "worker-1") is None and second.list("ResourceClaim") == []
    second.create(_node("worker-1"))  # the same name in another scenario is another node

    raw = KubeClient(load_config(api))
    nodes = {node["metadata"]["name"]: node for node in raw.list("Node")[0]}
    stored = nodes[f"{first.scenario}-worker-1"]
    assert stored["metadata"]["labels"]["kubernetes.io/hostname"] == f"{first.scenario}-worker-1"
    (claim,) = raw.list("ResourceClaim", first.namespace)[0]
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == f"{first.scenario}-gpu"

    first.close()
    assert [n["metadata"]["name"] for n in raw.list("Node")[0]] == [f"{second.scenario}-worker-1"]
    assert raw.list("DeviceClass")[0] == [] and raw.list("ResourceClaim", first.namespace)[0] == []
    # its namespace's deletion began (or, on a quick namespace controller, ended already); the controller finishes
    # it while the next scenarios run
    namespace = raw.get("Namespace", first.namespace)
    assert namespace is None or namespace["metadata"].get("deletionTimestamp")
    second.close()
    assert raw.list("Node")[0] == []
    wait_until(lambda: raw.get("Namespace", second.namespace) is None, 60, "the namespace's deletion")
    assert {n["metadata"]["name"] for n in raw.list("Namespace")[0]} == set(STANDARD_NAMESPACES)  # every cluster's
    raw.close()


def test_a_state_that_never_comes_fails_the_step_with_the_last_state_seen(api: Path, tmp_path: Path) -> None:
    """Nothing schedules here: the step looks again until its timeout, then names what it last saw."""
    live = _live(api, tmp_path, timeouts={"pod": "300ms"})
    live.create(_node("worker-1"))
    live.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                 "spec": {"containers": [{"name": "main", "image": "registry.example/app:1"}]}})
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"(?s)pod 'p' is bound to None, expected 'worker-1'.*still so after 0.3s"):
        pod_bound(sut=live, pod="p", node="worker-1")
    assert time.monotonic() - started < 25  # ended by its timeout (the message names it), with room for load
    live.close()


def test_a_server_that_never_answers_fails_at_once_instead_of_hanging(tmp_path: Path) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # connections are accepted by the kernel and never answered
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig(f"http://127.0.0.1:{silent.getsockname()[1]}")))
    live = _live(path, tmp_path, requestTimeout="300ms", cleanupTimeout="300ms")
    started = time.monotonic()
    with pytest.raises(Unanswered, match=r"did not answer \(create Namespace\) within 0.3s"):
        live.create(_node("worker-1"))
    live.close()  # nothing was created, so clean-up asks the silent server nothing
    assert time.monotonic() - started < 25  # ended by its timeout (the message names it), with room for load
    silent.close()


def test_what_a_live_cluster_cannot_do_is_unsupported_with_the_reason(api: Path, tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("release: '1.37'\nfeatureGates: {DRADeviceCompatibilityGroups: true}\n"
                       "schedulerArgs: {bindingTimeout: 2m}\n")
    live = LiveSystem(LiveOptions(str(api), timeout_config=_timeouts(tmp_path), cluster_config=str(cluster)))
    live.configure("kube-scheduler", ComponentConfig({"DRADeviceCompatibilityGroups": True}, None,
                                                     {"bindingTimeout": 120.0}))
    live.configure("kube-apiserver", ComponentConfig({"DRADeviceBindingConditions": True}))  # on by default
    refusals = [
        (lambda: live.configure("kube-scheduler", ComponentConfig({"DRADeviceCompatibilityGroups": False})),
         "DRADeviceCompatibilityGroups=off; the cluster config says it is on"),
        (lambda: live.configure("kube-scheduler", ComponentConfig({}, "1.33")), "at release 1.33"),
        (lambda: live.configure("kube-scheduler", ComponentConfig({}, None, {"bindingTimeout": 600.0})),
         "bindingTimeout=600.0; the cluster config says bindingTimeout=120.0"),
        (lambda: live.restart("kube-scheduler"), "does not restart"),
        (lambda: live.advance_clock(600), "exceed the live clock budget"),
        (lambda: live.metrics_text(), "no scheduler metrics address"),
        (lambda: live.run_controller("binding-controller", {}), "binding-controller"),
        (lambda: live.run_driver("gpu.example.com", []), "inventory"),
        (lambda: live.object_writes("Node", "worker-1"), "cluster-scoped Node"),
    ]
    for call, reason in refusals:
        with pytest.raises(Unsupported, match=reason.replace("(", r"\(").replace(".", r"\.")):
            call()
    live.close()


def test_the_api_servers_refusals_keep_their_reason_and_fields(api: Path, tmp_path: Path) -> None:
    live = _live(api, tmp_path)
    with pytest.raises(ApiError) as refused:
        live.create(_claim("bad", "NOT A NAME"))
    assert refused.value.reason == "Invalid"
    assert any(cause.field.endswith("deviceClassName") for cause in refused.value.causes)
    with pytest.raises(ApiError, match="NotFound"):
        live.delete("ResourceClaim", "missing")
    live.close()


def test_timeout_config_errors_name_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("timeouts: {claims: 3s}\n")
    with pytest.raises(ConfigError,
                       match=r"t\.yaml:1: timeout config: timeouts\.claims: unknown field; known: claim, event, "
                             r"metric"):
        TimeoutConfig.load(path)
    path.write_text("pollInterval: soon\n")
    with pytest.raises(ConfigError,
                       match=r"t\.yaml:1: timeout config: pollInterval: Invalid value: 'soon': expected a duration"):
        TimeoutConfig.load(path)
    path.write_text("settleTimeout: 1\nrequestTimeout: -1\n")
    with pytest.raises(ConfigError, match=r"t\.yaml:2: timeout config: requestTimeout: Invalid value: -1: must be "
                                          r"greater than or equal to 0"):
        TimeoutConfig.load(path)
    path.write_text("timeouts: {claim: 1.5m}\nclockBudget: 500ms\n")
    loaded = TimeoutConfig.load(path)
    assert loaded.observations["claim"] == 90 and loaded.clock_budget == 0.5


def test_cluster_config_errors_name_the_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("release: '1.37'\nfeatureGates:\n  DRAPartitionableDevices: yes please\nnodeKubelet: true\n")
    with pytest.raises(ConfigError) as raised:
        ClusterConfig.load(path)
    assert str(raised.value).splitlines() == [
        f"{path}:3: cluster config: featureGates[DRAPartitionableDevices]: Invalid value: \"yes please\": must be of "
        "type boolean",
        f"{path}:4: cluster config: nodeKubelet: unknown field; known: context, driverUnderTest, featureGates, "
        "kubeconfig, kubeletPluginDir, nodeKubelets, referencePrograms, release, schedulerArgs, schedulerMetricsCA, "
        "schedulerMetricsInsecureSkipVerify, schedulerMetricsURL"]
    path.write_text("featureGates: {NoSuchGate: true}\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: featureGates\.NoSuchGate: unknown feature gate"):
        ClusterConfig.load(path)
    # a cluster no upstream component could start with (the binding gate needs the status gate from 1.35)
    path.write_text("release: '1.36'\nfeatureGates: {DRAResourceClaimDeviceStatus: false}\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: featureGates: a component refuses to start with them: "
                                          r"DRADeviceBindingConditions is enabled, but depends on"):
        ClusterConfig.load(path)
    path.write_text("release: '1.36'\nschedulerArgs: {bindingTimeout: 2m}\nkubeconfig: k\n")
    loaded = ClusterConfig.load(path)
    assert (loaded.release, loaded.scheduler_args, loaded.kubeconfig) == ("1.36", {"bindingTimeout": 120.0},
                                                                           str(tmp_path / "k"))
    assert ClusterConfig.load(path) == ClusterConfig.load(_dumped(loaded, tmp_path))
    path.write_text("driverUnderTest:\n  name: gpu.vendor.com\n  deviceClassName: gpu\n  selector: 'true'\n")
    with pytest.raises(ConfigError, match=r"c\.yaml: driverUnderTest: give exactly one of deviceClassName"):
        ClusterConfig.load(path)
    path.write_text("driverUnderTest: {name: gpu.vendor.com, node: worker-1, selector: 'device.driver != \"\"'}\n")
    loaded = ClusterConfig.load(path)
    assert loaded.own_driver == OwnDriver("gpu.vendor.com", "worker-1", None, 'device.driver != ""')
    assert ClusterConfig.load(path) == ClusterConfig.load(_dumped(loaded, tmp_path))


def _dumped(config: ClusterConfig, tmp_path: Path) -> Path:
    path = tmp_path / "dumped.yaml"
    path.write_text(config.dump())
    return path


def test_selectors_and_merge_patches_as_the_server_reads_them() -> None:
    assert parse_selector("a=b,c!=d, e ,!f,g in (x, y)") == [
        ("a", "in", {"b"}), ("c", "notin", {"d"}), ("e", "exists", set()), ("f", "!exists", set()),
        ("g", "in", {"x", "y"})]
    with pytest.raises(ApiError, match="BadRequest"):
        parse_selector("=b")
    assert merge_patch({"a": {"b": 1, "c": 2}, "d": [1]}, {"a": {"b": None, "e": 3}, "d": [2]}) == {
        "a": {"c": 2, "e": 3}, "d": [2]}


def test_a_pod_on_a_node_no_kubelet_serves_is_removed_at_once_when_deleted(api: Path, tmp_path: Path) -> None:
    """The served store alone has no kubelet: a bound pod deleted gracefully would stay marked for ever, as
    on a real cluster whose scenario nodes are bare objects. The live SUT removes it as the pod garbage
    collector would, and clean-up does the same for the pods still there."""
    live = _live(api, tmp_path)
    live.create(_node("worker-1"))
    for name in ("deleted", "left"):
        live.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                     "spec": {"nodeName": "worker-1", "containers": [{"name": "main", "image": "app:1"}]}})
    live.delete("Pod", "deleted")
    assert live.get("Pod", "deleted") is None
    raw = KubeClient(load_config(api))
    raw.delete("Pod", "left", live.namespace)  # a graceful delete, as the namespace controller would do
    assert raw.get("Pod", "left", live.namespace)["metadata"].get("deletionTimestamp")
    live.close()
    assert raw.list("Pod")[0] == [] and raw.list("Node")[0] == []
    raw.close()


def test_a_live_run_does_not_claim_to_be_the_reference_implementation() -> None:
    parser = build_parser()
    live = claims_of(parser.parse_args(["run", "--kubeconfig", "kubeconfig"]))
    reference = claims_of(parser.parse_args(["run"]))
    assert reference.implementation == REFERENCE_IMPLEMENTATION
    assert live.implementation != REFERENCE_IMPLEMENTATION
    assert live.implementation.slug is None


def test_a_scenario_runs_on_the_first_cluster_that_runs_what_it_asks_for(api: Path, tmp_path: Path) -> None:
    """--also-cluster: the gates a scenario asks for choose the cluster; asked once the control plane may have
    acted on what the scenario created, the cluster it began on must run them, and the reason says that another
    one would have. (Both clusters are the same server here: what differs is what their configs declare.)"""
    first, gated = tmp_path / "first.yaml", tmp_path / "gated.yaml"
    first.write_text("release: '1.37'\n")
    gated.write_text(f"release: '1.37'\nfeatureGates: {{DRADeviceCompatibilityGroups: true}}\nkubeconfig: {api}\n")

    def live() -> LiveSystem:
        return LiveSystem(LiveOptions(str(api), timeout_config=_timeouts(tmp_path), cluster_config=str(first),
                                      also_clusters=(str(gated),)))

    default, wants_gate, moves, stays = live(), live(), live(), live()
    assert default.cluster.feature_gates == {}
    wants_gate.configure("kube-scheduler", ComponentConfig({"DRADeviceCompatibilityGroups": True}))
    assert wants_gate.cluster.feature_gates == {"DRADeviceCompatibilityGroups": True}
    with pytest.raises(Unsupported, match=r"DRADeviceCompatibilityGroups=off; the cluster config says it is on$"):
        wants_gate.configure("kubelet", ComponentConfig({"DRADeviceCompatibilityGroups": False}))  # runs nowhere
    # Asked once the scenario has created objects: it starts again on the cluster that runs the gate, with them.
    moves.create(_node("worker-1"))
    assert moves.cluster.feature_gates == {}
    moves.configure("kube-scheduler", ComponentConfig({"DRADeviceCompatibilityGroups": True}))
    assert moves.cluster.feature_gates == {"DRADeviceCompatibilityGroups": True}
    assert [node["metadata"]["name"] for node in moves.list("Node")] == ["worker-1"]
    # Asked once the control plane may have acted on them: it cannot start again.
    stays.create(_node("worker-1"))
    stays.settle()
    with pytest.raises(Unsupported, match=r"=on; the cluster config says it is off \(an --also-cluster does, but"):
        stays.configure("kube-scheduler", ComponentConfig({"DRADeviceCompatibilityGroups": True}))
    nowhere = live()
    with pytest.raises(Unsupported, match=r"at release 1\.33; .*\(nor does any --also-cluster\)"):
        nowhere.configure("kube-scheduler", ComponentConfig({}, "1.33"))
    for system in (default, wants_gate, moves, stays, nowhere):
        system.close()
    client = KubeClient(load_config(api))
    assert client.list("Node")[0] == []  # the moved-from copies too
    # the namespaces' deletion began; the namespace controller finishes it in its own time
    wait_until(lambda: {n["metadata"]["name"] for n in client.list("Namespace")[0]} == set(STANDARD_NAMESPACES),
               60, "the scenarios' namespaces' deletion")
    client.close()


def test_a_gate_turned_off_in_the_scheduler_alone_needs_an_api_server_that_keeps_its_fields(
        api: Path, tmp_path: Path) -> None:
    """A cluster config's gates apply to every component: a scenario turning DRAConsumableCapacity off in
    kube-scheduler only (its API server at the default, on) does not run where the API server has it off too,
    since that server drops the capacity fields the scenario counts on the scheduler to ignore (on upstream the
    claim then asks for nothing gated and is allocated). Turned off everywhere, it runs there."""
    off = tmp_path / "off.yaml"
    off.write_text(f"release: '1.37'\nfeatureGates: {{DRAConsumableCapacity: false}}\nkubeconfig: {api}\n")
    first = tmp_path / "first.yaml"
    first.write_text("release: '1.37'\n")

    def live(*also: Path) -> LiveSystem:
        return LiveSystem(LiveOptions(str(api), timeout_config=_timeouts(tmp_path), cluster_config=str(off),
                                      also_clusters=tuple(str(p) for p in also)))

    scheduler_only, everywhere, on_default = live(), live(), live(first)
    with pytest.raises(Unsupported, match=r"kube-apiserver with DRAConsumableCapacity=on; the cluster config says "
                                          r"it is off \(the scenario turns the gate off in another component only"):
        scheduler_only.configure("kube-scheduler", ComponentConfig({"DRAConsumableCapacity": False}))
    for component in ("kube-apiserver", "kube-scheduler"):
        everywhere.configure(component, ComponentConfig({"DRAConsumableCapacity": False}))
    assert everywhere.cluster.feature_gates == {"DRAConsumableCapacity": False}
    # a gate turned on in one component asks nothing of the API server's (the reference's own choice of cluster)
    on_default.configure("kube-scheduler", ComponentConfig({"DRAConsumableCapacity": True}))
    assert on_default.cluster.feature_gates == {}
    for system in (scheduler_only, everywhere, on_default):
        system.close()


def test_an_also_cluster_must_name_its_kubeconfig(api: Path, tmp_path: Path) -> None:
    nameless = tmp_path / "nameless.yaml"
    nameless.write_text("release: '1.37'\n")
    with pytest.raises(ConfigError, match=f"{nameless}: kubeconfig: --also-cluster needs"):
        LiveOptions(str(api), also_clusters=(str(nameless),)).check()


def test_settle_waits_the_quiet_period_after_the_last_change_it_sees(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Looks every poll interval; returns at the first look a whole quiet period after the look that saw the
    last change (not before, however many unchanged looks came between, and not a period later)."""
    clock = FakeTime()
    monkeypatch.setattr("draconform.live.sut.time", clock)
    system = LiveSystem(LiveOptions(str(tmp_path / "kubeconfig"), timeout_config=_timeouts(
        tmp_path, pollInterval="100ms", settleQuietPeriod="300ms")))
    states = iter(["a", "b", "b", "c"])  # looks at 0, 0.1, 0.2 and 0.3 s; then nothing changes
    looks: list[float] = []

    def snapshot() -> list[tuple[str, str, str]]:
        looks.append(round(clock.now - 1000.0, 3))
        return [("Pod", "p", next(states, "c"))]

    monkeypatch.setattr(system, "_snapshot", snapshot)
    system.settle()
    assert looks == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]


def test_no_wait_for_the_plugin_socket_of_a_driver_the_scenario_never_started(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a driver the scenario programmed or adopted will serve a socket; a "no plugin registered" step asks
    about another driver's and must not spend the object timeout waiting for one that never comes."""
    clock = FakeTime()
    monkeypatch.setattr("draconform.live.sut.time", clock)
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(f"kubeletPluginDir: {tmp_path}\n")
    system = LiveSystem(LiveOptions(str(tmp_path / "kubeconfig"), cluster_config=str(cluster),
                                    timeout_config=_timeouts(tmp_path)))
    endpoint = system.kubelet_plugin_registration_endpoint("gpu.example.com", "node-1")
    assert endpoint == f"unix://{tmp_path}/{system.scenario}-node-1/gpu.example.com-reg.sock"
    assert clock.now == 1000.0


def test_object_writes_replays_each_stored_version_of_a_scenario_object(api: Path, tmp_path: Path) -> None:
    """A claim allocated, cleared and allocated again: its current state shows none of the clearing, the versions
    the API server's watch replays from the scenario's start show each step (the `was cleared` step on a live
    cluster); a deletion adds no version, and another scenario's object of the same name is not among them."""
    live, other = _live(api, tmp_path), _live(api, tmp_path)
    other.create(_claim("c", "gpu"))
    claim = live.create(_claim("c", "gpu"))
    allocated = {"allocation": {"devices": {"results": [{"request": "r", "driver": "gpu.example.com",
                                                          "pool": "p", "device": "d0"}]}}}
    for status in (allocated, {}, allocated):
        claim = live.update_status({**live.get("ResourceClaim", "c"), "status": status})
    versions = live.object_writes("ResourceClaim", "c")
    assert [bool((v.get("status") or {}).get("allocation")) for v in versions] == [False, True, False, True]
    assert {v["metadata"]["uid"] for v in versions} == {claim["metadata"]["uid"]}
    assert all(v["metadata"]["namespace"] == "default" for v in versions)
    live.delete("ResourceClaim", "c")
    assert len(live.object_writes("ResourceClaim", "c")) == 4
    live.close()
    other.close()


def test_an_unreachable_metrics_endpoint_fails_only_the_metrics_reading(api: Path, tmp_path: Path) -> None:
    """kube-scheduler restarting (as v1.36.2's does after a panic) leaves its /metrics refusing connections for a
    moment: a scenario that never reads metrics does not depend on it; one that does fails on reading them."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]  # nothing listens here once the probe is closed
    live = LiveSystem(LiveOptions(str(api), timeout_config=_timeouts(tmp_path),
                                  metrics_url=f"http://127.0.0.1:{closed}/metrics"))
    live.create(_node("worker-1"))
    assert live.get("Node", "worker-1") is not None
    with pytest.raises(ConnectionError, match="no baseline of the scheduler's metrics"):
        live.metrics_text()
    live.close()
