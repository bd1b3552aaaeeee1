"""The checks `draconform plugin-check` runs against a live kubelet plugin: one per rule it can judge from the
outside, each acting as the kubelet over the plugin's sockets. A check records every call and judgement as a
step, cleans up what it prepared, and ends passed, failed (the plugin broke a rule, or a call failed as a
whole: hung past the deadline, crashed, answered with a gRPC error) or skipped (the driver does not declare
what the check needs)."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from draconform.kube.cdi import parse_specs, read_dirs
from draconform.kubeletplugin.client import KubeletPluginClient, PluginCallError, notify_registration, registration_info
from draconform.kubeletplugin.types import CDI_DEVICE_ID, ClaimRef, PluginInfo, PrepareResult
from draconform.plugincheck.claims import Support, TestClaim
from draconform.reporting.records import Outcome, StepRecord

Result = TypeVar("Result")


@dataclass(frozen=True)
class Target:
    endpoint: str
    registration: str | None
    driver: str
    node: str
    timeout: float
    cdi_dirs: tuple[Path, ...] = ()  # where the node's runtime reads CDI specs; empty: not checked


class CheckFailed(AssertionError):
    pass


class CheckSkipped(Exception):
    pass


@dataclass
class Session:
    """One check's conversation with the plugin."""

    target: Target
    claims: Sequence[TestClaim]
    support: Support
    answers: list[PrepareResult]  # every prepare answer of the whole run (KEP-5322/PERMANENT-NEEDS-ERROR)
    steps: list[StepRecord] = field(default_factory=list)
    held: dict[str, ClaimRef] = field(default_factory=dict)  # prepared and not yet unprepared, by UID

    def _step(self, keyword: str, text: str, status: str = "passed", message: str | None = None) -> None:
        self.steps.append(StepRecord(keyword, text, len(self.steps) + 1, status, 0.0, message))  # type: ignore[arg-type]

    def claim(self, index: int = 0) -> TestClaim:
        if len(self.claims) <= index:
            raise CheckSkipped(f"the check needs {index + 1} claims; {len(self.claims)} were given")
        return self.claims[index]

    def named(self, name: str) -> TestClaim:
        return next(c for c in self.claims if c.ref.name == name)

    def _client(self, version: str) -> KubeletPluginClient:
        return KubeletPluginClient(self.target.endpoint, api_version=version, timeout=self.target.timeout)

    def _call(self, method: str, refs: Sequence[ClaimRef], version: str,
              call: Callable[[KubeletPluginClient], Result]) -> Result:
        """One call, as a step; a call that fails as a whole fails the check with endpoint, method and status."""
        text = f"{method} over DRAPlugin {version} for {_names(refs)}"
        try:
            with self._client(version) as client:
                answer = call(client)
        except PluginCallError as err:
            self._step("When", text, "failed", str(err))
            raise CheckFailed(str(err)) from err
        self._step("When", text)
        return answer

    def prepare(self, refs: Sequence[ClaimRef], version: str = "v1") -> dict[str, PrepareResult]:
        results = self._call("NodePrepareResources", refs, version, lambda client: client.prepare(refs))
        self.answers.extend(results.values())
        for ref in refs:
            if ref.uid in results and not results[ref.uid].failed:
                self.held[ref.uid] = ref
        return results

    def unprepare(self, refs: Sequence[ClaimRef], version: str = "v1") -> dict[str, str]:
        errors = self._call("NodeUnprepareResources", refs, version, lambda client: client.unprepare(refs))
        for ref in refs:
            if errors.get(ref.uid) == "":
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
                    f"the plugin left claim {claim.ref.name} (UID {claim.ref.uid}) out of its answer")
        assert result is not None
        self.expect(not result.failed, f"the plugin prepared claim {claim.ref.name}",
                    f"the plugin refused claim {claim.ref.name}: {result.error}")
        return result

    def cleanup(self) -> None:
        """Unprepare what this check prepared; a failure here is recorded but does not change the verdict."""
        if not self.held:
            return
        refs = list(self.held.values())
        try:
            with self._client("v1") as client:
                errors = client.unprepare(refs)
            left = [r.name for r in refs if errors.get(r.uid) != ""]
            self._step("*", f"clean up: NodeUnprepareResources for {_names(refs)}",
                       "passed" if not left else "skipped", f"still prepared: {left}" if left else None)
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


def _names(refs: Sequence[ClaimRef]) -> str:
    return ", ".join(f"{r.namespace}/{r.name}" for r in refs)


def _unknown(session: Session) -> ClaimRef:
    """A claim no API server has: a fresh UID under an unused name."""
    return ClaimRef(namespace="default", name="draconform-plugin-check-no-such-claim", uid=str(uuid.uuid4()))


def _signature(result: PrepareResult) -> list[tuple[str, str, tuple[str, ...]]]:
    return sorted((d.pool, d.device, tuple(sorted(d.cdi_device_ids))) for d in result.devices)


def _needs_version(session: Session, version: str) -> None:
    if version not in session.support.versions:
        raise CheckSkipped(f"the driver does not declare DRAPlugin {version} among its versions")


def _needs_permanent(session: Session) -> TestClaim:
    if not session.support.permanent_error_claims:
        raise CheckSkipped("the driver declares no claim it refuses permanently (permanentErrors.claims)")
    return session.named(session.support.permanent_error_claims[0])


def _good(session: Session) -> TestClaim:
    """A claim the driver is expected to prepare."""
    for claim in session.claims:
        if claim.ref.name not in session.support.permanent_error_claims and not any(
                claim.ref.name == pair[1] for pair in session.support.incompatible_claims):
            return claim
    raise CheckSkipped("every claim given is one the driver declares it refuses")


# --- DRA-PLUGIN ---------------------------------------------------------------------------------------------
def answer_every_claim(s: Session) -> None:
    refs = [c.ref for c in s.claims if c.ref.name not in s.support.permanent_error_claims]
    results = s.prepare(refs)
    missing = [r.name for r in refs if r.uid not in results]
    s.expect(not missing, "the prepare answer has an entry for every claim, keyed by UID",
             f"no entry for {missing}; entries are keyed {sorted(results)}")
    errors = s.unprepare(refs)
    missing = [r.name for r in refs if r.uid not in errors]
    s.expect(not missing, "the unprepare answer has an entry for every claim, keyed by UID",
             f"no entry for {missing}; entries are keyed {sorted(errors)}")


def claims_independent(s: Session) -> None:
    good = _good(s)
    results = s.prepare([_unknown(s), good.ref])
    unknown = next(iter(r for uid, r in results.items() if uid != good.ref.uid), None)
    s.expect(unknown is not None and unknown.failed, "the unknown claim is refused in its own entry",
             f"the unknown claim got {unknown}")
    answer = results.get(good.ref.uid)
    s.expect(answer is not None and not answer.failed, f"claim {good.ref.name} is prepared all the same",
             f"claim {good.ref.name} got {answer}")


def per_claim_errors(s: Session) -> None:
    ghost = _unknown(s)
    results = s.prepare([ghost])
    s.expect(ghost.uid in results and results[ghost.uid].failed, "a claim the API server lacks is refused in its entry",
             f"the answer for the unknown claim was {results.get(ghost.uid)}")
    s.prepared(_good(s))


def prepare_idempotent(s: Session) -> None:
    claim = _good(s)
    first = s.prepared(claim)
    second = s.prepared(claim)
    s.expect(_signature(first) == _signature(second), "the repeat answers with the same devices and CDI IDs",
             f"first {_signature(first)}, then {_signature(second)}")


def devices_match_allocation(s: Session) -> None:
    for claim in s.claims:
        if claim.ref.name in s.support.permanent_error_claims:
            continue
        result = s.prepared(claim)
        expected = Counter(f"{r.get('pool')}/{r.get('device')}" for r in claim.results(s.target.driver))
        got = Counter(f"{d.pool}/{d.device}" for d in result.devices)
        s.expect(got == expected, f"claim {claim.ref.name} is prepared with the devices of its allocation",
                 f"prepared {sorted(got.elements())}, allocated {sorted(expected.elements())}")
        s.unprepare([claim.ref])


def cdi_syntax(s: Session) -> None:
    result = s.prepared(_good(s))
    ids = [i for d in result.devices for i in d.cdi_device_ids]
    if not ids:
        raise CheckSkipped("the plugin returned no CDI device ID to check")
    bad = [i for i in ids if not CDI_DEVICE_ID.fullmatch(i)]
    s.expect(not bad, "every CDI device ID is vendor/class=name", f"not fully qualified: {bad}")


def cdi_per_device(s: Session) -> None:
    result = s.prepared(_good(s))
    missing = [f"{d.pool}/{d.device}" for d in result.devices if not d.cdi_device_ids]
    s.expect(bool(result.devices) and not missing, "every prepared device has a CDI device ID",
             f"devices without one: {missing}" if missing else "no device was prepared")


def cdi_spec_files(s: Session) -> None:
    if not s.target.cdi_dirs:
        raise CheckSkipped("no --cdi-dir given: pass the directories where the node's container runtime reads "
                           "CDI spec files (usually /etc/cdi and /var/run/cdi)")
    result = s.prepared(_good(s))
    ids = [i for d in result.devices for i in d.cdi_device_ids]
    if not ids:
        raise CheckSkipped("the plugin returned no CDI device ID to check")
    specs = parse_specs(read_dirs(s.target.cdi_dirs))
    missing = specs.undefined(ids)
    refused = f"; spec files a runtime would refuse: {'; '.join(specs.problems)}" if specs.problems else ""
    absent = [str(d) for d in s.target.cdi_dirs if not d.is_dir()]
    absent_text = f"; no such directory: {', '.join(absent)}" if absent else ""
    s.expect(not missing, f"every CDI device ID is defined in a spec file in {', '.join(map(str, s.target.cdi_dirs))}",
             f"not defined: {missing}{refused}{absent_text}")


def unprepare_after_prepare(s: Session) -> None:
    claim = _good(s)
    first = s.prepared(claim)
    errors = s.unprepare([claim.ref])
    s.expect(errors.get(claim.ref.uid) == "", "the plugin unprepared the claim", f"answer: {errors}")
    again = s.prepared(claim)
    s.expect(_signature(first) == _signature(again), "prepared again, with the same devices",
             f"first {_signature(first)}, then {_signature(again)}")


def unprepare_idempotent(s: Session) -> None:
    claim = _good(s)
    s.prepared(claim)
    for attempt in ("first", "second"):
        errors = s.unprepare([claim.ref])
        s.expect(errors.get(claim.ref.uid) == "", f"the {attempt} unprepare succeeds", f"answer: {errors}")


def unprepare_unknown(s: Session) -> None:
    ghost = _unknown(s)
    errors = s.unprepare([ghost])
    s.expect(errors.get(ghost.uid) == "", "unpreparing a claim never prepared succeeds", f"answer: {errors}")


def _serves(version: str) -> Callable[[Session], None]:
    def check(s: Session) -> None:
        _needs_version(s, version)
        claim = _good(s)
        over_v1 = s.prepared(claim, "v1")
        over = s.prepared(claim, version)
        s.expect(_signature(over) == _signature(over_v1), f"DRAPlugin {version} answers as v1 does",
                 f"v1 {_signature(over_v1)}, {version} {_signature(over)}")
        if s.target.registration is not None:
            info = s.registration()
            s.expect(f"{version}.DRAPlugin" in info.supported_versions, f"the registration advertises {version}",
                     f"advertised: {list(info.supported_versions)}")
    return check


def registration_info_check(s: Session) -> None:
    info = s.registration()
    s.expect((info.type, info.name) == ("DRAPlugin", s.target.driver), "type DRAPlugin and the driver's name",
             f"type {info.type!r}, name {info.name!r}")
    path = s.target.endpoint.removeprefix("unix://")
    s.expect(info.endpoint == path, "the endpoint is the path of the DRAPlugin socket",
             f"registered {info.endpoint!r}, the socket is {path!r}")


def registration_versions(s: Session) -> None:
    info = s.registration()
    versions = list(info.supported_versions)
    missing = [v for v in s.support.versions if f"{v}.DRAPlugin" not in versions]
    s.expect(not missing, "every version the driver declares is advertised", f"missing {missing} in {versions}")
    if "v1.DRAPlugin" in versions and "v1beta1.DRAPlugin" in versions:
        s.expect(versions.index("v1.DRAPlugin") < versions.index("v1beta1.DRAPlugin"), "v1 comes before v1beta1",
                 f"advertised {versions}")


def registration_status(s: Session) -> None:
    s.registration()
    assert s.target.registration is not None
    for registered, error in ((True, ""), (False, "draconform plugin-check: a refusal for the test")):
        try:
            notify_registration(s.target.registration, registered, error, timeout=s.target.timeout)
        except PluginCallError as err:
            s.expect(False, f"NotifyRegistrationStatus(registered={registered}) is accepted", str(err))
        s.expect(True, f"NotifyRegistrationStatus(registered={registered}) is accepted", "")
    s.registration()


# --- KEP-5322 -----------------------------------------------------------------------------------------------
def wire_field(s: Session) -> None:
    claim = _needs_permanent(s)
    for version in s.support.versions:
        result = s.prepare([claim.ref], version).get(claim.ref.uid)
        s.expect(result is not None and result.failed and result.permanent,
                 f"over DRAPlugin {version} claim {claim.ref.name} is refused with permanent_error",
                 f"the answer was {result}")


def permanent_needs_error(s: Session) -> None:
    _needs_permanent(s)
    wire_field(s)
    s.prepared(_good(s))
    bad = [r for r in s.answers if r.permanent and not r.failed]
    s.expect(not bad, "no answer of the run marks a success permanent", f"{len(bad)} successful answers did")


def expects_repeat(s: Session) -> None:
    claim = _needs_permanent(s)
    for attempt in ("first", "second"):
        result = s.prepare([claim.ref]).get(claim.ref.uid)
        s.expect(result is not None and result.failed and result.permanent,
                 f"the {attempt} request is refused permanently", f"the answer was {result}")
    s.prepared(_good(s))


def unprepare_after_permanent(s: Session) -> None:
    claim = _needs_permanent(s)
    s.prepare([claim.ref])
    errors = s.unprepare([claim.ref])
    s.expect(errors.get(claim.ref.uid) == "", "unpreparing the refused claim succeeds", f"answer: {errors}")


# --- KEP-5963 -----------------------------------------------------------------------------------------------
def validates_at_prepare(s: Session) -> None:
    if not s.support.incompatible_claims:
        raise CheckSkipped("the driver declares no incompatible claims (compatibilityGroups.incompatibleClaims)")
    for first_name, second_name in s.support.incompatible_claims:
        first, second = s.named(first_name), s.named(second_name)
        s.prepared(first)
        result = s.prepare([second.ref]).get(second.ref.uid)
        s.expect(result is not None and result.failed, f"claim {second_name} is refused while {first_name} is prepared",
                 f"the answer was {result}")
        s.unprepare([first.ref])


@dataclass(frozen=True)
class Check:
    rule: str
    title: str
    run: Callable[[Session], None]


CHECKS: tuple[Check, ...] = (
    Check("DRA-PLUGIN/ANSWER-EVERY-CLAIM", "Every claim of a call gets an entry, keyed by UID", answer_every_claim),
    Check("DRA-PLUGIN/CLAIMS-INDEPENDENT", "An unknown claim does not keep the plugin from preparing another",
          claims_independent),
    Check("DRA-PLUGIN/PER-CLAIM-ERRORS", "A claim the API server lacks is refused in its entry", per_claim_errors),
    Check("DRA-PLUGIN/PREPARE-IDEMPOTENT", "Preparing twice answers the same", prepare_idempotent),
    Check("DRA-PLUGIN/PREPARED-DEVICES-MATCH-ALLOCATION", "Each claim is prepared with its allocated devices",
          devices_match_allocation),
    Check("DRA-PLUGIN/CDI-ID-SYNTAX", "CDI device IDs are fully qualified", cdi_syntax),
    Check("DRA-PLUGIN/CDI-ID-PER-DEVICE", "Every prepared device has a CDI device ID", cdi_per_device),
    Check("DRA-PLUGIN/CDI-SPEC-FILES", "The node's CDI spec files define the returned IDs", cdi_spec_files),
    Check("DRA-PLUGIN/UNPREPARE-AFTER-PREPARE", "Unprepare undoes prepare", unprepare_after_prepare),
    Check("DRA-PLUGIN/UNPREPARE-IDEMPOTENT", "Unpreparing twice succeeds twice", unprepare_idempotent),
    Check("DRA-PLUGIN/UNPREPARE-UNKNOWN", "Unpreparing an unknown claim succeeds", unprepare_unknown),
    Check("DRA-PLUGIN/SERVES-V1", "DRAPlugin v1 is served", _serves("v1")),
    Check("DRA-PLUGIN/SERVES-V1BETA1", "DRAPlugin v1beta1 is served like v1", _serves("v1beta1")),
    Check("DRA-PLUGIN/REGISTRATION-INFO", "GetInfo names the driver and its socket", registration_info_check),
    Check("DRA-PLUGIN/REGISTRATION-VERSIONS", "The registration advertises the versions served",
          registration_versions),
    Check("DRA-PLUGIN/REGISTRATION-STATUS", "NotifyRegistrationStatus is accepted", registration_status),
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


def run_check(check: Check, target: Target, claims: Sequence[TestClaim], support: Support,
              answers: list[PrepareResult]) -> CheckResult:
    session = Session(target, claims, support, answers)
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
