"""Steps for KEP-5963 compatibility groups: components put in the three states of the KEP's skew table
(older release, gate off, gate on), what stored ResourceSlices declare and what allocation results record
(the snapshot). Requests the API server refuses use the validation steps (steps/validation.py). Everything
goes through the seam."""

from __future__ import annotations

from typing import Any

import yaml
from pytest_bdd import given, parsers, then, when

from draconform.kube.featuregates import GATE_HISTORY
from draconform.steps.cluster import configure, resolve_claim, slice_devices
from draconform.steps.scenario import ScenarioContext, observes
from draconform.steps.words import CLAIM
from draconform.sut import Obj, SystemUnderTest

COMPONENT = r"(?P<component>kube-apiserver|kube-scheduler|kube-controller-manager|kubelet|dra-driver)"
SKEW_STATE = r'"(?P<state>old|new, gate off|new, gate on)" \((?P<gate>[A-Za-z0-9]+)\)'


def _previous(release: str) -> str:
    major, minor = release.split(".")[:2]
    return f"{major}.{int(minor) - 1}"


def _skew_state(sut: SystemUnderTest, ctx: ScenarioContext, component: str, state: str, gate: str) -> None:
    """Map a cell label of the KEP's skew table onto a release and a gate setting for one component."""
    assert gate in GATE_HISTORY, f"unknown feature gate {gate!r}"
    introduced = GATE_HISTORY[gate][0]  # "old" in a skew table means the release before it
    if state == "old":
        earlier = ctx.configs.get(component)
        if earlier is not None:  # an older release has no such gate to set
            earlier.feature_gates.pop(gate, None)
        configure(sut, ctx, component, version=_previous(introduced))
    else:
        configure(sut, ctx, component, gates={gate: state == "new, gate on"}, version=introduced)


@given(parsers.re(COMPONENT + r" is " + SKEW_STATE))
def component_in_skew_state(sut: SystemUnderTest, ctx: ScenarioContext, component: str, state: str,
                            gate: str) -> None:
    """E.g. `kube-scheduler is "old" (DRADeviceCompatibilityGroups)`: a release before the gate existed."""
    _skew_state(sut, ctx, component, state, gate)


@when(parsers.re(COMPONENT + r" restarts as " + SKEW_STATE))
def component_restarts_in_skew_state(sut: SystemUnderTest, ctx: ScenarioContext, component: str, state: str,
                                     gate: str) -> None:
    """A downgrade, an upgrade or a gate flip: the component is rebuilt from the API objects only."""
    _skew_state(sut, ctx, component, state, gate)
    sut.restart(component)
    sut.settle()


# --- what stored slices declare ------------------------------------------------------------------------
def _declared(device: Obj) -> dict[str, Any]:
    """counter set -> groups, for the consumesCounters entries that carry the field at all."""
    return {entry.get("counterSet"): entry["compatibilityGroups"]
            for entry in device.get("consumesCounters") or [] if "compatibilityGroups" in entry}


@then(parsers.re(r'ResourceSlice "(?P<name>[^"]+)" (?P<verb>declares|declares no) compatibility groups'))
@observes("slice")
def slice_declares_groups(sut: SystemUnderTest, ctx: ScenarioContext, name: str, verb: str) -> None:
    """Whether any device of the stored slice still carries a non-empty compatibilityGroups list."""
    devices = slice_devices(sut, ctx, name)
    assert devices is not None, f"ResourceSlice {name!r} does not exist"
    found = {device["name"]: groups for device in devices if (groups := _declared(device)) and any(groups.values())}
    if verb == "declares":
        assert found, f"ResourceSlice {name!r} declares no compatibility groups"
    else:
        assert not found, f"ResourceSlice {name!r} still declares compatibility groups: {found}"


@then(parsers.re(r'device "(?P<device>[^"]+)" of ResourceSlice "(?P<name>[^"]+)" declares compatibility groups:'))
@observes("slice")
def device_declares_groups(sut: SystemUnderTest, ctx: ScenarioContext, device: str, name: str,
                           docstring: str) -> None:
    """The docstring maps counter set to groups, exactly as the stored device declares them."""
    devices = [d for d in slice_devices(sut, ctx, name) or [] if d["name"] == device]
    assert devices, f"ResourceSlice {name!r} has no device {device!r}"
    expected = yaml.load(docstring, Loader=yaml.CSafeLoader)
    assert _declared(devices[0]) == expected, f"device {device!r} declares {_declared(devices[0])}"


# --- what allocation results record --------------------------------------------------------------------
@then(parsers.re(CLAIM + r" records (?P<none>no )?compatibility groups"))
@observes("claim")
def claim_records_groups(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None,
                         none: str | None) -> None:
    """Whether the claim's allocation results carry the compatibilityGroups snapshot (some or none)."""
    obj = resolve_claim(sut, ctx, claim, pod)
    allocation = (obj.get("status") or {}).get("allocation")
    assert allocation, f"claim {obj['metadata']['name']!r} is not allocated"
    snapshots = [r["compatibilityGroups"] for r in allocation["devices"]["results"] if "compatibilityGroups" in r]
    if none:
        assert not snapshots, f"claim {obj['metadata']['name']!r} records compatibility groups {snapshots}"
    else:
        assert snapshots, f"claim {obj['metadata']['name']!r} records no compatibility groups"
