"""Gate pairs for every (component, gate) the reference reads that no KEP's own listing pairs yet (issue 39):
`defects.gate_pair` builds, for each, `<name>-as-if-on` (the component acts as if the gate were on whatever it
is set to, so only a row with the gate off kills it) and `<name>-as-if-off` (only a row with it on does). Each
pair is tied to the rule whose scenarios judge that component's behaviour under the gate: for kube-apiserver
the API validation rule of the field the gate guards (with the gate off the field is dropped, so its rule's
rows with the gate off see a dropped field, not a refusal); for the scheduler and the kubelet the rule of
the behaviour the gate switches."""

from __future__ import annotations

from draconform.mutation.known_bad import defects
from draconform.mutation.variant import Variant

# rule, component, gate, pair name
PAIRS: tuple[tuple[str, str, str, str], ...] = (
    # kube-apiserver: the fields each gate guards (draconform/validation/gates.py), dropped with the gate off
    ("DRA-API/FIRST-AVAILABLE-SUBREQUESTS", "kube-apiserver", "DRAPrioritizedList", "apiserver-prioritized-list-gate"),
    ("DRA-API/ADMIN-ACCESS-NAMESPACE", "kube-apiserver", "DRAAdminAccess", "apiserver-admin-access-gate"),
    ("DRA-API/TOLERATION-FORMAT", "kube-apiserver", "DRADeviceTaints", "apiserver-device-taints-gate"),
    ("DRA-API/CAPACITY-REQUEST-POLICY", "kube-apiserver", "DRAConsumableCapacity", "apiserver-consumable-capacity-gate"),
    ("DRA-API/CLASS-EXTENDED-RESOURCE-NAME", "kube-apiserver", "DRAExtendedResource",
     "apiserver-extended-resource-gate"),
    ("DRA-API/COUNTER-SET-NAMES", "kube-apiserver", "DRAPartitionableDevices", "apiserver-partitionable-devices-gate"),
    ("DRA-API/DEVICE-STATUS-DATA", "kube-apiserver", "DRAResourceClaimDeviceStatus", "apiserver-device-status-gate"),
    ("DRA-API/DEVICE-ATTRIBUTE-LIST-ITEMS", "kube-apiserver", "DRAListTypeAttributes",
     "apiserver-list-type-attributes-gate"),
    ("DRA-API/DERIVED-ATTRIBUTES", "kube-apiserver", "DRADerivedAttributes", "apiserver-derived-attributes-gate"),
    ("DRA-API/NODE-ALLOCATABLE-RESOURCE-NAMES", "kube-apiserver", "DRANodeAllocatableResources",
     "apiserver-node-allocatable-resources-gate"),
    ("DRA-API/PARTITION-TYPE-ATTRIBUTE-NAME", "kube-apiserver", "DRAPartitionableDevicesType",
     "apiserver-partitionable-devices-type-gate"),
    ("DRA-API/SKIP-NODE-OPERATIONS-VALUES", "kube-apiserver", "DRAOptionalNodeOperations",
     "apiserver-optional-node-operations-gate"),
    # kube-scheduler: the gates no pair of the KEPs' listings covers yet
    ("KEP-5007/GATES-BOTH-REQUIRED", "kube-scheduler", "DRAResourceClaimDeviceStatus", "scheduler-device-status-gate"),
    ("KEP-4381/DISTINCT-ATTRIBUTE", "kube-scheduler", "DRAListTypeAttributes", "scheduler-list-type-attributes-gate"),
    # kubelet: the extended-resource claim it prepares for a pod; whether it prepares claims at all
    ("KEP-5004/KUBELET-GATE-OFF", "kubelet", "DRAExtendedResource", "kubelet-extended-resource-gate"),
    ("KEP-3063/KUBELET-FEATURE-OFF", "kubelet", "DynamicResourceAllocation", "kubelet-dra-gate"),
    # the classic cluster (KEP-3063-CLASSIC): each component's DynamicResourceAllocation
    ("KEP-3063-CLASSIC/GATE-OFF-PRESERVES-POD-FIELDS", "kube-apiserver", "DynamicResourceAllocation",
     "classic-apiserver-dra-gate"),
    ("KEP-3063-CLASSIC/SKEW-SCHEDULER-WITHOUT-FEATURE", "kube-scheduler", "DynamicResourceAllocation",
     "classic-scheduler-dra-gate"),
    ("KEP-3063-CLASSIC/KUBELET-SKEW-STARTS-WITHOUT-RESOURCES", "kubelet", "DynamicResourceAllocation",
     "classic-kubelet-dra-gate"),
)

VARIANTS: tuple[Variant, ...] = tuple(
    variant for rule, component, gate, name in PAIRS for variant in defects.gate_pair(rule, component, gate, name))
