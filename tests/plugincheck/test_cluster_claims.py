"""The claims `plugin-check --kubeconfig` makes in a cluster (ClusterClaims), against the API served in this
process with no driver running: what it creates is what a kubelet would find, and closing deletes everything
it created, the claims before the pod they are reserved for. And a plugin restart (DRA-PLUGIN/SURVIVES-RESTART)
with a restart command played by a fake: no process, no wall-clock wait."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from draconform.kubeletplugin.types import ClaimRef, PrepareResult
from draconform.live.kube import Unanswered
from draconform.plugincheck import checks
from draconform.plugincheck.checks import CheckFailed, Session, Target
from draconform.plugincheck.claims import Support
from draconform.plugincheck.cluster import LABEL, ClusterClaims
from draconform.sut import ApiError
from tests.live.helpers import FakeTime
from tests.plugincheck.conftest import Api
from tests.plugincheck.helpers import DRIVER, NODE


@pytest.fixture
def claims(api: Api) -> ClusterClaims:
    return ClusterClaims.connect(api.kubeconfig, DRIVER, NODE, "default", timeout=30.0)


def test_the_claims_are_allocated_and_reserved_for_a_gated_placeholder_pod(api: Api, claims: ClusterClaims) -> None:
    """The placeholder pod never runs (a scheduling gate holds it; the pause image); each claim is allocated a
    device of the driver on the node and reserved for that pod, as the resourceclaim controller reserves a
    claim for its pod; all carry the run's label."""
    try:
        pod = api.store.get("Pod", f"plugin-check-{claims.run}", "default")
        assert pod is not None
        assert pod["spec"]["schedulingGates"] == [{"name": "draconform.io/plugin-check"}]
        assert [(c["name"], c["image"]) for c in pod["spec"]["containers"]] == [
            ("placeholder", "registry.k8s.io/pause:3.10")]
        assert pod["metadata"]["labels"] == {LABEL: claims.run}
        assert [c.ref.name for c in claims.claims] == [f"plugin-check-{claims.run}-{n}" for n in (1, 2, 3)]
        for claim in claims.claims:
            stored = api.store.get("ResourceClaim", claim.ref.name, "default")
            assert stored is not None and stored["metadata"]["uid"] == claim.ref.uid
            assert stored["status"]["reservedFor"] == [{"resource": "pods", "name": pod["metadata"]["name"],
                                                        "uid": pod["metadata"]["uid"]}]
            results = stored["status"]["allocation"]["devices"]["results"]
            assert [(r["driver"], r["pool"]) for r in results] == [(DRIVER, NODE)]
            assert stored["metadata"]["labels"] == {LABEL: claims.run}
    finally:
        claims.close()


def test_an_unallocated_and_a_recreated_claim(api: Api, claims: ClusterClaims) -> None:
    """`extra("unallocated")` is created and left unallocated; `recreate` deletes a claim and creates it again
    under its name (a new UID) with the second claim's device."""
    try:
        bare = claims.extra("unallocated")
        stored = api.store.get("ResourceClaim", bare.ref.name, "default")
        assert stored is not None and not (stored.get("status") or {}).get("allocation")
        fresh = claims.extra("to-recreate")
        again = claims.recreate(fresh)
        assert again.ref.name == fresh.ref.name and again.ref.uid != fresh.ref.uid
        second = claims.claims[1].obj["status"]["allocation"]["devices"]["results"]
        assert again.obj["status"]["allocation"]["devices"]["results"] == second
    finally:
        claims.close()


def test_opaque_configuration_is_carried_by_the_claim_and_its_allocation(api: Api, claims: ClusterClaims) -> None:
    try:
        configured = claims.with_config(DRIVER, {"mode": "refuse"})
        assert configured.ref.name == f"plugin-check-{claims.run}-refused-config"
        assert claims.claims[-1] is configured
        stored = api.store.get("ResourceClaim", configured.ref.name, "default")
        assert stored is not None
        opaque = {"driver": DRIVER, "parameters": {"mode": "refuse"}}
        assert [c["opaque"] for c in stored["spec"]["devices"]["config"]] == [opaque]
        allocated = stored["status"]["allocation"]["devices"]["config"]
        assert [(c["source"], c["opaque"]) for c in allocated] == [("FromClaim", opaque)]
    finally:
        claims.close()


class Recording:
    """Stands in for ClusterClaims' API client at close: records each delete; some fail as given."""

    def __init__(self, failing: dict[str, Exception]) -> None:
        self.failing = failing
        self.deleted: list[tuple[str, str, str | None, int | None]] = []
        self.closed = False

    def delete(self, kind: str, name: str, namespace: str | None = None,
               grace_period_seconds: int | None = None) -> None:
        self.deleted.append((kind, name, namespace, grace_period_seconds))
        if name in self.failing:
            raise self.failing[name]

    def close(self) -> None:
        self.closed = True


def test_close_deletes_the_claims_before_their_pod_each_once_past_failures() -> None:
    """The pod goes last, so no claim is left reserved for a pod already gone; an object already gone (or a
    server that does not answer) does not stop the rest; nothing waits out a grace period."""
    client = Recording({"gone": ApiError("NotFound", "not found"), "slow": Unanswered("timed out")})
    made = ClusterClaims(client, DRIVER, NODE, "ns")  # type: ignore[arg-type]
    made._created = [("Pod", "pod"), ("ResourceClaim", "gone"), ("ResourceClaim", "slow"),
                     ("ResourceClaim", "c"), ("ResourceClaim", "c")]
    made.close()
    assert sorted(client.deleted[:3]) == [("ResourceClaim", name, "ns", 0) for name in ("c", "gone", "slow")]
    assert client.deleted[3:] == [("Pod", "pod", "ns", 0)]
    assert client.closed and made._created == []


# --- a plugin restart, its command played by a fake -----------------------------------------------------------

class Answering:
    """The plugin's client once it serves again: an empty unprepare is answered."""

    def __enter__(self) -> Answering:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def unprepare(self, refs: Sequence[ClaimRef]) -> dict[str, str]:
        return {}

    def prepare(self, refs: Sequence[ClaimRef]) -> dict[str, PrepareResult]:
        return {}


def _session(tmp_path: Path) -> Session:
    source: Any = None
    return Session(Target(f"unix://{tmp_path}/plugin.sock", None, DRIVER, NODE), source, Support(), [])


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(checks, "time", fake)
    monkeypatch.setattr(Session, "_client", lambda self, version: Answering())
    return fake


def _command(result: subprocess.CompletedProcess[str] | None, then: Any = None) -> Any:
    """subprocess.run as the restart command meets it: `result`, or (None) a command that never finishes, which
    only a timeout ends (without one the check would wait for ever: the fake refuses to)."""
    def run(command: str, **options: Any) -> subprocess.CompletedProcess[str]:
        assert options.get("shell") is True and options.get("capture_output") is True
        if result is None:
            if options.get("timeout") is None:
                raise AssertionError("the restart command is run without a timeout: a hung one would never end")
            raise subprocess.TimeoutExpired(command, options["timeout"])
        if then is not None:
            then()
        return result
    return run


def test_a_restart_command_that_never_finishes_fails_the_check_after_its_bound(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checks.subprocess, "run", _command(None))
    session = _session(tmp_path)
    with pytest.raises(CheckFailed, match="the restart command did not finish within 180 seconds"):
        checks._restart(session, "restart-my-plugin")
    assert (session.steps[-1].text, session.steps[-1].status) == ("the restart command ran: restart-my-plugin",
                                                                 "failed")


def test_a_restart_command_that_fails_names_its_status_and_output(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    failed = subprocess.CompletedProcess("kubectl delete pod x", 3, stdout="", stderr="  pod not found\n")
    monkeypatch.setattr(checks.subprocess, "run", _command(failed))
    with pytest.raises(CheckFailed, match=r"^kubectl exited with 3: pod not found$"):
        checks._restart(_session(tmp_path), "kubectl delete pod x")


def test_a_plugin_that_never_serves_again_fails_the_check_after_the_bound(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command succeeded but no new socket appears: the check fails once RESTART_SECONDS have passed on the
    (fake) clock, naming the socket."""
    (tmp_path / "plugin.sock").touch()
    monkeypatch.setattr(checks.subprocess, "run", _command(subprocess.CompletedProcess("true", 0, "", "")))
    with pytest.raises(CheckFailed, match=f"no new socket answered at {tmp_path}/plugin.sock within 180 seconds"):
        checks._restart(_session(tmp_path), "true")
    assert 1180.0 <= clock.now <= 1180.2


def test_a_plugin_serving_on_a_new_socket_has_restarted(
        tmp_path: Path, clock: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    socket = tmp_path / "plugin.sock"
    socket.touch()

    def replaced() -> None:  # as a restarted plugin does: a new socket in the old one's place
        (tmp_path / "new.sock").touch()
        (tmp_path / "new.sock").replace(socket)

    monkeypatch.setattr(checks.subprocess, "run", _command(subprocess.CompletedProcess("true", 0, "", ""), replaced))
    session = _session(tmp_path)
    checks._restart(session, "true")
    assert [(s.text, s.status) for s in session.steps] == [("the restart command ran: true", "passed"),
                                                           (f"the plugin serves again on {socket}", "passed")]
    assert clock.now == 1000.0


# --- claims from files, and the report kept ------------------------------------------------------------------

def test_claims_from_files_make_nothing_more_and_say_that_kubeconfig_would() -> None:
    """FileClaims refuses every claim beyond those of its files with NeedsCluster (a check then skips, giving
    that reason), each naming --kubeconfig as the way to get one."""
    from draconform.plugincheck.claims import FileClaims, NeedsCluster
    from draconform.reference.claimfiles import TestClaim

    source = FileClaims([])
    claim = TestClaim({"metadata": {"namespace": "ns", "name": "a", "uid": "uid-a"}})
    reasons = []
    for make in (lambda: source.extra("same-device"), lambda: source.with_config(DRIVER, {}),
                 lambda: source.recreate(claim)):
        with pytest.raises(NeedsCluster) as refused:
            make()
        reasons.append(str(refused.value))
    assert reasons[0] == "the check needs a claim that is same device, which only --kubeconfig can create"
    assert all("--kubeconfig" in reason for reason in reasons[1:]), reasons
    assert reasons[2].startswith("the check deletes a claim and creates it again under the same name")


def test_the_report_keeps_its_timings_in_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """report.json is UTF-8 for every reader, also when written on a machine whose locale encodes otherwise
    (here plain ASCII) and a name is not ASCII."""
    import datetime
    import json
    import locale
    from types import SimpleNamespace

    from draconform.plugincheck.runner import _keep_timings

    path = tmp_path / "report.json"
    path.write_text(json.dumps({"run": {"name": "café"}}), encoding="utf-8")
    started = datetime.datetime(2026, 11, 29, 9, 0, tzinfo=datetime.UTC)
    info: Any = SimpleNamespace(started=started, duration_s=1.5)
    previous = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        _keep_timings(path, info)
    finally:
        locale.setlocale(locale.LC_CTYPE, previous)
    assert json.loads(path.read_bytes().decode("utf-8"))["run"] == {
        "name": "café", "started": "2026-11-29T09:00:00+00:00", "duration_s": 1.5}


def test_the_extra_claims_a_check_asks_for(api: Api, claims: ClusterClaims) -> None:
    """"other-node" is allocated the device of the same name in another node's pool (node-2's, which the
    cluster has), pinned to that node; "other-driver-too" adds a request for a device of another driver;
    "same-device" gets the first claim's allocation; a kind nobody asks for is a programming error."""
    from draconform.plugincheck.cluster import OTHER_DRIVER

    try:
        first = claims.claims[0].obj["status"]["allocation"]["devices"]["results"]
        other = claims.extra("other-node").obj["status"]["allocation"]
        assert [(r["pool"], r["device"]) for r in other["devices"]["results"]] == [
            ("node-2", r["device"]) for r in first]
        assert other["nodeSelector"] == {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-2"]}]}]}
        both = claims.extra("other-driver-too").obj
        assert [r["name"] for r in both["spec"]["devices"]["requests"]][-1] == "other"
        assert both["status"]["allocation"]["devices"]["results"][-1] == {
            "request": "other", "driver": OTHER_DRIVER, "pool": "elsewhere", "device": "device-0"}
        same = claims.extra("same-device").obj["status"]["allocation"]["devices"]["results"]
        assert same == first
        with pytest.raises(ValueError, match="unknown extra claim 'mystery'"):
            claims.extra("mystery")
    finally:
        claims.close()
