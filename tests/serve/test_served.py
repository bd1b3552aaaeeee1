"""`draconform serve` as a whole, its components in their own processes: a pod becomes Ready as kubelet and
scheduler report it (what `kubectl wait --for=condition=Ready` reads), a bound pod whose claim cannot be
prepared shows ContainerCreating and not ready, a killed component is noticed, logged and started again, and
`--data` keeps the objects across a restart."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.live.helpers import served_reference, wait_until
from tests.serve.conftest import Http

KUBECTL = shutil.which("kubectl")


def _url(directory: Path) -> str:
    config = yaml.safe_load((directory / "kubeconfig").read_text())
    return str(config["clusters"][0]["cluster"]["server"])


def _component_pid(directory: Path, component: str) -> int:
    wanted = [f"{directory}/kubeconfig", component]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "draconform.serve.component" in command and all(w in command for w in wanted):
            return int(entry.name)
    raise AssertionError(f"no {component} process for {directory}")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    directory = tmp_path_factory.mktemp("served")
    with served_reference(directory):
        yield directory


def _kubectl(served: Path, *args: str, stdin: str | None = None,
             check: bool = True) -> subprocess.CompletedProcess[str]:
    """The machine's kubectl against the served cluster; its output captured."""
    assert KUBECTL is not None
    return subprocess.run([KUBECTL, "--kubeconfig", str(served / "kubeconfig"), *args], input=stdin, text=True,
                          capture_output=True, check=check)


def test_a_pod_becomes_ready_as_kubectl_wait_reads_it(served: Path) -> None:
    if KUBECTL is None:
        pytest.skip("no kubectl binary on this machine")
    manifest = """
apiVersion: v1
kind: Node
metadata: {name: ready-node, labels: {kubernetes.io/hostname: ready-node}}
status: {allocatable: {pods: "110", cpu: "8", memory: 32Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: ready-pod, namespace: default}
spec:
  containers: [{name: app, image: registry.example/app:1}]
"""
    _kubectl(served, "apply", "-f", "-", stdin=manifest)
    for condition in ("PodScheduled", "Ready"):
        waited = _kubectl(served, "wait", f"--for=condition={condition}", "pod/ready-pod", "--timeout=300s",
                          check=False)
        assert waited.returncode == 0, waited.stderr
    row = _kubectl(served, "get", "pod", "ready-pod", "--no-headers").stdout.split()
    assert row[1:3] == ["1/1", "Running"], row
    _kubectl(served, "delete", "pod", "ready-pod", "--wait=false")


def test_a_bound_pod_whose_claim_cannot_be_prepared_shows_container_creating(served: Path) -> None:
    """The claim's driver never registers a plugin on the node, so every NodePrepareResources attempt fails and the
    kubelet keeps retrying; `kubectl get pods` says ContainerCreating, as on a kind cluster, and the Ready
    condition is there, False."""
    if KUBECTL is None:
        pytest.skip("no kubectl binary on this machine")
    manifest = """
apiVersion: v1
kind: Node
metadata: {name: unprepared-node, labels: {kubernetes.io/hostname: unprepared-node}}
status: {allocatable: {pods: "110", cpu: "8", memory: 32Gi}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: absent.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "absent.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: unprepared-node-absent}
spec:
  driver: absent.example.com
  pool: {name: unprepared-node, generation: 1, resourceSliceCount: 1}
  nodeName: unprepared-node
  devices: [{name: dev-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: unprepared, namespace: default}
spec:
  devices:
    requests: [{name: dev, exactly: {deviceClassName: absent.example.com}}]
---
apiVersion: v1
kind: Pod
metadata: {name: unprepared-pod, namespace: default}
spec:
  containers: [{name: app, image: registry.example/app:1, resources: {claims: [{name: dev}]}}]
  resourceClaims: [{name: dev, resourceClaimName: unprepared}]
"""
    _kubectl(served, "apply", "-f", "-", stdin=manifest)
    waited = _kubectl(served, "wait", "--for=condition=Ready=false", "pod/unprepared-pod", "--timeout=300s",
                      check=False)
    assert waited.returncode == 0, waited.stderr
    row = _kubectl(served, "get", "pod", "unprepared-pod", "--no-headers").stdout.split()
    assert row[1:3] == ["0/1", "ContainerCreating"], row
    http = Http(_url(served))

    def pod() -> dict[str, Any]:
        return dict(http.request("GET", "/api/v1/namespaces/default/pods/unprepared-pod").json())

    def failed_prepares() -> int:
        events = http.request("GET", "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name="
                                     "unprepared-pod").json()["items"]
        return sum(int(e.get("count") or 1) for e in events if e.get("reason") == "FailedPrepareDynamicResources")

    try:
        assert pod()["spec"]["nodeName"] == "unprepared-node" and pod()["status"]["phase"] == "Pending"
        # the kubelet retries (backoff 1 s, 2 s, ...) without writing the pod's status again
        wait_until(lambda: failed_prepares() >= 2, 300, "the kubelet retrying the failed prepare")
        version = pod()["metadata"]["resourceVersion"]
        wait_until(lambda: failed_prepares() >= 3, 300, "the kubelet retrying the failed prepare once more")
        assert pod()["metadata"]["resourceVersion"] == version
    finally:
        http.close()
    _kubectl(served, "delete", "pod", "unprepared-pod", "--wait=false")


def test_a_killed_component_is_noticed_logged_and_started_again(served: Path) -> None:
    http = Http(_url(served))
    try:
        os.kill(_component_pid(served, "kube-scheduler"), signal.SIGKILL)
        wait_until(lambda: "[-]kube-scheduler failed" in http.request("GET", "/readyz?verbose").body.decode(), 300,
                   "/readyz reporting the killed scheduler")
        wait_until(lambda: http.request("GET", "/readyz?verbose").status == 200, 300,
                   "the scheduler running again")
        assert "kube-scheduler exited with status -9" in (served / "serve.log").read_text()
        assert "[+]kube-scheduler ok" in http.request("GET", "/readyz?verbose").body.decode()
    finally:
        http.close()


def test_data_keeps_the_objects_across_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    with served_reference(first, "--data", str(data)):
        http = Http(_url(first))
        created = http.request("POST", "/api/v1/namespaces/default/configmaps",
                               {"metadata": {"name": "kept"}, "data": {"a": "1"}})
        assert created.status == 201
        http.close()
    with served_reference(second, "--data", str(data)):
        http = Http(_url(second))
        kept = http.request("GET", "/api/v1/namespaces/default/configmaps/kept")
        assert kept.status == 200 and kept.json()["data"] == {"a": "1"}
        assert kept.json()["metadata"]["uid"] == created.json()["metadata"]["uid"]
        assert http.request("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "new"}}).json()[
            "metadata"]["uid"] != created.json()["metadata"]["uid"]
        http.close()
