"""Steps that observe what a user of a real cluster could observe: claims' status, whether objects
exist, and events."""

from __future__ import annotations

from pytest_bdd import parsers, then

from draconform.steps.common import (
    CLAIM,
    NAMESPACE,
    ScenarioContext,
    generated_claims,
    resolve_claim,
    split_names,
)
from draconform.sut import SystemUnderTest


@then(parsers.re(CLAIM + r' is allocated devices? "(?P<devices>[^"]+)"'))
def claim_allocated(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, devices: str
) -> None:
    obj = resolve_claim(sut, ctx, claim, pod)
    allocation = (obj.get("status") or {}).get("allocation")
    assert allocation, f"claim {obj['metadata']['name']!r} is not allocated"
    got = sorted(result["device"] for result in allocation["devices"]["results"])
    assert got == sorted(split_names(devices)), f"claim {obj['metadata']['name']!r} got devices {got}"


@then(parsers.re(CLAIM + r" is not allocated"))
def claim_not_allocated(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    obj = resolve_claim(sut, ctx, claim, pod)
    allocation = (obj.get("status") or {}).get("allocation")
    assert not allocation, f"claim {obj['metadata']['name']!r} is allocated: {allocation}"


@then(parsers.re(CLAIM + r' is reserved for pods? "(?P<pods>[^"]+)"'))
def claim_reserved_for(
    sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, pods: str
) -> None:
    obj = resolve_claim(sut, ctx, claim, pod)
    reserved = (obj.get("status") or {}).get("reservedFor") or []
    got = sorted(entry["name"] for entry in reserved if entry.get("resource") == "pods")
    assert got == sorted(split_names(pods)), f"claim {obj['metadata']['name']!r} is reserved for {got}"
    for entry in reserved:
        if entry["name"] in ctx.pod_uids:
            assert entry["uid"] == ctx.pod_uids[entry["name"]], f"reservedFor names a stale pod UID: {entry}"


@then(parsers.re(CLAIM + r" is reserved for nobody"))
def claim_not_reserved(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> None:
    obj = resolve_claim(sut, ctx, claim, pod)
    reserved = (obj.get("status") or {}).get("reservedFor") or []
    assert not reserved, f"claim {obj['metadata']['name']!r} is still reserved for {reserved}"


@then(parsers.re(CLAIM + r' is usable only on node "(?P<node>[^"]+)"'))
def claim_pinned(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None, node: str) -> None:
    obj = resolve_claim(sut, ctx, claim, pod)
    selector = ((obj.get("status") or {}).get("allocation") or {}).get("nodeSelector")
    expected = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    assert selector == {"nodeSelectorTerms": [expected]}, f"allocation nodeSelector is {selector}"


@then(parsers.parse('pod "{pod}" has one generated claim owned by the pod'))
def pod_has_generated_claim(sut: SystemUnderTest, ctx: ScenarioContext, pod: str) -> None:
    claims = generated_claims(sut, ctx, pod)
    assert len(claims) == 1, f"pod {pod!r} owns {len(claims)} claims"
    owner = claims[0]["metadata"]["ownerReferences"][0]
    assert owner.get("kind") == "Pod" and owner.get("controller") is True, f"unexpected owner {owner}"


@then(parsers.parse('the claims generated for pod "{pod}" are gone'))
def generated_claims_gone(sut: SystemUnderTest, ctx: ScenarioContext, pod: str) -> None:
    claims = generated_claims(sut, ctx, pod)
    assert not claims, f"claims still exist: {[c['metadata']['name'] for c in claims]}"


@then(parsers.parse('claim "{claim}" still exists'))
def claim_exists(sut: SystemUnderTest, claim: str) -> None:
    assert sut.get("ResourceClaim", claim, NAMESPACE) is not None, f"claim {claim!r} was deleted"


@then(parsers.re(r'an? (?P<type>Normal|Warning) event "(?P<reason>[^"]+)" is recorded for pod "(?P<pod>[^"]+)"'))
def pod_event(sut: SystemUnderTest, type: str, reason: str, pod: str) -> None:
    events = [e for e in sut.events() if e.kind == "Pod" and e.name == pod]
    assert any(e.type == type and e.reason == reason for e in events), (
        f"no {type} {reason} event for pod {pod!r}; got {[(e.type, e.reason) for e in events]}"
    )
