"""Defective functions of the known-bad variants added for issue 39's last pass (gated rules under both
settings, KEP-5322's faulty device, the classic claim controller), each swapped in by an override
(draconform.mutation.overrides) that the per-KEP tuples name. Kept apart from the variants' listing so that
the tuples stay a table: name, rule, behaviour, override."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from draconform.kube.featuregates import FeatureGates
from draconform.mutation.overrides import Wrap
from draconform.mutation.variant import Variant
from draconform.reference.controllers.classic_claims import ClassicClaimController
from draconform.reference.drivers.driver import ReferenceDriver
from draconform.reference.drivers.plugin import InventoryDevice
from draconform.sut import ApiError, Obj

Original = Callable[..., Any]


# --- KEP-5322: the driver's taint of a device that failed permanently ---------------------------------------
def driver_taints_nothing(self: ReferenceDriver, devices: list[InventoryDevice]) -> None:
    """The driver refuses the claim permanently but never marks the device unusable."""


def driver_taints_whole_pool(self: ReferenceDriver, devices: list[InventoryDevice]) -> None:
    """The driver taints every device of the broken device's pool, the healthy ones too."""
    pools = {device.pool for device in devices}
    self._publisher.tainted |= {key for key in self._devices if key[0] in pools}
    self._dirty = True


# --- KEP-3063-CLASSIC: a generated claim is not rewritten from the template -----------------------------------
def classic_recreates_changed_claims(original: Original, self: ClassicClaimController, pod: Obj) -> None:
    """A generated claim whose spec no longer matches the pod's template is deleted, so that the next pass creates
    it from the template again (a spec cannot be updated, so this is how a controller rewrites it)."""
    namespace = pod["metadata"]["namespace"]
    for entry in pod["spec"].get("resourceClaims") or []:
        template = entry.get("template")
        if template is None:
            continue
        name = f'{pod["metadata"]["name"]}-{entry["name"]}'
        existing = self._store.get("ResourceClaim", name, namespace)
        wanted = {"allocationMode": "Delayed", **(template.get("spec") or {})}
        owned = existing is not None and any(ref.get("uid") == pod["metadata"]["uid"]
                                             for ref in existing["metadata"].get("ownerReferences") or [])
        if owned and existing is not None and existing.get("spec") != wanted:
            with suppress(ApiError):  # already going: the next pass creates it anew all the same
                self._store.delete("ResourceClaim", name, namespace)
    original(self, pod)


# --- a component that ignores one gate's setting: each gated rule killed under both settings ------------------
def gate_forced(component: str, gate: str, value: bool) -> Original:
    """A Wrap of ReferenceCluster._gates: `component` acts as if `gate` were `value` whatever it was configured with
    (a release too old to have the gate still lacks it). Paired, value True and value False, for one rule, the
    two variants show that the rule's scenarios judge it under each setting."""

    wanted = component

    def forced(original: Original, self: Any, component: str) -> FeatureGates:
        gates: FeatureGates = original(self, component)
        if component != wanted or not gates.known(gate):
            return gates
        return FeatureGates({**gates.as_dict(), gate: value}, release=gates.release)

    return forced


CLUSTER_GATES = "draconform.reference.cluster:ReferenceCluster._gates"


PAIR_BEHAVIOUR = "{component} acts as if {gate} were {word}, whatever it is set to"
PAIR_PATTERN = re.compile(r"^(?P<component>\S+) acts as if (?P<gate>\S+) were (?:on|off), whatever it is set to$")


def pair_of(variant: Variant) -> tuple[str, str] | None:
    """(component, gate) of a variant `gate_pair` built, else None."""
    found = PAIR_PATTERN.match(variant.what)
    return (found["component"], found["gate"]) if found and variant.name.endswith(("-as-if-on", "-as-if-off")) else None


def gate_pair(rule: str, component: str, gate: str, name: str) -> tuple[Variant, Variant]:
    """The two variants of `rule` whose `component` ignores `gate`'s setting: `<name>-as-if-on` acts as if it
    were on (killed by a row with the gate off), `<name>-as-if-off` as if it were off (killed by a row with it on)."""
    return tuple(  # type: ignore[return-value]
        Variant(f"{name}-as-if-{word}", rule, PAIR_BEHAVIOUR.format(component=component, gate=gate, word=word),
                overrides=(Wrap(CLUSTER_GATES, gate_forced(component, gate, value)),))
        for word, value in (("on", True), ("off", False)))
