"""Steps for controllers outside the scheduler: the scenario writing a claim's per-device status
itself, as a driver or binding controller would (works against any SUT), and starting the
reference's programmable controllers through the seam's `run_controller` (a SUT without them
raises `Unsupported` and the scenario is skipped)."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from pytest_bdd import given, parsers, when

from draconform.steps.cluster import must_get, pod_claim_names, resolve_claim, rewrite
from draconform.steps.scenario import ScenarioContext
from draconform.steps.words import CLAIM, DURATION, to_seconds
from draconform.sut import Obj, SystemUnderTest

BINDING_CONTROLLER = "binding-controller"
SCALER = "dynamic-device-scaler"
OUTCOMES = {"ready": "ready", "failed": "fail"}


# --- the scenario as the driver ----------------------------------------------------------------------
@when(parsers.re(
    r'the driver sets conditions? "(?P<type>[^"]+)"(?: and "(?P<also>[^"]+)")? to "(?P<value>[^"]*)" on '
    r'(?:device "(?P<device>[^"]+)"|the devices?) of '
    r'(?:' + CLAIM + r'|pod "(?P<of_pod>[^"]+)")'
))
def driver_sets_condition(
    sut: SystemUnderTest,
    ctx: ScenarioContext,
    type: str,
    also: str | None,
    value: str,
    device: str | None,
    claim: str | None,
    pod: str | None,
    of_pod: str | None,
) -> None:
    """Write one condition (or two, in the same status write, so that no component can see one without
    the other) into `status.devices[]` for the claim's allocated devices (or one of them), in the
    standard condition shape, the way a controller reports readiness or failure."""
    claims = (
        [must_get(sut, "ResourceClaim", name) for name in pod_claim_names(sut, of_pod)]
        if of_pod
        else [resolve_claim(sut, ctx, claim, pod)]
    )
    def put(obj: Obj) -> None:
        for type_ in (type, also) if also else (type,):
            _put_condition(sut, obj, type_, value, device)

    for found in claims:
        rewrite(sut, "ResourceClaim", found["metadata"]["name"], put, status=True)


def _put_condition(sut: SystemUnderTest, claim: Obj, type_: str, value: str, device: str | None) -> None:
    """The condition in the claim's status, not yet written."""
    status = claim.setdefault("status", {})
    results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
    targets = [r for r in results if device is None or r["device"] == device]
    assert targets, f"claim {claim['metadata']['name']!r} has no allocated device {device or ''}".rstrip()
    entries: list[Obj] = status.setdefault("devices", [])
    stamp = sut.now().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for result in targets:
        where = {"driver": result["driver"], "pool": result["pool"], "device": result["device"]}
        entry = next((e for e in entries if all(e.get(k) == v for k, v in where.items())), None)
        if entry is None:
            entry = {**where, "conditions": []}
            entries.append(entry)
        entry["conditions"] = [c for c in entry.get("conditions") or [] if c.get("type") != type_] + [
            {"type": type_, "status": value, "reason": "SetByScenario", "message": "written by the scenario",
             "lastTransitionTime": stamp}
        ]


# --- the reference's programmable controllers --------------------------------------------------------
def _binding_controller(sut: SystemUnderTest, driver: str, **behaviour: Any) -> None:
    sut.run_controller(BINDING_CONTROLLER, {"driver": driver, **behaviour})


@given(parsers.re(
    r'the binding controller for driver "(?P<driver>[^"]+)" marks devices (?P<outcome>ready|failed) after '
    + DURATION + r"(?P<withdraw> and withdraws them)?"
))
@when(parsers.re(
    r'the binding controller for driver "(?P<driver>[^"]+)" is deployed and marks devices '
    r"(?P<outcome>ready|failed) after " + DURATION + r"(?P<withdraw> and withdraws them)?"
))
def binding_controller_answers(
    sut: SystemUnderTest, driver: str, outcome: str, amount: str, unit: str, withdraw: str | None
) -> None:
    """Ready sets every binding condition True; failed sets the first failure condition True and,
    when it withdraws them, removes the device from its ResourceSlice so it is not picked again."""
    _binding_controller(
        sut, driver, outcome=OUTCOMES[outcome], after=to_seconds(amount, unit), remove_failed_device=bool(withdraw)
    )


@given(parsers.parse('the binding controller for driver "{driver}" never answers'))
def binding_controller_silent(sut: SystemUnderTest, driver: str) -> None:
    _binding_controller(sut, driver, outcome="never")


@given(parsers.parse('no binding controller is deployed for driver "{driver}"'))
def no_binding_controller(driver: str) -> None:
    """Nothing to do: a rollout that stopped before deploying the controller (KEP-5007 rollout step 4)."""


@given(parsers.re(
    r'the dynamic device scaler attaches devices of pool driver "(?P<pool_driver>[^"]+)" as devices of '
    r'driver "(?P<node_driver>[^"]+)", taking ' + DURATION
))
@when(parsers.re(
    r'the dynamic device scaler is deployed, attaching devices of pool driver "(?P<pool_driver>[^"]+)" as '
    r'devices of driver "(?P<node_driver>[^"]+)", taking ' + DURATION
))
def dynamic_device_scaler(sut: SystemUnderTest, pool_driver: str, node_driver: str, amount: str, unit: str) -> None:
    """The CoHDI flow: attach a pool device to the chosen node, then ask for a reschedule."""
    sut.run_controller(
        SCALER, {"pool_driver": pool_driver, "node_driver": node_driver, "after": to_seconds(amount, unit)}
    )
