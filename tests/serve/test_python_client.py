"""serve through the official Python client (`kubernetes` from PyPI), whose models refuse documents missing
required fields and whose watches send `watch=True`."""

from __future__ import annotations

from pathlib import Path

import pytest

kubernetes = pytest.importorskip("kubernetes", reason="the official client is in the test extra")
from kubernetes import client, config, watch  # noqa: E402


@pytest.fixture
def api_client(kubeconfig_file: Path) -> client.ApiClient:
    return config.new_client_from_config(str(kubeconfig_file))


def test_version_and_discovery_decode(api_client: client.ApiClient) -> None:
    version = client.VersionApi(api_client).get_code()
    assert version.major == "1" and version.git_version.startswith("v1.")
    group = client.ApisApi(api_client).get_api_versions()
    assert "resource.k8s.io" in [g.name for g in group.groups]
    assert client.ResourceApi(api_client).get_api_group().name == "resource.k8s.io"
    assert client.CoreApi(api_client).get_api_versions().versions == ["v1"]


def test_create_list_and_watch(api_client: client.ApiClient) -> None:
    core = client.CoreV1Api(api_client)
    core.create_namespaced_config_map("default", client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="settings", labels={"app": "demo"}), data={"mode": "fast"}))
    listed = core.list_namespaced_config_map("default", label_selector="app=demo")
    assert [c.metadata.name for c in listed.items] == ["settings"]
    events = [(e["type"], e["object"].metadata.name) for e in watch.Watch().stream(
        core.list_namespaced_config_map, "default", timeout_seconds=1)]
    assert events == [("ADDED", "settings")]
    with pytest.raises(client.ApiException) as refused:
        core.read_namespaced_config_map("missing", "default")
    assert refused.value.status == 404


@pytest.mark.runtime_config("resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true")
def test_the_dynamic_client_writes_and_watches_an_older_resource_k8s_io_version(api_client: client.ApiClient) -> None:
    """The dynamic client finds v1beta1 through discovery, writes a claim in v1beta1's shape and reads it back
    in v1beta1 and v1; a watch at the v1beta1 path carries v1beta1 objects."""
    from kubernetes.dynamic import DynamicClient

    dynamic = DynamicClient(api_client)
    v1beta1 = dynamic.resources.get(api_version="resource.k8s.io/v1beta1", kind="ResourceClaim")
    v1 = dynamic.resources.get(api_version="resource.k8s.io/v1", kind="ResourceClaim")
    request = {"name": "gpu", "deviceClassName": "gpu.example.com", "count": 2,
               "selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}
    created = v1beta1.create(namespace="default", body={
        "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "gpu"},
        "spec": {"devices": {"requests": [request]}}})
    assert created.apiVersion == "resource.k8s.io/v1beta1"
    stored = v1.get(name="gpu", namespace="default").to_dict()
    assert stored["spec"]["devices"]["requests"][0] == {
        "name": "gpu", "exactly": {**{k: v for k, v in request.items() if k != "name"},
                                   "allocationMode": "ExactCount"}}
    again = v1beta1.get(name="gpu", namespace="default").to_dict()
    assert again["spec"]["devices"]["requests"][0] == {**request, "allocationMode": "ExactCount"}
    assert again["metadata"]["uid"] == stored["metadata"]["uid"]
    events = list(v1beta1.watch(namespace="default", timeout=1))
    assert [(e["type"], e["raw_object"]["apiVersion"]) for e in events] == [("ADDED", "resource.k8s.io/v1beta1")]
