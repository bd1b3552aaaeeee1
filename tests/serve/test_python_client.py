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
