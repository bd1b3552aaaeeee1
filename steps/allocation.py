"""Steps that observe what an allocation says: the exact results (request, driver, pool, device and what is
copied into them), the configuration and the node selector, each compared with a YAML docstring so the
scenario shows exactly what a claim's `status.allocation` holds."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import yaml
from pytest_bdd import parsers, then

from draconform.kube.values import parse_quantity
from draconform.steps.cluster import assert_same, resolve_claim
from draconform.steps.manifests import NAMESPACE
from draconform.steps.scenario import ScenarioContext, observes
from draconform.steps.words import CLAIM
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
    """`status.allocation.devices.config`, in order and entry for entry. An entry whose `requests` reach every
    request of the claim is the same as one without (empty means all, AllocatedDeviceConfiguration.requests):
    upstream 1.37 leaves them out, 1.36 lists them (docs/decisions.md D-4381-6); either passes."""
    obj = resolve_claim(sut, ctx, claim, pod)
    allocation = _allocation(sut, ctx, claim, pod)
    reaches_all = _reaches_all(obj, allocation)
    got = [_without_all_requests(entry, reaches_all) for entry in allocation["devices"].get("config") or []]
    expected = [_without_all_requests(entry, reaches_all) for entry in _expected(docstring) or []]
    assert_same(got, expected, "status.allocation.devices.config (requests reaching every request read as none)")


def _reaches_all(claim: Obj, allocation: Obj) -> Callable[[list[str]], bool]:
    """Whether a config's request names reach every top-level request of the claim: by its name, or by the
    `request/subrequest` name of the alternative the allocation chose for it."""
    requests = [r["name"] for r in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []]
    chosen = {str(result.get("request")) for result in allocation["devices"].get("results") or []}

    def reached(name: str, names: list[str]) -> bool:
        return name in names or any(pick in names for pick in chosen if pick.startswith(f"{name}/"))

    return lambda names: bool(requests) and all(reached(name, names) for name in requests)


def _without_all_requests(entry: Any, reaches_all: Callable[[list[str]], bool]) -> Any:
    if isinstance(entry, dict) and isinstance(entry.get("requests"), list) and reaches_all(entry["requests"]):
        return {key: value for key, value in entry.items() if key != "requests"}
    return entry


@then(parsers.re(r"the allocation of " + CLAIM + r" has node selector:"))
@observes("claim")
def allocation_node_selector(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None,
                             docstring: str) -> None:
    got = _allocation(sut, ctx, claim, pod).get("nodeSelector")
    expected = _expected(docstring)
    assert_same(got, expected, "status.allocation.nodeSelector")


# --- consumable capacity (KEP-5075) -----------------------------------------------------------------------
SHARE_ID = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"


@then(parsers.re(r"the allocation of " + CLAIM + r' has a share of device "(?P<device>[^"]+)" consuming:'))
@observes("claim")
def allocation_share(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, device: str,
                     docstring: str) -> None:
    """Each result for the device carries a shareID (a lower-case UUID) and consumedCapacity equal, amount for
    amount (quantities compared by value, so 2Gi and 2048Mi agree), to one of the docstring's maps, in order."""
    shares = [r for r in _allocation(sut, ctx, claim, pod)["devices"].get("results") or [] if r["device"] == device]
    expected = _expected(docstring)
    expected = expected if isinstance(expected, list) else [expected]
    assert len(shares) == len(expected), f"{len(shares)} results for device {device!r}, expected {len(expected)}"
    for share, amounts in zip(shares, expected, strict=True):
        assert re.match(SHARE_ID, str(share.get("shareID", ""))), f"result without a valid shareID: {share}"
        got = {name: parse_quantity(value) for name, value in (share.get("consumedCapacity") or {}).items()}
        want = {name: parse_quantity(value) for name, value in amounts.items()}
        assert got == want, f"consumedCapacity {share.get('consumedCapacity')}, expected {amounts}"


@then(parsers.re(r"the allocation of " + CLAIM + r' holds device "(?P<device>[^"]+)" whole'))
@observes("claim")
def allocation_whole(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None,
                     device: str) -> None:
    results = [r for r in _allocation(sut, ctx, claim, pod)["devices"].get("results") or [] if r["device"] == device]
    assert results, f"device {device!r} is not allocated to the claim"
    assert all("shareID" not in r and "consumedCapacity" not in r for r in results), results


@then(parsers.parse('device "{device}" has {count:d} shares, each with its own shareID'))
@observes("claim")
def distinct_shares(sut: SystemUnderTest, device: str, count: int) -> None:
    """Across every allocated claim: the results for the device, and no shareID used twice."""
    ids = [r.get("shareID") for c in sut.list("ResourceClaim", NAMESPACE)
           for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []
           if r["device"] == device]
    assert len(ids) == count, f"device {device!r} has {len(ids)} allocations, expected {count}: {ids}"
    assert None not in ids and len(set(ids)) == count, f"shareIDs {ids}"
