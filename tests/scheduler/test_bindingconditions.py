"""The KEP-5007 rules as pure functions: claim and pod verdicts, deadlines, clearing, the argument."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from draconform.reference.scheduler.bindingconditions import (
    DEFAULT_BINDING_TIMEOUT,
    Outcome,
    Verdict,
    claim_verdict,
    cleared_status,
    parse_binding_timeout,
    pod_verdict,
)
from draconform.sut import Obj

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TEN = timedelta(minutes=10)


def result(device: str = "gpu-0", **extra: Any) -> Obj:
    return {"request": "r", "driver": "d", "pool": "p", "device": device,
            "bindingConditions": ["ready"], "bindingFailureConditions": ["failed"], **extra}


def claim(*results: Obj, stamp: str | None = "2026-01-01T00:00:00Z", devices: list[Obj] | None = None,
          reserved: tuple[str, ...] = ("pod-a",)) -> Obj:
    allocation: Obj = {"devices": {"results": list(results)}}
    if stamp:
        allocation["allocationTimestamp"] = stamp
    consumers = [{"resource": "pods", "name": uid, "uid": uid} for uid in reserved]
    status: Obj = {"allocation": allocation, "reservedFor": consumers}
    if devices is not None:
        status["devices"] = devices
    return {"metadata": {"name": "c", "namespace": "default", "uid": "c-uid"}, "status": status}


def entry(device: str = "gpu-0", **conditions: str) -> Obj:
    return {"driver": "d", "pool": "p", "device": device,
            "conditions": [{"type": t, "status": s} for t, s in conditions.items()]}


def test_a_claim_without_binding_conditions_is_ready() -> None:
    plain = {"request": "r", "driver": "d", "pool": "p", "device": "gpu-0"}
    assert claim_verdict(claim(plain), T0, TEN, T0).outcome is Outcome.READY


@pytest.mark.parametrize("status", ["False", "Unknown", "true", "TRUE", ""])
def test_only_exactly_true_meets_a_binding_condition(status: str) -> None:
    verdict = claim_verdict(claim(result(), devices=[entry(ready=status)]), T0, TEN, T0)
    assert verdict.outcome is Outcome.WAITING
    assert claim_verdict(claim(result(), devices=[entry(ready="True")]), T0, TEN, T0).outcome is Outcome.READY


def test_conditions_are_matched_to_the_device_of_each_result() -> None:
    both = claim(result("gpu-0"), result("gpu-1"), devices=[entry("gpu-0", ready="True")])
    assert claim_verdict(both, T0, TEN, T0).outcome is Outcome.WAITING
    both["status"]["devices"].append(entry("gpu-1", ready="True"))
    assert claim_verdict(both, T0, TEN, T0).outcome is Outcome.READY


def test_failure_wins_over_readiness_and_over_the_deadline() -> None:
    failing = claim(result(), devices=[entry(ready="True", failed="True")])
    assert claim_verdict(failing, T0, TEN, T0).outcome is Outcome.FAILURE
    assert claim_verdict(failing, T0 + TEN, TEN, T0).outcome is Outcome.FAILURE


@pytest.mark.parametrize("status", ["False", "Unknown"])
def test_a_failure_condition_that_is_not_true_is_no_failure(status: str) -> None:
    verdict = claim_verdict(claim(result(), devices=[entry(failed=status)]), T0, TEN, T0)
    assert verdict.outcome is Outcome.WAITING


def test_the_deadline_is_anchored_on_the_allocation_timestamp_not_on_the_pod() -> None:
    late_pod = T0 + timedelta(minutes=8)
    waiting = claim_verdict(claim(result()), T0 + timedelta(minutes=9), TEN, late_pod)
    assert waiting == Verdict(Outcome.WAITING, waiting.message, T0 + TEN)
    assert claim_verdict(claim(result()), T0 + TEN, TEN, late_pod).outcome is Outcome.TIMEOUT


def test_without_a_timestamp_the_deadline_counts_from_the_pods_prebind() -> None:
    entered = T0 + timedelta(minutes=5)
    assert claim_verdict(claim(result(), stamp=None), T0 + TEN, TEN, entered).deadline == entered + TEN
    assert claim_verdict(claim(result(), stamp=None), entered + TEN, TEN, entered).outcome is Outcome.TIMEOUT


def test_a_pod_waits_for_all_claims_until_its_earliest_deadline_and_failure_comes_first() -> None:
    ready = Verdict(Outcome.READY)
    early = Verdict(Outcome.WAITING, "a", T0 + TEN)
    late = Verdict(Outcome.WAITING, "b", T0 + 2 * TEN)
    assert pod_verdict([ready, ready]).outcome is Outcome.READY
    assert pod_verdict([ready, late, early]) == Verdict(Outcome.WAITING, "b; a", T0 + TEN)
    timeout = Verdict(Outcome.TIMEOUT, "t")
    failure = Verdict(Outcome.FAILURE, "f")
    assert pod_verdict([timeout, early]).outcome is Outcome.TIMEOUT
    assert pod_verdict([timeout, failure, ready]) == Verdict(Outcome.FAILURE, "f")


def test_clearing_the_last_consumer_removes_allocation_reservation_and_device_status() -> None:
    other = entry("gpu-9", ready="True")
    status = cleared_status(claim(result(), devices=[entry(failed="True"), other]), "pod-a")
    assert status == {"devices": [other]}


def test_clearing_while_another_pod_holds_the_claim_only_drops_the_reservation() -> None:
    before = claim(result(), devices=[entry(failed="True")], reserved=("pod-a", "pod-b"))
    status = cleared_status(before, "pod-a")
    assert status["allocation"] == before["status"]["allocation"]
    assert [e["uid"] for e in status["reservedFor"]] == ["pod-b"]
    assert status["devices"] == before["status"]["devices"]


@pytest.mark.parametrize(("raw", "expected"), [
    (None, DEFAULT_BINDING_TIMEOUT), (90, timedelta(seconds=90)), (1.5, timedelta(seconds=1.5)),
    ("300s", timedelta(minutes=5)), ("5m", timedelta(minutes=5)), ("1h", timedelta(hours=1)),
    ("42", timedelta(seconds=42)),
])
def test_binding_timeout_argument(raw: object, expected: timedelta) -> None:
    args = {} if raw is None else {"bindingTimeout": raw}
    assert parse_binding_timeout(args) == expected


@pytest.mark.parametrize("raw", [0, 0.5, "0s", "soon", True, -3])
def test_binding_timeout_below_a_second_or_unreadable_is_refused(raw: object) -> None:
    with pytest.raises(ValueError):
        parse_binding_timeout({"bindingTimeout": raw})
