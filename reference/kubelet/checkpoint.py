"""What a kubelet remembers about claims on its node across restarts (upstream: the DRA manager's checkpoint
file): for each claim it asked a plugin to prepare, which drivers were asked, which answered success, and which
pods on the node use it. A restarted kubelet neither prepares a claim again nor forgets to unprepare one."""

from __future__ import annotations

from dataclasses import dataclass, field

from draconform.kubeletplugin.types import ClaimRef


@dataclass
class ClaimRecord:
    ref: ClaimRef
    drivers: tuple[str, ...]  # every driver with a device in the claim's allocation
    sent: set[str] = field(default_factory=set)  # drivers asked to prepare it (success or not): to unprepare
    prepared: set[str] = field(default_factory=set)  # drivers that prepared it
    pods: set[str] = field(default_factory=set)  # UIDs of the pods on the node using it

    @property
    def ready(self) -> bool:
        return set(self.drivers) <= self.prepared


@dataclass
class KubeletCheckpoint:
    """Per claim UID. Lives with the node, not with the kubelet process."""

    claims: dict[str, ClaimRecord] = field(default_factory=dict)

    def of_pod(self, pod_uid: str) -> list[ClaimRecord]:
        return [record for record in self.claims.values() if pod_uid in record.pods]
