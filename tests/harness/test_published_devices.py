"""The devices a driver under test publishes on a node, as the driver scenarios take them (steps/drivers.py
`published_devices`): only its own slices of that node, only the latest generation of each pool, only those every
CEL selector of the class selects (evaluated with the driver's own name)."""

from __future__ import annotations

from typing import Any

from draconform.reference.sut import ReferenceSystem
from draconform.steps.drivers import published_devices


def _slice(name: str, driver: str, node: str, pool: str, generation: int, devices: list[dict[str, Any]]) -> Any:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": driver, "nodeName": node, "devices": devices,
                     "pool": {"name": pool, "generation": generation, "resourceSliceCount": 1}}}


def _model(name: str, model: str) -> dict[str, Any]:
    return {"name": name, "attributes": {"model": {"string": model}}}


def test_the_devices_of_the_class_in_the_latest_slices_of_the_node() -> None:
    sut = ReferenceSystem()
    try:
        for node in ("node-1", "node-2"):
            sut.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
        selectors = [{"cel": {"expression": 'device.driver == "gpu.vendor.com"'}},
                     {"cel": {"expression": 'device.attributes["gpu.vendor.com"].model == "big"'}}]
        sut.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "big"},
                    "spec": {"selectors": selectors}})
        sut.create(_slice("old", "gpu.vendor.com", "node-1", "a", 1, [_model("gpu-9", "big")]))
        sut.create(_slice("new", "gpu.vendor.com", "node-1", "a", 2,
                          [_model("gpu-1", "big"), _model("gpu-0", "small")]))
        sut.create(_slice("b", "gpu.vendor.com", "node-1", "b", 1, [_model("gpu-5", "big")]))
        sut.create(_slice("elsewhere", "gpu.vendor.com", "node-2", "c", 1, [_model("gpu-7", "big")]))
        sut.create(_slice("other", "nic.vendor.com", "node-1", "d", 1, [_model("nic-0", "big")]))
        assert published_devices(sut, "gpu.vendor.com", "node-1", "big", "gpu.vendor.com") == [("a", "gpu-1"),
                                                                                                ("b", "gpu-5")]
        # Under the scenario's name for the driver, the class still compares device.driver with the driver's own.
        assert published_devices(sut, "gpu.vendor.com", "node-1", "big", "gpu.example.com") == []
    finally:
        sut.close()


def test_the_devices_of_a_slice_in_the_order_it_lists_them() -> None:
    # A scheduler tries a slice's devices in the order the slice lists them; Intel's GPU driver lists its cards
    # in no name order, and "claim X is allocated device gpu-0" failed when gpu-0 stood for the first by name.
    sut = ReferenceSystem()
    try:
        sut.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}})
        sut.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.vendor.com"'}}]}})
        sut.create(_slice("b", "gpu.vendor.com", "node-1", "b", 1, [_model("card-0", "big")]))
        sut.create(_slice("a", "gpu.vendor.com", "node-1", "a", 1,
                          [_model("card-7", "big"), _model("card-2", "big"), _model("card-5", "big")]))
        assert published_devices(sut, "gpu.vendor.com", "node-1", "gpu", "gpu.vendor.com") == [
            ("a", "card-7"), ("a", "card-2"), ("a", "card-5"), ("b", "card-0")]
    finally:
        sut.close()
