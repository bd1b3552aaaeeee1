"""Known-bad variants that get one rule's gate-off behaviour wrong while the rule that used to carry every
gate-off side for its catalogue (gatewalk.COVERED_BY, before issue 39's last pass) stays right: an API server
dropping only part of a gate's fields, or dropping what an update must keep, or no longer judging what it keeps;
a scheduler honouring the gate for one way of naming an extended resource only. Each is killed by a rule's own
gate-off rows (features/api-validation/gates-off.feature, features/kep-5004/gates-off.feature)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from draconform.mutation.overrides import Edit, Wrap
from draconform.mutation.variant import Variant

_STRIP_LOOP = ("            continue\n"
               "        for path, parent, key in list(_find(obj, gated.steps)):\n")


def _validate_without_disabled_fields(original: Callable[..., Any], obj: Any, gates: Any, old: Any = None) -> Any:
    """The defect: a field kept on update with its gate off is not judged (validation sees the object without it)."""
    from draconform.validation.gates import GATED_FIELDS, without_fields

    disabled = [gated for gated in GATED_FIELDS if not gates.enabled(*gated.gates)]
    return original(without_fields(obj, disabled), gates, old)


def _taint_rules_unjudged_with_gate_off(original: Callable[..., Any], obj: Any, gates: Any, old: Any = None) -> Any:
    """The defect: a DeviceTaintRule is not validated while DRADeviceTaintRules is off."""
    if isinstance(obj, dict) and obj.get("kind") == "DeviceTaintRule" and not gates.enabled("DRADeviceTaintRules"):
        return []
    return original(obj, gates, old)


VARIANTS: tuple[Variant, ...] = (
    Variant(
        "partition-device-fields-kept-with-gate-off", "DRA-API/DEVICE-COUNTER-CONSUMPTIONS",
        "with DRAPartitionableDevices off the API server drops sharedCounters but keeps the per-device fields "
        "(consumesCounters, nodeName, nodeSelector, allNodes), and judges them",
        (
            Edit("draconform.validation.gates:strip_disabled", _STRIP_LOOP,
                 ("            continue\n"
                  '        if "DRAPartitionableDevices" in gated.gates and gated.path.startswith("spec.devices"):\n'
                  "            continue  # the variant: only the slice-level fields are dropped\n"
                  "        for path, parent, key in list(_find(obj, gated.steps)):\n")),
        ),
    ),
    Variant(
        "stored-gated-fields-dropped-on-update", "DRA-API/DISABLED-FIELDS-DROPPED",
        "with DRADeviceTaints, DRAPartitionableDevices or DRAExtendedResource off an update drops the field though "
        "the stored object already uses it",
        (
            Edit("draconform.validation.gates:_kept_from",
                 "    return known and in_use(old, gated)\n",
                 ("    return known and in_use(old, gated) and not set(gated.gates) & {\n"
                  '        "DRADeviceTaints", "DRAPartitionableDevices", "DRAExtendedResource"}\n')),
        ),
    ),
    Variant(
        "kept-gated-fields-not-judged", "DRA-API/DISABLED-FIELDS-DROPPED",
        "a field an update keeps with its gate off (the stored object used it) is not validated",
        (Wrap("draconform.validation.core:validate_object", _validate_without_disabled_fields),),
    ),
    Variant(
        "taint-rules-unjudged-with-gate-off", "DRA-API/DEVICE-TAINT-RULE",
        "with DRADeviceTaintRules off the API server stores any DeviceTaintRule unvalidated",
        (Wrap("draconform.validation.core:validate_object", _taint_rules_unjudged_with_gate_off),),
    ),
    Variant(
        "extended-resource-status-kept-with-gate-off", "KEP-5004/POD-STATUS",
        "with DRAExtendedResource off the API server keeps a pod's status.extendedResourceClaimStatus",
        (
            Edit("draconform.validation.gates:strip_disabled", _STRIP_LOOP,
                 ("            continue\n"
                  '        if gated.kind == "Pod":\n'
                  "            continue  # the variant: the pod's field is kept\n"
                  "        for path, parent, key in list(_find(obj, gated.steps)):\n")),
        ),
    ),
    Variant(
        "implicit-class-resource-served-with-gate-off", "KEP-5004/CLASS-STANDS-FOR-RESOURCE",
        "with DRAExtendedResource off NodeResourcesFit still leaves a deviceclass.resource.kubernetes.io/<class> "
        "request to DRA, so the pod is bound with no claim",
        (
            Edit("draconform.reference.scheduler.noderesources:NodeResourcesFit.pre_filter",
                 ('        classes = self._store.view("DeviceClass") if self._dra_backed and extended else []\n'
                  "        state.data[REQUESTS] = (requests, {name for name in extended if class_for(name, classes) "
                  "is not None})\n"),
                 ('        classes = self._store.view("DeviceClass") if extended else []\n'
                  "        state.data[REQUESTS] = (requests, {name for name in extended if class_for(name, classes) "
                  "is not None\n"
                  "                                           and (self._dra_backed or name.startswith(\n"
                  '                                               "deviceclass.resource.kubernetes.io/"))})\n')),
        ),
    ),
)
