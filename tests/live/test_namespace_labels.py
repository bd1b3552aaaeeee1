"""A live scenario asking for its namespace to allow admin access (`label_namespace`) labels its own namespace,
and `serve` then judges admin access by that label as kube-apiserver does (issue 37)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from draconform.live.config import LiveOptions
from draconform.live.kube import KubeClient, load_config
from draconform.live.sut import LiveSystem
from draconform.sut import ApiError, Unsupported

LABEL = "resource.kubernetes.io/admin-access"


def _admin_claim(name: str) -> dict[str, object]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu",
                                                                        "adminAccess": True}}]}}}


def test_the_scenarios_own_namespace_is_labelled_and_admin_access_allowed_there(api: Path, tmp_path: Path) -> None:
    timeouts = tmp_path / "timeouts.yaml"
    timeouts.write_text(yaml.safe_dump({"pollInterval": "20ms", "settleQuietPeriod": "50ms"}))
    live = LiveSystem(LiveOptions(str(api), timeout_config=str(timeouts)))
    try:
        with pytest.raises(ApiError) as refused:
            live.create(_admin_claim("before"))
        assert [c.field for c in refused.value.causes] == ["spec.devices.requests[0].adminAccess"]
        live.label_namespace("default", {LABEL: "true"})
        assert live.create(_admin_claim("after"))["metadata"]["namespace"] == "default"
        namespace = KubeClient(load_config(api)).get("Namespace", live.namespace)
        assert namespace is not None and namespace["metadata"]["labels"][LABEL] == "true"
        with pytest.raises(Unsupported):
            live.label_namespace("elsewhere", {LABEL: "true"})  # a scenario works in its own namespace only
    finally:
        live.close()
