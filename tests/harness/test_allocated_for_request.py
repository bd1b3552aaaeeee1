"""The firstAvailable scenario of kubelet-plugin/prepare.feature with a driver under test that publishes more
devices than the scenario names (issue 42: Intel's GPU driver publishes 8 and lists them anew in another order):
its precondition asks for one device of the chosen alternative, whichever device a scheduler takes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from draconform.reference.sut import ReferenceSystem
from draconform.steps.observe import claim_allocated_for_request, claim_allocated_one_of
from draconform.steps.scenario import ScenarioContext
from draconform.sut import Obj


def _allocated(sut: ReferenceSystem, results: list[Obj]) -> None:
    claim = sut.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                        "metadata": {"name": "flexible", "namespace": "default"},
                        "spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
                            {"name": "none", "deviceClassName": "gpu"}, {"name": "one", "deviceClassName": "gpu"}]}]}}})
    claim["status"] = {"allocation": {"devices": {"results": results}}}
    sut.update_status(claim)


def _result(request: str, device: str) -> Obj:
    return {"request": request, "driver": "gpu.vendor.com", "pool": "node-1", "device": device}


@pytest.fixture
def sut() -> Iterator[ReferenceSystem]:
    system = ReferenceSystem()
    yield system
    system.close()


def test_a_device_beyond_those_the_scenario_names_is_allocated_for_the_alternative(sut: ReferenceSystem) -> None:
    ctx = ScenarioContext()
    # The scenario's three names stand for the first three devices the driver listed; the scheduler took the fourth.
    ctx.devices = {"gpu-0": ("node-1", "card-7"), "gpu-1": ("node-1", "card-2"), "gpu-2": ("node-1", "card-5")}
    _allocated(sut, [_result("gpu/one", "card-0")])
    claim_allocated_for_request(sut=sut, ctx=ctx, claim="flexible", pod=None, request="gpu/one")
    # The old precondition failed this correct allocation.
    with pytest.raises(AssertionError, match="expected one of gpu-0, gpu-1, gpu-2"):
        claim_allocated_one_of(sut=sut, ctx=ctx, claim="flexible", pod=None, devices="gpu-0, gpu-1, gpu-2")


@pytest.mark.parametrize("results", [[_result("gpu/none", "card-0")],
                                     [_result("gpu/one", "card-0"), _result("gpu/one", "card-2")], []],
                         ids=["other-alternative", "two-devices", "none"])
def test_another_alternative_or_another_count_fails(sut: ReferenceSystem, results: list[Obj]) -> None:
    _allocated(sut, results)
    with pytest.raises(AssertionError):
        claim_allocated_for_request(sut=sut, ctx=ScenarioContext(), claim="flexible", pod=None, request="gpu/one")
