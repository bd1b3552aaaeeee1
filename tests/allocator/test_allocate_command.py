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


# Tests added from surviving mutants of `.ci/unit-mutation allocate` (docs/suite-power.md, "Unit-test power").

def test_without_any_node_the_command_says_so_on_stderr(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "nodeless.yaml"
    path.write_text(_manifests(GPU_CLASS, _claim("lonely")))
    status, out, err = allocate(capsys, str(path))
    assert (status, out) == (1, "")
    assert err == "draconform allocate: no node is known (give --node, Node objects or node-local ResourceSlices)\n"


def test_several_nodes_the_claim_goes_to_the_first_that_fits_by_name(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Over several nodes the core judges them in one batch and says which fits; the claims are then allocated
    on the chosen node, the first feasible one by name (worker-1 has too few devices)."""
    path = tmp_path / "cluster.yaml"
    path.write_text(_manifests(GPU_CLASS, _node_gpus("worker-3", 2), _node_gpus("worker-1", 1),
                               _node_gpus("worker-2", 2), _claim("pair", count=2)))
    status, out, err = allocate(capsys, str(path), "-o", "json")
    assert status == 0, out + err
    claim = json.loads(out)
    assert claim["metadata"]["name"] == "pair"
    assert results(claim) == ["gpu-0", "gpu-1"]
    selector = claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]
    assert selector["values"] == ["worker-2"]


def test_a_claim_already_in_the_input_under_the_generated_name_is_not_made_again(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The resourceclaim controller makes a pod's claim once: a claim of that name already there is the one."""
    path = tmp_path / "made.yaml"
    path.write_text(_manifests(GPU_CLASS, _node_gpus("worker-1", 2), """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}""", _claim("p2-one"), """apiVersion: v1
kind: Pod
metadata: {name: p2}
spec:
  containers: [{name: c, image: i}]
  resourceClaims: [{name: one, resourceClaimTemplateName: one-gpu}]"""))
    status, out, err = allocate(capsys, str(path))
    assert status == 0, out + err
    (claim,) = list(yaml.safe_load_all(out))
    assert claim["metadata"]["name"] == "p2-one"
    assert [r["request"] for r in claim["status"]["allocation"]["devices"]["results"]] == ["gpus"]


def test_a_failing_extended_resource_claim_is_shown_at_its_pod(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    """KEP-5004: the claim kube-scheduler builds for a pod's extended resources is not in the input; its
    finding points at the pod's spec and names the pod."""
    text = (EXAMPLES.parent / "native-resource-request" / "gpu-pod.yaml").read_text()
    path = tmp_path / "three-gpus.yaml"
    path.write_text(text.replace('example.com/gpu: "1"', 'example.com/gpu: "3"'))
    status, out, _ = allocate(capsys, str(path), "-o", "json")
    assert status == 1
    (finding,) = json.loads(out)["findings"]
    lines = path.read_text().splitlines()
    pod_spec = next(i for i in range(lines.index("  name: pod0"), len(lines)) if lines[i] == "spec:") + 1
    assert (finding["file"], finding["line"]) == (str(path), pod_spec)
    assert (finding["kind"], finding["name"], finding["namespace"]) == ("ResourceClaim", "pod0-extended-resources",
                                                                        "gpu-test")
    assert finding["message"].endswith("(generated for Pod gpu-test/pod0)")


def test_objects_of_other_kinds_are_counted_once_on_stderr(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    others = tmp_path / "others.yaml"
    others.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n---\n"
                      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n")
    status, _, err = allocate(capsys, str(EXAMPLES / "gpu-node.yaml"), str(others))
    assert status == 0
    assert err == ("draconform allocate: 2 objects ignored (kinds allocation does not read): Deployment (apps/v1), "
                   "Namespace (v1)\n")
    others.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n")
    status, _, err = allocate(capsys, str(EXAMPLES / "gpu-node.yaml"), str(others))
    assert status == 0
    assert err == "draconform allocate: 1 object ignored (kinds allocation does not read): Namespace (v1)\n"


def test_a_claim_without_a_namespace_is_in_the_default_namespace(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(_manifests(GPU_CLASS, _node_gpus("worker-1", 1), _claim("plain").replace(", namespace: default",
                                                                                            "")))
    status, out, err = allocate(capsys, str(path))
    assert status == 0, out + err
    (claim,) = list(yaml.safe_load_all(out))
    assert claim["metadata"] == {"name": "plain", "namespace": "default"}
    assert results(claim) == ["gpu-0"]


def test_exit_2_for_two_objects_of_one_name_and_for_a_kind_in_the_wrong_group(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A claim without a namespace is in `default`, so it is the same claim as one written there."""
    path = tmp_path / "twice.yaml"
    path.write_text(_manifests(_claim("x").replace(", namespace: default", ""), _claim("x")))
    status, out, _ = allocate(capsys, str(path))
    assert status == 2
    second = [n for n, line in enumerate(path.read_text().splitlines(), 1) if line.startswith("metadata:")][1]
    assert out == f"{path}:{second}: ResourceClaim/x: metadata.name: Duplicate value: ResourceClaim default/x " \
                  "appears twice\n"
    path.write_text("apiVersion: apps/v1\nkind: Node\nmetadata: {name: n}\n")
    status, out, _ = allocate(capsys, str(path))
    assert (status, out) == (2, f"{path}:1: Node/n: apiVersion: Node is read as v1, not apps/v1\n")


def test_an_empty_input_is_refused_unless_allowed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n")
    status, out, _ = allocate(capsys, str(EXAMPLES / "gpu-node.yaml"), str(empty))
    assert (status, out) == (2, f"{empty}:1: no objects in this input (--allow-empty accepts that)\n")
    status, out, _ = allocate(capsys, str(EXAMPLES / "gpu-node.yaml"), str(empty), "--allow-empty")
    assert status == 0 and "name: training" in out


# Extended resources no DRA serves: kube-scheduler's NodeResourcesFit judges every extended resource a pod asks
# for (fit.go, fitsRequest): one a node does not leave to DRA must be advertised in the amount asked, or the
# pod is unschedulable ("Insufficient NAME"). allocate used to judge only those a DeviceClass stands for.

GPU_BACKED_CLASS = GPU_CLASS + "\n  extendedResourceName: example.com/gpu"


def _worker(allocatable: str = "") -> str:
    status = f"\nstatus: {{allocatable: {{{allocatable}}}}}" if allocatable else ""
    return _node_gpus("worker-1", 2).replace("metadata: {name: worker-1}\n",
                                             f"metadata: {{name: worker-1}}{status}\n", 1)


def _pod_yaml(limits: dict[str, int]) -> str:
    asked = ", ".join(f"{name}: '{count}'" for name, count in limits.items())
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: default}}
spec:
  containers: [{{name: c, image: i, resources: {{limits: {{{asked}}}}}}}]"""


def test_a_pod_asking_an_extended_resource_nobody_provides_stays_unschedulable(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The pod's DRA-backed GPU fits, its FPGA is neither advertised nor backed by a class: no node fits the pod,
    exit 1 with the pod's finding naming the resource; once the node advertises one FPGA, the pod fits."""
    pod = _pod_yaml({"example.com/gpu": 1, "example.com/fpga": 1})
    path = tmp_path / "fpga.yaml"
    path.write_text(_manifests(GPU_BACKED_CLASS, _worker(), pod))
    status, out, _ = allocate(capsys, str(path), "-o", "json")
    assert status == 1, out
    answer = json.loads(out)
    assert answer["attempt"] == "does-not-fit"
    (finding,) = answer["findings"]
    assert (finding["kind"], finding["name"], finding["reason"]) == ("Pod", "p", "shortage")
    assert "Insufficient example.com/fpga" in finding["message"]
    path.write_text(_manifests(GPU_BACKED_CLASS, _worker("example.com/fpga: '1'"), pod))
    status, out, err = allocate(capsys, str(path), "-o", "json")
    assert status == 0, out + err
    claim = json.loads(out)
    assert claim["metadata"]["name"] == "p-extended-resources"
    assert [r["request"] for r in claim["status"]["allocation"]["devices"]["results"]] == ["container-0-request-1"]


def test_a_pending_claim_beside_a_pod_whose_resource_nobody_provides_is_not_allocated(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The pod asks for no DRA resource at all: it still has to fit the node its claims are allocated for."""
    path = tmp_path / "beside.yaml"
    path.write_text(_manifests(GPU_CLASS, _worker(), _claim("plain"), _pod_yaml({"example.com/fpga": 1})))
    status, out, _ = allocate(capsys, str(path))
    assert status == 1, out
    assert out.startswith("attempt: does-not-fit: ")
    assert "Pod/p: cannot be allocated (shortage): node worker-1: Insufficient example.com/fpga" in out


def test_an_advertised_extended_resource_must_be_advertised_in_the_amount_asked(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Two FPGAs asked of a node advertising one (or advertising it as 0) do not fit; one of one fits, and the
    device plugin serves it (nothing to allocate)."""
    path = tmp_path / "amount.yaml"
    for advertised, asked, expected in (("1", 2, 1), ("0", 1, 1), ("1", 1, 0), ("3", 2, 0)):
        path.write_text(_manifests(GPU_CLASS, _worker(f"example.com/fpga: '{advertised}'"),
                                   _pod_yaml({"example.com/fpga": asked})))
        status, out, err = allocate(capsys, str(path))
        assert status == expected, (advertised, asked, out, err)
        if expected == 0:
            assert (out, err) == ("", "draconform allocate: node worker-1: nothing to allocate, the device plugin "
                                      "serves the pods' extended resources\n")


def test_with_draextendedresource_off_a_class_does_not_stand_for_an_extended_resource(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Gate off, the DeviceClass's extendedResourceName means nothing to the scheduler: the node must advertise
    the GPU itself, and no claim is built for the pod."""
    path = tmp_path / "gate-off.yaml"
    path.write_text(_manifests(GPU_BACKED_CLASS, _worker(), _pod_yaml({"example.com/gpu": 1})))
    status, out, _ = allocate(capsys, str(path), "--feature-gates", "DRAExtendedResource=false")
    assert status == 1, out
    assert "Insufficient example.com/gpu" in out
    status, out, _ = allocate(capsys, str(path))
    assert status == 0, out
    assert yaml.safe_load(out)["metadata"]["name"] == "p-extended-resources"


def test_a_pods_template_entry_after_a_claim_entry_gets_its_claim_and_a_missing_template_is_named(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Every template entry of the pod gets its claim, wherever it stands among the entries; one naming a
    template the input lacks is unusable input (exit 2) at that entry's field."""
    template = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}"""
    pod = """apiVersion: v1
kind: Pod
metadata: {name: p2, namespace: default}
spec:
  containers: [{name: c, image: i}]
  resourceClaims:
  - {name: shared, resourceClaimName: plain}
  - {name: own, resourceClaimTemplateName: TEMPLATE}"""
    path = tmp_path / "entries.yaml"
    path.write_text(_manifests(GPU_CLASS, _node_gpus("worker-1", 2), template, _claim("plain"),
                               pod.replace("TEMPLATE", "one-gpu")))
    status, out, err = allocate(capsys, str(path))
    assert status == 0, out + err
    assert sorted(claim["metadata"]["name"] for claim in yaml.safe_load_all(out)) == ["p2-own", "plain"]
    path.write_text(_manifests(GPU_CLASS, _node_gpus("worker-1", 2), _claim("plain"),
                               pod.replace("TEMPLATE", "nosuch")))
    status, out, _ = allocate(capsys, str(path))
    line = path.read_text().splitlines().index("  - {name: own, resourceClaimTemplateName: nosuch}") + 1
    assert (status, out) == (2, f"{path}:{line}: Pod/p2: spec.resourceClaims[1].resourceClaimTemplateName: "
                                "template 'nosuch' is not in the input\n")


def test_a_node_named_only_by_a_devices_node_name_is_tried(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """With perDeviceNodeSelection a slice names each device's node: with no Node object and no --node, that node
    is known from the device and the claim is allocated there."""
    path = tmp_path / "per-device.yaml"
    path.write_text(_manifests(GPU_CLASS, """apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: spread}
spec:
  driver: gpu.example.com
  perDeviceNodeSelection: true
  pool: {name: spread, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, nodeName: worker-7}""", _claim("plain")))
    status, out, err = allocate(capsys, str(path))
    assert status == 0, out + err
    (claim,) = list(yaml.safe_load_all(out))
    assert results(claim) == ["gpu-0"]
    assert claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == \
        ["worker-7"]


def test_an_unknown_allocator_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["allocate", str(EXAMPLES / "gpu-node.yaml"), "--allocator", "fastest"])
    assert exited.value.code == 2
    assert "argument --allocator: invalid choice: 'fastest'" in capsys.readouterr().err
