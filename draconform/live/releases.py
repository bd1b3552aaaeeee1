"""A live cluster of an older release (1.34, 1.35, 1.36) judged on what that release serves.

The scenarios are written against the current release (1.37). Run on a cluster whose cluster config declares an
older `release`, each object a scenario writes is carried to that release, or the scenario is skipped:

- the version: each kind is written in a version the release serves (DeviceTaintRule at resource.k8s.io/v1beta2
  on 1.36, where DRADeviceTaintRules serves it) by upstream's conversion (`draconform.validation.versions`), and
  read back converted to v1, the version the steps expect;
- the names: a field the release calls otherwise is renamed both ways (Device.nodeAllocatableResources was the
  alpha `nodeAllocatableResourceMappings` in 1.36, a flatter shape: an entry is carried over only where the two
  shapes say the same thing);
- what the release lacks: a scenario written for the current release (it pins no component to the cluster's
  release) that writes a field the release has not got, or whose gate the cluster runs otherwise than the
  scenario expects (the current release's default, or what the scenario asked), a kind the release does not
  serve, or `includes()` in CEL where the release has no such function, is skipped (`Unsupported`) naming the
  release and what it lacks, never failed.

A scenario that pins its kube-apiserver to the cluster's release expects that release's behaviour, a field it
lacks dropped included (the gated-field table's "older release" rule): its writes of such objects go with
fieldValidation=Warn, as a client that does not ask for strictness (client-go's default) writes, so the API
server drops the field instead of refusing the object (Strict, kubectl's default, refuses it whole)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from draconform.kube.featuregates import CURRENT_RELEASE, GATE_HISTORY, FeatureGates, release_tuple
from draconform.sut import ApiError, ComponentConfig, FieldCause, Obj, copy_object
from draconform.validation.gates import GATED_FIELDS, GatedField, in_use, known_to
from draconform.validation.versions import GROUP, SERVED, from_v1, to_v1, version_of

APISERVER = "kube-apiserver"
# A kind a release serves only while a gate is on: kind -> version -> gate.
VERSION_GATES: dict[str, dict[str, str]] = {"DeviceTaintRule": {"v1beta2": "DRADeviceTaintRules"}}
# Device.nodeAllocatableResources, called so from RENAMED_UNTIL; before it, the alpha field had another name.
NODE_ALLOCATABLE = "nodeAllocatableResources"
NODE_ALLOCATABLE_BEFORE = "nodeAllocatableResourceMappings"
RENAMED_UNTIL = "1.37"
# CEL functions a release before `since` has only with a gate on: name -> (since, gate).
CEL_FUNCTIONS: dict[str, tuple[str, str]] = {"includes": ("1.37", "DRAListTypeAttributes")}
_CALL = {name: re.compile(rf"\b{name}\s*\(") for name in CEL_FUNCTIONS}
# 1.37's node-allocatable resource names; 1.36 takes any native resource name (no domain), so a name outside
# these is judged otherwise there.
_NODE_ALLOCATABLE_NAME = re.compile(r"^(cpu|memory|hugepages-[0-9]+(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?)$")


@dataclass(frozen=True)
class ReleaseView:
    """What the cluster serves (`cluster`: its release and gates) against what the scenario expects
    (`expected`: its kube-apiserver's release and gates, the current release's defaults unless it asked)."""

    cluster: FeatureGates
    expected: FeatureGates
    asked: frozenset[str]  # gates the scenario set itself (whether they match is the cluster choice's business)

    @property
    def release(self) -> str:
        return self.cluster.release

    @property
    def current(self) -> bool:
        """The cluster runs the current release: everything is written as the steps wrote it."""
        return release_tuple(self.release) >= release_tuple(CURRENT_RELEASE)

    @property
    def pinned(self) -> bool:
        """The scenario asked for the cluster's own release: it expects that release's behaviour."""
        return self.expected.release == self.release

    # --- what the release lacks -------------------------------------------------------------------------
    def lacks(self, obj: Obj) -> str | None:
        """Why the cluster cannot judge `obj` as the scenario means it (None: it can)."""
        if self.current:
            return None
        kind = str(obj.get("kind"))
        if version_of(obj) is not None and kind in SERVED and self.served_version(kind) is None:
            return self._no_kind(kind)
        if self.pinned:
            return None  # the scenario expects this release, missing fields dropped included
        v1, _ = to_v1(obj)
        for gated in GATED_FIELDS:
            if gated.kind == kind and in_use(v1, gated):
                reason = self._field_lacking(gated, v1)
                if reason:
                    return reason
        return self._cel_lacking(v1)

    def _no_kind(self, kind: str) -> str:
        versions = VERSION_GATES.get(kind, {})
        offered = [f"{GROUP}/{v} with {gate} on" for v, gate in versions.items()
                   if release_tuple(SERVED[kind][v][0]) <= release_tuple(self.release)]
        if offered:
            return (f"Kubernetes {self.release} serves {kind} only as {', '.join(offered)}; the cluster config "
                    f"says {', '.join(versions.values())} is off")
        since = min((first for first, _ in SERVED[kind].values()), key=release_tuple)
        return f"Kubernetes {self.release} does not serve {kind} (served from {since})"

    def _field_lacking(self, gated: GatedField, v1: Obj) -> str | None:
        field = f"{gated.kind} {gated.path.replace('.*', '[*]')}"
        absent = [gate for gate in gated.gates if not self.cluster.known(gate)]
        if absent:
            since = ", ".join(f"{gate} from {GATE_HISTORY[gate][0]}" for gate in absent)
            return f"Kubernetes {self.release} has no field {field} (feature gate {since})"
        if gated.path.endswith(NODE_ALLOCATABLE) and not self._renameable(v1):
            return (f"Kubernetes {self.release} has no field {field}: its alpha {NODE_ALLOCATABLE_BEFORE} has "
                    "another shape (capacityKey, allocationMultiplier) and other checks, and says the same only "
                    "for a mapping by device count or by consumed capacity under a valid resource name")
        for gate in gated.gates:
            if gate in self.asked:
                continue  # the cluster choice compared what the scenario asked
            want, have = self.expected.enabled(gate), self.cluster.enabled(gate)
            if want != have:
                return (f"the scenario writes {field} expecting feature gate {gate} {'on' if want else 'off'} "
                        f"(Kubernetes {self.expected.release}'s default); the cluster config says Kubernetes "
                        f"{self.release} with it {'on' if have else 'off'}")
        return None

    def _cel_lacking(self, obj: Obj) -> str | None:
        for expression in _cel_expressions(obj):
            for name, (since, gate) in CEL_FUNCTIONS.items():
                if not _CALL[name].search(expression):
                    continue
                if release_tuple(self.release) >= release_tuple(since):
                    continue
                if not self.cluster.known(gate):
                    return (f"Kubernetes {self.release} has no CEL function {name}() (it comes with feature gate "
                            f"{gate}, from {GATE_HISTORY[gate][0]})")
                if not self.cluster.enabled(gate):
                    return (f"Kubernetes {self.release} has the CEL function {name}() only with feature gate "
                            f"{gate} on; the cluster config says it is off")
        return None

    # --- versions -----------------------------------------------------------------------------------------
    def served_version(self, kind: str) -> str | None:
        """The newest version of a DRA kind this cluster serves (None: none)."""
        return next((version for version in SERVED.get(kind, {}) if self._serves(kind, version)), None)

    def _serves(self, kind: str, version: str) -> bool:
        if version not in SERVED.get(kind, {}) or release_tuple(SERVED[kind][version][0]) > release_tuple(self.release):
            return False
        gate = VERSION_GATES.get(kind, {}).get(version)
        return gate is None or self.cluster.enabled(gate)

    def api_version(self, kind: str) -> str | None:
        """The apiVersion to reach `kind` at on this cluster, when it is not the current one (None)."""
        if self.current or kind not in SERVED:
            return None
        version = self.served_version(kind)
        return f"{GROUP}/{version}" if version not in (None, "v1") else None

    def strict(self, obj: Obj) -> bool:
        """Whether to write `obj` with strict field validation: not when the scenario pins this release and the
        object carries fields the release has not got (it expects them dropped)."""
        if self.current or not self.pinned:
            return True
        v1, _ = to_v1(obj)
        return not any(gated.kind == obj.get("kind") and in_use(v1, gated) and not known_to(gated, self.cluster)
                       for gated in GATED_FIELDS)

    # --- the way out and back -------------------------------------------------------------------------------
    def to_cluster(self, obj: Obj) -> Obj:
        """`obj` as this release takes it: in a version it serves, its fields under the release's names."""
        if self.current or version_of(obj) is None:
            return obj
        kind = str(obj.get("kind"))
        version = self.served_version(kind)
        if version is not None and kind in SERVED and not self._serves(kind, str(version_of(obj))):
            obj = from_v1(to_v1(obj)[0], version)
        if kind == "ResourceSlice" and self._renaming:
            obj = copy_object(obj)
            for device in _devices(obj):
                if NODE_ALLOCATABLE in device:
                    device[NODE_ALLOCATABLE_BEFORE] = {name: _mapping_before(entry) for name, entry
                                                       in (device.pop(NODE_ALLOCATABLE) or {}).items()}
        return obj

    def from_cluster(self, obj: Obj) -> Obj:
        """An object read from this release as the steps read it: in v1, under the current field names."""
        if self.current or version_of(obj) is None:
            return obj
        obj = to_v1(obj)[0] if version_of(obj) != "v1" else obj
        if obj.get("kind") == "ResourceSlice" and self._renaming:
            obj = copy_object(obj)
            for device in _devices(obj):
                if NODE_ALLOCATABLE_BEFORE in device:
                    device[NODE_ALLOCATABLE] = {name: _mapping_now(entry) for name, entry
                                                in (device.pop(NODE_ALLOCATABLE_BEFORE) or {}).items()}
        return obj

    @property
    def _renaming(self) -> bool:
        """Fields are carried between the current names and the release's: not for a scenario pinning the
        cluster's release, which writes and reads that release's names itself."""
        return not self.current and not self.pinned and release_tuple(self.release) < release_tuple(RENAMED_UNTIL)

    def error_from_cluster(self, error: ApiError) -> ApiError:
        """A refusal with its field paths under the current names."""
        if not self._renaming or not any(_renamed_path(cause.field) != cause.field for cause in error.causes):
            return error
        return ApiError(error.reason, error.message.replace(NODE_ALLOCATABLE_BEFORE, NODE_ALLOCATABLE),
                        [FieldCause(_renamed_path(c.field), c.message, c.rule) for c in error.causes])

    def _renameable(self, v1: Obj) -> bool:
        """Whether every node-allocatable entry says, in 1.36's shape, what it says in 1.37's: a mapping alone, by
        device count or by a capacity key with its multiplier, under one of 1.37's resource names, or under a
        qualified name both refuse."""
        for device in _devices(v1):
            for name, entry in (device.get(NODE_ALLOCATABLE) or {}).items():
                if not _NODE_ALLOCATABLE_NAME.match(name) and "/" not in name:
                    return False
                if not isinstance(entry, dict) or set(entry) != {"mapping"} or not isinstance(entry["mapping"], dict):
                    return False
                mapping = entry["mapping"]
                if set(mapping) not in ({"deviceMultiplier"}, {"capacityKey", "capacityMultiplier"}):
                    return False
        return True


def view(cluster_release: str, cluster_gates: Mapping[str, bool],
         wanted: Iterable[tuple[str, ComponentConfig]]) -> ReleaseView:
    """The view for a cluster of `cluster_release` running `cluster_gates` (those set away from its defaults),
    for a scenario that configured its components so (`configure` calls, last one per component wins)."""
    configs = dict(wanted)
    expected = configs.get(APISERVER) or _merged(configs.values())
    release = expected.version or CURRENT_RELEASE
    asked = frozenset(expected.feature_gates)
    return ReleaseView(FeatureGates(dict(cluster_gates), release=cluster_release),
                       FeatureGates(expected.feature_gates, release=release), asked)


def _merged(configs: Iterable[ComponentConfig]) -> ComponentConfig:
    """What the components asked together, for a scenario that did not configure kube-apiserver itself."""
    gates: dict[str, bool] = {}
    for config in configs:
        gates.update(config.feature_gates)
    return ComponentConfig(gates)


def _devices(obj: Obj) -> Iterator[dict[str, Any]]:
    spec = obj.get("spec")
    devices = spec.get("devices") if isinstance(spec, dict) else None
    yield from (device for device in devices or [] if isinstance(device, dict))


def _mapping_before(entry: Any) -> Any:
    """1.37's {mapping: {deviceMultiplier | capacityKey + capacityMultiplier}} as 1.36's mapping."""
    mapping = entry.get("mapping") if isinstance(entry, dict) else None
    if not isinstance(mapping, dict):
        return entry
    if "deviceMultiplier" in mapping:
        return {"allocationMultiplier": mapping["deviceMultiplier"]}
    return {key: value for key, value in (("capacityKey", mapping.get("capacityKey")),
                                          ("allocationMultiplier", mapping.get("capacityMultiplier")))
            if value is not None}


def _mapping_now(entry: Any) -> Any:
    """1.36's mapping read back in 1.37's shape (the inverse of `_mapping_before`)."""
    if not isinstance(entry, dict):
        return entry
    if "capacityKey" in entry:
        mapping = {"capacityKey": entry["capacityKey"]}
        if "allocationMultiplier" in entry:
            mapping["capacityMultiplier"] = entry["allocationMultiplier"]
        return {"mapping": mapping}
    return {"mapping": {"deviceMultiplier": entry["allocationMultiplier"]}} if "allocationMultiplier" in entry \
        else {"mapping": {}}


def _renamed_path(path: str) -> str:
    """A cause's path under the current field name (only whole entries are carried over, so a cause below one
    keeps the older release's own sub-field names)."""
    return path.replace(NODE_ALLOCATABLE_BEFORE, NODE_ALLOCATABLE)


def _cel_expressions(value: Any) -> Iterator[str]:
    """Every CEL expression below `value` (selectors' `cel.expression`)."""
    if isinstance(value, dict):
        cel = value.get("cel")
        if isinstance(cel, dict) and isinstance(cel.get("expression"), str):
            yield cel["expression"]
        for item in value.values():
            yield from _cel_expressions(item)
    elif isinstance(value, list):
        for item in value:
            yield from _cel_expressions(item)
