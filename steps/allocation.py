"""Steps that observe what an allocation says: the exact results (request, driver, pool, device and what is
copied into them), the configuration and the node selector, each compared with a YAML docstring so the
scenario shows exactly what a claim's `status.allocation` holds."""

from __future__ import annotations

from typing import Any

import yaml
from pytest_bdd import parsers, then

from draconform.steps.common import CLAIM, ScenarioContext, assert_same, observes, resolve_claim
from draconform.sut import Obj, SystemUnderTest


def _allocation(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> Obj:
    obj = resolve_claim(sut, ctx, claim, pod)
    allocation: Obj | None = (obj.get("status") or {}).get("allocation")
    assert allocation, f"claim {obj['metadata']['name']!r} is not allocated"
    return allocation


def _expected(docstring: str) -> Any:
    return yaml.load(docstring, Loader=yaml.CSafeLoader)


@then(parsers.re(r"the allocation of " + CLAIM + r" has results:"))
@observes("claim")
def allocation_results(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None,
                       docstring: str) -> None:
    """`status.allocation.devices.results`, in order and field for field."""
    got = _allocation(sut, ctx, claim, pod)["devices"].get("results") or []
    expected = _expected(docstring)
    assert_same(got, expected, "status.allocation.devices.results")


@then(parsers.re(r"the allocation of " + CLAIM + r" has config:"))
@observes("claim")
def allocation_config(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None,
                      docstring: str) -> None:
    """`status.allocation.devices.config`, in order and entry for entry."""
    got = _allocation(sut, ctx, claim, pod)["devices"].get("config") or []
    expected = _expected(docstring)
    assert_same(got, expected, "status.allocation.devices.config")


@then(parsers.re(r"the allocation of " + CLAIM + r" has node selector:"))
@observes("claim")
def allocation_node_selector(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None,
                             docstring: str) -> None:
    got = _allocation(sut, ctx, claim, pod).get("nodeSelector")
    expected = _expected(docstring)
    assert_same(got, expected, "status.allocation.nodeSelector")


@then(parsers.re(r"the allocation of " + CLAIM + r" is usable on every node"))
@observes("claim")
def allocation_everywhere(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    """No nodeSelector: the devices are reachable from any node."""
    got = _allocation(sut, ctx, claim, pod).get("nodeSelector")
    assert got is None, f"the allocation is restricted to {got}"
