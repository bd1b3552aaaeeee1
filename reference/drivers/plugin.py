"""The reference driver's kubelet plugin on one node: what it does when the kubelet asks it to prepare or
unprepare claims (the DRAPlugin service; draconform.kubeletplugin serves it over gRPC).

Preparing checks the allocation against what the driver knows of its hardware, whoever made the allocation:
KEP-5963 "Driver Responsibilities" 3 and the "Driver-only" row of its skew table. A device is refused when,
on some counter set it consumes, the groups the driver's inventory gives it do not meet those of the devices
already prepared there (the KEP's predicate, docs/decisions.md D-5963-1), so an older or gate-off scheduler
cannot put MIG and vGPU partitions of one GPU to work at once. The driver judges by its inventory, not by
slices or snapshots: with its gate off it publishes no groups but still knows them.

Prepared claims are the plugin's checkpoint: preparing a claim again answers as before, and unpreparing a
claim the plugin does not hold succeeds (both idempotent, as the kubelet retries). A device held whole by a
prepared claim is not prepared for a second one (DRA-PLUGIN/EXCLUSIVE-DEVICE-ONCE), and a device must be one
of the driver's on this node, pool and name (DRA-PLUGIN/DEVICES-ON-THIS-NODE). Each prepared device is
an allocation result of this driver with its request, its share ID (consumable capacity) and one CDI device
ID; a claim the plugin cannot prepare gets its own error and never fails the call (the DRA-PLUGIN rules).
Before it answers a claim as prepared, the plugin writes one CDI spec file defining the claim's devices into
the node's CDI directory (memory, or a real directory for the standalone plugin), and removes the file when
the claim is unprepared (DRA-PLUGIN/CDI-SPEC-FILES)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from draconform.kube.cdi import spec_text
from draconform.kubeletplugin.types import ClaimRef, PreparedDevice, PrepareResult
from draconform.reference.allocator.compatibility import EMPTY, Declared, SetState, declared_groups
from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.drivers.faults import ANSWER_FAULTS, FaultPlan
from draconform.sut import Obj, PluginFault

CounterSet = tuple[str, str]  # pool, counter set


class ClaimReader(Protocol):
    """Where the plugin reads claims: the reference store, or an API server over HTTP (standalone.py)."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None: ...


@dataclass(frozen=True)
class InventoryDevice:
    """A device as the driver knows it: where it is and what it declares on each counter set."""

    pool: str
    name: str
    node: str | None
    declared: Declared


@dataclass
class PreparedClaim:
    result: PrepareResult
    devices: list[InventoryDevice]
    whole: tuple[PreparedDevice, ...] = ()  # the devices it holds whole: no admin access, no share


@dataclass
class Checkpoint:
    """Prepared claims per node, by claim UID, and the CDI spec files the driver wrote on each node (file name
    -> text); both survive a restart of the driver, as a real plugin's checkpoint file and the node's disk do."""

    nodes: dict[str, dict[str, PreparedClaim]] = field(default_factory=dict)
    cdi: dict[str, dict[str, str]] = field(default_factory=dict)

    def after_restart(self) -> Checkpoint:
        """What the driver finds after it restarts: all of it, as a plugin's checkpoint file keeps it
        (DRA-PLUGIN/SURVIVES-RESTART)."""
        return self


def inventory_devices(inventory: Sequence[Obj]) -> dict[tuple[str, str], InventoryDevice]:
    """(pool, device) -> the device, with groups as the inventory declares them (gate or not)."""
    devices = {}
    for slice_ in inventory:
        spec = slice_.get("spec") or {}
        pool = str((spec.get("pool") or {}).get("name", ""))
        for device in spec.get("devices") or []:
            node = device.get("nodeName") or spec.get("nodeName")
            name = str(device.get("name", ""))
            devices[(pool, name)] = InventoryDevice(
                pool, name, str(node) if node else None, declared_groups(device.get("consumesCounters") or [])
            )
    return devices


def cdi_device_id(driver: str, device: str) -> str:
    """The fully qualified CDI name of one of the driver's devices, vendor/class=name. The vendor is the
    driver name behind "k8s.", as upstream's example driver does it, because a CDI vendor must start with a
    letter and a driver name (a DNS subdomain) may start with a digit; device names are DNS labels, which
    CDI accepts as they are."""
    return f"{cdi_kind(driver)}={device}"


def cdi_kind(driver: str) -> str:
    """The CDI kind (vendor/class) of the driver's devices."""
    return f"k8s.{driver}/device"


def cdi_spec_file(driver: str, claim_uid: str) -> str:
    """The name of the CDI spec file the driver writes for one prepared claim."""
    return f"k8s.{driver}-{claim_uid}.json"


def _describe(groups: tuple[str, ...]) -> str:
    return "[" + ", ".join(groups) + "]" if groups else "no groups"


class NodePlugin:
    """The plugin of driver `driver` on node `node`; `inventory` returns the driver's current devices."""

    def __init__(self, driver: str, node: str, store: ApiStore | ClaimReader, checkpoint: Checkpoint,
                 inventory: Callable[[], Mapping[tuple[str, str], InventoryDevice]],
                 faults: FaultPlan | None = None, on_broken: Callable[[list[InventoryDevice]], None] | None = None,
                 cdi_dir: MutableMapping[str, str] | None = None) -> None:
        self.driver = driver
        self.node = node
        self._store = store
        self._prepared = checkpoint.nodes.setdefault(node, {})
        # The node's CDI spec directory: file name -> text; the checkpoint's, unless a real one is given.
        self._cdi = cdi_dir if cdi_dir is not None else checkpoint.cdi.setdefault(node, {})
        self._inventory = inventory
        self.faults = faults or FaultPlan()
        self._on_broken = on_broken or (lambda devices: None)

    def _key(self, ref: ClaimRef) -> str:
        """What prepared claims are kept under: the claim's UID (DRA-PLUGIN/CLAIM-IDENTITY-IS-UID)."""
        return ref.uid

    def prepare(self, claims: Sequence[ClaimRef]) -> dict[str, PrepareResult]:
        self.faults.before_call("prepare")
        return {ref.uid: self._answer(ref) for ref in claims}

    def _answer(self, ref: ClaimRef) -> PrepareResult:
        """One claim's answer, on its own: what the claim's own preparation gives, whatever the other claims
        of the call got (DRA-PLUGIN/CLAIMS-INDEPENDENT)."""
        known = self._prepared.get(self._key(ref))
        if known is not None:
            return known.result
        try:
            prepared = self._prepare(ref)
        except PrepareRefused as refusal:
            return PrepareResult(error=str(refusal), permanent=refusal.permanent)
        if prepared.result.failed:  # fault error-with-devices: an error that still names devices
            return prepared.result
        self._write_cdi_spec(ref, prepared.result)
        self._prepared[self._key(ref)] = prepared
        return prepared.result

    def unprepare(self, claims: Sequence[ClaimRef]) -> dict[str, str]:
        self.faults.before_call("unprepare")
        answers = {}
        for ref in claims:
            held = self._prepared.get(self._key(ref))
            fault = self.faults.claim_fault("unprepare", [d.name for d in held.devices] if held else [])
            if fault is not None:
                answers[ref.uid] = f"injected {fault.kind} failure unpreparing claim {ref.namespace}/{ref.name}"
                continue
            self._prepared.pop(self._key(ref), None)
            self._remove_cdi_spec(ref)
            answers[ref.uid] = ""
        return answers

    def _remove_cdi_spec(self, ref: ClaimRef) -> None:
        """The claim's CDI spec file goes with its preparation, known to the plugin or not
        (DRA-PLUGIN/CDI-SPECS-REMOVED): a plugin that lost its state on a restart still cleans up."""
        self._cdi.pop(cdi_spec_file(self.driver, ref.uid), None)

    def _write_cdi_spec(self, ref: ClaimRef, result: PrepareResult) -> None:
        """The runtime must find every CDI device ID of the answer in a spec on the node, so the file is
        written before the answer goes out; each device's containers learn which device they got."""
        if not result.devices:
            return
        devices = {d.device: {"DRA_DEVICE": d.device, "DRA_CLAIM": f"{ref.namespace}/{ref.name}"}
                   for d in result.devices}
        self._cdi[cdi_spec_file(self.driver, ref.uid)] = spec_text(cdi_kind(self.driver), devices)

    def _prepare(self, ref: ClaimRef) -> PreparedClaim:
        where = f"ResourceClaim {ref.namespace}/{ref.name}"
        claim = self._claim(ref)
        if claim is None:
            raise PrepareRefused(f"{where} with UID {ref.uid} does not exist")
        allocation = (claim.get("status") or {}).get("allocation")
        if not allocation:
            raise PrepareRefused(f"{where} is not allocated")
        devices = self._allocated_devices(where, allocation)
        _check_config(where, self.driver, allocation)
        fault = self.faults.claim_fault("prepare", [device.name for _, device in devices])
        self._refuse_on_fault(where, fault, devices)
        self._check_exclusive(where, ref, devices)
        self._check_compatibility(where, [d for r, d in devices if not r.get("adminAccess")])
        prepared = self._prepared_devices(claim, devices)
        result = PrepareResult(devices=prepared)
        if fault is not None and fault.kind == "permanent-without-error":
            result = PrepareResult(devices=prepared, permanent=True)  # a success all the same (KEP-5322 API)
        elif fault is not None and fault.kind == "error-with-devices":
            result = PrepareResult(devices=prepared, error=f"{where}: injected transient failure, devices named anyway")
        whole = tuple(p for p, (r, _) in zip(prepared, devices, strict=True)
                      if not r.get("adminAccess") and not r.get("shareID"))
        return PreparedClaim(result, [d for r, d in devices if not r.get("adminAccess")], whole)

    def _claim(self, ref: ClaimRef) -> Obj | None:
        """The claim the request names: its namespace and name, and its UID too, since a claim deleted and made
        again under the same name is another claim (DRA-PLUGIN/PER-CLAIM-ERRORS)."""
        claim = self._store.get("ResourceClaim", ref.name, ref.namespace)
        return claim if claim is not None and claim["metadata"].get("uid") == ref.uid else None

    def _allocated_devices(self, where: str, allocation: Obj) -> list[tuple[Obj, InventoryDevice]]:
        """The allocation's results for this driver, each with the device of the driver's inventory it names;
        refused when one names no device of the driver on this node (DRA-PLUGIN/DEVICES-ON-THIS-NODE)."""
        results = self._results(allocation)
        inventory = self._inventory_for(results)
        devices: list[tuple[Obj, InventoryDevice]] = []
        for result in results:
            device = inventory.get((str(result.get("pool", "")), str(result.get("device", ""))))
            if device is None or device.node not in (None, self.node):
                raise PrepareRefused(
                    f"{where}: device {result.get('pool')}/{result.get('device')} of request "
                    f"{result.get('request')!r} is not a device of driver {self.driver} on node {self.node}"
                )
            devices.append((result, device))
        return devices

    def _results(self, allocation: Obj) -> list[Obj]:
        """The allocation's results for this driver: those of other drivers are theirs to prepare."""
        return [r for r in (allocation.get("devices") or {}).get("results") or [] if r.get("driver") == self.driver]

    def _inventory_for(self, results: list[Obj]) -> Mapping[tuple[str, str], InventoryDevice]:
        """Where the allocation's `results` are looked up: the driver's devices, by pool and name."""
        return self._inventory()

    def _refuse_on_fault(self, where: str, fault: PluginFault | None,
                         devices: list[tuple[Obj, InventoryDevice]]) -> None:
        """An injected failure refuses the claim; an injected answer (ANSWER_FAULTS) is given later."""
        if fault is not None and fault.kind == "permanent":
            # KEP-5322 "Preventing Repeated Failures": the devices are unusable, so no other claim should get
            # them; the driver taints them NoSchedule.
            broken = [d for _, d in devices if fault.device in (None, d.name)]
            self._on_broken(broken)
            raise PrepareRefused(f"{where}: devices {', '.join(d.name for d in broken)} are unusable "
                                 f"(injected permanent failure)", permanent=True)
        if fault is not None and fault.kind not in ANSWER_FAULTS:
            raise PrepareRefused(f"{where}: injected transient failure")

    def _prepared_devices(self, claim: Obj,
                          devices: list[tuple[Obj, InventoryDevice]]) -> tuple[PreparedDevice, ...]:
        """Each device as the answer names it: pool, name, request, CDI device ID and share ID."""
        return tuple(
            PreparedDevice(
                pool=device.pool,
                device=device.name,
                requests=(str(result.get("request", "")),),
                cdi_device_ids=(cdi_device_id(self.driver, device.name),),
                share_id=str(result["shareID"]) if result.get("shareID") else None,
            )
            for result, device in devices
        )

    def _check_exclusive(self, where: str, ref: ClaimRef, devices: list[tuple[Obj, InventoryDevice]]) -> None:
        """A device held whole (no admin access, no share) by another prepared claim is not prepared again:
        the allocation that gives it twice is wrong (DRA-PLUGIN/EXCLUSIVE-DEVICE-ONCE)."""
        whole = {(d.pool, d.name) for r, d in devices if not r.get("adminAccess") and not r.get("shareID")}
        for key, held in self._prepared.items():
            if key == self._key(ref):
                continue
            for device in held.result.devices:
                if (device.pool, device.device) in whole and device.share_id is None and device in held.whole:
                    raise PrepareRefused(f"{where}: device {device.pool}/{device.device} is already prepared for "
                                         f"another claim, which holds it whole")

    def _check_compatibility(self, where: str, devices: list[InventoryDevice]) -> None:
        """Admit the claim's devices one by one onto the counter sets as the prepared claims hold them."""
        states: dict[CounterSet, SetState] = {}
        holders: dict[CounterSet, list[str]] = {}

        def hold(device: InventoryDevice) -> None:
            for counter_set, groups in device.declared:
                key = (device.pool, counter_set)
                states[key] = states.get(key, EMPTY).add(groups)
                holders.setdefault(key, []).append(f"{device.name} ({_describe(groups)})")

        for prepared in self._prepared.values():
            for device in prepared.devices:
                hold(device)
        for device in devices:
            for counter_set, groups in device.declared:
                key = (device.pool, counter_set)
                if not states.get(key, EMPTY).admits(groups):
                    raise PrepareRefused(
                        f"{where}: device {device.pool}/{device.name} declares {_describe(groups)} on counter "
                        f"set {counter_set}, which is not compatible with the devices already in use there: "
                        f"{', '.join(holders[key])} (KEP-5963 compatibility groups)"
                    )
            hold(device)


class PrepareRefused(Exception):
    """The plugin cannot prepare a claim; the message goes back to the kubelet as the claim's error, marked
    permanent (KEP-5322) when asking again with the same claim cannot succeed."""

    def __init__(self, message: str, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


# The opaque configuration the reference driver understands: {"mode": "exclusive" | "shared"}.
CONFIG_MODES = ("exclusive", "shared")


def _check_config(where: str, driver: str, allocation: Obj) -> None:
    """Opaque parameters for this driver must be ones it understands. Invalid ones are a permanent error
    (KEP-5322: the same claim fails the same way every time) that says nothing about the device, so the
    device stays untainted."""
    for index, config in enumerate((allocation.get("devices") or {}).get("config") or []):
        opaque = config.get("opaque") or {}
        if opaque.get("driver") != driver:
            continue
        parameters = opaque.get("parameters")
        problem = None
        if not isinstance(parameters, dict):
            problem = "must be an object"
        elif set(parameters) - {"mode"}:
            problem = f"has unknown fields {sorted(set(parameters) - {'mode'})}"
        elif parameters.get("mode", "exclusive") not in CONFIG_MODES:
            problem = f"mode must be one of {', '.join(CONFIG_MODES)}, got {parameters.get('mode')!r}"
        if problem:
            raise PrepareRefused(f"{where}: invalid opaque configuration for driver {driver} "
                                 f"(status.allocation.devices.config[{index}].opaque.parameters {problem})",
                                 permanent=True)
