"""Both allocation cores on devices that use the alpha fields the API store now keeps: list-type attributes
(DRAListTypeAttributes) reach CEL as lists, a device with nodeAllocatableResources is allocated like any
other, and constraints compare list-type attributes as sets with the gate on, not at all with it off."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from draconform.cli import main
from draconform.kube.cel import SelectorEngine, device_input
from draconform.kube.featuregates import FeatureGates
from draconform.kube.values import lookup_attribute, parse_attribute, parse_semver
from draconform.reference.allocator.interface import AllocatorFactory
from draconform.reference.apiserver.admission import install
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock

from .helpers import claim, dev, device_class, exactly, gates, node, picked, resource_slice, store_with

DRIVER = "cpu.example.com"
CPU_CLASS = device_class("cpu", f'device.driver == "{DRIVER}"')
ATTRS = f'device.attributes["{DRIVER}"]'


def ccx(name: str, numa: list[int], socket: int, smt: list[bool], firmware: list[str]) -> dict[str, Any]:
    """A CPU core complex near one or more NUMA nodes, standing for 8 node-allocatable CPUs."""
    return dev(name, attributes={
        "socket": {"int": socket},
        "numaNodes": {"ints": numa},
        "pcieRoots": {"strings": [f"pci0000-{n:02d}" for n in numa]},
        "smt": {"bools": smt},
        "firmware": {"versions": firmware},
    }, nodeAllocatableResources={"cpu": {"mapping": {"deviceMultiplier": "8"}},
                                 "memory": {"overhead": {"perPod": "64Mi"}}})


SLICE = resource_slice("node-1", [
    ccx("ccx-0", [0], socket=0, smt=[True], firmware=["1.2.0", "2.0.0-rc.1"]),
    ccx("ccx-1", [0, 1], socket=0, smt=[True, True], firmware=["2.0.0"]),
    ccx("ccx-2", [1], socket=1, smt=[True, False], firmware=["1.0.0", "1.9.0"]),
], driver=DRIVER)


def select(core: AllocatorFactory, expression: str) -> list[str]:
    """Every device the selector matches (allocation mode All)."""
    request = exactly("req", "cpu", allocationMode="All", selectors=[{"cel": {"expression": expression}}])
    answer = core(store_with(CPU_CLASS, SLICE), gates()).allocate(node("node-1"), [claim("c", request)])
    assert answer.allocations is not None, answer.reasons
    return [device for *_, device in picked(answer.allocations[0])]


def test_a_selector_over_a_scalar_attribute_still_works_on_such_devices(core: AllocatorFactory) -> None:
    assert select(core, f"{ATTRS}.socket == 1") == ["ccx-2"]


@pytest.mark.parametrize(("expression", "devices"), [
    (f"1 in {ATTRS}.numaNodes", ["ccx-1", "ccx-2"]),
    (f"{ATTRS}.numaNodes.size() == 2", ["ccx-1"]),
    (f'{ATTRS}.pcieRoots.exists(root, root.startsWith("pci0000-01"))', ["ccx-1", "ccx-2"]),
    (f"{ATTRS}.smt.all(on, on)", ["ccx-0", "ccx-1"]),
    (f'{ATTRS}.firmware.exists(v, v.isGreaterThan(semver("1.9.0")))', ["ccx-0", "ccx-1"]),
])
def test_list_attributes_are_cel_lists(core: AllocatorFactory, expression: str, devices: list[str]) -> None:
    assert select(core, expression) == devices


def chooser(core: AllocatorFactory, **gate_values: bool) -> Any:
    store = store_with(CPU_CLASS, SLICE)

    def chosen(count: int, constraint: dict[str, str]) -> list[str] | None:
        request = claim("c", exactly("req", "cpu", count=count), constraints=[constraint])
        answer = core(store, gates(**gate_values)).allocate(node("node-1"), [request])
        return None if answer.allocations is None else [d for *_, d in picked(answer.allocations[0])]

    return chosen


def test_constraints_over_list_attributes_use_set_semantics(core: AllocatorFactory) -> None:
    """With DRAListTypeAttributes on, matchAttribute: one value common to every chosen device's list;
    distinctAttribute: lists pairwise disjoint (upstream's set semantics; a scalar counts as a set of one)."""
    chosen = chooser(core, DRAListTypeAttributes=True)

    assert chosen(2, {"matchAttribute": f"{DRIVER}/socket"}) == ["ccx-0", "ccx-1"]
    assert chosen(2, {"matchAttribute": f"{DRIVER}/numaNodes"}) == ["ccx-0", "ccx-1"]  # both near NUMA 0
    assert chosen(3, {"matchAttribute": f"{DRIVER}/numaNodes"}) is None  # no NUMA node common to all three
    assert chosen(2, {"distinctAttribute": f"{DRIVER}/numaNodes"}) == ["ccx-0", "ccx-2"]  # ccx-1 overlaps ccx-0
    assert chosen(3, {"distinctAttribute": f"{DRIVER}/numaNodes"}) is None
    assert chosen(2, {"distinctAttribute": f"{DRIVER}/firmware"}) == ["ccx-0", "ccx-1"]  # no version shared


def test_devices_stored_through_admission_with_the_gates_on_allocate(core: AllocatorFactory) -> None:
    """The shapes validation now lets into the store, written through the store's admission."""
    api = Store(FakeClock(), FeatureGates({"DRAListTypeAttributes": True, "DRANodeAllocatableResources": True}))
    install(api)
    api.create(CPU_CLASS)
    stored = api.create(SLICE)
    assert stored["spec"]["devices"][0]["attributes"]["numaNodes"] == {"ints": [0]}
    assert "nodeAllocatableResources" in stored["spec"]["devices"][0]
    request = exactly("req", "cpu", selectors=[{"cel": {"expression": f"1 in {ATTRS}.numaNodes"}}])
    answer = core(api, api.gates).allocate(node("node-1"), [claim("c", request)])
    assert answer.allocations is not None
    assert [device for *_, device in picked(answer.allocations[0])] == ["ccx-1"]


def test_the_cel_view_and_the_constraint_view_of_list_attributes() -> None:
    parsed = {name: parse_attribute(raw) for name, raw in SLICE["spec"]["devices"][0]["attributes"].items()}
    assert parsed["numaNodes"] == ("ints", (0,))
    assert parsed["firmware"] == ("versions", (parse_semver("1.2.0"), parse_semver("2.0.0-rc.1")))
    assert parse_attribute({"ints": []}) is None and parse_attribute({"versions": ["v1"]}) is None
    attributes = {name: value for name, value in parsed.items() if value is not None}
    view = device_input(DRIVER, attributes, {"cores": Fraction(8)})["attributes"][DRIVER]
    assert view["numaNodes"] == [0] and view["smt"] == [True]
    assert view["firmware"] == [{"__semver__": "1.2.0"}, {"__semver__": "2.0.0-rc.1"}]
    assert lookup_attribute(attributes, DRIVER, f"{DRIVER}/socket") == ("int", 0)
    assert lookup_attribute(attributes, DRIVER, f"{DRIVER}/numaNodes") == ("ints", (0,))
    engine = SelectorEngine()
    assert engine.matches(f'"pci0000-00" in {ATTRS}.pcieRoots', "ccx-0", lambda: {"driver": DRIVER,
                          "attributes": {DRIVER: view}, "capacity": {}, "allowMultipleAllocations": False})


@pytest.mark.parametrize("allocator", ["columnar", "oracle"])
def test_the_cpu_example_allocates_the_core_complexes_near_numa_node_1(capsys: pytest.CaptureFixture[str],
                                                                        allocator: str) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "allocate" / "cpu-numa.yaml"
    assert main(["allocate", str(example), "--allocator", allocator]) == 0
    (claimed,) = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [r["device"] for r in claimed["status"]["allocation"]["devices"]["results"]] == ["ccx-1", "ccx-2"]


@pytest.mark.parametrize(("expression", "expected"), [
    (f'{ATTRS}.numaNodes.includes(1)', True),
    (f'{ATTRS}.numaNodes.includes(2)', False),
    (f'{ATTRS}.socket.includes(0)', True),  # a scalar includes what it equals
    (f'{ATTRS}.socket.includes(1)', False),
    (f'{ATTRS}.firmware.includes(semver("2.0.0-rc.1"))', True),
    (f'{ATTRS}.build.includes(semver("1.2.0"))', True),  # equal by precedence: build metadata does not count
    (f'{ATTRS}.build.includes(semver("1.2.1"))', False),
])
def test_includes_holds_for_what_a_list_holds_or_a_scalar_equals(expression: str, expected: bool) -> None:
    published = {"socket": {"int": 0}, "numaNodes": {"ints": [0, 1]}, "build": {"version": "1.2.0+abc"},
                 "firmware": {"versions": ["1.2.0", "2.0.0-rc.1"]}}
    attributes = {name: parse_attribute(raw) for name, raw in published.items()}
    assert SelectorEngine().matches(expression, expression, lambda: device_input(DRIVER, attributes, {})) is expected


def test_without_the_gate_match_attribute_compares_no_list_values(core: AllocatorFactory) -> None:
    """D-4381-10: with DRAListTypeAttributes off the scheduler runs an allocator whose matchAttribute knows only
    scalar types: the first device under the constraint joins it, a second fails when either value is a list."""
    chosen = chooser(core, DRAListTypeAttributes=False)
    assert chosen(2, {"matchAttribute": f"{DRIVER}/socket"}) == ["ccx-0", "ccx-1"]
    assert chosen(1, {"matchAttribute": f"{DRIVER}/numaNodes"}) == ["ccx-0"]
    assert chosen(2, {"matchAttribute": f"{DRIVER}/numaNodes"}) is None  # ccx-0 and ccx-1 share NUMA node 0
