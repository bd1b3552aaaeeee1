"""The one version-skew mechanism: a scheduler of an older release reads the API without the fields its
release does not know, as the gated-field table and the gate history say; a current scheduler reads the
store itself, whatever its gates."""

from __future__ import annotations

import pytest

from draconform.kube.featuregates import CURRENT_RELEASE, GATE_HISTORY, FeatureGates, release_tuple
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.reference.scheduler.releaseview import as_seen_by, hidden_fields
from draconform.sut import Obj
from draconform.validation.gates import GATED_FIELDS, GatedField, in_use, unknown_fields, without_fields


def _introduced(gated: GatedField) -> str:
    """The first release with the field: that of its newest gate, or a later one the field itself names."""
    return max((*(GATE_HISTORY[gate][0] for gate in gated.gates), *filter(None, [gated.since])), key=release_tuple)


def _previous(release: str) -> str:
    major, minor = release_tuple(release)
    return f"{major}.{minor - 1}"


def _sample(gated: GatedField) -> Obj:
    """The smallest object of the field's kind carrying the field (lists and maps with one item)."""
    value: object = "x"
    for step in reversed(gated.steps):
        value = [value] if step == "*" else {step: value}
    assert isinstance(value, dict)
    return {"kind": gated.kind, **value}


@pytest.mark.parametrize("gated", GATED_FIELDS, ids=lambda g: f"{g.kind}.{g.path}")
def test_a_field_is_unknown_exactly_to_releases_before_it(gated: GatedField) -> None:
    introduced = _introduced(gated)
    assert gated not in unknown_fields(FeatureGates(release=introduced))
    assert gated in unknown_fields(FeatureGates(release=_previous(introduced)))
    obj = _sample(gated)
    assert in_use(obj, gated)
    assert not in_use(without_fields(obj, [gated]), gated)
    assert in_use(obj, gated), "decoding copies; the stored object keeps the field"


def test_the_current_release_reads_the_store_itself_even_with_every_gate_off() -> None:
    store = Store(FakeClock())
    assert as_seen_by(store, FeatureGates()) is store
    assert as_seen_by(store, FeatureGates(dict.fromkeys(GATE_HISTORY, False))) is store
    # what the current release does not know is only what an earlier release had and it removed (1.36's alpha
    # nodeAllocatableResourceMappings), which its API server never stores
    assert all(gated.until is not None for gated in hidden_fields(FeatureGates(release=CURRENT_RELEASE)))


def test_an_older_scheduler_reads_slices_and_claims_without_newer_fields() -> None:
    store = Store(FakeClock())
    device = {"name": "mig-0", "bindsToNode": True, "bindingConditions": ["attached"],
              "bindingFailureConditions": ["failed"], "consumesCounters": [
                  {"counterSet": "gpu-0", "compatibilityGroups": ["mig"], "counters": {"sm": {"value": "1"}}}]}
    store.load({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                "spec": {"driver": "d", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                         "nodeName": "n", "devices": [device]}})
    result = {"request": "r", "driver": "d", "pool": "p", "device": "mig-0", "bindingConditions": ["attached"],
              "compatibilityGroups": {"gpu-0": ["mig"]}}
    store.load({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": []}},
                "status": {"allocation": {"devices": {"results": [result]}, "allocationTimestamp": "t"}}})
    seen_by_136 = as_seen_by(store, FeatureGates(release="1.36"))  # knows binding conditions, not groups
    (slice_136,) = seen_by_136.list("ResourceSlice")
    assert slice_136["spec"]["devices"][0]["bindingConditions"] == ["attached"]
    assert "compatibilityGroups" not in slice_136["spec"]["devices"][0]["consumesCounters"][0]
    claim_136 = seen_by_136.get("ResourceClaim", "c", "default") or {}
    assert "compatibilityGroups" not in claim_136["status"]["allocation"]["devices"]["results"][0]
    assert claim_136["status"]["allocation"]["allocationTimestamp"] == "t"
    seen_by_133 = as_seen_by(store, FeatureGates(release="1.33"))  # before binding conditions too
    (slice_133,) = seen_by_133.list("ResourceSlice")
    assert set(slice_133["spec"]["devices"][0]) == {"name", "consumesCounters"}
    claim_133 = seen_by_133.get("ResourceClaim", "c", "default") or {}
    assert claim_133["status"]["allocation"] == {"devices": {"results": [
        {"request": "r", "driver": "d", "pool": "p", "device": "mig-0"}]}}
    stored = store.get("ResourceSlice", "s") or {}
    assert stored["spec"]["devices"][0] == device, "the stored object is untouched"
