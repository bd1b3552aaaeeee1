"""KEP-5007 binding conditions as pure rules ("PreBind Process", "Timeout Behavior for
BindingConditions"): whether one allocated claim lets its pod bind, must wait, has failed or has timed
out, and how a claim is cleared afterwards. The DRA plugin applies them; nothing here touches the store.

The project decisions these rules follow are the D-5007-* entries of docs/decisions.md."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from draconform.reference.clock import parse_time
from draconform.sut import Obj

DEFAULT_BINDING_TIMEOUT = timedelta(minutes=10)
MIN_BINDING_TIMEOUT = timedelta(seconds=1)
TRUE = "True"  # D-5007-2: only this exact status satisfies a condition


class Outcome(Enum):
    READY = "ready"
    WAITING = "waiting"
    FAILURE = "failure"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class Verdict:
    """Where a claim (or a whole pod) stands; `deadline` is when a WAITING one times out."""

    outcome: Outcome
    message: str = ""
    deadline: datetime | None = None


READY = Verdict(Outcome.READY)

DeviceId = tuple[str, str, str]  # driver, pool, device


def device_id(entry: Obj) -> DeviceId:
    """Which device an allocation result or a per-device status entry is about."""
    return str(entry.get("driver", "")), str(entry.get("pool", "")), str(entry.get("device", ""))


def allocated_results(claim: Obj) -> list[Obj]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    results: list[Obj] = (allocation.get("devices") or {}).get("results") or []
    return results


def results_with_conditions(claim: Obj) -> list[Obj]:
    """The allocation results that carry binding conditions (copied from the device at allocation)."""
    return [result for result in allocated_results(claim) if result.get("bindingConditions")]


def requires_binding_conditions(claim: Obj) -> bool:
    return bool(results_with_conditions(claim))


def device_conditions(claim: Obj, result: Obj) -> dict[str, Obj]:
    """D-5007-1: the conditions of the per-device status entry whose driver, pool and device match
    the result, by type. The claim has no other place the scheduler reads conditions from."""
    wanted = device_id(result)
    for entry in (claim.get("status") or {}).get("devices") or []:
        if device_id(entry) == wanted:
            return {c.get("type", ""): c for c in entry.get("conditions") or []}
    return {}


def _is_true(conditions: Mapping[str, Obj], condition_type: str) -> bool:
    status = (conditions.get(condition_type) or {}).get("status")
    return status == TRUE


def failed_condition(claim: Obj, result: Obj) -> Obj | None:
    """The first of the result's binding failure conditions that is True, if any (D-5007-2)."""
    conditions = device_conditions(claim, result)
    for failure in result.get("bindingFailureConditions") or []:
        if _is_true(conditions, failure):
            return conditions[failure]
    return None


def binding_deadline(claim: Obj, timeout: timedelta, entered: datetime) -> datetime:
    """D-5007-5 and D-5007-6: the wait is anchored on the claim's allocationTimestamp, so every pod sharing
    the claim and every restarted scheduler get the same deadline; a claim allocated without a
    timestamp (by an older component) falls back to when this pod entered PreBind."""
    stamp = ((claim.get("status") or {}).get("allocation") or {}).get("allocationTimestamp")
    return (parse_time(stamp) if stamp else entered) + timeout


def claim_verdict(claim: Obj, now: datetime, timeout: timedelta, entered: datetime) -> Verdict:
    """One allocated claim: failure is looked for first and wins over readiness (D-5007-2, D-5007-3);
    then every binding condition of every result must be True; otherwise it waits until its deadline."""
    results = results_with_conditions(claim)
    if not results:
        return READY
    name = claim["metadata"]["name"]
    ready = all(
        _is_true(device_conditions(claim, result), wanted)
        for result in results
        for wanted in result["bindingConditions"]
    )
    for result in results:
        found = failed_condition(claim, result)
        if found is not None:
            return Verdict(
                Outcome.FAILURE,
                f"claim {name} binding failed: device {result.get('device')} reports {found.get('type')} "
                f"(reason={found.get('reason', '')}, message={found.get('message', '')!r})",
            )
    if ready:
        return READY
    deadline = binding_deadline(claim, timeout, entered)
    if now >= deadline:
        return Verdict(Outcome.TIMEOUT, f"claim {name} binding timeout", deadline)
    return Verdict(Outcome.WAITING, f"claim {name} waits for its binding conditions", deadline)


def pod_verdict(verdicts: Iterable[Verdict]) -> Verdict:
    """A pod with several claims binds only when all are ready; any failure aborts at once; otherwise a
    timed-out claim aborts; otherwise the pod waits until its earliest claim deadline."""
    collected = list(verdicts)
    for outcome in (Outcome.FAILURE, Outcome.TIMEOUT):
        hits = [v for v in collected if v.outcome == outcome]
        if hits:
            return Verdict(outcome, "; ".join(v.message for v in hits))
    waiting = [v for v in collected if v.outcome == Outcome.WAITING]
    if not waiting:
        return READY
    return Verdict(
        Outcome.WAITING,
        "; ".join(v.message for v in waiting),
        min(v.deadline for v in waiting if v.deadline is not None),
    )


def cleared_status(claim: Obj, pod_uid: str) -> Obj:
    """D-5007-4: the claim status after a failed or timed-out wait of one pod. The pod's reservation
    always goes; the allocation and the per-device status entries of its devices go too unless another
    consumer still holds the claim, so a stale failure condition cannot abort the next attempt."""
    status: Obj = dict(claim.get("status") or {})
    remaining = [entry for entry in status.get("reservedFor") or [] if entry.get("uid") != pod_uid]
    if remaining:
        status["reservedFor"] = remaining
        return status
    status.pop("reservedFor", None)
    allocated = {device_id(result) for result in allocated_results(claim)}
    status.pop("allocation", None)
    kept = [entry for entry in status.get("devices") or [] if device_id(entry) not in allocated]
    if kept:
        status["devices"] = kept
    else:
        status.pop("devices", None)
    return status


def parse_binding_timeout(args: Mapping[str, Any]) -> timedelta:
    """The DRA plugin argument `bindingTimeout`: seconds as a number, or a duration such as "90s",
    "5m" or "1h"; default 10 minutes, at least 1 second (as upstream validates it)."""
    raw = args.get("bindingTimeout")
    if raw is None:
        return DEFAULT_BINDING_TIMEOUT
    if isinstance(raw, bool):
        raise ValueError(f"bindingTimeout must be a duration, got {raw!r}")
    if isinstance(raw, int | float):
        timeout = timedelta(seconds=raw)
    else:
        text = str(raw).strip()
        units = {"s": 1, "m": 60, "h": 3600}
        try:
            timeout = (
                timedelta(seconds=float(text[:-1]) * units[text[-1]])
                if text and text[-1] in units
                else timedelta(seconds=float(text))
            )
        except ValueError as error:
            raise ValueError(f"bindingTimeout {raw!r} is not a duration") from error
    if timeout < MIN_BINDING_TIMEOUT:
        raise ValueError(f"bindingTimeout must be at least 1s, got {raw!r}")
    return timeout
