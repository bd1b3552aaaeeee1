"""Judgements of a kubelet plugin's answers, shared by `draconform plugin-check`'s checks and the Then steps of
the kubelet-plugin features, so each DRA-PLUGIN rule both ask is judged by this one piece of code. Each takes
what was asked and what came back and returns what is wrong (empty, False or None when the rule holds); the
caller words the failure for its report. Neither caller decides a rule's question on its own: a fix made here
reaches both."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Literal

from draconform.kube.cdi import parse_specs
from draconform.kubeletplugin.client import PluginCallError
from draconform.kubeletplugin.types import API_VERSIONS, CDI_DEVICE_ID, ClaimRef, PluginInfo, PrepareResult

# A prepared claim's devices, independent of the order the plugin listed them in: (pool, device, requests,
# CDI device IDs). share_id is left out: only v1 carries it (PREPARED-DEVICES-MATCH-ALLOCATION judges it).
Signature = list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]
NOT_ANSWERED = "left out of the answer"


# --- one call's entries -----------------------------------------------------------------------------------------
def missing_entries(asked: Sequence[ClaimRef], answered: Collection[str]) -> list[ClaimRef]:
    """DRA-PLUGIN/ANSWER-EVERY-CLAIM: the claims asked about that have no entry under their UID."""
    return [ref for ref in asked if ref.uid not in answered]


def unasked_entries(asked: Sequence[ClaimRef], answered: Collection[str]) -> list[str]:
    """DRA-PLUGIN/ANSWER-ONLY-ASKED: the UIDs the answer has entries under that the request did not carry."""
    return sorted(set(answered) - {ref.uid for ref in asked})


def refused(result: PrepareResult | None) -> bool:
    """Whether a claim was not answered as prepared, but refused in its entry (DRA-PLUGIN/PER-CLAIM-ERRORS,
    DEVICES-ON-THIS-NODE, EXCLUSIVE-DEVICE-ONCE, CLAIMS-INDEPENDENT). A call refused as a whole is the caller's
    to accept (docs/decisions.md D-3063-8); a claim left out of the answer is not refused."""
    return result is not None and result.failed


def prepared(result: PrepareResult | None) -> bool:
    return result is not None and not result.failed


def unprepare_failure(errors: Mapping[str, str], uid: str) -> str | None:
    """What went wrong unpreparing claim `uid` (DRA-PLUGIN/UNPREPARE-*, SURVIVES-RESTART, CLAIM-IDENTITY-IS-UID):
    None when its entry says success, else its error or that it has no entry."""
    error = errors.get(uid)
    if error == "":
        return None
    return error if error is not None else NOT_ANSWERED


# --- the devices of an answer ---------------------------------------------------------------------------------------
def signature(result: PrepareResult) -> Signature:
    return sorted((d.pool, d.device, tuple(sorted(d.requests)), tuple(sorted(d.cdi_device_ids)))
                  for d in result.devices)


def signature_text(result: PrepareResult) -> str:
    parts = [f"{pool}/{device} for requests {', '.join(requests) or '(all)'} with CDI {', '.join(ids) or '(none)'}"
             for pool, device, requests, ids in signature(result)]
    return "; ".join(parts) or "no devices"


def answered_alike(first: PrepareResult, second: PrepareResult) -> bool:
    """The same devices, requests and CDI device IDs (DRA-PLUGIN/PREPARE-IDEMPOTENT, UNPREPARE-AFTER-PREPARE,
    SERVES-V1BETA1, SURVIVES-RESTART, CONCURRENT-CALLS, CLAIM-IDENTITY-IS-UID)."""
    return signature(first) == signature(second)


def allocation_problems(claim: str, driver: str, allocated: Sequence[Mapping[str, Any]], result: PrepareResult,
                        version: str, pool_name: Callable[[str], str] = str) -> list[str]:
    """DRA-PLUGIN/PREPARED-DEVICES-MATCH-ALLOCATION: how a successful answer for `claim` differs from the
    allocation results of `driver` (`allocated`), in words; empty when it matches or lists no device at all
    (D-3063-8). `pool_name` gives an answered pool as the allocation names it (a SUT may rename a scenario's
    pools)."""
    if not result.devices:
        return []
    expected = Counter(f"{r.get('pool')}/{r.get('device')}" for r in allocated)
    got = Counter(f"{pool_name(d.pool)}/{d.device}" for d in result.devices)
    problems = []
    if got - expected:
        problems.append(f"prepared {', '.join(sorted((got - expected).elements()))}, which the allocation of claim "
                        f"{claim} does not give driver {driver}")
    if expected - got:
        problems.append(f"left out {', '.join(sorted((expected - got).elements()))} of the allocation")
    if version == "v1":  # only v1 carries share_id
        problems += _share_id_problems(allocated, result, sorted(set(expected) & set(got)), pool_name)
    return problems + _request_name_problems(allocated, result, pool_name)


def _share_id_problems(allocated: Sequence[Mapping[str, Any]], result: PrepareResult, devices: list[str],
                       pool_name: Callable[[str], str]) -> list[str]:
    """Devices ("pool/device") answered with other share IDs than they were allocated with."""
    problems = []
    for device in devices:
        allocated_shares = sorted(str(r.get("shareID") or "none") for r in allocated
                                  if f"{r.get('pool')}/{r.get('device')}" == device)
        answered = sorted(d.share_id or "none" for d in result.devices if f"{pool_name(d.pool)}/{d.device}" == device)
        if allocated_shares != answered:
            problems.append(f"device {device} was answered with share ID {', '.join(answered)}, allocated with "
                            f"share ID {', '.join(allocated_shares)}")
    return problems


def _request_name_problems(allocated: Sequence[Mapping[str, Any]], result: PrepareResult,
                           pool_name: Callable[[str], str]) -> list[str]:
    """Answered devices naming a request they were not allocated for; a device naming none serves them all."""
    # A firstAvailable device may name its subrequest or the parent request (upstream's helper strips it).
    requests: dict[tuple[str, str], set[str]] = {}
    for r in allocated:
        requests.setdefault((str(r.get("pool")), str(r.get("device"))), set()).add(str(r.get("request", "")))
    problems = []
    for d in result.devices:
        allocated_for = requests.get((pool_name(d.pool), d.device), set())
        allowed = allocated_for | {name.split("/")[0] for name in allocated_for}
        wrong = [name for name in d.requests if name not in allowed]
        if wrong and allocated_for:
            problems.append(f"device {d.pool}/{d.device} names request {', '.join(wrong)}, but was allocated for "
                            f"request {', '.join(sorted(allocated_for))}")
    return problems


def concurrent_answer(result: PrepareResult | None, alone: PrepareResult) -> Literal["refused", "differs"] | None:
    """DRA-PLUGIN/CONCURRENT-CALLS: a claim asked about in a call made beside others must be prepared, as when it
    was asked alone (`alone`). None when it was; else what went wrong."""
    if result is None or result.failed:
        return "refused"
    return None if answered_alike(result, alone) else "differs"


# --- CDI -------------------------------------------------------------------------------------------------------------
def cdi_ids(result: PrepareResult) -> list[str]:
    return [cdi_id for device in result.devices for cdi_id in device.cdi_device_ids]


def unqualified_cdi_ids(ids: Iterable[str]) -> list[str]:
    """DRA-PLUGIN/CDI-ID-SYNTAX: the IDs that are not vendor/class=name in CDI's syntax."""
    return [cdi_id for cdi_id in ids if not CDI_DEVICE_ID.fullmatch(cdi_id)]


def devices_without_cdi_id(result: PrepareResult) -> list[str]:
    """DRA-PLUGIN/CDI-ID-PER-DEVICE: the prepared devices ("pool/device") that carry no CDI device ID."""
    return [f"{d.pool}/{d.device}" for d in result.devices if not d.cdi_device_ids]


def undefined_cdi_ids(ids: Sequence[str], files: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """DRA-PLUGIN/CDI-SPEC-FILES: the IDs no spec file of `files` (name -> text) defines, and the spec files a
    runtime would refuse (which define nothing)."""
    specs = parse_specs(files)
    return specs.undefined(ids), list(specs.problems)


def defined_twice(ids: Iterable[str], files: Mapping[str, str]) -> list[str]:
    """DRA-PLUGIN/CDI-ID-DEFINED-ONCE: "<ID> in <file> and <file>" for each ID that two spec files of one
    directory define (a runtime refuses that as a conflict; a later directory overriding an earlier one is
    not). `files` maps a file's path (or bare name, all in one directory) to its text."""
    directories: dict[str, dict[str, str]] = {}
    for name, text in files.items():
        directories.setdefault(os.path.dirname(name), {})[name] = text
    twice = []
    for group in directories.values():
        defined = {name: parse_specs({name: text}).defined for name, text in group.items()}
        for cdi_id in ids:
            names = [name for name, ids_of_file in defined.items() if cdi_id in ids_of_file]
            if len(names) > 1:
                twice.append(f"{cdi_id} in {' and '.join(names)}")
    return twice


def new_spec_files(before: Collection[str], after: Collection[str]) -> list[str]:
    """The spec files that appeared between two listings (a file rewritten may be the driver's own, such as one it
    keeps for all its devices): what a prepare wrote."""
    return sorted(set(after) - set(before))


def spec_files_left(written: Iterable[str], now: Collection[str]) -> list[str]:
    """DRA-PLUGIN/CDI-SPECS-REMOVED, SURVIVES-RESTART: the spec files a prepare wrote that are still there."""
    return [name for name in written if name in now]


# --- registration ----------------------------------------------------------------------------------------------------
def same_socket(registered: str, named: str) -> bool:
    """The same socket file: on a real node the SUT's layout may link to the plugin's own socket (issue 42:
    kubeletPluginDir/<node>/<driver>.sock -> /var/lib/kubelet/plugins/<driver>/dra.sock), which the kubelet
    dials as the same socket."""
    if registered == named:
        return True
    try:
        return os.path.samefile(registered, named)
    except OSError:
        return False


def endpoint_problem(registered: str, socket: str) -> Literal["not a path", "another socket"] | None:
    """DRA-PLUGIN/REGISTRATION-INFO: the registered endpoint is the absolute path of the DRAPlugin socket."""
    if not registered.startswith("/"):
        return "not a path"
    return None if same_socket(registered, socket) else "another socket"


def registered_as(info: PluginInfo, kind: str, name: str) -> bool:
    """DRA-PLUGIN/REGISTRATION-INFO: the registration names the plugin type ("DRAPlugin") and the driver."""
    return (info.type, info.name) == (kind, name)


def not_advertised(supported: Sequence[str], services: Iterable[str]) -> list[str]:
    """DRA-PLUGIN/SERVES-V1, SERVES-V1BETA1, REGISTRATION-VERSIONS: the services ("v1.DRAPlugin") the
    registration does not list."""
    return [service for service in services if service not in supported]


def known_versions(supported: Sequence[str]) -> list[str]:
    """DRA-PLUGIN/REGISTRATION-VERSIONS: the services a registration lists that current kubelets know as
    DRAPlugin versions ("v1.DRAPlugin"), in the plugin's order."""
    return [v for v in supported if v.endswith(".DRAPlugin") and v.removesuffix(".DRAPlugin") in API_VERSIONS]


def prefers(supported: Sequence[str], preferred: str, other: str) -> bool:
    """DRA-PLUGIN/REGISTRATION-VERSIONS: the kubelet calls the first service it knows, so `preferred` is listed
    and `other`, if listed at all, comes after it."""
    versions = list(supported)
    return preferred in versions and (other not in versions or versions.index(preferred) < versions.index(other))


def notification_refused_wrongly(registered: bool, failure: PluginCallError | None) -> bool:
    """DRA-PLUGIN/REGISTRATION-STATUS: a success notification must be accepted; a failure notification may be
    answered with an error status (upstream's helper does; the kubelet only logs it), not a hang or a crash."""
    return failure is not None and (registered or not failure.refusal)


# --- KEP-5322 --------------------------------------------------------------------------------------------------------
def refused_permanently(result: PrepareResult | None) -> bool:
    """KEP-5322/WIRE-FIELD, DRIVER-EXPECTS-REPEAT: refused in the claim's entry, marked permanent_error."""
    return refused(result) and result is not None and result.permanent


def permanent_without_error(results: Iterable[PrepareResult]) -> list[PrepareResult]:
    """KEP-5322/PERMANENT-NEEDS-ERROR: answers marked permanent that are successes."""
    return [r for r in results if r.permanent and not r.failed]
