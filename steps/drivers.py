"""Steps for a DRA driver under test: giving it devices to publish (the seam's `run_driver`) and acting as
the kubelet towards its kubelet plugin, over the real DRAPlugin gRPC protocol on the unix socket the SUT
names (`kubelet_plugin_endpoint`), the way csi-sanity drives a CSI plugin. The driver's gates are set with
the component steps, as component "dra-driver"."""

from __future__ import annotations

from pytest_bdd import given, parsers, then, when

from draconform.kubeletplugin.client import KubeletPluginClient
from draconform.kubeletplugin.types import ClaimRef, PrepareResult
from draconform.steps.common import CLAIM, ScenarioContext, load_docstring, resolve_claim
from draconform.sut import SystemUnderTest

KUBELET_ASKS = r'the kubelet on node "(?P<node>[^"]+)" asks driver "(?P<driver>[^"]+)" to '


@given(parsers.parse('driver "{driver}" runs with the devices:'))
@when(parsers.parse('driver "{driver}" is given the devices:'))
def driver_runs(sut: SystemUnderTest, driver: str, docstring: str) -> None:
    """The docstring holds the ResourceSlices the driver would publish with every feature on; what it
    really publishes is up to the driver, and is checked by reading the stored slices."""
    sut.run_driver(driver, load_docstring(docstring, kind="ResourceSlice"))
    sut.settle()


def _claim_ref(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> ClaimRef:
    obj = resolve_claim(sut, ctx, claim, pod)
    meta = obj["metadata"]
    return ClaimRef(namespace=meta["namespace"], name=meta["name"], uid=meta["uid"])


@when(parsers.re(KUBELET_ASKS + r"(?P<verb>prepare|unprepare) " + CLAIM))
def kubelet_asks_plugin(sut: SystemUnderTest, ctx: ScenarioContext, node: str, driver: str, verb: str,
                        claim: str | None, pod: str | None) -> None:
    """One NodePrepareResources or NodeUnprepareResources call for one claim. A failed call (no socket, a
    crashed or hung plugin) fails the step with the endpoint, method and gRPC status."""
    ref = _claim_ref(sut, ctx, claim, pod)
    with KubeletPluginClient(sut.kubelet_plugin_endpoint(driver, node)) as client:
        if verb == "prepare":
            answers = client.prepare([ref])
            assert ref.uid in answers, (
                f"driver {driver!r} left claim {ref.name!r} out of its NodePrepareResources answer"
            )
            ctx.prepared[ref.name] = answers[ref.uid]
        else:
            errors = client.unprepare([ref])
            assert ref.uid in errors, (
                f"driver {driver!r} left claim {ref.name!r} out of its NodeUnprepareResources answer"
            )
            assert not errors[ref.uid], f"driver {driver!r} failed to unprepare claim {ref.name!r}: {errors[ref.uid]}"
            ctx.prepared.pop(ref.name, None)


def _answer(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> PrepareResult:
    name = resolve_claim(sut, ctx, claim, pod)["metadata"]["name"]
    assert name in ctx.prepared, f"the kubelet never asked to prepare claim {name!r}"
    return ctx.prepared[name]


@then(parsers.re(r'the driver prepared ' + CLAIM + r' with devices? "(?P<devices>[^"]+(?:", "[^"]+)*)"'))
def driver_prepared(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None,
                    devices: str) -> None:
    """Prepared without error, exactly the named devices, each with at least one CDI device ID."""
    answer = _answer(sut, ctx, claim, pod)
    assert not answer.failed, f"the driver refused to prepare the claim: {answer.error}"
    expected = sorted(devices.split('", "'))
    assert sorted(d.device for d in answer.devices) == expected, (
        f"the driver prepared {sorted(d.device for d in answer.devices)}, expected {expected}"
    )
    missing = [d.device for d in answer.devices if not d.cdi_device_ids]
    assert not missing, f"prepared devices without a CDI device ID: {missing}"


@then(parsers.re(r'the driver refused to prepare ' + CLAIM))
def driver_refused(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    """A per-claim error in the answer (not a gRPC failure, which would make the kubelet ignore it all)."""
    answer = _answer(sut, ctx, claim, pod)
    assert answer.failed, f"the driver prepared the claim with devices {[d.device for d in answer.devices]}"
