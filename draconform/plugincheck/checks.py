"""The checks `draconform plugin-check` runs against a live kubelet plugin: one per rule it can judge from the
outside, each acting as the kubelet over the plugin's sockets. A check records every call and judgement as a
step, cleans up what it prepared, and ends passed, failed (the plugin broke a rule, or a call failed as a
whole where the rule allows no such failure: hung past the deadline, crashed, answered with a gRPC error) or
skipped (the driver does not declare, or the run cannot give, what the check needs). Where upstream's helper
fails a whole call for a claim it cannot read from the API server, the checks accept that as a refusal
(docs/decisions.md D-3063-8)."""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from draconform.kube.cdi import read_dirs
from draconform.kubeletplugin import judge
from draconform.kubeletplugin.client import (
    KubeletPluginClient,
    PluginCallError,
    notify_registration,
    prepare_at_once,
    registration_info,
)
from draconform.kubeletplugin.judge import missing_entries, signature_text, unasked_entries
from draconform.kubeletplugin.types import API_VERSIONS, ClaimRef, PluginInfo, PrepareResult
from draconform.plugincheck.claims import ClaimSource, NeedsCluster, Support
from draconform.reference.claimfiles import TestClaim
from draconform.reporting.records import Outcome, StepRecord

Result = TypeVar("Result")

# How long the kubelet waits for each call to a DRA plugin (pkg/kubelet/cm/dra/plugin, 45 seconds).
KUBELET_CALL_TIMEOUT = 45.0
# How long a restart may take: deleting a plugin's pod waits out its grace period, then a new one starts.
RESTART_SECONDS = 180.0


@dataclass(frozen=True)
class Target:
    endpoint: str
    registration: str | None
    driver: str
    node: str
    timeout: float = KUBELET_CALL_TIMEOUT
    cdi_dirs: tuple[Path, ...] = ()  # where the node's runtime reads CDI specs; empty: not checked
    restart_command: str | None = None  # restarts the plugin (DRA-PLUGIN/SURVIVES-RESTART); None: skipped


class CheckFailed(AssertionError):
    pass


class CheckSkipped(Exception):
    pass


class WholeCallRefused(Exception):
    """The plugin answered a prepare with a gRPC error status: it refused every claim of the call."""


@dataclass
class Session:
    """One check's conversation with the plugin."""

    target: Target
    source: ClaimSource
    support: Support
    answers: list[PrepareResult]  # every prepare answer of the whole run (KEP-5322/PERMANENT-NEEDS-ERROR)
    versions: tuple[str, ...] = ("v1",)  # the DRAPlugin versions the plugin serves (declared or advertised)
    static_specs: frozenset[str] = frozenset()  # the CDI spec files there before the run began
    steps: list[StepRecord] = field(default_factory=list)
    held: dict[str, ClaimRef] = field(default_factory=dict)  # prepared and not yet unprepared, by UID

    @property
    def claims(self) -> Sequence[TestClaim]:
        return self.source.claims

    def _step(self, keyword: str, text: str, status: str = "passed", message: str | None = None) -> None:
        self.steps.append(StepRecord(keyword, text, len(self.steps) + 1, status, 0.0, message))  # type: ignore[arg-type]

    def claim(self, index: int = 0) -> TestClaim:
        if len(self.claims) <= index:
            raise CheckSkipped(f"the check needs {index + 1} claims; {len(self.claims)} were given")
        return self.claims[index]

    def named(self, name: str) -> TestClaim:
        return next(c for c in self.claims if c.ref.name == name)

    def extra(self, kind: str) -> TestClaim:
        try:
            claim = self.source.extra(kind)
        except NeedsCluster as reason:
            raise CheckSkipped(str(reason)) from reason
        self._step("Given", f"claim {_name(claim.ref)}, {kind.replace('-', ' ')}, created in the cluster")
        return claim

    def _client(self, version: str) -> KubeletPluginClient:
        return KubeletPluginClient(self.target.endpoint, api_version=version, timeout=self.target.timeout)

    def _call(self, method: str, refs: Sequence[ClaimRef], version: str,
              call: Callable[[KubeletPluginClient], Result], refusal_allowed: bool = False) -> Result:
        """One call, as a step. A call that fails as a whole fails the check with endpoint, method and status,
        unless `refusal_allowed` and the plugin answered with an error status (not a hang or a crash): then
        WholeCallRefused."""
        text = f"{method} over DRAPlugin {version} for {_names(refs)}"
        try:
            with self._client(version) as client:
                answer = call(client)
        except PluginCallError as err:
            if refusal_allowed and err.refusal:
                self._step("When", text, "passed", f"the plugin refused the whole call with {err.code}: {err.details}")
                raise WholeCallRefused(f"{err.code}: {err.details}") from err
            self._step("When", text, "failed", str(err))
            raise CheckFailed(str(err)) from err
        self._step("When", text)
        return answer

    def prepare(self, refs: Sequence[ClaimRef], version: str = "v1",
                refusal_allowed: bool = False) -> dict[str, PrepareResult]:
        results = self._call("NodePrepareResources", refs, version, lambda client: client.prepare(refs),
                             refusal_allowed)
        self.answers.extend(results.values())
        for ref in refs:
            if ref.uid in results and not results[ref.uid].failed:
                self.held[ref.uid] = ref
        return results

    def unprepare(self, refs: Sequence[ClaimRef], version: str = "v1") -> dict[str, str]:
        errors = self._call("NodeUnprepareResources", refs, version, lambda client: client.unprepare(refs))
        for ref in refs:
            if judge.unprepare_failure(errors, ref.uid) is None:
                self.held.pop(ref.uid, None)
        return errors

    def expect(self, condition: bool, text: str, failure: str) -> None:
        if not condition:
            self._step("Then", text, "failed", failure)
            raise CheckFailed(failure)
        self._step("Then", text)

    def prepared(self, claim: TestClaim, version: str = "v1") -> PrepareResult:
        result = self.prepare([claim.ref], version).get(claim.ref.uid)
        self.expect(result is not None, f"the answer has an entry for claim {claim.ref.name}",
                    f"the plugin left claim {_name(claim.ref)} (UID {claim.ref.uid}) out of its answer")
        assert result is not None
        self.expect(judge.prepared(result), f"the plugin prepared claim {claim.ref.name}",
                    f"the plugin refused claim {_name(claim.ref)}: {result.error}")
        return result

    def refuses(self, claim: ClaimRef, why: str) -> None:
        """The plugin does not answer `claim` as prepared: an error in its entry, or the whole call refused."""
        try:
            result = self.prepare([claim], refusal_allowed=True).get(claim.uid)
        except WholeCallRefused:
            return
        self.expect(judge.refused(result), f"claim {claim.name} ({why}) is refused",
                    f"claim {_name(claim)} ({why}) was {_describe(result)}")

    def cleanup(self) -> None:
        """Unprepare what this check prepared; a failure here is recorded but does not change the verdict."""
        if not self.held:
            return
        refs = list(self.held.values())
        try:
            with self._client("v1") as client:
                errors = client.unprepare(refs)
            left = [_name(r) for r in refs if errors.get(r.uid) != ""]
            self._step("*", f"clean up: NodeUnprepareResources for {_names(refs)}",
                       "passed" if not left else "skipped", f"still prepared: {', '.join(left)}" if left else None)
        except PluginCallError as err:
            self._step("*", f"clean up: NodeUnprepareResources for {_names(refs)}", "skipped", str(err))

    def registration(self) -> PluginInfo:
        if self.target.registration is None:
            raise CheckSkipped("no --registration socket was given")
        try:
            info = registration_info(self.target.registration, timeout=self.target.timeout)
        except PluginCallError as err:
            self._step("When", "GetInfo on the registration socket", "failed", str(err))
            raise CheckFailed(str(err)) from err
        self._step("When", "GetInfo on the registration socket")
        return info

    def spec_files(self) -> dict[str, str]:
        if not self.target.cdi_dirs:
            raise CheckSkipped("no --cdi-dir given: pass the directories where the node's container runtime reads "
                               "CDI spec files (usually /etc/cdi and /var/run/cdi)")
        return read_dirs(self.target.cdi_dirs)


def _name(ref: ClaimRef) -> str:
    return f"{ref.namespace}/{ref.name}"


def _names(refs: Sequence[ClaimRef]) -> str:
    return ", ".join(_name(r) for r in refs)


def _device_list(result: PrepareResult) -> str:
    if not result.devices:
        return "no devices"
    return ", ".join(f"{d.pool}/{d.device}" + (f" (CDI {', '.join(d.cdi_device_ids)})" if d.cdi_device_ids else "")
                     for d in result.devices)


def _describe(result: PrepareResult | None) -> str:
    """What the plugin answered for a claim, in words."""
    if result is None:
        return "left out of the answer"
    if result.failed:
        return f'refused with the error "{result.error}"' + (" (marked permanent)" if result.permanent else "")
    return f"prepared with {_device_list(result)}" + (" and marked permanent" if result.permanent else "")


def _unknown(session: Session) -> ClaimRef:
    """A claim no API server has: a fresh UID under an unused name."""
    return ClaimRef(namespace="default", name="draconform-plugin-check-no-such-claim", uid=str(uuid.uuid4()))


def _needs_version(session: Session, version: str) -> None:
    if version not in session.versions:
        raise CheckSkipped(f"the plugin does not serve DRAPlugin {version}: its registration or --supports "
                           f"lists {', '.join(session.versions)}")


def _needs_permanent(session: Session) -> TestClaim:
    if not session.support.permanent_error_claims:
        raise CheckSkipped("the driver declares no claim it refuses permanently (permanentErrors.claims)")
    return session.named(session.support.permanent_error_claims[0])


def _good_claims(session: Session) -> list[TestClaim]:
    """The claims the driver is expected to prepare."""
    return [c for c in session.claims if c.ref.name not in session.support.permanent_error_claims
            and not any(c.ref.name == pair[1] for pair in session.support.incompatible_claims)]


def _good(session: Session, index: int = 0) -> TestClaim:
    """A claim the driver is expected to prepare."""
    good = _good_claims(session)
    if len(good) <= index:
        raise CheckSkipped(f"the check needs {index + 1} claims the driver prepares; {len(good)} were given")
    return good[index]


def _allocation_problems(claim: TestClaim, driver: str, result: PrepareResult, version: str) -> list[str]:
    return judge.allocation_problems(claim.ref.name, driver, claim.results(driver), result, version)


def _keys(answer: dict[str, PrepareResult] | dict[str, str]) -> str:
    return ", ".join(sorted(answer)) or "(none)"


# --- DRA-PLUGIN ---------------------------------------------------------------------------------------------
def answer_every_claim(s: Session) -> None:
    refs = [c.ref for c in _good_claims(s)]
    results = s.prepare(refs)
    missing = [_name(r) for r in missing_entries(refs, results)]
    s.expect(not missing, "the prepare answer has an entry for every claim, keyed by UID",
             f"no entry for {', '.join(missing)}; the answer's entries are keyed {_keys(results)}")
    errors = s.unprepare(refs)
    missing = [_name(r) for r in missing_entries(refs, errors)]
    s.expect(not missing, "the unprepare answer has an entry for every claim, keyed by UID",
             f"no entry for {', '.join(missing)}; the answer's entries are keyed {_keys(errors)}")


def answer_only_asked(s: Session) -> None:
    first, second = _good(s, 0), _good(s, 1)
    s.prepared(first)
    results = s.prepare([second.ref])
    extra = unasked_entries([second.ref], results)
    named = {c.ref.uid: _name(c.ref) for c in s.claims}
    s.expect(not extra, f"the answer for claim {second.ref.name} has no other entry",
             "the answer has entries under UIDs the request did not carry: "
             + ", ".join(f"{uid} (claim {named[uid]})" if uid in named else uid for uid in extra))


def claims_independent(s: Session) -> None:
    good = _good(s)
    ghost = _unknown(s)
    try:
        results = s.prepare([ghost, good.ref], refusal_allowed=True)
    except WholeCallRefused:
        # The helper's way: the call fails as a whole for a claim it cannot read; asked alone, the good claim
        # must then be prepared.
        s.prepared(good)
        return
    s.expect(judge.refused(results.get(ghost.uid)), "the unknown claim is refused in its own entry",
             f"the unknown claim {_name(ghost)} was {_describe(results.get(ghost.uid))}")
    answer = results.get(good.ref.uid)
    s.expect(judge.prepared(answer), f"claim {good.ref.name} is prepared all the same",
             f"claim {_name(good.ref)} was {_describe(answer)}")


def per_claim_errors(s: Session) -> None:
    good = _good(s)
    cases = [(_unknown(s), "the API server has no such claim"),
             (ClaimRef(good.ref.namespace, good.ref.name, str(uuid.uuid4())), "the request's UID is not the claim's")]
    try:
        cases.append((s.extra("unallocated").ref, "the claim is not allocated"))
    except CheckSkipped as reason:
        s._step("*", "a claim that is not allocated", "skipped", str(reason))
    for ref, why in cases:
        s.refuses(ref, why)
    s.prepared(good)


def prepare_idempotent(s: Session) -> None:
    claim = _good(s)
    first = s.prepared(claim)
    second = s.prepared(claim)
    s.expect(judge.answered_alike(first, second), "the repeat answers with the same devices and CDI IDs",
             f"first {signature_text(first)}; then {signature_text(second)}")


def devices_match_allocation(s: Session) -> None:
    claims = list(_good_claims(s))
    try:
        claims.append(s.extra("other-driver-too"))
    except CheckSkipped as reason:
        s._step("*", "a claim with devices of another driver too", "skipped", str(reason))
    for claim in claims:
        result = s.prepared(claim)
        problems = _allocation_problems(claim, s.target.driver, result, "v1")
        s.expect(not problems, f"claim {claim.ref.name} is prepared with the devices of its allocation",
                 f"claim {_name(claim.ref)}: " + "; ".join(problems))
        s.unprepare([claim.ref])


def devices_on_this_node(s: Session) -> None:
    claim = s.extra("other-node")
    devices = ", ".join(f"{r['pool']}/{r['device']}" for r in claim.results(s.target.driver))
    s.refuses(claim.ref, f"allocated {devices}, not on node {s.target.node}")


def exclusive_device_once(s: Session) -> None:
    first = _good(s)
    if any(r.get("shareID") or r.get("adminAccess") for r in first.results(s.target.driver)):
        raise CheckSkipped(f"claim {first.ref.name} holds its devices in shares or with admin access")
    twin = s.extra("same-device")
    s.prepared(first)
    devices = ", ".join(f"{r['pool']}/{r['device']}" for r in first.results(s.target.driver))
    s.refuses(twin.ref, f"allocated {devices}, which claim {first.ref.name} holds and is prepared")


def claim_identity_is_uid(s: Session) -> None:
    _good(s, 1)
    old = s.extra("to-recreate")
    s.prepared(old)
    # Deleted while still prepared: the kubelet has not unprepared it yet when the new claim's pod starts.
    try:
        new = s.source.recreate(old)
    except NeedsCluster as reason:
        raise CheckSkipped(str(reason)) from reason
    s._step("Given", f"claim {_name(old.ref)} deleted and created again: UID {new.ref.uid} in place of "
                     f"{old.ref.uid}, allocated another device")
    result = s.prepared(new)
    problems = _allocation_problems(new, s.target.driver, result, "v1")
    s.expect(not problems, f"the re-created claim {new.ref.name} is prepared with its own allocation",
             f"claim {_name(new.ref)} with UID {new.ref.uid}: " + "; ".join(problems))
    errors = s.unprepare([old.ref])
    s.expect(judge.unprepare_failure(errors, old.ref.uid) is None, "unpreparing the old UID succeeds",
             f"unpreparing UID {old.ref.uid}: {judge.unprepare_failure(errors, old.ref.uid)}")
    again = s.prepared(new)
    s.expect(judge.answered_alike(again, result), "the re-created claim is still prepared as before",
             f"before unpreparing the old UID {signature_text(result)}; after {signature_text(again)}")


def cdi_syntax(s: Session) -> None:
    result = s.prepared(_good(s))
    ids = judge.cdi_ids(result)
    if not ids:
        raise CheckSkipped("the plugin returned no CDI device ID to check")
    bad = judge.unqualified_cdi_ids(ids)
    s.expect(not bad, "every CDI device ID is vendor/class=name", f"not fully qualified: {', '.join(bad)}")


def cdi_per_device(s: Session) -> None:
    result = s.prepared(_good(s))
    if not result.devices:
        raise CheckSkipped("the plugin prepared the claim with no devices, which the API allows")
    missing = judge.devices_without_cdi_id(result)
    s.expect(not missing, "every prepared device has a CDI device ID", f"devices without one: {', '.join(missing)}")


def _returned_ids(s: Session, result: PrepareResult) -> list[str]:
    ids = judge.cdi_ids(result)
    if not ids:
        raise CheckSkipped("the plugin returned no CDI device ID to check")
    return ids


def cdi_spec_files(s: Session) -> None:
    s.spec_files()
    ids = _returned_ids(s, s.prepared(_good(s)))
    missing, problems = judge.undefined_cdi_ids(ids, read_dirs(s.target.cdi_dirs))
    refused = f"; spec files a runtime would refuse: {'; '.join(problems)}" if problems else ""
    absent = [str(d) for d in s.target.cdi_dirs if not d.is_dir()]
    absent_text = f"; no such directory: {', '.join(absent)}" if absent else ""
    s.expect(not missing, f"every CDI device ID is defined in a spec file in {', '.join(map(str, s.target.cdi_dirs))}",
             f"not defined: {', '.join(missing)}{refused}{absent_text}")


def _spec_stamps(s: Session) -> dict[str, int]:
    """Each spec file in the CDI directories, with when it was last written."""
    stamps = {}
    for name in s.spec_files():
        with contextlib.suppress(OSError):  # removed since it was listed
            stamps[name] = os.stat(name).st_mtime_ns
    return stamps


def _written(before: dict[str, int], after: dict[str, int]) -> list[str]:
    """The spec files that appeared or were rewritten between the two listings."""
    return sorted(name for name, stamp in after.items() if before.get(name) != stamp)


def cdi_defined_once(s: Session) -> None:
    before = _spec_stamps(s)
    ids = _returned_ids(s, s.prepared(_good(s)))
    # Files left behind by earlier checks are DRA-PLUGIN/CDI-SPECS-REMOVED's business: the files that count are
    # those there before the run began (the driver's own) and those this prepare wrote.
    counted = set(s.static_specs) | set(_written(before, _spec_stamps(s)))
    twice = []
    for directory in s.target.cdi_dirs:
        twice += judge.defined_twice(ids, {name: text for name, text in read_dirs([directory]).items()
                                           if name in counted})
    s.expect(not twice, "each CDI device ID is defined by one spec file",
             f"defined by two spec files of one directory, which a runtime refuses as a conflict: {'; '.join(twice)}")


def _fresh(s: Session) -> TestClaim:
    """A claim the plugin never prepared, so every spec file of its preparation is new; without a cluster, the
    first claim the driver prepares."""
    try:
        return s.extra("fresh")
    except CheckSkipped:
        return _good(s)


def cdi_specs_removed(s: Session) -> None:
    before = _spec_stamps(s)
    claim = _fresh(s)
    s.prepared(claim)
    written = judge.new_spec_files(before, _spec_stamps(s))
    s._step("Then", f"the prepare wrote {len(written)} new spec files: {', '.join(written) or 'none'}")
    errors = s.unprepare([claim.ref])
    s.expect(judge.unprepare_failure(errors, claim.ref.uid) is None, "the plugin unprepared the claim",
             f"unpreparing claim {_name(claim.ref)}: {judge.unprepare_failure(errors, claim.ref.uid)}")
    left = judge.spec_files_left(written, s.spec_files())
    s.expect(not left, "the spec files the prepare wrote are gone",
             f"still there after claim {_name(claim.ref)} was unprepared: {', '.join(left)}")


def unprepare_after_prepare(s: Session) -> None:
    claim = _good(s)
    first = s.prepared(claim)
    errors = s.unprepare([claim.ref])
    s.expect(judge.unprepare_failure(errors, claim.ref.uid) is None, "the plugin unprepared the claim",
             f"unpreparing claim {_name(claim.ref)}: {judge.unprepare_failure(errors, claim.ref.uid)}")
    again = s.prepared(claim)
    s.expect(judge.answered_alike(first, again), "prepared again, with the same devices",
             f"first {signature_text(first)}; then {signature_text(again)}")


def unprepare_idempotent(s: Session) -> None:
    claim = _good(s)
    s.prepared(claim)
    for attempt in ("first", "second"):
        errors = s.unprepare([claim.ref])
        s.expect(judge.unprepare_failure(errors, claim.ref.uid) is None, f"the {attempt} unprepare succeeds",
                 f"the {attempt} unprepare of claim {_name(claim.ref)}: "
                 f"{judge.unprepare_failure(errors, claim.ref.uid)}")


def unprepare_unknown(s: Session) -> None:
    ghost = _unknown(s)
    errors = s.unprepare([ghost])
    s.expect(judge.unprepare_failure(errors, ghost.uid) is None, "unpreparing a claim never prepared succeeds",
             f"unpreparing claim {_name(ghost)}: {judge.unprepare_failure(errors, ghost.uid)}")


def _serves(version: str) -> Callable[[Session], None]:
    def check(s: Session) -> None:
        if version == "v1" and s.target.registration is not None:
            info = s.registration()
            s.expect(not judge.not_advertised(info.supported_versions, ["v1.DRAPlugin"]),
                     "the registration advertises v1", f"advertised: {', '.join(info.supported_versions) or 'nothing'}")
        _needs_version(s, version)
        claim = _good(s)
        over = s.prepared(claim, version)
        if version != "v1":
            over_v1 = s.prepared(claim, "v1") if "v1" in s.versions else over
            s.expect(judge.answered_alike(over, over_v1), f"DRAPlugin {version} answers as v1 does",
                     f"v1: {signature_text(over_v1)}; {version}: {signature_text(over)}")
    return check


def registration_info_check(s: Session) -> None:
    info = s.registration()
    s.expect(judge.registered_as(info, "DRAPlugin", s.target.driver), "type DRAPlugin and the driver's name",
             f'registered type "{info.type}" and name "{info.name}", expected DRAPlugin and {s.target.driver}')
    path = s.target.endpoint.removeprefix("unix://")
    s.expect(judge.endpoint_problem(info.endpoint, path) is None, "the endpoint is the path of the DRAPlugin socket",
             f'registered endpoint "{info.endpoint}", the socket is {path}')


def registration_versions(s: Session) -> None:
    info = s.registration()
    versions = list(info.supported_versions)
    known = judge.known_versions(versions)
    s.expect(bool(known), "the registration lists a DRAPlugin version current kubelets know",
             f"advertised {', '.join(versions) or 'nothing'}; kubelets know "
             f"{', '.join(v + '.DRAPlugin' for v in API_VERSIONS)}")
    declared = [v.removesuffix(".DRAPlugin") for v in
                judge.not_advertised(versions, [f"{v}.DRAPlugin" for v in s.support.versions or ()])]
    s.expect(not declared, "every version the driver declares is advertised",
             f"--supports declares {', '.join(declared)}, the registration advertises {', '.join(versions)}")
    if "v1.DRAPlugin" in versions and "v1beta1.DRAPlugin" in versions:
        s.expect(judge.prefers(versions, "v1.DRAPlugin", "v1beta1.DRAPlugin"), "v1 comes before v1beta1",
                 f"advertised in this order: {', '.join(versions)}")
    claim = _good(s)
    for version in known:
        s.prepared(claim, version.removesuffix(".DRAPlugin"))


def registration_status(s: Session) -> None:
    s.registration()
    assert s.target.registration is not None
    for registered, error in ((True, ""), (False, "draconform plugin-check: a refusal for the test")):
        text = f"NotifyRegistrationStatus(registered={str(registered).lower()})"
        try:
            notify_registration(s.target.registration, registered, error, timeout=s.target.timeout)
            s._step("When", text)
        except PluginCallError as err:
            if judge.notification_refused_wrongly(registered, err):
                s.expect(False, f"{text} is accepted", str(err))
            s._step("When", text, "passed", f"answered with {err.code}, as upstream's helper does: {err.details}")
    s.registration()


def survives_restart(s: Session) -> None:
    command = s.target.restart_command
    if command is None:
        raise CheckSkipped("no --restart-command given: pass a command that restarts the plugin (for example "
                           "one that deletes the driver's pod on this node) to check that it keeps what it prepared")
    claim = _fresh(s)
    # Whether the plugin removes its spec files at all is DRA-PLUGIN/CDI-SPECS-REMOVED's question; here they
    # are judged only if it does so without a restart.
    judge_files = bool(s.target.cdi_dirs) and _removes_its_specs(s, claim)
    before = _spec_stamps(s) if judge_files else {}
    first = s.prepared(claim)
    written = judge.new_spec_files(before, _spec_stamps(s)) if judge_files else []
    _restart(s, command)
    # As after a plugin restart on a node: the kubelet asks to unprepare what it had prepared, then, for a new
    # pod, to prepare the claim again.
    errors = s.unprepare([claim.ref])
    s.expect(judge.unprepare_failure(errors, claim.ref.uid) is None, "after the restart the claim is unprepared",
             f"unpreparing claim {_name(claim.ref)}: {judge.unprepare_failure(errors, claim.ref.uid)}")
    if judge_files:
        left = judge.spec_files_left(written, s.spec_files())
        s.expect(not left, "the spec files written before the restart are gone",
                 f"still there after claim {_name(claim.ref)} was unprepared: {', '.join(left)}")
    again = s.prepared(claim)
    s.expect(judge.answered_alike(again, first), "after the restart the claim is prepared as before",
             f"before the restart {signature_text(first)}; after it {signature_text(again)}")


def _removes_its_specs(s: Session, claim: TestClaim) -> bool:
    before = _spec_stamps(s)
    s.prepared(claim)
    written = judge.new_spec_files(before, _spec_stamps(s))
    s.unprepare([claim.ref])
    removes = not judge.spec_files_left(written, s.spec_files())
    if not removes:
        s._step("*", "without a restart the plugin leaves its spec files behind too (DRA-PLUGIN/CDI-SPECS-REMOVED); "
                     "they are not judged here", "skipped")
    return removes


def _socket_identity(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_ino, stat.st_mtime_ns


def _restart(s: Session, command: str) -> None:
    """Run the restart command, then wait until a new socket answers, RESTART_SECONDS in all at most."""
    path = s.target.endpoint.removeprefix("unix://")
    old = _socket_identity(path)
    deadline = time.monotonic() + RESTART_SECONDS
    try:
        done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=RESTART_SECONDS,
                              check=False)
    except subprocess.TimeoutExpired:
        s.expect(False, f"the restart command ran: {command}",
                 f"the restart command did not finish within {RESTART_SECONDS:g} seconds")
    s.expect(done.returncode == 0, f"the restart command ran: {command}",
             f"{shlex.split(command)[0] if command.strip() else command} exited with {done.returncode}: "
             f"{(done.stderr or done.stdout).strip()}")
    while time.monotonic() < deadline:
        current = _socket_identity(path)
        if current is not None and current != old:
            try:
                with s._client("v1") as client:
                    client.unprepare([])
                s._step("Then", f"the plugin serves again on {path}")
                return
            except PluginCallError:
                pass
        time.sleep(0.1)
    s.expect(False, f"the plugin serves again on {path}",
             f"no new socket answered at {path} within {RESTART_SECONDS:g} seconds of the restart command")


def concurrent_calls(s: Session) -> None:
    claims = _good_claims(s)[:4]
    if len(claims) < 2:
        raise CheckSkipped(f"the check needs 2 claims the driver prepares; {len(claims)} were given")
    # What each claim gets when asked alone is what it must get among others.
    alone = {}
    for claim in claims:
        alone[claim.ref.uid] = s.prepared(claim)
        s.unprepare([claim.ref])
    answers = prepare_at_once(s.target.endpoint, [[claim.ref] for claim in claims], timeout=s.target.timeout)
    s._step("When", f"NodePrepareResources for {_names([c.ref for c in claims])}, each in its own call, all at once")
    for claim, answer in zip(claims, answers, strict=True):
        if isinstance(answer, PluginCallError):
            s.expect(False, f"the call for claim {claim.ref.name} is answered", str(answer))
        assert isinstance(answer, dict)
        s.answers.extend(answer.values())
        if judge.prepared(answer.get(claim.ref.uid)):
            s.held[claim.ref.uid] = claim.ref
        result = answer.get(claim.ref.uid)
        verdict = judge.concurrent_answer(result, alone[claim.ref.uid])
        s.expect(verdict != "refused", f"claim {claim.ref.name} is prepared",
                 f"claim {_name(claim.ref)} was {_describe(result)} in a call beside others")
        assert result is not None
        s.expect(verdict is None, f"claim {claim.ref.name} is prepared as when asked alone",
                 f"claim {_name(claim.ref)}: alone {signature_text(alone[claim.ref.uid])}; beside others "
                 f"{signature_text(result)}")


# --- KEP-5322 -----------------------------------------------------------------------------------------------
def wire_field(s: Session) -> None:
    claim = _needs_permanent(s)
    for version in s.versions:
        result = s.prepare([claim.ref], version).get(claim.ref.uid)
        s.expect(judge.refused_permanently(result),
                 f"over DRAPlugin {version} claim {claim.ref.name} is refused with permanent_error",
                 f"over DRAPlugin {version} claim {_name(claim.ref)} was {_describe(result)}")


def permanent_needs_error(s: Session) -> None:
    _needs_permanent(s)
    wire_field(s)
    s.prepared(_good(s))
    bad = judge.permanent_without_error(s.answers)
    s.expect(not bad, "no answer of the run marks a success permanent",
             f"{len(bad)} successful answers of the run were marked permanent, e.g. one "
             f"{_describe(bad[0]) if bad else ''}")


def expects_repeat(s: Session) -> None:
    claim = _needs_permanent(s)
    for attempt in ("first", "second"):
        result = s.prepare([claim.ref]).get(claim.ref.uid)
        s.expect(judge.refused_permanently(result),
                 f"the {attempt} request is refused permanently", f"claim {_name(claim.ref)} was {_describe(result)}")
    s.prepared(_good(s))


def unprepare_after_permanent(s: Session) -> None:
    claim = _needs_permanent(s)
    s.prepare([claim.ref])
    errors = s.unprepare([claim.ref])
    s.expect(judge.unprepare_failure(errors, claim.ref.uid) is None, "unpreparing the refused claim succeeds",
             f"unpreparing claim {_name(claim.ref)}: {judge.unprepare_failure(errors, claim.ref.uid)}")


# --- KEP-5963 -----------------------------------------------------------------------------------------------
def validates_at_prepare(s: Session) -> None:
    if not s.support.incompatible_claims:
        raise CheckSkipped("the driver declares no incompatible claims (compatibilityGroups.incompatibleClaims)")
    for first_name, second_name in s.support.incompatible_claims:
        first, second = s.named(first_name), s.named(second_name)
        s.prepared(first)
        result = s.prepare([second.ref]).get(second.ref.uid)
        s.expect(result is not None and result.failed, f"claim {second_name} is refused while {first_name} is prepared",
                 f"claim {_name(second.ref)} was {_describe(result)} while claim {first_name} was prepared")
        s.unprepare([first.ref])


@dataclass(frozen=True)
class Check:
    rule: str
    title: str
    run: Callable[[Session], None]


CHECKS: tuple[Check, ...] = (
    Check("DRA-PLUGIN/ANSWER-EVERY-CLAIM", "Every claim of a call gets an entry, keyed by UID", answer_every_claim),
    Check("DRA-PLUGIN/ANSWER-ONLY-ASKED", "An answer has entries only for the claims asked about", answer_only_asked),
    Check("DRA-PLUGIN/CLAIMS-INDEPENDENT", "An unknown claim does not keep the plugin from preparing another",
          claims_independent),
    Check("DRA-PLUGIN/PER-CLAIM-ERRORS", "A claim missing, replaced or not allocated is never prepared",
          per_claim_errors),
    Check("DRA-PLUGIN/PREPARE-IDEMPOTENT", "Preparing twice answers the same", prepare_idempotent),
    Check("DRA-PLUGIN/PREPARED-DEVICES-MATCH-ALLOCATION", "Each claim is prepared with its allocated devices",
          devices_match_allocation),
    Check("DRA-PLUGIN/DEVICES-ON-THIS-NODE", "A device of another node is never prepared", devices_on_this_node),
    Check("DRA-PLUGIN/EXCLUSIVE-DEVICE-ONCE", "A device held whole is not prepared for a second claim",
          exclusive_device_once),
    Check("DRA-PLUGIN/CLAIM-IDENTITY-IS-UID", "A claim created again under the same name is a new claim",
          claim_identity_is_uid),
    Check("DRA-PLUGIN/CDI-ID-SYNTAX", "CDI device IDs are fully qualified", cdi_syntax),
    Check("DRA-PLUGIN/CDI-ID-PER-DEVICE", "Every prepared device has a CDI device ID", cdi_per_device),
    Check("DRA-PLUGIN/CDI-SPEC-FILES", "The node's CDI spec files define the returned IDs", cdi_spec_files),
    Check("DRA-PLUGIN/CDI-ID-DEFINED-ONCE", "No CDI device ID is defined by two spec files", cdi_defined_once),
    Check("DRA-PLUGIN/CDI-SPECS-REMOVED", "Unprepare removes the spec files prepare wrote", cdi_specs_removed),
    Check("DRA-PLUGIN/UNPREPARE-AFTER-PREPARE", "Unprepare undoes prepare", unprepare_after_prepare),
    Check("DRA-PLUGIN/UNPREPARE-IDEMPOTENT", "Unpreparing twice succeeds twice", unprepare_idempotent),
    Check("DRA-PLUGIN/UNPREPARE-UNKNOWN", "Unpreparing an unknown claim succeeds", unprepare_unknown),
    Check("DRA-PLUGIN/SERVES-V1", "DRAPlugin v1 is served", _serves("v1")),
    Check("DRA-PLUGIN/SERVES-V1BETA1", "DRAPlugin v1beta1 is served like v1", _serves("v1beta1")),
    Check("DRA-PLUGIN/REGISTRATION-INFO", "GetInfo names the driver and its socket", registration_info_check),
    Check("DRA-PLUGIN/REGISTRATION-VERSIONS", "The registration advertises the versions served",
          registration_versions),
    Check("DRA-PLUGIN/REGISTRATION-STATUS", "NotifyRegistrationStatus is accepted", registration_status),
    Check("DRA-PLUGIN/SURVIVES-RESTART", "A restart between prepare and unprepare loses nothing", survives_restart),
    Check("DRA-PLUGIN/CONCURRENT-CALLS", "Calls at the same time are answered each as if alone", concurrent_calls),
    Check("KEP-5322/WIRE-FIELD", "A permanent refusal carries permanent_error", wire_field),
    Check("KEP-5322/PERMANENT-NEEDS-ERROR", "Only failures are marked permanent", permanent_needs_error),
    Check("KEP-5322/DRIVER-EXPECTS-REPEAT", "A repeated request is refused permanently again", expects_repeat),
    Check("KEP-5322/DRIVER-UNPREPARE-AFTER-PERMANENT", "Unprepare after a permanent refusal succeeds",
          unprepare_after_permanent),
    Check("KEP-5963/DRIVER-VALIDATES-AT-PREPARE", "An incompatible claim is refused at prepare",
          validates_at_prepare),
)


@dataclass(frozen=True)
class CheckResult:
    status: Outcome
    message: str | None
    skip_reason: str | None
    steps: tuple[StepRecord, ...]
    duration_s: float


def run_check(check: Check, target: Target, source: ClaimSource, support: Support,
              answers: list[PrepareResult], versions: tuple[str, ...] = ("v1",),
              static_specs: frozenset[str] = frozenset()) -> CheckResult:
    session = Session(target, source, support, answers, versions, static_specs)
    started = time.perf_counter()
    status: Outcome = "passed"
    message = skip = None
    try:
        check.run(session)
    except CheckSkipped as reason:
        status, skip = "skipped", str(reason)
    except CheckFailed as failure:
        status, message = "failed", str(failure)
    except Exception as err:  # a bug in draconform or an unusable environment, not the plugin's verdict
        status, message = "error", f"{type(err).__name__}: {err}"
    finally:
        session.cleanup()
    return CheckResult(status, message, skip, tuple(session.steps), round(time.perf_counter() - started, 3))
