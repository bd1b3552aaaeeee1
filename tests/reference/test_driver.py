"""Unit tests of the reference DRA driver: what it publishes under each gate setting, holding back new groups
of allocated devices, never looping against an API server that strips a field, refusing bad inventories, and
what its kubelet plugin answers (called directly here; the gRPC path is covered by the conformance suite and
tests/test_kubeletplugin.py): share IDs and qualified CDI device IDs, and its registration socket."""

from __future__ import annotations

import re
from typing import Any

import pytest

from draconform.kube.featuregates import FeatureGates
from draconform.kubeletplugin.client import notify_registration, registration_info
from draconform.kubeletplugin.types import ClaimRef, PluginInfo
from draconform.reference import components
from draconform.reference.apiserver.admission import install as install_admission
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.reference.drivers.driver import ReferenceDriver
from draconform.reference.drivers.sockets import PluginSockets
from draconform.sut import Obj

DRIVER = "gpu.example.com"
GATE = "DRADeviceCompatibilityGroups"


def slices(mig_groups: list[str] | None = None, vgpu_groups: list[str] | None = None) -> list[Obj]:
    def device(name: str, groups: list[str] | None, size: str) -> Obj:
        entry: Obj = {"counterSet": "gpu-0", "counters": {"multiprocessors": {"value": size}}}
        if groups is not None:
            entry["compatibilityGroups"] = groups
        return {"name": name, "consumesCounters": [entry]}

    pool = {"name": "node-1", "generation": 1, "resourceSliceCount": 2}
    return [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "counters"},
         "spec": {"driver": DRIVER, "pool": pool, "nodeName": "node-1",
                  "sharedCounters": [{"name": "gpu-0", "counters": {"multiprocessors": {"value": "100"}}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "devices"},
         "spec": {"driver": DRIVER, "pool": pool, "nodeName": "node-1",
                  "devices": [device("mig-0", mig_groups, "20"), device("vgpu-0", vgpu_groups, "50")]}},
    ]


def cluster(api_gate: bool = True) -> Store:
    store = Store(FakeClock(), FeatureGates({GATE: api_gate}))
    install_admission(store)
    return store


def driver(store: Store, gate: bool, inventory: list[Obj] | None = None) -> ReferenceDriver:
    running = components.driver(DRIVER, store, FeatureGates({GATE: gate}))
    running.set_inventory(inventory if inventory is not None else slices(["mig"], ["vgpu"]))
    running.sync()
    return running


def declared(store: Store) -> dict[str, Any]:
    devices = store.get("ResourceSlice", "devices")
    assert devices is not None
    return {d["name"]: d["consumesCounters"][0].get("compatibilityGroups") for d in devices["spec"]["devices"]}


def allocate(store: Store, name: str, *devices: str) -> Obj:
    """A claim allocated as an older scheduler would: no snapshot, whatever the groups say."""
    claim = store.create({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [
            {"name": f"r{i}", "exactly": {"deviceClassName": "gpu"}} for i in range(len(devices))]}},
    })
    claim["status"] = {"allocation": {"devices": {"results": [
        {"request": f"r{i}", "driver": DRIVER, "pool": "node-1", "device": device}
        for i, device in enumerate(devices)]}}}
    return store.update_status(claim)


def ref(claim: Obj) -> ClaimRef:
    meta = claim["metadata"]
    return ClaimRef(meta["namespace"], meta["name"], meta["uid"])


# ----- publishing -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("gate", "expected"), [(True, {"mig-0": ["mig"], "vgpu-0": ["vgpu"]}),
                                                (False, {"mig-0": None, "vgpu-0": None})])
def test_groups_are_published_only_with_the_gate_on(gate: bool, expected: dict[str, Any]) -> None:
    store = cluster()
    driver(store, gate)
    assert declared(store) == expected


def test_an_allocated_device_keeps_its_groups_until_released() -> None:
    store = cluster()
    running = driver(store, True)
    allocate(store, "a", "mig-0")
    running.set_inventory(slices(["shared"], ["shared"]))
    running.sync()
    assert declared(store) == {"mig-0": ["mig"], "vgpu-0": ["shared"]}
    store.delete("ResourceClaim", "a", "default")
    assert running.sync(), "a released allocation lets the held-back declaration through"
    assert declared(store) == {"mig-0": ["shared"], "vgpu-0": ["shared"]}


def test_no_write_loop_when_the_api_server_strips_the_field() -> None:
    store = cluster(api_gate=False)
    running = driver(store, True)
    assert declared(store) == {"mig-0": None, "vgpu-0": None}
    claim = allocate(store, "a", "mig-0")  # in use now: the driver settles on the stripped declaration, once
    running.sync()
    claim["metadata"]["labels"] = {"touched": "yes"}
    store.update(claim)  # another claim event wakes the driver; nothing it wants has changed
    assert running.sync() is False


def test_a_slice_dropped_from_the_inventory_is_deleted() -> None:
    store = cluster()
    running = driver(store, True)
    running.set_inventory(slices(["mig"], ["vgpu"])[:1])
    assert running.sync()
    assert store.get("ResourceSlice", "devices") is None


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: s[0].update(kind="DeviceClass"), "kind must be ResourceSlice"),
    (lambda s: s[1]["spec"].update(driver="other.example.com"), "spec.driver is 'other.example.com'"),
    (lambda s: s[1]["metadata"].update(name="counters"), "appears twice"),
    (lambda s: s[1].update(metadata={}), "metadata.name is required"),
])
def test_a_bad_inventory_is_refused_naming_object_and_field(change: Any, message: str) -> None:
    inventory = slices()
    change(inventory)
    with pytest.raises(ValueError, match=message):
        components.driver(DRIVER, cluster(), FeatureGates()).set_inventory(inventory)


# ----- preparing ------------------------------------------------------------------------------------------

def test_prepare_refuses_an_incompatible_second_claim_and_is_idempotent() -> None:
    store = cluster()
    running = driver(store, True)
    mig, vgpu = allocate(store, "mig", "mig-0"), allocate(store, "vgpu", "vgpu-0")
    plugin = running.plugin("node-1")
    first = plugin.prepare([ref(mig)])[mig["metadata"]["uid"]]
    assert not first.failed and [d.device for d in first.devices] == ["mig-0"]
    assert first.devices[0].cdi_device_ids and first.devices[0].requests == ("r0",)
    refused = plugin.prepare([ref(vgpu)])[vgpu["metadata"]["uid"]]
    assert refused.failed and "vgpu-0" in refused.error and "mig-0" in refused.error
    assert plugin.prepare([ref(mig)])[mig["metadata"]["uid"]] == first
    assert plugin.unprepare([ref(mig)]) == {mig["metadata"]["uid"]: ""}
    assert not plugin.prepare([ref(vgpu)])[vgpu["metadata"]["uid"]].failed


def test_groups_count_even_when_the_driver_publishes_none() -> None:
    store = cluster()
    running = driver(store, False)
    claim = allocate(store, "both", "mig-0", "vgpu-0")
    assert running.plugin("node-1").prepare([ref(claim)])[claim["metadata"]["uid"]].failed


def test_prepare_errors_name_the_claim() -> None:
    store = cluster()
    running = driver(store, True)
    plugin = running.plugin("node-1")
    missing = ClaimRef("default", "ghost", "uid-x")
    assert "default/ghost" in plugin.prepare([missing])["uid-x"].error
    unallocated = store.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                "metadata": {"name": "idle", "namespace": "default"},
                                "spec": {"devices": {"requests": []}}})
    assert "not allocated" in plugin.prepare([ref(unallocated)])[unallocated["metadata"]["uid"]].error
    elsewhere = allocate(store, "elsewhere", "mig-0")
    answer = running.plugin("node-2").prepare([ref(elsewhere)])[elsewhere["metadata"]["uid"]]
    assert "not a device of driver gpu.example.com on node node-2" in answer.error


def test_unprepare_of_an_unknown_claim_succeeds() -> None:
    running = driver(cluster(), True)
    assert running.plugin("node-1").unprepare([ClaimRef("default", "x", "uid-x")]) == {"uid-x": ""}


# The CDI specification's qualified device name, vendor/class=name (see steps/drivers.py).
CDI_NAME = re.compile(r"[A-Za-z](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?/[A-Za-z](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?"
                      r"=[A-Za-z0-9](?:[A-Za-z0-9_.:-]*[A-Za-z0-9])?")


def test_shares_of_a_device_are_prepared_with_their_share_ids() -> None:
    store = cluster()
    running = driver(store, True)
    claim = store.create({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "halves", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": r, "exactly": {"deviceClassName": "gpu"}} for r in ("a", "b")]}},
    })
    claim["status"] = {"allocation": {"devices": {"results": [
        {"request": r, "driver": DRIVER, "pool": "node-1", "device": "mig-0",
         "shareID": f"6a1e5c0b-8d2f-4b7a-9c3e-1f0d2a4b5c6{i}"}
        for i, r in enumerate(("a", "b"))]}}}
    claim = store.update_status(claim)
    answer = running.plugin("node-1").prepare([ref(claim)])[claim["metadata"]["uid"]]
    assert not answer.failed
    assert sorted((d.requests, d.share_id) for d in answer.devices) == [
        (("a",), "6a1e5c0b-8d2f-4b7a-9c3e-1f0d2a4b5c60"), (("b",), "6a1e5c0b-8d2f-4b7a-9c3e-1f0d2a4b5c61")]


def test_cdi_device_ids_are_qualified_even_for_a_driver_name_starting_with_a_digit() -> None:
    name = "3d.example.com"
    store = cluster()
    running = components.driver(name, store, FeatureGates())
    running.set_inventory([{
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "accelerators"},
        "spec": {"driver": name, "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                 "nodeName": "node-1", "devices": [{"name": "0-render"}]},
    }])
    running.sync()
    claim = store.create({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "render", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "accelerator"}}]}},
    })
    claim["status"] = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": name, "pool": "node-1", "device": "0-render"}]}}}
    claim = store.update_status(claim)
    answer = running.plugin("node-1").prepare([ref(claim)])[claim["metadata"]["uid"]]
    ids = [cdi_id for device in answer.devices for cdi_id in device.cdi_device_ids]
    assert ids and all(CDI_NAME.fullmatch(cdi_id) for cdi_id in ids), ids


def test_the_registration_socket_announces_the_plugin_socket_and_both_versions() -> None:
    store = cluster()
    running = driver(store, True)
    sockets = PluginSockets(FakeClock().now)
    try:
        registration = sockets.registration_endpoint(DRIVER, "node-1", lambda: running.plugin("node-1"))
        info = registration_info(registration)
        plugin = sockets.endpoint(DRIVER, "node-1", lambda: running.plugin("node-1"))
        assert info == PluginInfo(type="DRAPlugin", name=DRIVER, endpoint=plugin.removeprefix("unix://"),
                                  supported_versions=("v1.DRAPlugin", "v1beta1.DRAPlugin"))
        assert sockets.registration_endpoint(DRIVER, "node-1", lambda: running.plugin("node-1")) == registration
        notify_registration(registration, False, "refused for the test")
        assert registration_info(registration) == info
    finally:
        sockets.close()
