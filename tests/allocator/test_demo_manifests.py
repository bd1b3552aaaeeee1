"""The 1.37 demo manifests under examples/ go through `draconform allocate` with the answer a 1.37
kube-scheduler gives: shared NICs and GPUs by consumable capacity (KEP-5075), and a native resource request
served through DRA (KEP-5004). Also two points upstream's allocator pins that the KEPs leave open."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from draconform.cli import main
from draconform.reference.allocator.interface import AllocatorFactory
from draconform.sut import Obj

from .helpers import claim, dev, device_class, exactly, gates, node, picked, resource_slice, store_with

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
CORES = ["columnar", "oracle"]


def allocated(capsys: pytest.CaptureFixture[str], path: str, *args: str) -> tuple[int, list[Obj], str]:
    status = main(["allocate", str(EXAMPLES / path), "-o", "json", *args])
    out, err = capsys.readouterr()
    if status != 0:
        return status, [], err
    body = json.loads(out)
    return status, body["items"] if body.get("kind") == "List" else [body], err


def shares(claims: list[Obj]) -> list[tuple[str, str, dict[str, str]]]:
    found = []
    for obj in claims:
        for result in obj["status"]["allocation"]["devices"]["results"]:
            assert UUID.match(result["shareID"]), result
            found.append((obj["metadata"]["name"], result["device"], result["consumedCapacity"]))
    return found


@pytest.mark.parametrize("core", CORES)
def test_the_shared_nic_demo_rounds_up_and_shares_one_nic(capsys: pytest.CaptureFixture[str], core: str) -> None:
    status, claims, _ = allocated(capsys, "consumable-capacity/shared-nic.yaml", "--allocator", core)
    assert status == 0
    assert shares(claims) == [
        ("frontend-net", "eth1", {"bandwidth": "2G", "queues": "4"}),  # 1500M -> 2G, 3 queues -> 4
        ("backend-net", "eth1", {"bandwidth": "6G", "queues": "1"}),
        ("metrics-net", "eth1", {"bandwidth": "1G", "queues": "1"}),  # nothing asked: the defaults
    ]
    assert len({r["shareID"] for c in claims for r in c["status"]["allocation"]["devices"]["results"]}) == 3


@pytest.mark.parametrize("core", CORES)
def test_the_shared_gpu_demo_gives_two_pods_a_share_each(capsys: pytest.CaptureFixture[str], core: str) -> None:
    status, claims, _ = allocated(capsys, "consumable-capacity/shared-gpu.yaml", "--allocator", core)
    assert status == 0
    assert shares(claims) == [("pod0-gpu", "gpu-0", {"memory": "32Gi", "multiprocessors": "25"}),
                              ("pod1-gpu", "gpu-0", {"memory": "32Gi", "multiprocessors": "25"})]


def test_the_shared_demos_with_the_scheduler_gate_off(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["allocate", str(EXAMPLES / "consumable-capacity/shared-gpu.yaml"), "--feature-gates",
                   "DRAConsumableCapacity=false"])
    out, _ = capsys.readouterr()
    # capacity requests cannot be honoured: an allocation error, a finding per claim on stdout
    assert status == 1 and "ResourceClaim/pod0-gpu: cannot be allocated" in out and "DRAConsumableCapacity" in out


@pytest.mark.parametrize("core", CORES)
def test_the_native_resource_request_demo_gets_the_special_claim(capsys: pytest.CaptureFixture[str],
                                                                 core: str) -> None:
    status, claims, _ = allocated(capsys, "native-resource-request/gpu-pod.yaml", "--allocator", core)
    assert status == 0
    (special,) = claims
    meta = special["metadata"]
    assert meta["generateName"] == "pod0-extended-resources-"
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert meta["ownerReferences"][0]["kind"] == "Pod" and meta["ownerReferences"][0]["controller"] is True
    assert [r["name"] for r in special["spec"]["devices"]["requests"]] == ["container-0-request-0",
                                                                          "container-1-request-0"]
    assert [(r["request"], r["device"]) for r in special["status"]["allocation"]["devices"]["results"]] == [
        ("container-0-request-0", "gpu-0"), ("container-1-request-0", "gpu-1")]


def test_a_node_advertising_the_resource_needs_no_claim(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    documents = list(yaml.safe_load_all((EXAMPLES / "native-resource-request/gpu-pod.yaml").read_text()))
    for document in documents:
        if document["kind"] == "Node":
            document["status"] = {"allocatable": {"example.com/gpu": "1",
                                                  "deviceclass.resource.kubernetes.io/gpu.example.com": "1"}}
    path = tmp_path / "device-plugin.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    assert main(["allocate", str(path)]) == 0  # the pod fits, nothing for DRA to allocate
    out, err = capsys.readouterr()
    assert not list(yaml.safe_load_all(out)) and "device plugin" in err


def test_the_native_demo_with_the_gate_off_is_not_a_dra_request(capsys: pytest.CaptureFixture[str]) -> None:
    """Gate off, no claim is built: the GPU must come from the node's device plugin, and worker-1 advertises
    none, so the pod is unschedulable (NodeResourcesFit's "Insufficient")."""
    status = main(["allocate", str(EXAMPLES / "native-resource-request/gpu-pod.yaml"), "--feature-gates",
                   "DRAExtendedResource=false"])
    out, _ = capsys.readouterr()
    assert status == 1 and "Pod/pod0: cannot be allocated (shortage): node worker-1: Insufficient " in out
    assert "extended-resources" not in out


@pytest.mark.parametrize("core", CORES)
def test_an_empty_key_equal_toleration_tolerates_taints_without_a_value(core: str) -> None:
    """Upstream's ToleratesTaint: an empty key matches every key; with Equal the (empty) values must match.
    API validation refuses such a toleration today, but older stored claims can carry one."""
    from draconform.reference.allocator.columnar import ColumnarAllocator
    from draconform.reference.allocator.oracle import OracleAllocator

    factory: AllocatorFactory = ColumnarAllocator if core == "columnar" else OracleAllocator
    slice_ = resource_slice("s", [dev("with-value", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]),
                                  dev("without-value", taints=[{"key": "k", "effect": "NoSchedule"}])])
    request = exactly("req", "gpu", count=1, tolerations=[{"operator": "Equal", "effect": "NoSchedule"}])
    answer = factory(store_with(device_class("gpu", "true"), slice_), gates()).allocate(node("node-1"),
                                                                                        [claim("c", request)])
    assert answer.allocations is not None and picked(answer.allocations[0])[0][3] == "without-value"
