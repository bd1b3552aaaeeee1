"""`draconform allocate`: the shipped examples allocate, and each exit status (0/1/2) means what the help
says, with findings on stdout as FILE:LINE: KIND/NAME: field: message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from draconform.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "allocate"


def allocate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["allocate", *args])
    out, err = capsys.readouterr()
    return status, out, err


def results(claim: dict[str, object]) -> list[str]:
    allocation = claim["status"]["allocation"]  # type: ignore[index]
    return [r["device"] for r in allocation["devices"]["results"]]  # type: ignore[index]


@pytest.mark.parametrize("core", ["columnar", "oracle"])
def test_the_gpu_example_allocates_the_two_free_large_gpus_on_one_numa_node(
        capsys: pytest.CaptureFixture[str], core: str) -> None:
    status, out, _ = allocate(capsys, str(EXAMPLES / "gpu-node.yaml"), "--allocator", core)
    assert status == 0
    (claim,) = list(yaml.safe_load_all(out))
    assert claim["metadata"]["name"] == "training"
    assert results(claim) == ["gpu-2", "gpu-3"]
    assert claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == \
        ["worker-1"]
    assert claim["status"]["allocation"]["devices"]["config"][0]["source"] == "FromClass"


def test_a_pod_with_a_template_gets_a_generated_claim_of_two_partitions(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = allocate(capsys, str(EXAMPLES / "partitions.yaml"), "-o", "json")
    assert status == 0
    claim = json.loads(out)
    assert claim["metadata"]["name"] == "trainer-gpu"
    assert results(claim) == ["half-0", "half-1"]
    assert {r["request"] for r in claim["status"]["allocation"]["devices"]["results"]} == {"parts/halves"}


def test_the_generated_claim_is_made_as_the_resourceclaim_controller_makes_it(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """One template-to-claim path (reference/podclaims.py): the template's labels and annotations, the entry's
    annotation and the pod as controlling owner, named `<pod>-<entry>` without generateName's random suffix."""
    path = tmp_path / "template.yaml"
    path.write_text(_manifests(GPU_CLASS, _node_gpus("worker-1", 1), """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: annotated}
spec:
  metadata: {labels: {team: a}, annotations: {note: b}}
  spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}""", """apiVersion: v1
kind: Pod
metadata: {name: p2}
spec:
  containers: [{name: c, image: i}]
  resourceClaims: [{name: one, resourceClaimTemplateName: annotated}]"""))
    status, out, err = allocate(capsys, str(path), "-o", "json")
    assert status == 0, out + err
    claim = json.loads(out)
    assert claim["metadata"]["name"] == "p2-one"
    assert results(claim) == ["gpu-0"]
    meta = claim["metadata"]
    assert meta["labels"] == {"team": "a"}
    assert meta["annotations"] == {"note": "b", "resource.kubernetes.io/pod-claim-name": "one"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "p2", "controller": True,
                                        "blockOwnerDeletion": True}]
    assert "generateName" not in meta


def test_a_pool_without_a_generation_is_generation_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Upstream reads a missing spec.pool.generation as 0, as `validate` does."""
    path = tmp_path / "no-generation.yaml"
    path.write_text(GPU_CLASS + "\n---\n" + _node_gpus("worker-1", 1).replace("generation: 1, ", "") + "\n---\n"
                    + _claim("c"))
    assert "generation" not in path.read_text()
    status, out, err = allocate(capsys, str(path))
    assert status == 0, out + err
    assert results(yaml.safe_load(out)) == ["gpu-0"]


def test_exit_1_when_no_node_fits_with_a_reason_per_claim(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = allocate(capsys, str(EXAMPLES / "partitions.yaml"),
                                "--feature-gates", "DRAPartitionableDevices=false")
    assert status == 1
    assert f"{EXAMPLES / 'partitions.yaml'}:" in out
    assert "ResourceClaim/trainer-gpu: cannot be allocated (shortage): node worker-1:" in out
    assert "generated for Pod default/trainer" in out


def test_exit_1_on_a_named_node_without_devices(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = allocate(capsys, str(EXAMPLES / "gpu-node.yaml"), "--node", "worker-9")
    assert status == 1
    assert "node worker-9" in out


def test_exit_1_for_a_missing_device_class(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = allocate(capsys, str(EXAMPLES / "missing-class.yaml"), "--node", "worker-1")
    assert status == 1
    assert "allocation error: claim net, request nic: device class nic.example.com does not exist" in out


def test_exit_1_for_a_cel_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = (EXAMPLES / "gpu-node.yaml").read_text().replace(
        'memory.compareTo(quantity("40Gi")) >= 0', 'nosuch.compareTo(quantity("40Gi")) >= 0')
    path = tmp_path / "cel.yaml"
    path.write_text(text)
    status, out, _ = allocate(capsys, str(path))
    assert status == 1
    assert "CEL runtime error" in out and "nosuch" in out


@pytest.mark.parametrize(("text", "expected"), [
    ("kind: [unclosed", ":2: not valid YAML"),
    ("- just a list", ":1: expected an object"),
    ("", ":1: no objects in this input"),
    ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
     "spec: {driver: d, pool: {name: p, generation: one, resourceSliceCount: 1}, allNodes: true}",
     ':4: ResourceSlice/s: spec.pool.generation: Invalid value: "one": must be of type integer'),
    ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
     "spec: {devices: {requests: [{name: r}]}}",
     ":4: ResourceClaim/c: spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is "
     "required"),
    ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
     "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: x}, firstAvailable: [{name: s, "
     "deviceClassName: x}]}]}}",
     ":4: ResourceClaim/c: spec.devices.requests[0]: Invalid value: both are set: exactly one of"),
    ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\n"
     "spec: {spec: {devices: {requests: [{name: r}]}}}",
     ":4: ResourceClaimTemplate/t: spec.spec.devices.requests[0]: Required value: exactly one of"),
    ("apiVersion: resource.k8s.io/v1alpha3\nkind: DeviceClass\nmetadata: {name: c}",
     ":1: DeviceClass/c: apiVersion: Unsupported value: 'resource.k8s.io/v1alpha3': Kubernetes 1.37 serves "
     "DeviceClass as resource.k8s.io/v1, resource.k8s.io/v1beta2, resource.k8s.io/v1beta1"),
    ("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {selectorz: []}",
     ":4: DeviceClass/c: spec.selectorz: unknown field"),
    ("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c}\n"
     "spec:\n  devices:\n    requests:\n    - name: r\n      exactly: {deviceClassName: x}\n",
     ":8: ResourceClaim/c: spec.devices.requests[0].exactly: unknown field"),
])
def test_exit_2_for_invalid_input_names_file_object_and_field(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "input.yaml"
    path.write_text(text)
    status, out, _ = allocate(capsys, str(path))
    assert status == 2
    assert f"{path}{expected}" in out


def test_exit_2_for_an_unreadable_file_and_an_unknown_gate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert allocate(capsys, str(tmp_path / "absent.yaml"))[0] == 2
    status, _, err = allocate(capsys, str(EXAMPLES / "gpu-node.yaml"), "--feature-gates", "NoSuchGate=true")
    assert status == 2 and "NoSuchGate" in err


# --- one scheduling cycle (issue 29) and a finding per claim with its own reason (issue 31) -------------------

def _manifests(*documents: str) -> str:
    return "\n---\n".join(documents)


GPU_CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}"""


def _node_gpus(node: str, count: int, model: str | None = "A100") -> str:
    attributes = f"attributes: {{model: {{string: {model}}}}}" if model else "attributes: {}"
    devices = "\n".join(f"  - {{name: gpu-{i}, {attributes}}}" for i in range(count))
    return f"""apiVersion: v1
kind: Node
metadata: {{name: {node}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {node}-gpus}}
spec:
  driver: gpu.example.com
  pool: {{name: {node}, generation: 1, resourceSliceCount: 1}}
  nodeName: {node}
  devices:
{devices}"""


def _claim(name: str, count: int = 1, class_name: str = "gpu", selector: str | None = None) -> str:
    selectors = f", selectors: [{{cel: {{expression: '{selector}'}}}}]" if selector else ""
    return f"""apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}, namespace: default}}
spec:
  devices:
    requests:
    - {{name: gpus, exactly: {{deviceClassName: {class_name}, count: {count}{selectors}}}}}"""


A100 = 'device.attributes["gpu.example.com"].model == "A100"'


@pytest.mark.parametrize("broken", ["worker-1", "worker-2"])
def test_an_allocation_error_on_any_node_the_cycle_visits_fails_the_attempt(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, broken: str) -> None:
    """kube-scheduler filters every node of a small cluster and a Filter error aborts the cycle: the node that
    fits does not get the claim, the error is shown and the exit status is 1."""
    path = tmp_path / "cluster.yaml"
    path.write_text(_manifests(GPU_CLASS, _node_gpus("worker-1", 1, None if broken == "worker-1" else "A100"),
                               _node_gpus("worker-2", 1, None if broken == "worker-2" else "A100"),
                               _claim("trainer", selector=A100)))
    status, out, _ = allocate(capsys, str(path))
    assert status == 1
    assert f"ResourceClaim/trainer: cannot be allocated (error): node {broken}: allocation error:" in out
    assert "model" in out


def test_each_failing_claim_gets_its_own_reason_in_text_and_json(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    """A claim naming a missing class no longer hides the 9-GPU claim's shortage, and neither finding lands
    under the other claim."""
    path = tmp_path / "cluster.yaml"
    path.write_text(_manifests(GPU_CLASS, _node_gpus("worker-1", 8), _claim("nine", count=9),
                               _claim("net", class_name="nic.example.com")))
    status, out, _ = allocate(capsys, str(path))
    assert status == 1
    lines = out.splitlines()
    (nine,) = [line for line in lines if "ResourceClaim/nine:" in line]
    (net,) = [line for line in lines if "ResourceClaim/net:" in line]
    assert "(shortage)" in nine and "needs 9 matching device(s) of class gpu, 8 match" in nine
    assert "(missing-class)" in net and "device class nic.example.com does not exist" in net
    assert "nic.example.com" not in nine
    status, out, _ = allocate(capsys, str(path), "-o", "json")
    assert status == 1
    report = json.loads(out)
    assert report["allocated"] is False and report["exitStatus"] == 1
    reasons = {(f["namespace"], f["name"]): f["reason"] for f in report["findings"]}
    assert reasons == {("default", "nine"): "shortage", ("default", "net"): "missing-class"}
    assert all(f["file"] == str(path) and f["line"] > 0 for f in report["findings"])


def test_claims_that_fit_alone_say_what_stopped_them(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(_manifests(GPU_CLASS, _node_gpus("worker-1", 1), _claim("first"), _claim("second")))
    status, out, _ = allocate(capsys, str(path), "-o", "json")
    assert status == 1
    found = {f["name"]: f for f in json.loads(out)["findings"]}
    assert found["first"]["reason"] == found["second"]["reason"] == "together"
    assert "fits on its own (node worker-1), not together with the other claims" in found["second"]["message"]
    broken = tmp_path / "broken.yaml"
    broken.write_text(_manifests(GPU_CLASS, _node_gpus("worker-1", 2), _claim("fine"),
                                 _claim("probe", selector='device.attributes["gpu.example.com"].nosuch == 1')))
    status, out, _ = allocate(capsys, str(broken), "-o", "json")
    assert status == 1
    found = {f["name"]: f for f in json.loads(out)["findings"]}
    assert found["probe"]["reason"] == "error" and "nosuch" in found["probe"]["message"]
    assert found["fine"]["reason"] == "attempt-error" and "nosuch" in found["fine"]["message"]


def test_an_attempt_that_does_not_fit_is_never_called_an_allocation_error(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """kube-scheduler stops at the first claim that fails: here "big" (two GPUs, one on the node), so the
    attempt does not fit and the pod stays unschedulable. "probe" on its own would end an attempt with a CEL
    error; its finding says so, but neither it nor the verdict reads as the attempt's allocation error."""
    path = tmp_path / "cluster.yaml"
    path.write_text(_manifests(GPU_CLASS, _node_gpus("worker-1", 1), _claim("big", count=2),
                               _claim("probe", selector='device.attributes["gpu.example.com"].nosuch == 1')))
    status, out, _ = allocate(capsys, str(path))
    assert status == 1
    lines = out.splitlines()
    assert lines[0].startswith("attempt: does-not-fit: ")
    assert "allocation error" not in out
    (probe,) = [line for line in lines if "ResourceClaim/probe:" in line]
    assert "(own-error)" in probe and "nosuch" in probe and "worker-1" in probe
    (big,) = [line for line in lines if "ResourceClaim/big:" in line]
    assert "(shortage)" in big
    status, out, _ = allocate(capsys, str(path), "-o", "json")
    report = json.loads(out)
    assert status == 1 and report["attempt"] == "does-not-fit" and report["allocated"] is False
    assert {f["name"]: f["reason"] for f in report["findings"]} == {"big": "shortage", "probe": "own-error"}
    assert "allocation error" not in out


def test_an_attempt_that_ended_in_an_error_says_so_first(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(_manifests(GPU_CLASS, _node_gpus("worker-1", 2), _claim("fine"),
                               _claim("probe", selector='device.attributes["gpu.example.com"].nosuch == 1')))
    status, out, _ = allocate(capsys, str(path))
    assert status == 1
    assert out.splitlines()[0].startswith("attempt: error: the scheduling cycle ended at node worker-1: "
                                          "allocation error: ")
    status, out, _ = allocate(capsys, str(path), "-o", "json")
    report = json.loads(out)
    assert report["attempt"] == "error" and "nosuch" in report["attemptMessage"]
    assert {f["name"]: f["reason"] for f in report["findings"]} == {"fine": "attempt-error", "probe": "error"}
