"""The scheduler's feature gates as the allocation core reads them (`Gates`), once per core: which KEP features a
claim may use, which of upstream's allocators runs (its "stable" one when no gate asks for a newer), and KEP-5963's
compatibility mode."""

from __future__ import annotations

from dataclasses import dataclass

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.compatibility import Mode


@dataclass(frozen=True)
class Gates:
    """The scheduler gates the allocator looks at, read once."""

    prioritized_list: bool
    admin_access: bool
    taints: bool
    taint_rules: bool  # DRADeviceTaints and DRADeviceTaintRules: DeviceTaintRules add taints
    partitionable: bool
    binding: bool  # DRADeviceBindingConditions and DRAResourceClaimDeviceStatus
    consumable_capacity: bool
    compatibility_groups: bool
    compatibility: Mode  # KEP-5963: ignore (older scheduler), skip (gate off) or enforce (gate on)
    # Upstream runs its oldest ("stable") allocator only when no gate needs a newer one; that one refuses
    # distinctAttribute. Any of consumable capacity, binding conditions with device status, list-type
    # attributes or compatibility groups selects a newer allocator, which enforces it. The stable allocator also
    # ignores capacity.requests and shows CEL allowMultipleAllocations as false (D-4381-8), and it alone keeps
    # pools with binding-condition devices in name order (D-5007-8).
    stable_allocator: bool = False
    # DRAListTypeAttributes: with it off, matchAttribute compares scalars only (D-4381-10)
    list_attributes: bool = True

    @classmethod
    def of(cls, gates: FeatureGates) -> Gates:
        return cls(
            prioritized_list=gates.enabled("DRAPrioritizedList"),
            admin_access=gates.enabled("DRAAdminAccess"),
            taints=gates.enabled("DRADeviceTaints"),
            taint_rules=gates.enabled("DRADeviceTaints", "DRADeviceTaintRules"),
            partitionable=gates.enabled("DRAPartitionableDevices"),
            binding=gates.enabled("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),
            consumable_capacity=gates.enabled("DRAConsumableCapacity"),
            compatibility_groups=gates.enabled("DRADeviceCompatibilityGroups"),
            compatibility=Mode.of(gates),
            stable_allocator=not gates.enabled("DRAConsumableCapacity")
            and not gates.enabled("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")
            and not gates.enabled("DRAListTypeAttributes") and not gates.enabled("DRADeviceCompatibilityGroups"),
            list_attributes=gates.enabled("DRAListTypeAttributes"),
        )
