"""`status.allocation` assembled from the devices a search chose (KEP-4381 "Allocation result"): results per
request with KEP-5055 tolerations, KEP-5007 binding-condition copies, KEP-5075 shares and what they consume, KEP-5963
groups as declared; class and claim configs; the node selector of the allocation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from uuid import uuid4

from draconform.reference.allocator.capacity import format_amount
from draconform.reference.allocator.compatibility import Mode, snapshot
from draconform.reference.allocator.devices import DeviceFacts
from draconform.reference.allocator.gates import Gates
from draconform.reference.allocator.interface import AllocationError
from draconform.reference.allocator.plans import Alternative, ClaimPlan
from draconform.reference.nodeselector import pinned_to
from draconform.sut import Obj


@dataclass(frozen=True)
class Pick:
    alt: Alternative
    device: DeviceFacts
    consumed: tuple[tuple[str, Fraction], ...] | None = None  # a share of a multi-allocatable device (KEP-5075)


def build_allocation(plan: ClaimPlan, picks: Sequence[Pick], node: Obj, gates: Gates) -> Obj:
    """`status.allocation` for one claim from its chosen devices, in the order they were chosen."""
    results = []
    for pick in picks:
        result: Obj = {"request": pick.alt.name, "driver": pick.device.driver, "pool": pick.device.pool,
                       "device": pick.device.name}
        if pick.alt.admin_access:
            result["adminAccess"] = pick.alt.admin_access
        if pick.alt.tolerations:
            result["tolerations"] = [dict(t) for t in pick.alt.tolerations]
        device = pick.device
        if gates.binding and device.binding_conditions:
            result["bindingConditions"] = list(device.binding_conditions)
            result["bindingFailureConditions"] = list(device.binding_failure_conditions)
        if pick.consumed is not None:  # KEP-5075: a fresh share of the device and what it consumes
            result["shareID"] = str(uuid4())
            result["consumedCapacity"] = {name: format_amount(amount, pick.device.capacities[name].binary)
                                          for name, amount in pick.consumed}
        taken = snapshot(pick.device.compatibility_groups) if gates.compatibility is Mode.ENFORCE else None
        if taken is not None:  # D-5963-2: the groups as declared at allocation time
            result["compatibilityGroups"] = taken
        results.append(result)
    devices: Obj = {"results": results}
    config = _configs(plan, picks)
    if config:
        devices["config"] = config
    allocation: Obj = {"devices": devices}
    selector = allocation_node_selector(picks, node, gates)
    if selector is not None:
        allocation["nodeSelector"] = selector
    return allocation


def _configs(plan: ClaimPlan, picks: Sequence[Pick]) -> list[Obj]:
    """Class configs once per class (with the requests that use the class), then the claim's configs that
    apply to an allocated request or to all of them; `requests` is left out where it names them all."""
    claim_config = (plan.claim.get("spec", {}).get("devices") or {}).get("config") or []
    if not claim_config and not any(plan.class_configs.values()):
        return []
    used_by: dict[str, list[str]] = {}
    for pick in picks:
        names = used_by.setdefault(pick.alt.class_name, [])
        if pick.alt.name not in names:
            names.append(pick.alt.name)
    config: list[Obj] = []
    for class_name, requests in used_by.items():
        for entry in plan.class_configs.get(class_name, []):
            config.append({"source": "FromClass", "requests": list(requests), **_config_body(entry)})
    allocated = {pick.alt.name for pick in picks} | {pick.alt.request for pick in picks}
    for entry in claim_config:
        wanted = list(entry.get("requests") or [])
        if not wanted or any(name in allocated for name in wanted):
            item: Obj = {"source": "FromClaim", **_config_body(entry)}
            if wanted:
                item["requests"] = wanted
            config.append(item)
    return _omit_requests_covering_all(config, plan.claim, {pick.alt.request: pick.alt.name for pick in picks})


def _omit_requests_covering_all(config: list[Obj], claim: Obj, chosen: dict[str, str]) -> list[Obj]:
    """Upstream 1.37 leaves `requests` out of a config that covers every top-level request of the claim
    (empty means all): a request is covered by its own name or by the name of its chosen subrequest."""
    top_level = [str(r.get("name")) for r in (claim.get("spec", {}).get("devices") or {}).get("requests") or []]
    for item in config:
        names = set(item.get("requests") or ())
        reaches_all = all(r in names or chosen.get(r, r) in names for r in top_level)
        if names and top_level and reaches_all:
            del item["requests"]
    return config


def _config_body(entry: Obj) -> Obj:
    return {k: v for k, v in entry.items() if k not in ("requests", "source")}


def allocation_node_selector(picks: Sequence[Pick], node: Obj, gates: Gates) -> Obj | None:
    """Pinned to the node when any device is node-local (or binds to its node); otherwise the devices' selector
    terms merged into one; None when every device is usable everywhere."""
    node_name = str((node.get("metadata") or {}).get("name", ""))
    binds_to_node = gates.binding
    if any(
            p.device.node_name is not None or (binds_to_node and p.device.binds_to_node) for p in picks):
        pinned: Obj = pinned_to(node_name)
        return pinned
    expressions: list[Obj] = []
    fields: list[Obj] = []
    for pick in picks:
        if pick.device.node_selector is None:
            continue
        terms = pick.device.node_selector.get("nodeSelectorTerms") or []
        if len(terms) != 1:
            raise AllocationError(f"device {pick.device.driver}/{pick.device.pool}/{pick.device.name}: node selector "
                                  f"has {len(terms)} terms, exactly one is supported")
        for req in terms[0].get("matchExpressions") or []:
            if req not in expressions:
                expressions.append(req)
        for req in terms[0].get("matchFields") or []:
            if req not in fields:
                fields.append(req)
    if not expressions and not fields:
        return None
    term: Obj = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}
