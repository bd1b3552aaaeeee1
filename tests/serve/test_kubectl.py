"""A user's kubectl work against serve, with every kubectl of the machine image (`kubectl` and the
`kubectl.1.27` ... `kubectl.1.33` beside it; 1.27 and 1.28 read OpenAPI v2 in protobuf, the later ones v3):
apply, get (server-side tables), describe, explain, patch (strategic, JSON, merge), server dry run, diff,
server-side apply, delete -f, imperative create (protobuf bodies)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def _kubectls() -> list[Path]:
    found = shutil.which("kubectl")
    if found is None:
        return []
    real = Path(found).resolve()
    versions = sorted(real.parent.glob("kubectl.1.*"), key=lambda p: int(p.name.rsplit(".", 1)[1]))
    return [real, *versions]


KUBECTLS = _kubectls()
MANIFEST = """\
apiVersion: v1
kind: Namespace
metadata: {name: demo}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: demo}
data: {mode: fast}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: demo}
spec:
  containers:
  - name: app
    image: registry.example/app:1
    command: [serve, --port, "8080"]
    resources:
      claims: [{name: gpu}]
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
"""


class Kubectl:
    def __init__(self, binary: Path, kubeconfig: Path) -> None:
        self.binary, self.kubeconfig = binary, kubeconfig

    def run(self, *args: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(self.binary), "--kubeconfig", str(self.kubeconfig), *args], input=stdin,
                              capture_output=True, text=True, timeout=300, check=False,
                              env={**os.environ, "KUBECTL_EXTERNAL_DIFF": "diff -u"})
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done


@pytest.fixture(params=KUBECTLS or [None], ids=lambda p: p.name if p else "no-kubectl")
def kubectl(request: pytest.FixtureRequest, kubeconfig_file: Path) -> Kubectl:
    if request.param is None:
        pytest.skip("no kubectl binary on this machine (the machine image ships kubectl and kubectl.1.27-1.33)")
    return Kubectl(request.param, kubeconfig_file)


def test_apply_get_describe_explain_and_delete(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "demo.yaml"
    manifest.write_text(MANIFEST)
    applied = kubectl.run("apply", "-f", str(manifest)).stdout
    assert "namespace/demo created" in applied and "pod/web created" in applied
    table = kubectl.run("get", "pods", "-n", "demo").stdout.splitlines()
    assert table[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert table[1].split()[:4] == ["web", "0/1", "Pending", "0"]
    assert "cm" in kubectl.run("api-resources").stdout.split()
    assert "configmap/settings" in kubectl.run("get", "cm", "-n", "demo", "-o", "name").stdout
    described = kubectl.run("describe", "pod", "web", "-n", "demo").stdout
    assert "Name:" in described and "registry.example/app:1" in described
    explained = kubectl.run("explain", "pods.spec.resourceClaims").stdout
    assert "resourceClaimTemplateName" in explained
    assert kubectl.run("apply", "-f", str(manifest)).stdout.count("unchanged") == 3
    # The namespace last: deleting it first lets the namespace controller remove the pod before kubectl asks to
    # (an unscheduled pod goes at once, as on a real cluster), and kubectl then reports NotFound.
    objects = tmp_path / "objects.yaml"
    objects.write_text(MANIFEST.split("---\n", 1)[1])
    deleted = kubectl.run("delete", "-f", str(objects)).stdout
    assert "pod \"web\" deleted" in deleted and "configmap \"settings\" deleted" in deleted
    assert "namespace \"demo\" deleted" in kubectl.run("delete", "namespace", "demo").stdout


def test_patches_keep_what_they_do_not_name(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "demo.yaml"
    manifest.write_text(MANIFEST)
    kubectl.run("apply", "-f", str(manifest))
    kubectl.run("patch", "pod", "web", "-n", "demo", "-p", '{"spec":{"containers":[{"name":"app","image":"x:2"}]}}')
    container = kubectl.run("get", "pod", "web", "-n", "demo", "-o", "jsonpath={.spec.containers[0]}").stdout
    assert '"image":"x:2"' in container and '"command":["serve"' in container and '"claims":[{"name":"gpu"}]' in \
        container
    kubectl.run("patch", "pod", "web", "-n", "demo", "--type=json",
                "-p", '[{"op":"replace","path":"/spec/containers/0/image","value":"x:3"}]')
    kubectl.run("patch", "cm", "settings", "-n", "demo", "--type=merge", "-p", '{"data":{"extra":"1"}}')
    assert kubectl.run("get", "cm", "settings", "-n", "demo", "-o", "jsonpath={.data.extra}").stdout == "1"
    moved = kubectl.run("patch", "pod", "web", "-n", "demo", "--type=merge", "-p", '{"spec":{"nodeName":"n"}}',
                        check=False)
    assert moved.returncode != 0 and "may not change fields" in moved.stderr


def test_server_dry_run_and_diff_change_nothing(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "demo.yaml"
    manifest.write_text(MANIFEST)
    kubectl.run("apply", "-f", str(manifest))
    before = kubectl.run("get", "cm", "settings", "-n", "demo", "-o", "jsonpath={.metadata.resourceVersion}").stdout
    kubectl.run("label", "cm", "settings", "-n", "demo", "tier=gold", "--dry-run=server")
    kubectl.run("apply", "-f", "-", "--dry-run=server", stdin=MANIFEST.replace("mode: fast", "mode: slow"))
    kubectl.run("delete", "cm", "settings", "-n", "demo", "--dry-run=server")
    changed = tmp_path / "changed.yaml"
    changed.write_text(MANIFEST.replace("mode: fast", "mode: slow"))
    diff = kubectl.run("diff", "-f", str(changed), check=False)
    assert diff.returncode == 1 and "+  mode: slow" in diff.stdout, diff.stderr
    assert kubectl.run("diff", "-f", str(manifest), check=False).returncode == 0
    after = kubectl.run("get", "cm", "settings", "-n", "demo", "-o", "jsonpath={.metadata.resourceVersion}"
                                                                     "{.metadata.labels}{.data.mode}").stdout
    assert after == f"{before}fast"


def test_server_side_apply_owns_fields_and_reports_conflicts(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "demo.yaml"
    manifest.write_text(MANIFEST)
    assert "serverside-applied" in kubectl.run("apply", "--server-side", "-f", str(manifest)).stdout
    kubectl.run("patch", "cm", "settings", "-n", "demo", "--type=merge", "-p", '{"data":{"mode":"slow"}}')
    conflict = kubectl.run("apply", "--server-side", "-f", str(manifest), check=False)
    assert conflict.returncode != 0 and "conflict" in conflict.stderr.lower()
    kubectl.run("apply", "--server-side", "--force-conflicts", "-f", str(manifest))
    assert kubectl.run("get", "cm", "settings", "-n", "demo", "-o", "jsonpath={.data.mode}").stdout == "fast"


def test_imperative_create_sends_protobuf_and_is_understood(kubectl: Kubectl) -> None:
    kubectl.run("create", "namespace", "team")
    kubectl.run("create", "configmap", "cfg", "-n", "team", "--from-literal=a=b")
    assert kubectl.run("get", "cm", "cfg", "-n", "team", "-o", "jsonpath={.data.a}").stdout == "b"
    status = kubectl.run("get", "ns", "team", "-o", "jsonpath={.status.phase}").stdout
    assert status == "Active"


def test_auth_can_i_is_answered_yes(kubectl: Kubectl) -> None:
    """serve has no authorization: every request is allowed, and kubectl is told so rather than left unanswered."""
    assert kubectl.run("auth", "can-i", "create", "resourceclaims.resource.k8s.io").stdout.strip() == "yes"


BETA_CLAIM = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: gpu, namespace: default}
spec:
  devices:
    requests:
    - {name: gpu, deviceClassName: gpu.example.com, count: 2}
"""


@pytest.mark.runtime_config("resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true")
def test_an_older_resource_k8s_io_version_is_applied_read_and_explained(kubectl: Kubectl, tmp_path: Path) -> None:
    """With the older versions turned on, kubectl applies a v1beta1 manifest at its own path, reads it back in
    the version it names (`resourceclaims.v1beta1.resource.k8s.io`) and in v1, and explains v1beta1's shape."""
    manifest = tmp_path / "claim.yaml"
    manifest.write_text(BETA_CLAIM)
    assert "resourceclaim.resource.k8s.io/gpu created" in kubectl.run("apply", "-f", str(manifest)).stdout
    old = kubectl.run("get", "resourceclaims.v1beta1.resource.k8s.io", "gpu", "-o",
                      "jsonpath={.apiVersion} {.spec.devices.requests[0].count}").stdout
    assert old == "resource.k8s.io/v1beta1 2"
    new = kubectl.run("get", "resourceclaims.v1.resource.k8s.io", "gpu", "-o",
                      "jsonpath={.apiVersion} {.spec.devices.requests[0].exactly.count}").stdout
    assert new == "resource.k8s.io/v1 2"
    kubectl.run("patch", "resourceclaims.v1beta1.resource.k8s.io", "gpu", "--type=merge", "-p",
                '{"metadata":{"labels":{"team":"ml"}}}')
    labelled = kubectl.run("get", "resourceclaims.v1beta1.resource.k8s.io", "gpu", "-o",
                           "jsonpath={.metadata.labels.team} {.spec.devices.requests[0].deviceClassName}").stdout
    assert labelled == "ml gpu.example.com"
    explained = kubectl.run("explain", "resourceslices.spec.devices", "--api-version=resource.k8s.io/v1beta1").stdout
    assert "basic" in explained
    kubectl.run("delete", "-f", str(manifest))
