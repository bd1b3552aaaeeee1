"""Manifests as people have them (tests/corpus: written for this project, shaped like public driver demos,
the Kubernetes docs' examples and `kubectl get -o yaml` dumps), each with the verdict a kube-apiserver of the
chosen release gives: `draconform validate` must agree, and `draconform allocate` must read the same files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from draconform.cli import main

CORPUS = Path(__file__).parent

# file, release, exit status, findings expected on stdout (substrings), kinds listed as not checked
VERDICTS: list[tuple[str, str, int, list[str], list[str]]] = [
    ("gpu-demo-v1beta1.yaml", "1.34", 0, ["warning: ResourceClaimTemplate/single-gpu: apiVersion"], []),
    ("gpu-demo-v1beta1.yaml", "1.37", 0, [], []),
    ("compute-domain.yaml", "1.35", 0, [], ["ComputeDomain"]),
    ("gaudi-tolerations.yaml", "1.34", 0,
     ["warning: ResourceClaimTemplate/gaudi-tolerating: spec.spec.devices.requests[0].exactly.tolerations[0].operator",
      "(DRA-API/TOLERATION-FORMAT)"], []),
    ("example-driver-v1.yaml", "1.34", 0, [], []),
    ("slices-v1beta1-basic.yaml", "1.36", 0, [], []),
    ("taint-rule-v1beta2.yaml", "1.35", 1,
     [":2: DeviceTaintRule/gpu-0-maintenance: apiVersion: Unsupported value: 'resource.k8s.io/v1beta2': "
      "Kubernetes 1.35 serves DeviceTaintRule only as the alpha resource.k8s.io/v1alpha3"], []),
    ("taint-rule-v1beta2.yaml", "1.36", 0, ["warning: DeviceTaintRule/gpu-0-maintenance: apiVersion"], []),
    ("taint-rule-v1beta2.yaml", "1.37", 0, [], []),
    ("too-complex-selector.yaml", "1.34", 1,
     [":9: DeviceClass/paranoid.example.com: spec.selectors[0].cel.expression: Forbidden: too complex: estimated "
      "worst-case cost"], []),
    ("wrong-shapes.yaml", "1.37", 1,
     [":11: ResourceClaim/mixed-up: spec.devices.requests[0].exactly: unknown field",
      ":22: ResourceSlice/old-shape: spec.devices[0].basic: unknown field",
      ":26: ResourceClaim/ancient: apiVersion: Unsupported value: 'resource.k8s.io/v1alpha3'"], ["ConfigMap"]),
    ("pods-as-written.yaml", "1.34", 1,
     [":56: Pod/pre-1-31: spec.resourceClaims[0]: Invalid value: must specify one of: `resourceClaimName`, "
      "`resourceClaimTemplateName` (the `source` wrapper of Kubernetes 1.26-1.30 is gone",
      ":57: Pod/pre-1-31: spec.resourceClaims[0].source: unknown field (DRA-API/POD-CLAIMS)"], []),
    ("classic-fpga.yaml", "1.37", 1,
     [":9: ResourceClass/fpga.example.com: apiVersion: Unsupported value: 'cdi.k8s.io/v1alpha1': Kubernetes 1.37 "
      "does not serve KEP-3063's classic API",
      ":36: Pod/encoder: spec.containers[0].resources.claims[0]: Invalid value: \"shared\": must be of type object",
      ":40: Pod/encoder: spec.resourceClaims[1]: Invalid value: must specify one of"], []),
]

# The same files judged by a cluster serving KEP-3063's classic API (`--api classic`).
CLASSIC_VERDICTS: list[tuple[str, int, list[str], list[str]]] = [
    ("classic-fpga.yaml", 0, [], []),
    ("classic-mistakes.yaml", 1,
     [":10: ResourceClaim/over-shared: status.userLimit: Invalid value: 0:",
      ":21: Pod/half-ported: spec.containers[0].resources.claims[1]: Not found: 'missing'",
      ":23: Pod/half-ported: spec.resourceClaims[0]: Invalid value: exactly one of resourceClaimName or template "
      "must be set (KEP-3063-CLASSIC/POD-CLAIM-ONE-SOURCE)",
      ":26: DeviceClass/gpu.example.com: apiVersion: Unsupported value: 'resource.k8s.io/v1': a classic cluster "
      "serves cdi.k8s.io/v1alpha1 instead of resource.k8s.io",
      ":32: ResourceClaimTemplate/one-fpga: kind: Unsupported value: 'ResourceClaimTemplate'"], []),
    ("example-driver-v1.yaml", 1, ["apiVersion: Unsupported value: 'resource.k8s.io/v1': a classic cluster"], []),
]


def validate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["validate", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


@pytest.mark.parametrize(("name", "release", "status", "findings", "not_checked"), VERDICTS,
                         ids=[f"{v[0]}@{v[1]}" for v in VERDICTS])
def test_each_manifest_gets_the_api_servers_verdict(capsys: pytest.CaptureFixture[str], name: str, release: str,
                                                    status: int, findings: list[str], not_checked: list[str]) -> None:
    got, out, _ = validate(capsys, "--kubernetes-version", release, str(CORPUS / name))
    assert got == status, out
    for expected in findings:
        assert expected in out, out
    if status == 0:
        assert all(" warning: " in line for line in out.splitlines()), out
    got, out, _ = validate(capsys, "-o", "json", "--kubernetes-version", release, str(CORPUS / name))
    report = json.loads(out)
    assert sorted(item["kind"] for item in report["notChecked"]) == sorted(not_checked)


@pytest.mark.parametrize(("name", "status", "findings", "not_checked"), CLASSIC_VERDICTS,
                         ids=[v[0] for v in CLASSIC_VERDICTS])
def test_a_classic_cluster_judges_the_classic_api(capsys: pytest.CaptureFixture[str], name: str, status: int,
                                                  findings: list[str], not_checked: list[str]) -> None:
    got, out, _ = validate(capsys, "--api", "classic", str(CORPUS / name))
    assert got == status, out
    for expected in findings:
        assert expected in out, out
    got, out, _ = validate(capsys, "-o", "json", "--api", "classic", str(CORPUS / name))
    report = json.loads(out)
    assert report["api"] == "classic"
    assert sorted(item["kind"] for item in report["notChecked"]) == sorted(not_checked)


def test_the_whole_corpus_at_once_reports_every_file(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = validate(capsys, str(CORPUS))
    assert status == 1
    assert {Path(line.split(":", 1)[0]).name for line in out.splitlines()} >= {"too-complex-selector.yaml",
                                                                                "wrong-shapes.yaml"}
    assert "objects not checked" in err


def _dump(slices: int, devices: int) -> dict[str, Any]:
    """A large cluster's `kubectl get resourceslices -o json`, in v1beta2."""
    return {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "resource.k8s.io/v1beta2", "kind": "ResourceSlice",
         "metadata": {"name": f"node-{n}-gpu.example.com"},
         "spec": {"driver": "gpu.example.com", "nodeName": f"node-{n}",
                  "pool": {"name": f"node-{n}", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": f"gpu-{d}", "attributes": {"index": {"int": d}, "model": {"string": "a100"}},
                               "capacity": {"memory": {"value": "80Gi"}}} for d in range(devices)]}}
        for n in range(slices)]}


def test_a_large_dump_validates_and_the_size_limit_is_a_flag(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    dump = tmp_path / "slices.json"
    dump.write_text(json.dumps(_dump(500, 8)))
    size = dump.stat().st_size
    status, out, err = validate(capsys, "--kubernetes-version", "1.34", str(dump))
    assert status == 0
    lines = out.splitlines()  # v1beta2 is served only when enabled: one warning per object, nothing else
    assert len(lines) == 500 and all("warning: ResourceSlice/" in line for line in lines)
    assert "500 objects checked, 0 invalid" in err
    status, out, _ = validate(capsys, "--max-input-size", str(size - 1), str(dump))
    assert status == 2 and "input is larger than" in out


def allocate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["allocate", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


FILES = [str(CORPUS / name) for name in ("gpu-demo-v1beta1.yaml", "slices-v1beta1-basic.yaml",
                                         "example-driver-v1.yaml")]


@pytest.mark.parametrize("core", ["columnar", "oracle"])
def test_allocate_reads_the_same_mixed_files(capsys: pytest.CaptureFixture[str], core: str) -> None:
    status, out, err = allocate(capsys, *FILES, "--allocator", core)
    assert status == 0, out + err
    claims = {c["metadata"]["name"]: c for c in yaml.safe_load_all(out)}
    assert set(claims) == {"shared-gpu", "pod1-gpu"}
    devices = sorted(r["device"] for c in claims.values() for r in c["status"]["allocation"]["devices"]["results"])
    assert devices == ["gpu-0", "gpu-1"]
    assert "ignored (kinds allocation does not read): Deployment (apps/v1), Job (batch/v1), Namespace (v1)" in err


@pytest.mark.parametrize("core", ["columnar", "oracle"])
def test_allocate_honours_a_device_taint_rule(capsys: pytest.CaptureFixture[str], core: str) -> None:
    status, out, _ = allocate(capsys, *FILES, str(CORPUS / "taint-rule-v1beta2.yaml"), "--allocator", core)
    assert status == 1
    assert "ResourceClaim/" in out and ": cannot be allocated (together): " in out and "node worker-1: " in out


def test_allocate_refuses_an_alias_bomb_cleanly(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    bomb.write_text("\n".join(lines) + "\n")
    status, out, _ = allocate(capsys, str(bomb))
    assert status == 2
    assert out.startswith(f"{bomb}:") and "refusing to expand YAML aliases" in out
