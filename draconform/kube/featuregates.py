"""Feature gates per component, with the defaults of the Kubernetes release a component claims to be.

Only the DRA gates the seed KEPs and the harness touch are listed; an unknown gate name is an error so a
typo in a scenario cannot silently test the default."""

from __future__ import annotations

from collections.abc import Mapping

# gate -> (first release it exists, release it became on by default or None while off by default)
GATE_HISTORY: dict[str, tuple[str, str | None]] = {
    "DynamicResourceAllocation": ("1.26", "1.34"),  # beta and off by default in 1.32 and 1.33
    "DRAAdminAccess": ("1.32", "1.34"),
    "DRAPrioritizedList": ("1.33", "1.34"),
    "DRAResourceClaimDeviceStatus": ("1.32", "1.33"),
    "DRADeviceBindingConditions": ("1.34", "1.36"),
    "DRAPartitionableDevices": ("1.33", "1.36"),
    "DRAConsumableCapacity": ("1.34", "1.36"),
    "DRADeviceTaints": ("1.33", "1.36"),
    "DRADeviceTaintRules": ("1.35", "1.37"),  # split from DRADeviceTaints in 1.35; GA and on in 1.37
    "DRAExtendedResource": ("1.34", "1.36"),  # GA in 1.37
    "DRAListTypeAttributes": ("1.36", None),
    "DRANodeAllocatableResources": ("1.36", None),
    "DRADeviceCompatibilityGroups": ("1.37", None),
    "DRAPartitionableDevicesType": ("1.37", None),
    "DRAOptionalNodeOperations": ("1.37", None),
    "DRADerivedAttributes": ("1.37", None),
    "DRAFractionalCapacityRange": ("1.37", "1.37"),  # beta in 1.37: milli-unit validRange arithmetic
    "DRAHandlePermanentDriverFailures": ("1.37", None),
}

CURRENT_RELEASE = "1.37"

# gate -> the release from which it is locked to its default: a component refuses to start when told otherwise
# (upstream's LockToDefault, pkg/features/kube_features.go of v1.36.2).
LOCKED_SINCE: dict[str, str] = {
    "DynamicResourceAllocation": "1.35",
    "DRAAdminAccess": "1.36",
}

# gate -> the gates it needs on: from 1.35 a component refuses to start with a gate on whose dependency is off
# (upstream's defaultKubernetesFeatureGateDependencies, checked when the gates are set; for the gates listed above).
DEPENDS_ON: dict[str, tuple[str, ...]] = {
    "DRAAdminAccess": ("DynamicResourceAllocation",),
    "DRAConsumableCapacity": ("DynamicResourceAllocation",),
    "DRADeviceBindingConditions": ("DynamicResourceAllocation", "DRAResourceClaimDeviceStatus"),
    "DRADeviceTaintRules": ("DRADeviceTaints",),
    "DRADeviceTaints": ("DynamicResourceAllocation",),
    "DRAExtendedResource": ("DynamicResourceAllocation",),
    "DRAListTypeAttributes": ("DynamicResourceAllocation",),
    "DRANodeAllocatableResources": ("DynamicResourceAllocation",),
    "DRAPartitionableDevices": ("DynamicResourceAllocation",),
    "DRAPrioritizedList": ("DynamicResourceAllocation",),
}
DEPENDENCIES_CHECKED_SINCE = "1.35"


ON_WORDS = ("true", "on")
OFF_WORDS = ("false", "off")


def parse_gate_settings(text: str) -> dict[str, bool]:
    """Gate settings as the command line and the scenarios write them: "A=true,B=false" (on/off are
    accepted too, in any case); the item "defaults" stands for no override. Every name must be a known
    gate, so a typo cannot silently test the default. Raises ValueError naming the bad item."""
    gates: dict[str, bool] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        if item == "defaults":
            continue
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip().lower()
        if not sep or value not in ON_WORDS + OFF_WORDS:
            raise ValueError(f"feature gate setting {item!r} must be NAME=true or NAME=false (or on/off)")
        if name not in GATE_HISTORY:
            raise ValueError(f"unknown feature gate {name!r}; known: {', '.join(sorted(GATE_HISTORY))}")
        gates[name] = value in ON_WORDS
    return gates


def startup_refusals(overrides: Mapping[str, bool], release: str = CURRENT_RELEASE) -> list[str]:
    """Why a component of `release` given these gate settings would refuse to start, in upstream's words: a
    locked gate set away from its default, or a gate on whose dependency is off. Empty when it starts."""
    refusals: list[str] = []
    wanted = release_tuple(release)
    values = defaults_for(release)
    for gate, value in overrides.items():
        locked = LOCKED_SINCE.get(gate)
        if locked is not None and release_tuple(locked) <= wanted and gate in values and value != values[gate]:
            refusals.append(f"cannot set feature gate {gate} to {str(value).lower()}, feature is locked to "
                            f"{str(values[gate]).lower()}")
        if gate in values:
            values[gate] = value
    if refusals:  # upstream stops at a setting it refuses, before it looks at dependencies
        return refusals
    if wanted >= release_tuple(DEPENDENCIES_CHECKED_SINCE):
        for gate, needs in DEPENDS_ON.items():
            off = [need for need in needs if not values.get(need, False)]
            if values.get(gate, False) and off:
                refusals.append(f"{gate} is enabled, but depends on features that are disabled: [{' '.join(off)}]")
    return refusals


def release_tuple(release: str) -> tuple[int, int]:
    major, minor = release.split(".")[:2]
    return int(major), int(minor)


def defaults_for(release: str = CURRENT_RELEASE) -> dict[str, bool]:
    """Gate defaults of `release`; gates the release does not know yet are absent."""
    wanted = release_tuple(release)
    gates: dict[str, bool] = {}
    for gate, (introduced, on_since) in GATE_HISTORY.items():
        if release_tuple(introduced) <= wanted:
            gates[gate] = on_since is not None and release_tuple(on_since) <= wanted
    return gates


class FeatureGates:
    """An immutable set of gate values; gates unknown to the component's release read as off."""

    def __init__(self, overrides: Mapping[str, bool] | None = None, release: str = CURRENT_RELEASE) -> None:
        self.release = release
        self._values = defaults_for(release)
        for gate, value in (overrides or {}).items():
            if gate not in GATE_HISTORY:
                raise ValueError(f"unknown feature gate {gate!r}; known: {', '.join(sorted(GATE_HISTORY))}")
            if gate in self._values:  # an older release simply does not have a newer gate
                self._values[gate] = value

    def enabled(self, *gates: str) -> bool:
        """True when every named gate is on."""
        return all(self._values.get(gate, False) for gate in gates)

    def known(self, gate: str) -> bool:
        """Whether this component's release has the gate at all (an older component does not)."""
        return gate in self._values

    def as_dict(self) -> dict[str, bool]:
        return dict(self._values)

    def __repr__(self) -> str:
        return f"FeatureGates({self._values!r}, release={self.release!r})"
