"""Fields that exist only behind feature gates, as one table, and what the API server does with them
when a gate is off: drop them on create, and on update keep them only when the stored object already
used the field (the usual Kubernetes rule for disabled fields, docs/decisions.md D-5963-4). An API server
of a release without the field drops it on every write and does not serve it (D-5963-5).

The same table, read with the gate history (`draconform.kube.featuregates.GATE_HISTORY`), says which
release knows which field: a component of an older release has no such field in its types, so it decodes
objects without it (`unknown_fields`, `without_fields`; the reference's components of an older release read
through that decoding). And it tells `draconform validate` which fields need a gate that is off by default in
the chosen Kubernetes release, so it can warn."""

from __future__ import annotations

import copy
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from draconform.kube.featuregates import GATE_HISTORY, FeatureGates, release_tuple
from draconform.validation.problems import MapKey, Path, Problem

BINDING = ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")
RULE = "DRA-API/DISABLED-FIELDS-DROPPED"
OLDER_RULE = "DRA-API/OLDER-RELEASE-UNKNOWN-FIELDS"  # a release without the field at all


@dataclass(frozen=True)
class GatedField:
    """`path` is dotted; `*` stands for every item of a list or every value of a map."""

    kind: str
    gates: tuple[str, ...]
    path: str
    # The first release with the field under this name and shape, when later than its gates (an alpha field
    # reshaped while its gate stayed): an older release does not know it, whatever its gates say.
    since: str | None = None
    # The first release without it (an alpha field renamed and reshaped later): that release and newer ones do not
    # know it.
    until: str | None = None
    steps: tuple[str, ...] = field(init=False, repr=False, compare=False)  # `path` split once: read on every write

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", tuple(self.path.split(".")))


def _claim_spec(kind: str, prefix: str) -> list[GatedField]:
    requests = f"{prefix}.devices.requests.*"
    return [
        GatedField(kind, ("DRAPrioritizedList",), f"{requests}.firstAvailable"),
        GatedField(kind, ("DRAAdminAccess",), f"{requests}.exactly.adminAccess"),
        GatedField(kind, ("DRADeviceTaints",), f"{requests}.exactly.tolerations"),
        GatedField(kind, ("DRADeviceTaints",), f"{requests}.firstAvailable.*.tolerations"),
        GatedField(kind, ("DRAConsumableCapacity",), f"{requests}.exactly.capacity"),
        GatedField(kind, ("DRAConsumableCapacity",), f"{requests}.firstAvailable.*.capacity"),
        GatedField(kind, ("DRAConsumableCapacity",), f"{prefix}.devices.constraints.*.distinctAttribute"),
        GatedField(kind, ("DRADerivedAttributes",), f"{requests}.exactly.derivedAttributes"),
        GatedField(kind, ("DRADerivedAttributes",), f"{requests}.firstAvailable.*.derivedAttributes"),
    ]


_DEVICE = "spec.devices.*"
_RESULT = "status.allocation.devices.results.*"

GATED_FIELDS: tuple[GatedField, ...] = (
    GatedField("DeviceClass", ("DRAExtendedResource",), "spec.extendedResourceName"),
    GatedField("ResourceSlice", ("DRAPartitionableDevices",), "spec.sharedCounters"),
    GatedField("ResourceSlice", ("DRAPartitionableDevices",), "spec.perDeviceNodeSelection"),
    GatedField("ResourceSlice", ("DRAPartitionableDevices",), f"{_DEVICE}.consumesCounters"),
    GatedField("ResourceSlice", ("DRAPartitionableDevices",), f"{_DEVICE}.nodeName"),
    GatedField("ResourceSlice", ("DRAPartitionableDevices",), f"{_DEVICE}.nodeSelector"),
    GatedField("ResourceSlice", ("DRAPartitionableDevices",), f"{_DEVICE}.allNodes"),
    GatedField("ResourceSlice", ("DRADeviceTaints",), f"{_DEVICE}.taints"),
    GatedField("ResourceSlice", BINDING, f"{_DEVICE}.bindsToNode"),
    GatedField("ResourceSlice", BINDING, f"{_DEVICE}.bindingConditions"),
    GatedField("ResourceSlice", BINDING, f"{_DEVICE}.bindingFailureConditions"),
    GatedField("ResourceSlice", ("DRAConsumableCapacity",), f"{_DEVICE}.allowMultipleAllocations"),
    GatedField("ResourceSlice", ("DRAConsumableCapacity",), f"{_DEVICE}.capacity.*.requestPolicy"),
    GatedField("ResourceSlice", ("DRADeviceCompatibilityGroups",), f"{_DEVICE}.consumesCounters.*.compatibilityGroups"),
    # Only the list value is dropped: an attribute that had nothing else is then left without a value.
    *(GatedField("ResourceSlice", ("DRAListTypeAttributes",), f"{_DEVICE}.attributes.*.{form}")
      for form in ("ints", "bools", "strings", "versions")),
    # 1.36's alpha field of the same gate was `nodeAllocatableResourceMappings`, of another shape (1.36 only)
    GatedField("ResourceSlice", ("DRANodeAllocatableResources",), f"{_DEVICE}.nodeAllocatableResources", "1.37"),
    GatedField("ResourceSlice", ("DRANodeAllocatableResources",), f"{_DEVICE}.nodeAllocatableResourceMappings",
               until="1.37"),
    GatedField("ResourceSlice", ("DRAPartitionableDevicesType",), "spec.partitionTypeAttribute"),
    GatedField("ResourceSlice", ("DRAOptionalNodeOperations",), "spec.skipNodeOperations"),
    *_claim_spec("ResourceClaim", "spec"),
    *_claim_spec("ResourceClaimTemplate", "spec.spec"),
    GatedField("ResourceClaim", ("DRAResourceClaimDeviceStatus",), "status.devices"),
    GatedField("ResourceClaim", BINDING, "status.allocation.allocationTimestamp"),
    GatedField("ResourceClaim", BINDING, f"{_RESULT}.bindingConditions"),
    GatedField("ResourceClaim", BINDING, f"{_RESULT}.bindingFailureConditions"),
    GatedField("ResourceClaim", ("DRAAdminAccess",), f"{_RESULT}.adminAccess"),
    GatedField("ResourceClaim", ("DRADeviceTaints",), f"{_RESULT}.tolerations"),
    GatedField("ResourceClaim", ("DRAConsumableCapacity",), f"{_RESULT}.shareID"),
    GatedField("ResourceClaim", ("DRAConsumableCapacity",), f"{_RESULT}.consumedCapacity"),
    GatedField("ResourceClaim", ("DRADeviceCompatibilityGroups",), f"{_RESULT}.compatibilityGroups"),
    GatedField("ResourceClaim", ("DRAOptionalNodeOperations",), f"{_RESULT}.skipNodeOperations"),
    # the scheduler's record of a pod's extended resource claim (KEP-5004; upstream's pod dropDisabledPodStatusFields)
    GatedField("Pod", ("DRAExtendedResource",), "status.extendedResourceClaimStatus"),
)

_BY_KIND: dict[str, tuple[GatedField, ...]] = {}
for _field in GATED_FIELDS:
    _BY_KIND[_field.kind] = (*_BY_KIND.get(_field.kind, ()), _field)



def _find(value: Any, steps: tuple[str, ...], path: Path = ()) -> Iterator[tuple[Path, dict[str, Any], str]]:
    """Every place where the field at `steps` is present: (path, containing dict, key)."""
    head, rest = steps[0], steps[1:]
    if head == "*":
        if isinstance(value, list):
            items: Any = enumerate(value)
        elif isinstance(value, dict):
            items = ((MapKey(k), v) for k, v in value.items())
        else:
            return
        for key, item in items:
            yield from _find(item, rest, (*path, key))
        return
    if not isinstance(value, dict) or value.get(head) is None:
        return
    if not rest:
        yield (*path, head), value, head
    else:
        yield from _find(value[head], rest, (*path, head))


def _present(value: Any, steps: tuple[str, ...], at: int = 0) -> bool:
    """Whether `_find` would find anything: the same walk without a generator per level, as the store asks it for
    every disabled gated field on every write and the field is almost never there."""
    head = steps[at]
    if head == "*":
        if isinstance(value, list):
            items: Any = value
        elif isinstance(value, dict):
            items = value.values()
        else:
            return False
        return any(_present(item, steps, at + 1) for item in items)
    if not isinstance(value, dict) or value.get(head) is None:
        return False
    return at + 1 == len(steps) or _present(value[head], steps, at + 1)


def in_use(obj: Any, gated: GatedField) -> bool:
    return _present(obj, gated.steps)


def known_to(gated: GatedField, gates: FeatureGates) -> bool:
    """Whether a component of `gates.release` has the field at all: every gate guarding it exists in that
    release (whatever its value), and so does the field itself."""
    if gated.since is not None and release_tuple(gates.release) < release_tuple(gated.since):
        return False
    if gated.until is not None and release_tuple(gates.release) >= release_tuple(gated.until):
        return False
    return all(gates.known(gate) for gate in gated.gates)


def unknown_fields(gates: FeatureGates) -> tuple[GatedField, ...]:
    """The gated fields a component of `gates.release` does not know; empty for the current release."""
    return tuple(gated for gated in GATED_FIELDS if not known_to(gated, gates))


def without_fields(obj: dict[str, Any], fields: Iterable[GatedField]) -> dict[str, Any]:
    """`obj` as a release without `fields` decodes it: a copy with every one of them gone, or `obj` itself
    when it carries none of them."""
    present = [gated for gated in fields if gated.kind == obj.get("kind") and in_use(obj, gated)]
    if not present:
        return obj
    obj = copy.deepcopy(obj)
    for gated in present:
        for _, parent, key in list(_find(obj, gated.steps)):
            del parent[key]
    return obj


def strip_disabled(obj: dict[str, Any], old: dict[str, Any] | None, gates: FeatureGates) -> list[Problem]:
    """Drop, in place, every gated field whose gates are not all on, unless `old` already used it and the
    release knows the field: a release without the field has nowhere to keep it, so it is lost on every
    write, the stored object's copy included (docs/decisions.md D-5963-5). Returns one warning per dropped
    field, for tools that want to say so."""
    dropped: list[Problem] = []
    for gated in _disabled(obj.get("kind", ""), gates):
        if not _present(obj, gated.steps) or (old is not None and _feature_kept(old, gated, gates)):
            continue
        for path, parent, key in list(_find(obj, gated.steps)):
            del parent[key]
            rule = RULE if known_to(gated, gates) else OLDER_RULE
            dropped.append(Problem(path, _dropped_message(gated, gates), rule, "warning"))
    return dropped


# The gated fields of a kind whose gates are not all on, per FeatureGates (immutable) object: the store asks on
# every write. Weak keys, so a cluster's gates go with it.
_DISABLED: weakref.WeakKeyDictionary[FeatureGates, dict[str, tuple[GatedField, ...]]] = weakref.WeakKeyDictionary()


def _disabled(kind: str, gates: FeatureGates) -> tuple[GatedField, ...]:
    by_kind = _DISABLED.setdefault(gates, {})
    found = by_kind.get(kind)
    if found is None:
        found = by_kind[kind] = tuple(gated for gated in _BY_KIND.get(kind, ())
                                      if not gates.enabled(*gated.gates) or not known_to(gated, gates))
    return found


# The fields one "feature in use" check of upstream's strategies looks at: a gate's fields of one kind, in the same
# part (spec or status). An update keeps them all once the stored object uses any of them.
_FEATURES: dict[tuple[str, tuple[str, ...], str], tuple[GatedField, ...]] = {}
for _field in GATED_FIELDS:
    _key = (_field.kind, _field.gates, _field.steps[0])
    _FEATURES[_key] = (*_FEATURES.get(_key, ()), _field)


def _feature_kept(old: dict[str, Any], gated: GatedField, gates: FeatureGates) -> bool:
    """Whether an update keeps a disabled field: the stored object uses the field or another of its feature
    (upstream keeps, say, a new requestPolicy when the stored slice has allowMultipleAllocations)."""
    return any(_kept_from(old, other, gates) for other in _FEATURES[(gated.kind, gated.gates, gated.steps[0])])


def _kept_from(old: dict[str, Any], gated: GatedField, gates: FeatureGates) -> bool:
    """Whether an update keeps a disabled field because the stored object already used it: only a release
    that knows the field can."""
    known = known_to(gated, gates)
    return known and in_use(old, gated)


def _dropped_message(gated: GatedField, gates: FeatureGates) -> str:
    missing = [gate for gate in gated.gates if not gates.enabled(gate)]
    unknown = [gate for gate in missing if not gates.known(gate)]
    if not missing and gated.until is not None and release_tuple(gates.release) >= release_tuple(gated.until):
        return f"dropped: Kubernetes {gates.release} does not have this field (releases before {gated.until} only)"
    if not missing:  # the gates are on, the field came later (`since`)
        return f"dropped: Kubernetes {gates.release} does not have this field (from {gated.since})"
    if unknown:
        since = ", ".join(f"{gate} (from {GATE_HISTORY[gate][0]})" for gate in unknown)
        return f"dropped: Kubernetes {gates.release} does not have feature gate {since}"
    return f"dropped: feature gate {', '.join(missing)} is off"


def default_off_warnings(obj: dict[str, Any], gates: FeatureGates) -> list[Problem]:
    """A warning for every gated field present whose gate is off by default in `gates.release`."""
    warnings: list[Problem] = []
    defaults = FeatureGates(release=gates.release)
    for gated in _BY_KIND.get(obj.get("kind", ""), ()):
        if not known_to(gated, gates):
            continue  # dropped as unknown to the release, which says so itself
        off = [gate for gate in gated.gates if defaults.known(gate) and not defaults.enabled(gate)]
        if not off or not gates.enabled(*gated.gates):
            continue
        for path, _, _ in _find(obj, gated.steps):
            warnings.append(Problem(
                path,
                f"needs feature gate {' and '.join(off)}, off by default in Kubernetes {gates.release}",
                RULE,
                "warning",
            ))
    return warnings
