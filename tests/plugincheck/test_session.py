"""A check's Session keeps track of what the plugin still holds prepared, so that its clean-up unprepares exactly
that: a claim the plugin unprepared is not asked about again, one whose unprepare failed is, and a refused claim
was never held. Driven by a fake client (no driver process): only the Session's book-keeping is under test."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from draconform.kubeletplugin.types import ClaimRef, PrepareResult
from draconform.plugincheck.checks import Session, Target
from draconform.plugincheck.claims import Support
from draconform.plugincheck.runner import served_versions

A = ClaimRef("ns", "a", "uid-a")
B = ClaimRef("ns", "b", "uid-b")


class FakeClient:
    """Answers prepare with `prepare_errors` and unprepare with `unprepare_errors` (by UID; missing: success),
    recording the UIDs of each call."""

    def __init__(self) -> None:
        self.prepare_errors: dict[str, str] = {}
        self.unprepare_errors: dict[str, str] = {}
        self.unprepared: list[list[str]] = []

    def __enter__(self) -> FakeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def prepare(self, refs: Sequence[ClaimRef]) -> dict[str, PrepareResult]:
        return {ref.uid: PrepareResult(error=self.prepare_errors.get(ref.uid, "")) for ref in refs}

    def unprepare(self, refs: Sequence[ClaimRef]) -> dict[str, str]:
        self.unprepared.append([ref.uid for ref in refs])
        return {ref.uid: self.unprepare_errors.get(ref.uid, "") for ref in refs}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeClient:
    client = FakeClient()
    monkeypatch.setattr(Session, "_client", lambda self, version: client)
    return client


def _session() -> Session:
    source: Any = None  # the book-keeping reads no claim source
    return Session(Target("unix:///nowhere", None, "gpu.example.com", "node-1"), source, Support(), [])


def test_cleanup_unprepares_only_the_claim_whose_unprepare_failed(fake: FakeClient) -> None:
    session = _session()
    session.prepare([A, B])
    fake.unprepare_errors = {A.uid: "device busy"}
    errors = session.unprepare([A, B])
    assert errors == {A.uid: "device busy", B.uid: ""}
    fake.unprepare_errors = {}
    session.cleanup()
    assert fake.unprepared == [[A.uid, B.uid], [A.uid]]
    assert (session.steps[-1].status, session.steps[-1].message) == ("passed", None)


def test_nothing_is_cleaned_up_after_every_claim_was_unprepared(fake: FakeClient) -> None:
    session = _session()
    session.prepare([A, B])
    session.unprepare([B, A])
    session.cleanup()
    assert fake.unprepared == [[B.uid, A.uid]]


def test_a_refused_claim_is_not_held(fake: FakeClient) -> None:
    session = _session()
    fake.prepare_errors = {B.uid: "no such device"}
    session.prepare([A, B])
    assert list(session.held) == [A.uid]
    session.cleanup()
    assert fake.unprepared == [[A.uid]]


def test_a_failed_cleanup_is_recorded_with_what_is_still_prepared(fake: FakeClient) -> None:
    session = _session()
    session.prepare([A, B])
    fake.unprepare_errors = {B.uid: "device busy"}
    session.cleanup()
    step = session.steps[-1]
    assert (step.keyword, step.status, step.message) == ("*", "skipped", "still prepared: ns/b")


def test_the_checks_call_v1_when_the_registration_socket_does_not_answer(tmp_path: Path) -> None:
    """No --supports versions and a registration socket nobody listens on: the checks call DRAPlugin v1 (the
    registration checks report the socket)."""
    target = Target(f"unix://{tmp_path}/plugin.sock", str(tmp_path / "registration.sock"), "gpu.example.com", "n",
                    timeout=1.0)
    assert served_versions(target, Support()) == ("v1",)
    assert served_versions(Target("unix:///nowhere", None, "gpu.example.com", "n"), Support()) == ("v1",)
    assert served_versions(target, Support(versions=("v1beta1",))) == ("v1beta1",)


def test_a_call_failing_as_a_whole_fails_the_check_with_a_failed_when_step(fake: FakeClient) -> None:
    """The plugin crashed under NodeUnprepareResources: the check fails, and its report shows the call as a
    failed When step carrying the endpoint, method and status."""
    from draconform.kubeletplugin.client import PluginCallError
    from draconform.plugincheck.checks import CheckFailed

    def crash(refs: Sequence[ClaimRef]) -> dict[str, str]:
        raise PluginCallError("unix:///nowhere", "NodeUnprepareResources", "UNAVAILABLE", "connection reset")

    fake.unprepare = crash  # type: ignore[method-assign]
    session = _session()
    with pytest.raises(CheckFailed):
        session.unprepare([A])
    step = session.steps[-1]
    assert (step.keyword, step.status) == ("When", "failed")
    assert step.text == "NodeUnprepareResources over DRAPlugin v1 for ns/a"
    assert step.message == "NodeUnprepareResources on unix:///nowhere failed with UNAVAILABLE: connection reset"


def _claims_source() -> Any:
    from draconform.reference.claimfiles import TestClaim

    class Source:
        def __init__(self) -> None:
            self.claims = [TestClaim({"metadata": {"namespace": ref.namespace, "name": ref.name, "uid": ref.uid}})
                           for ref in (A, B)]

    return Source()


def _run(rule: str, fake: FakeClient, support: Support | None = None) -> Any:
    from draconform.plugincheck.checks import CHECKS, run_check

    check = next(c for c in CHECKS if c.rule == rule)
    return run_check(check, Target("unix:///nowhere", None, "gpu.example.com", "node-1"), _claims_source(),
                     support or Support(), [])


def test_an_answer_with_an_entry_nobody_asked_for_fails_naming_that_claim(fake: FakeClient) -> None:
    """The plugin, asked about claim b, also answers for claim a (prepared before): the check fails and names
    the extra UID with its claim."""
    original = fake.prepare

    def answers_too_much(refs: Sequence[ClaimRef]) -> dict[str, PrepareResult]:
        return {**original(refs), A.uid: PrepareResult()}

    fake.prepare = answers_too_much  # type: ignore[method-assign]
    result = _run("DRA-PLUGIN/ANSWER-ONLY-ASKED", fake)
    assert (result.status, result.message) == ("failed", "the answer has entries under UIDs the request did not "
                                                         "carry: uid-a (claim ns/a)")


def test_the_permanent_error_checks_are_skipped_without_a_declared_claim(fake: FakeClient) -> None:
    result = _run("KEP-5322/WIRE-FIELD", fake)
    assert (result.status, result.skip_reason) == ("skipped", "the driver declares no claim it refuses permanently "
                                                       "(permanentErrors.claims)")


def test_the_exclusive_device_check_is_skipped_for_a_claim_holding_a_share(fake: FakeClient) -> None:
    """A claim holding its device as a share (KEP-5075's shareID) may be prepared beside another claim of the same
    device: the check that a device is held once does not apply, and says why."""
    from draconform.plugincheck.checks import CHECKS, run_check
    from draconform.reference.claimfiles import TestClaim

    result_entry = {"request": "r", "driver": "gpu.example.com", "pool": "p", "device": "gpu-0",
                    "shareID": "0b6f8d5e-1111-4222-8333-444455556666"}
    shared = TestClaim({"metadata": {"namespace": "ns", "name": "a", "uid": "uid-a"},
                        "status": {"allocation": {"devices": {"results": [result_entry]}}}})

    class Source:
        def __init__(self) -> None:
            self.claims = [shared]

    check = next(c for c in CHECKS if c.run.__name__ == "exclusive_device_once")
    result = run_check(check, Target("unix:///nowhere", None, "gpu.example.com", "node-1"), Source(),  # type: ignore[arg-type]
                       Support(), [])
    assert (result.status, result.skip_reason) == ("skipped", "claim a holds its devices in shares or with admin "
                                                              "access")


def _file_claims(count: int) -> Any:
    """Claims from files (FileClaims: no extra claim can be made), each allocated one device of the driver."""
    from draconform.plugincheck.claims import FileClaims
    from draconform.reference.claimfiles import TestClaim

    def claim(ref: ClaimRef, device: str) -> TestClaim:
        result = {"request": "r", "driver": "gpu.example.com", "pool": "node-1", "device": device}
        return TestClaim({"metadata": {"namespace": ref.namespace, "name": ref.name, "uid": ref.uid},
                          "status": {"allocation": {"devices": {"results": [result]}}}})

    return FileClaims([claim(ref, f"gpu-{n}") for n, ref in enumerate((A, B)[:count])])


def _run_named(name: str, source: Any, support: Support | None = None) -> Any:
    from draconform.plugincheck.checks import CHECKS, run_check

    check = next(c for c in CHECKS if c.run.__name__ == name)
    return run_check(check, Target("unix:///nowhere", None, "gpu.example.com", "node-1"), source,
                     support or Support(), [])


def test_a_check_says_which_part_it_skipped_and_why(fake: FakeClient) -> None:
    """Claims from files cannot include one with devices of another driver too: the devices check judges the
    claims it has and records that part as a skipped step with the reason."""
    result = _run_named("devices_match_allocation", _file_claims(2))
    assert result.status == "passed"
    assert (result.steps[0].keyword, result.steps[0].text, result.steps[0].status, result.steps[0].message) == (
        "*", "a claim with devices of another driver too", "skipped",
        "the check needs a claim that is other driver too, which only --kubeconfig can create")


def test_unprepare_twice_names_each_attempt(fake: FakeClient) -> None:
    result = _run_named("unprepare_idempotent", _file_claims(1))
    assert result.status == "passed"
    assert [s.text for s in result.steps if s.keyword == "Then"][-2:] == ["the first unprepare succeeds",
                                                                          "the second unprepare succeeds"]


def test_checks_skipped_for_want_of_claims_or_declarations_say_what_they_need(fake: FakeClient) -> None:
    concurrent = _run_named("concurrent_calls", _file_claims(1))
    assert (concurrent.status, concurrent.skip_reason) == (
        "skipped", "the check needs 2 claims the driver prepares; 1 were given")
    grouped = _run_named("validates_at_prepare", _file_claims(2))
    assert (grouped.status, grouped.skip_reason) == (
        "skipped", "the driver declares no incompatible claims (compatibilityGroups.incompatibleClaims)")


def test_a_refused_unprepare_fails_the_check_naming_the_claim_and_the_plugins_error(fake: FakeClient) -> None:
    fake.unprepare_errors = {A.uid: "device busy"}
    result = _run_named("unprepare_after_prepare", _file_claims(1))
    assert (result.status, result.message) == ("failed", "unpreparing claim ns/a: device busy")
    assert (result.steps[-2].text, result.steps[-2].status) == ("the plugin unprepared the claim", "failed")


def _advertising(monkeypatch: pytest.MonkeyPatch, versions: tuple[str, ...]) -> Any:
    """The registration socket, played: it advertises `versions`; the check then runs with these claims."""
    from draconform.kubeletplugin.types import PluginInfo
    from draconform.plugincheck import checks
    from draconform.plugincheck.checks import CHECKS, run_check

    info = PluginInfo("DRAPlugin", "gpu.example.com", "/plugin.sock", versions)
    monkeypatch.setattr(checks, "registration_info", lambda path, timeout: info)
    check = next(c for c in CHECKS if c.run.__name__ == "registration_versions")
    return run_check(check, Target("unix:///nowhere", "/registration.sock", "gpu.example.com", "node-1"),
                     _file_claims(1), Support(), [])


def test_the_advertised_versions_are_judged_against_what_kubelets_know(
        fake: FakeClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """A registration advertising no DRAPlugin version a kubelet knows fails, listing those it knows; one
    advertising v1beta1 before v1 fails on the order (the kubelet takes the first it knows); v1 then v1beta1
    passes, each version then called."""
    unknown = _advertising(monkeypatch, ("v2.DRAPlugin",))
    assert (unknown.status, unknown.message) == ("failed", "advertised v2.DRAPlugin; kubelets know v1.DRAPlugin, "
                                                           "v1beta1.DRAPlugin")
    reversed_ = _advertising(monkeypatch, ("v1beta1.DRAPlugin", "v1.DRAPlugin"))
    assert (reversed_.status, reversed_.message) == ("failed", "advertised in this order: v1beta1.DRAPlugin, "
                                                               "v1.DRAPlugin")
    assert _advertising(monkeypatch, ("v1.DRAPlugin", "v1beta1.DRAPlugin")).status == "passed"


def test_a_checks_duration_is_kept_to_the_millisecond(fake: FakeClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from draconform.plugincheck import checks

    readings = iter([100.0, 100.12345])
    monkeypatch.setattr(checks.time, "perf_counter", lambda: next(readings))
    assert _run_named("validates_at_prepare", _file_claims(1)).duration_s == 0.123


def test_a_claim_the_plugin_cannot_unprepare_after_its_restart_fails_the_check(
        fake: FakeClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """What follows the restart (the restart itself is played by a no-op here): the kubelet unprepares the claim
    prepared before it; a plugin that refuses fails the check, naming the claim and its error."""
    from dataclasses import replace

    from draconform.plugincheck import checks
    from draconform.plugincheck.checks import CHECKS, run_check

    def restarted(s: Any, command: str) -> None:
        fake.unprepare_errors = {A.uid: "no such claim"}  # the restarted plugin forgot what it prepared

    monkeypatch.setattr(checks, "_restart", restarted)
    check = next(c for c in CHECKS if c.run.__name__ == "survives_restart")
    target = replace(Target("unix:///nowhere", None, "gpu.example.com", "node-1"), restart_command="restart")
    result = run_check(check, target, _file_claims(1), Support(), [])
    assert (result.status, result.message) == ("failed", "unpreparing claim ns/a: no such claim")


def test_a_cleanup_the_plugin_crashes_under_is_recorded_with_its_error(fake: FakeClient) -> None:
    from draconform.kubeletplugin.client import PluginCallError

    def crash(refs: Sequence[ClaimRef]) -> dict[str, str]:
        raise PluginCallError("unix:///nowhere", "NodeUnprepareResources", "UNAVAILABLE", "connection reset")

    session = _session()
    session.prepare([A])
    fake.unprepare = crash  # type: ignore[method-assign]
    session.cleanup()
    step = session.steps[-1]
    assert (step.keyword, step.text, step.status, step.message) == (
        "*", "clean up: NodeUnprepareResources for ns/a", "skipped",
        "NodeUnprepareResources on unix:///nowhere failed with UNAVAILABLE: connection reset")


def test_a_refused_config_declared_becomes_a_claim_the_plugin_must_refuse(tmp_path: Path) -> None:
    """--supports with permanentErrors.config: the claim source makes a claim carrying exactly that opaque
    configuration for the driver, and the checks expect it refused permanently."""
    import argparse

    from draconform.commands.plugincheck import _support
    from draconform.reference.claimfiles import TestClaim

    declared = tmp_path / "support.yaml"
    declared.write_text("permanentErrors:\n  config: {mode: broken}\n")
    made: list[tuple[str, Any]] = []

    class Source:
        claims = _file_claims(1).claims

        def with_config(self, driver: str, parameters: Any) -> TestClaim:
            made.append((driver, parameters))
            return TestClaim({"metadata": {"namespace": "ns", "name": "refused", "uid": "uid-r"}})

    support = _support(argparse.Namespace(supports=declared, driver="gpu.example.com"), Source())  # type: ignore[arg-type]
    assert made == [("gpu.example.com", {"mode": "broken"})]
    assert support.permanent_error_claims == ("refused",)


def test_the_command_line_takes_paths_and_names_its_values() -> None:
    from draconform.cli import build_parser

    parser = build_parser("plugin-check")
    args = parser.parse_args(["plugin-check", "--endpoint", "unix:///p.sock", "--driver", "d", "--node", "n",
                              "--write-claims", "claims.yaml", "--cdi-dir", "/etc/cdi", "--report-dir", "out"])
    assert (args.write_claims, args.cdi_dir, args.report_dir, args.namespace) == (
        Path("claims.yaml"), [Path("/etc/cdi")], Path("out"), "default")
    subcommands: Any = parser._subparsers._group_actions[0]  # type: ignore[union-attr]
    usage = subcommands.choices["plugin-check"].format_help()
    assert "--cdi-dir DIR" in usage and "--write-claims FILE" in usage
