"""A generated corpus of realistic DRA objects and the validation throughput on it, for
`draconform bench validation` (and tests). Deterministic: the same size gives the same corpus."""

from __future__ import annotations

import random
import time
from typing import Any

import yaml

from draconform.bench.registry import BenchOptions, Measurement, workload
from draconform.kube.featuregates import CURRENT_RELEASE
from draconform.validation.core import validate_gates, validate_manifest
from draconform.validation.loader import load_documents

DRIVER = "gpu.example.com"
SELECTORS = (
    f'device.driver == "{DRIVER}"',
    f'device.attributes["{DRIVER}"].model == "h100"',
    f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0',
    f'device.attributes["{DRIVER}"].driverVersion.isGreaterThan(semver("1.2.0"))',
)
API = "resource.k8s.io/v1"


def _slice(index: int, rng: random.Random) -> dict[str, Any]:
    node = f"node-{index:05d}"
    partitionable = index % 3 == 0
    devices = []
    for number in range(8):
        device: dict[str, Any] = {
            "name": f"gpu-{number}",
            "attributes": {
                "model": {"string": rng.choice(["a100", "h100", "l40s"])},
                "driverVersion": {"version": f"1.{rng.randint(0, 9)}.{rng.randint(0, 20)}"},
                "numa": {"int": number // 4},
                "uuid": {"string": f"GPU-{rng.getrandbits(64):016x}"},
            },
            "capacity": {"memory": {"value": rng.choice(["40Gi", "80Gi"])}},
        }
        if partitionable:
            device["consumesCounters"] = [{"counterSet": f"gpu-{number // 4}",
                                           "counters": {"memory": {"value": "10Gi"}, "sm": {"value": "14"}}}]
            device["bindsToNode"] = True
            device["bindingConditions"] = [f"{DRIVER}/attached"]
            device["bindingFailureConditions"] = [f"{DRIVER}/attach-failed"]
        if number == 7:
            device["taints"] = [{"key": f"{DRIVER}/unhealthy", "value": "ecc", "effect": "NoSchedule"}]
        devices.append(device)
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{node}-{DRIVER}"},
            "spec": {"driver": DRIVER, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "nodeName": node, "devices": devices}}


def _claim_spec(rng: random.Random) -> dict[str, Any]:
    requests: list[dict[str, Any]] = [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.example.com", "count": rng.randint(1, 4),
        "selectors": [{"cel": {"expression": rng.choice(SELECTORS)}}]}}]
    if rng.random() < 0.3:
        requests.append({"name": "fallback", "firstAvailable": [
            {"name": "big", "deviceClassName": "gpu.example.com", "selectors": [{"cel": {"expression": SELECTORS[1]}}]},
            {"name": "small", "deviceClassName": "gpu.example.com", "count": 2},
        ]})
    spec: dict[str, Any] = {"devices": {"requests": requests}}
    if len(requests) > 1:
        spec["devices"]["constraints"] = [{"requests": ["gpu", "fallback"], "matchAttribute": f"{DRIVER}/numa"}]
    return spec


def corpus(size: int, seed: int = 1) -> list[dict[str, Any]]:
    """`size` objects, in a repeating mix of 4 slices, 3 claims, 2 templates and 1 class out of 10."""
    rng = random.Random(seed)
    objects: list[dict[str, Any]] = []
    for index in range(size):
        slot = index % 10
        if slot < 4:
            objects.append(_slice(index, rng))
        elif slot < 7:
            objects.append({"apiVersion": API, "kind": "ResourceClaim",
                            "metadata": {"name": f"claim-{index}", "namespace": "default"}, "spec": _claim_spec(rng)})
        elif slot < 9:
            objects.append({"apiVersion": API, "kind": "ResourceClaimTemplate",
                            "metadata": {"name": f"template-{index}", "namespace": "default"},
                            "spec": {"spec": _claim_spec(rng)}})
        else:
            objects.append({"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": f"class-{index}"},
                            "spec": {"selectors": [{"cel": {"expression": rng.choice(SELECTORS)}}]}})
    return objects


def validation_throughput(size: int = 10_000, release: str = CURRENT_RELEASE) -> list[Measurement]:
    """Objects per second through `validate_manifest`, and through YAML loading plus validation."""
    objects = corpus(size)
    gates = validate_gates(None, release)
    validate_manifest(objects[0], gates)  # compile validators and warm caches outside the timing
    started = time.perf_counter()
    invalid = sum(1 for obj in objects if any(p.severity == "error" for p in validate_manifest(obj, gates)[1]))
    checked = time.perf_counter() - started
    if invalid:
        raise RuntimeError(f"the generated corpus has {invalid} invalid objects")
    text = yaml.dump_all(objects, Dumper=yaml.CSafeDumper)
    started = time.perf_counter()
    loaded = 0
    for document in load_documents(text):
        validate_manifest(document.data, gates)
        loaded += 1
    end_to_end = time.perf_counter() - started
    return [
        Measurement("validation", "objects/s", size / checked,
                    f"{size:,} objects: schema and rules, Kubernetes {release}, {checked:.2f} s"),
        Measurement("validation", "objects/s", loaded / end_to_end,
                    f"{loaded:,} objects from {len(text) / 1e6:.1f} MB of YAML: load (lines if asked), schema and "
                    f"rules, {end_to_end:.2f} s"),
    ]


@workload("validation", "objects/s through schema and rule validation of a generated corpus of DRA objects")
def _validation(options: BenchOptions) -> list[Measurement]:
    return validation_throughput(size=max(10, int(10_000 * options.scale)))


# A small manifest as a pre-commit hook or an editor hands `validate` one file at a time: a class, a template and
# the Deployment that uses it.
SMALL_FILE = f"""apiVersion: {API}
kind: DeviceClass
metadata:
  name: {DRIVER}
spec:
  selectors:
  - cel:
      expression: device.driver == "{DRIVER}"
---
apiVersion: {API}
kind: ResourceClaimTemplate
metadata:
  name: one-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: {DRIVER}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inference
spec:
  selector:
    matchLabels: {{app: inference}}
  template:
    metadata:
      labels: {{app: inference}}
    spec:
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: one-gpu
      containers:
      - name: server
        image: registry.example.com/server:1
        resources:
          claims:
          - name: gpu
"""
START_RUNS = 7


def start_times(command: list[str], path: str, runs: int = START_RUNS) -> tuple[float, float, int]:
    """The median wall time and the median CPU time (user and system, which load on the machine barely changes)
    of `command FILE` in a child process, and its exit status."""
    import os
    import resource
    import subprocess

    # As an installed wheel runs: with its modules' bytecode cached (pip compiles it on install; a checkout run
    # with PYTHONDONTWRITEBYTECODE would compile every module from source at every start), after one warm-up.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([*command, path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
    walls: list[float] = []
    cpus: list[float] = []
    status = 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        status = subprocess.run([*command, path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                check=False, env=env).returncode
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return sorted(walls)[len(walls) // 2], sorted(cpus)[len(cpus) // 2], status


def kubernetes_validate() -> list[str] | None:
    """kubernetes-validate's command when it is installed (it is not a dependency: measured only if present)."""
    import importlib.util
    import shutil
    import sys

    if importlib.util.find_spec("kubernetes_validate") is None:
        return None
    script = shutil.which("kubernetes-validate")
    return [script] if script else [sys.executable, "-m", "kubernetes_validate"]


@workload("ValidateStart/small-file",
          "`draconform validate FILE` on a 3-object file in a child process, as a pre-commit hook runs it: median "
          "wall and CPU time of 7 starts (fewer at --scale below 1; target 0.3 s wall); kubernetes-validate's on "
          "the same file if installed")
def validate_start(options: BenchOptions) -> list[Measurement]:
    import sys
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dra.yaml"
        path.write_text(SMALL_FILE, encoding="utf-8")
        runs = max(1, round(START_RUNS * options.scale))
        ours, cpu, status = start_times([sys.executable, "-m", "draconform.cli", "validate"], str(path), runs)
        found = [Measurement("ValidateStart/small-file", "s", ours,
                             f"draconform validate: median of {runs} starts, {cpu:.2f} s CPU, exit {status}")]
        other = kubernetes_validate()
        if other is not None:
            theirs, their_cpu, their_status = start_times(other, str(path), runs)
            found.append(Measurement("ValidateStart/small-file", "s", theirs,
                                     f"kubernetes-validate: median of {runs} starts, {their_cpu:.2f} s CPU, "
                                     f"exit {their_status}"))
    return found
