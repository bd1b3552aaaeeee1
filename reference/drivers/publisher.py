"""How the reference DRA driver publishes its ResourceSlices: it is given the slices it would publish with
every feature it knows about, and writes what its configuration and the cluster's state allow. Covers the
driver obligations of KEP-5963:
- "Driver Responsibilities" 2: with DRADeviceCompatibilityGroups off (or a release before it) the driver
  leaves compatibilityGroups out; flipping the gate and restarting the driver republishes accordingly.
- "Troubleshooting": the groups of a device that some claim has allocated stay as they were published
  until the allocation is released; only then does a new declaration reach the slice.
A device's published groups are read back from the store, so what the API server stripped stays stripped."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.compatibility import Mode
from draconform.reference.apiserver.interface import ApiStore
from draconform.sut import ApiError, Obj, copy_object

DeviceKey = tuple[str, str]  # pool, device


def check_inventory(driver: str, inventory: Sequence[Obj]) -> None:
    """Refuse an inventory the driver could never publish, naming the offending object and field."""
    names: set[str] = set()
    for index, obj in enumerate(inventory):
        where = f"inventory of driver {driver!r}, object {index}"
        if obj.get("kind") != "ResourceSlice":
            raise ValueError(f"{where}: kind must be ResourceSlice, got {obj.get('kind')!r}")
        name = str((obj.get("metadata") or {}).get("name") or "")
        if not name:
            raise ValueError(f"{where}: metadata.name is required")
        if name in names:
            raise ValueError(f"{where}: ResourceSlice {name!r} appears twice")
        names.add(name)
        spec_driver = (obj.get("spec") or {}).get("driver")
        if spec_driver != driver:
            raise ValueError(f"{where} (ResourceSlice {name!r}): spec.driver is {spec_driver!r}, not {driver!r}")


def allocated_devices(store: ApiStore, driver: str) -> set[DeviceKey]:
    """Devices of `driver` that some claim holds an allocation of: the devices "in use"."""
    held: set[DeviceKey] = set()
    for claim in store.view("ResourceClaim"):  # read only: no copies
        allocation = (claim.get("status") or {}).get("allocation") or {}
        for result in (allocation.get("devices") or {}).get("results") or []:
            if result.get("driver") == driver:
                held.add((str(result.get("pool", "")), str(result.get("device", ""))))
    return held


def _published_consumption(store: ApiStore, driver: str) -> dict[DeviceKey, list[Obj]]:
    """consumesCounters of every device of `driver` as the API server stores it now."""
    published: dict[DeviceKey, list[Obj]] = {}
    for slice_ in store.view("ResourceSlice"):  # read only: no copies
        spec = slice_.get("spec") or {}
        if spec.get("driver") != driver:
            continue
        pool = str((spec.get("pool") or {}).get("name", ""))
        for device in spec.get("devices") or []:
            published[(pool, str(device.get("name", "")))] = device.get("consumesCounters") or []
    return published


def _with_groups_of(consumption: Iterable[Obj], published: Iterable[Obj]) -> list[Obj]:
    """`consumption` with each entry's compatibilityGroups replaced by what is published for that counter set."""
    groups = {str(entry.get("counterSet")): entry.get("compatibilityGroups") for entry in published}
    kept = []
    for entry in consumption:
        entry = {key: value for key, value in entry.items() if key != "compatibilityGroups"}
        if groups.get(str(entry.get("counterSet"))):
            entry["compatibilityGroups"] = list(groups[str(entry.get("counterSet"))] or [])
        kept.append(entry)
    return kept


def _without_groups(consumption: Iterable[Obj]) -> list[Obj]:
    return [{key: value for key, value in entry.items() if key != "compatibilityGroups"} for entry in consumption]


class SlicePublisher:
    """Keeps the store's ResourceSlices of one driver in line with its inventory. It writes only when what it
    wants differs from what it last wrote, so an API server that strips a field cannot make it loop."""

    def __init__(self, driver: str, store: ApiStore, gates: FeatureGates) -> None:
        self.driver = driver
        self._store = store
        self._declares_groups = Mode.of(gates) is Mode.ENFORCE
        self._inventory: list[Obj] = []
        self._consumes = False  # whether some device of the inventory consumes counters
        self._written: dict[str, Any] = {}  # slice name -> spec last written
        self.tainted: set[DeviceKey] = set()  # devices found unusable: published with a NoSchedule taint

    def set_inventory(self, inventory: Sequence[Obj]) -> None:
        check_inventory(self.driver, inventory)
        self._inventory = [copy_object(obj) for obj in inventory]
        self._consumes = any("consumesCounters" in device for obj in self._inventory
                             for device in (obj.get("spec") or {}).get("devices") or [])

    def follows_claims(self) -> bool:
        """Whether what it publishes depends on the claims: only the compatibility groups it declares for counters
        that held devices consume do, so a driver without them need not look again at every claim change (that
        made each pod's allocation cost a pass over the whole cluster's claims and the driver's slices)."""
        return self._declares_groups and self._consumes

    def desired(self) -> dict[str, Obj]:
        """The slices this driver wants stored now, by name."""
        in_use = allocated_devices(self._store, self.driver) if self.follows_claims() else set()
        published = _published_consumption(self._store, self.driver) if in_use else {}
        wanted: dict[str, Obj] = {}
        for obj in self._inventory:
            slice_ = copy_object(obj)
            slice_.pop("status", None)
            spec = slice_.setdefault("spec", {})
            pool = str((spec.get("pool") or {}).get("name", ""))
            for device in spec.get("devices") or []:
                key = (pool, str(device.get("name", "")))
                if key in self.tainted:
                    device["taints"] = [*device.get("taints", []), self.unusable_taint()]
                if "consumesCounters" not in device:
                    continue
                if not self._declares_groups:
                    device["consumesCounters"] = _without_groups(device["consumesCounters"])
                elif key in in_use and key in published:
                    device["consumesCounters"] = _with_groups_of(device["consumesCounters"], published[key])
            wanted[slice_["metadata"]["name"]] = slice_
        return wanted

    def unusable_taint(self) -> Obj:
        """KEP-5322 "Preventing Repeated Failures": keeps new claims off a device that failed permanently."""
        return {"key": f"{self.driver}/unusable", "value": "permanent-failure", "effect": "NoSchedule"}

    def sync(self) -> bool:
        """Create, update or delete slices until the store holds what the driver wants; True if it wrote."""
        wanted = self.desired()
        wrote = False
        for name, slice_ in wanted.items():
            if self._written.get(name) != slice_["spec"]:
                self._apply(slice_)
                self._written[name] = copy_object(slice_["spec"])
                wrote = True
        for name in [name for name in self._written if name not in wanted]:
            try:
                self._store.delete("ResourceSlice", name)
            except ApiError as error:
                if error.reason != "NotFound":
                    raise
            del self._written[name]
            wrote = True
        return wrote

    def _apply(self, slice_: Obj) -> None:
        stored = self._store.get("ResourceSlice", slice_["metadata"]["name"])
        if stored is None:
            self._store.create(slice_)
            return
        if stored["spec"].get("driver") != self.driver:
            raise ValueError(
                f"driver {self.driver!r} cannot publish ResourceSlice {slice_['metadata']['name']!r}: "
                f"it belongs to driver {stored['spec'].get('driver')!r}"
            )
        stored["spec"] = copy_object(slice_["spec"])
        self._store.update(stored)

    def adopt(self, written: Mapping[str, Any]) -> None:
        """Take over what an earlier instance of the driver wrote (a restart keeps the slices it owns)."""
        self._written = {name: copy_object(spec) for name, spec in written.items()}

    @property
    def written(self) -> dict[str, Any]:
        return self._written

    @property
    def inventory(self) -> list[Obj]:
        return self._inventory
