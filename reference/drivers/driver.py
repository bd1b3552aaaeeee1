"""A reference DRA driver, as a cluster runs it: a controller that publishes its ResourceSlices
(publisher.py) and a kubelet plugin per node that prepares claims (plugin.py). It acts on the cluster only
through the API store, and follows ResourceClaims through a watch because a released allocation may let it
publish a new declaration for a device. A device its plugin finds unusable (a permanent failure, KEP-5322)
is published with a NoSchedule taint from then on. It is started through the seam's `run_driver`, configured as the
component "dra-driver"."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from draconform.kube.cdi import SpecDirectory
from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.drivers.faults import FaultPlan
from draconform.reference.drivers.plugin import Checkpoint, InventoryDevice, NodePlugin, inventory_devices
from draconform.reference.drivers.publisher import SlicePublisher
from draconform.sut import Obj


class ReferenceDriver:
    def __init__(self, name: str, store: ApiStore, gates: FeatureGates, checkpoint: Checkpoint,
                 cdi_root: Path | None = None) -> None:
        """`cdi_root`: where each node's CDI spec directory lies on disk (<root>/<node>/cdi), for a driver
        whose plugins serve real sockets; without it the specs stay in the checkpoint."""
        self.name = name
        self._cdi_root = cdi_root
        self._store = store
        self._checkpoint = checkpoint
        self._publisher = SlicePublisher(name, store, gates)
        self._devices: dict[tuple[str, str], InventoryDevice] = {}
        self._plugins: dict[str, NodePlugin] = {}
        self._faults: dict[str, FaultPlan] = {}  # per node
        self._claims = store.watch("ResourceClaim")
        self._dirty = True  # publish on the first sync

    def set_inventory(self, inventory: Sequence[Obj]) -> None:
        """The devices the driver has now, as the slices it would publish with every feature on."""
        self._publisher.set_inventory(inventory)
        self._devices = inventory_devices(inventory)
        self._dirty = True

    def take_over(self, previous: ReferenceDriver) -> None:
        """Continue where an earlier instance left off: its inventory, the slices it owns and the devices it
        found unusable."""
        self.set_inventory(previous._publisher.inventory)
        self._publisher.adopt(previous._publisher.written)
        self._publisher.tainted |= previous._publisher.tainted

    def faults(self, node: str) -> FaultPlan:
        """The faults its plugin on `node` shows (the seam's inject_plugin_fault)."""
        return self._faults.setdefault(node, FaultPlan())

    def _broken(self, devices: list[InventoryDevice]) -> None:
        """Called from the plugin's gRPC thread; the next sync publishes the taints."""
        self._publisher.tainted |= {(device.pool, device.name) for device in devices}
        self._dirty = True

    def sync(self) -> bool:
        claim_changes = bool(self._claims.drain()) and self._publisher.follows_claims()
        if not (self._dirty or claim_changes):
            return False
        self._dirty = False
        return self._publisher.sync()

    def stop(self) -> None:
        self._claims.stop()
        for plan in self._faults.values():
            plan.release()

    def plugin(self, node: str) -> NodePlugin:
        """The kubelet plugin on `node`, created on first use."""
        if node not in self._plugins:
            cdi_dir = SpecDirectory(self._cdi_root / node / "cdi") if self._cdi_root else None
            self._plugins[node] = NodePlugin(self.name, node, self._store, self._checkpoint, lambda: self._devices,
                                             self.faults(node), self._broken, cdi_dir)
        return self._plugins[node]
