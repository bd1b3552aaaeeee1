"""Claims read into request plans (KEP-4381 "Device requests"; KEP-4816 prioritized alternatives; KEP-5075 capacity
requests): each request's alternatives with the selectors of its class, the constraints, the class configs, the
structural checks that make a claim unallocatable anywhere (`AllocationError`), and why a plan does not fit on a
node. The oracle does not use it: it transcribes the same rules on its own, so the differential tests catch a
mistake here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from draconform.kube.values import parse_quantity
from draconform.reference.allocator.gates import Gates
from draconform.reference.allocator.interface import AllocationError
from draconform.sut import Obj

MAX_DEVICES_PER_CLAIM = 32  # AllocationResultsMaxSize: results of one claim

@dataclass(frozen=True)
class Alternative:
    """One way to satisfy a request: the request itself (`exactly`) or one of its `firstAvailable` entries."""

    claim_index: int
    request: str  # top-level request name
    sub: str | None  # subrequest name for firstAvailable
    class_name: str
    selectors: tuple[str, ...]  # the class's selectors first, then the request's
    all_mode: bool
    count: int
    admin_access: bool
    tolerations: tuple[Obj, ...]
    capacity: tuple[tuple[str, Fraction], ...] = ()  # KEP-5075 capacity.requests, as parsed quantities

    @property
    def name(self) -> str:
        """The name results and constraints use: "req" or "req/sub"."""
        return f"{self.request}/{self.sub}" if self.sub else self.request


@dataclass(frozen=True)
class Constraint:
    kind: str  # "match" or "distinct"
    attribute: str
    requests: frozenset[str]  # empty: every request of the claim

    def applies(self, alt: Alternative) -> bool:
        return not self.requests or alt.request in self.requests or alt.name in self.requests


@dataclass
class ClaimPlan:
    claim: Obj
    requests: list[list[Alternative]]  # per request, its alternatives in order of preference
    constraints: list[Constraint]
    class_configs: dict[str, list[Obj]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(self.claim.get("metadata", {}).get("name", ""))


def plan_claims(claims: Sequence[Obj], classes: Mapping[str, Obj], gates: Gates) -> list[ClaimPlan]:
    """Read each claim's requests and constraints, refusing what no node could allocate (AllocationError):
    a missing DeviceClass, a selector without CEL, a gated feature whose gate is off, more than 32 devices."""
    plans = []
    for index, claim in enumerate(claims):
        name = claim.get("metadata", {}).get("name", "")
        devices = (claim.get("spec") or {}).get("devices") or {}
        plan = ClaimPlan(claim, [], [])
        for request in devices.get("requests") or []:
            req_name = request.get("name", "")
            where = f"claim {name}, request {req_name}"
            if request.get("firstAvailable"):
                if not gates.prioritized_list:
                    raise AllocationError(f"{where}: firstAvailable is not enabled (feature gate DRAPrioritizedList)")
                alts = [_alternative(index, req_name, sub.get("name", ""), sub, classes, gates, plan,
                                     f"{where}/{sub.get('name', '')}", allow_admin=False)
                        for sub in request["firstAvailable"]]
            else:
                alts = [_alternative(index, req_name, None, request.get("exactly") or {}, classes, gates, plan, where,
                                     allow_admin=True)]
            plan.requests.append(alts)
        for raw in devices.get("constraints") or []:
            if raw.get("matchAttribute"):
                plan.constraints.append(Constraint("match", raw["matchAttribute"],
                                                   frozenset(raw.get("requests") or ())))
            elif raw.get("distinctAttribute"):
                if gates.stable_allocator:
                    raise AllocationError(f"claim {name}: distinctAttribute constraints are not supported with "
                                          "DRAConsumableCapacity, DRADeviceBindingConditions, "
                                          "DRAListTypeAttributes and DRADeviceCompatibilityGroups all off")
                plan.constraints.append(Constraint("distinct", raw["distinctAttribute"],
                                                   frozenset(raw.get("requests") or ())))
            else:
                raise AllocationError(f"claim {name}: constraint with an unknown type")
        plans.append(plan)
    return plans


def _alternative(index: int, request: str, sub: str | None, spec: Obj, classes: Mapping[str, Obj], gates: Gates,
                 plan: ClaimPlan, where: str, allow_admin: bool) -> Alternative:
    # Grade D on purpose (radon): one flat check per field of a request, each with its own error, in the order
    # upstream reports them; splitting it would only scatter that list.
    class_name = spec.get("deviceClassName") or ""
    if not class_name:
        raise AllocationError(f"{where}: no device class name")
    device_class = classes.get(class_name)
    if device_class is None:
        raise AllocationError(f"{where}: device class {class_name} does not exist")
    selectors: list[str] = []
    class_selectors = (device_class.get("spec") or {}).get("selectors")
    for selector in list(class_selectors or []) + list(spec.get("selectors") or []):
        expression = (selector.get("cel") or {}).get("expression")
        if expression is None:
            raise AllocationError(f"{where}: a selector has no CEL expression (unknown selector type)")
        selectors.append(expression)
    admin = bool(spec.get("adminAccess")) and allow_admin
    if admin and not gates.admin_access:
        raise AllocationError(f"{where}: admin access is not enabled (feature gate DRAAdminAccess)")
    capacity: list[tuple[str, Fraction]] = []
    # D-4381-8: upstream's stable allocator has no capacity requests at all, so it ignores them.
    if (spec.get("capacity") or {}).get("requests") and not gates.stable_allocator:
        if not gates.consumable_capacity:
            raise AllocationError(f"{where}: capacity requests are not enabled (feature gate DRAConsumableCapacity)")
        for capacity_name, amount in sorted(spec["capacity"]["requests"].items()):
            try:
                capacity.append((str(capacity_name), parse_quantity(amount)))
            except ValueError as exc:
                raise AllocationError(f"{where}: capacity request {capacity_name}: {exc}") from exc
    mode = spec.get("allocationMode") or "ExactCount"
    if mode not in ("ExactCount", "All"):
        raise AllocationError(f"{where}: unsupported allocation mode {mode}")
    count = int(spec.get("count") or 1) if mode == "ExactCount" else 0
    plan.class_configs.setdefault(class_name, list((device_class.get("spec") or {}).get("config") or []))
    return Alternative(index, request, sub, class_name, tuple(selectors), mode == "All", count, admin,
                       tuple(spec.get("tolerations") or ()), tuple(capacity))


def check_claim_size(plan: ClaimPlan, all_counts: Mapping[tuple[int, str], int]) -> None:
    """The smallest number of devices the claim can need must not exceed 32 (each request at its cheapest
    alternative; All requests count the devices they would take on this node)."""
    least = 0
    for alts in plan.requests:
        least += min(all_counts.get((alt.claim_index, alt.name), 0) if alt.all_mode else alt.count for alt in alts)
    if least > MAX_DEVICES_PER_CLAIM:
        raise AllocationError(f"claim {plan.name}: needs at least {least} devices, which exceeds the claim limit "
                              f"of {MAX_DEVICES_PER_CLAIM}")


def failure_reason(plan: ClaimPlan, candidates: Callable[[Alternative], int]) -> str:
    """Why a claim did not fit on a node: the first request without enough matching devices, else a summary.
    `candidates` counts the devices an alternative may take there (in use or not)."""
    for alts in plan.requests:
        counts = [candidates(alt) for alt in alts]
        if all(n == 0 or (not a.all_mode and n < a.count) for a, n in zip(alts, counts, strict=True)):
            alt = alts[0]
            need = "at least one" if alt.all_mode else str(alt.count)
            return (f"request {alt.request}: needs {need} matching device(s) of class {alt.class_name}, "
                    f"{counts[0]} match on this node")
    return ("cannot allocate all claims: matching devices are in use, their counters are exhausted, or the "
            "constraints cannot be met together")
