"""Steps that write a KEP-5007 binding or failure condition with a reason, message and lastTransitionTime of
the scenario's choosing (steps/controllers.py writes them with fixed ones), so scenarios can show that only a
condition's status counts (KEP-5007 "PreBind Process", docs/decisions.md D-5007-2)."""

from __future__ import annotations

from datetime import UTC

from pytest_bdd import parsers, when

from draconform.steps.cluster import pod_claim_names, rewrite
from draconform.sut import Obj, SystemUnderTest


@when(parsers.re(
    r'the driver sets condition "(?P<type_>[^"]+)" to "(?P<status>[^"]*)" on the device of pod "(?P<pod>[^"]+)" '
    r'with reason "(?P<reason>[^"]+)", message "(?P<message>[^"]*)" and lastTransitionTime "(?P<time>[^"]+)"'
))
def driver_sets_detailed_condition(sut: SystemUnderTest, type_: str, status: str, pod: str, reason: str,
                                   message: str, time: str) -> None:
    """`time` is "now" (the cluster's clock) or an RFC 3339 time; the condition goes into the per-device status
    entry of every allocated device of the pod's claims, in one status write per claim."""
    stamp = sut.now().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if time == "now" else time
    condition = {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": stamp}
    for name in pod_claim_names(sut, pod):
        rewrite(sut, "ResourceClaim", name, lambda claim: _put(claim, condition), status=True)


def _put(claim: Obj, condition: Obj) -> None:
    status = claim.setdefault("status", {})
    results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
    assert results, f"claim {claim['metadata']['name']!r} is not allocated"
    entries: list[Obj] = status.setdefault("devices", [])
    for result in results:
        where = {"driver": result["driver"], "pool": result["pool"], "device": result["device"]}
        entry = next((e for e in entries if all(e.get(k) == v for k, v in where.items())), None)
        if entry is None:
            entry = {**where, "conditions": []}
            entries.append(entry)
        entry["conditions"] = [c for c in entry.get("conditions") or [] if c.get("type") != condition["type"]] + [
            dict(condition)]
