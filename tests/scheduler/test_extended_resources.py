"""KEP-5004 in the reference scheduler: a pod asking for a DRA-backed extended resource gets the special
claim (name, owner, annotation, request per container), the pod's extendedResourceClaimStatus, and loses the
claim with the pod; a node advertising the resource is left to the device plugin."""

from __future__ import annotations

from typing import Any

from draconform.kube.kinds import with_pod_room
from draconform.reference.cluster import ReferenceCluster
from draconform.reference.scheduler.extendedresources import (
    EXTENDED_CLAIM_ANNOTATION,
    build_requests,
    pod_requests,
)
from draconform.sut import Obj

NS = "default"
CLASS: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
              "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
                       "extendedResourceName": "example.com/gpu"}}


def container(name: str, gpus: int | None = None, **extra: Any) -> Obj:
    body: Obj = {"name": name, "image": "registry.example/app:1", **extra}
    if gpus is not None:
        body["resources"] = {"limits": {"example.com/gpu": str(gpus)}}
    return body


def pod(name: str, *containers: Obj, init: tuple[Obj, ...] = ()) -> Obj:
    spec: Obj = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": spec}


def cluster(allocatable: dict[str, str] | None = None, devices: int = 2) -> ReferenceCluster:
    made = ReferenceCluster({})
    node = made.store.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}))
    if allocatable is not None:  # status is the kubelet's to write, after the node exists
        node["status"]["allocatable"].update(allocatable)
        made.store.update_status(node)
    made.store.create(CLASS)
    made.store.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpus"},
                       "spec": {"driver": "gpu.example.com", "nodeName": "worker-1",
                                "pool": {"name": "worker-1", "generation": 1, "resourceSliceCount": 1},
                                "devices": [{"name": f"gpu-{i}"} for i in range(devices)]}})
    return made


def test_the_pod_gets_the_special_claim_and_its_mappings() -> None:
    made = cluster()
    made.store.create(pod("trainer", container("main", 2)))
    made.settle()
    scheduled = made.store.get("Pod", "trainer", NS)
    assert scheduled is not None and scheduled["spec"]["nodeName"] == "worker-1"
    status = scheduled["status"]["extendedResourceClaimStatus"]
    claim = made.store.get("ResourceClaim", status["resourceClaimName"], NS)
    assert claim is not None
    assert claim["metadata"]["name"].startswith("trainer-extended-resources-")
    assert claim["metadata"]["annotations"] == {EXTENDED_CLAIM_ANNOTATION: "true"}
    assert claim["metadata"]["ownerReferences"][0]["uid"] == scheduled["metadata"]["uid"]
    assert claim["metadata"]["ownerReferences"][0]["controller"] is True
    assert claim["spec"]["devices"]["requests"] == [
        {"name": "container-0-request-0",
         "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2}}]
    assert status["requestMappings"] == [
        {"containerName": "main", "resourceName": "example.com/gpu", "requestName": "container-0-request-0"}]
    results = claim["status"]["allocation"]["devices"]["results"]
    assert [r["device"] for r in results] == ["gpu-0", "gpu-1"]
    assert claim["status"]["reservedFor"][0]["uid"] == scheduled["metadata"]["uid"]


def test_the_claim_goes_with_the_pod_and_frees_its_devices() -> None:
    made = cluster(devices=1)
    made.store.create(pod("first", container("main", 1)))
    made.settle()
    name = made.store.get("Pod", "first", NS)["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
    made.store.create(pod("second", container("main", 1)))
    made.settle()
    assert not made.store.get("Pod", "second", NS)["spec"].get("nodeName")  # the only GPU is taken
    made.store.delete("Pod", "first", NS)
    made.settle()
    assert made.store.get("ResourceClaim", name, NS) is None
    assert made.store.get("Pod", "second", NS)["spec"]["nodeName"] == "worker-1"


def test_a_node_advertising_the_resource_is_left_to_the_device_plugin() -> None:
    made = cluster(allocatable={"example.com/gpu": "4"})
    made.store.create(pod("trainer", container("main", 2)))
    made.settle()
    scheduled = made.store.get("Pod", "trainer", NS)
    assert scheduled["spec"]["nodeName"] == "worker-1"
    assert "extendedResourceClaimStatus" not in (scheduled.get("status") or {})
    assert made.store.list("ResourceClaim", NS) == []


def test_a_node_advertising_zero_is_served_through_dra() -> None:
    made = cluster(allocatable={"example.com/gpu": "0"})
    made.store.create(pod("trainer", container("main", 1)))
    made.settle()
    assert len(made.store.list("ResourceClaim", NS)) == 1


def test_the_implicit_class_name_works_too() -> None:
    made = cluster()
    asking = pod("trainer", container("main"))
    asking["spec"]["containers"][0]["resources"] = {
        "requests": {"deviceclass.resource.kubernetes.io/gpu.example.com": "1"}}
    made.store.create(asking)
    made.settle()
    assert made.store.get("Pod", "trainer", NS)["spec"]["nodeName"] == "worker-1"


def test_gate_off_leaves_extended_resources_alone() -> None:
    from draconform.sut import ComponentConfig

    made = ReferenceCluster({"kube-scheduler": ComponentConfig(feature_gates={"DRAExtendedResource": False})})
    made.store.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}))
    made.store.create(CLASS)
    made.store.create(pod("trainer", container("main", 1)))
    made.settle()
    assert made.store.list("ResourceClaim", NS) == []  # no claim: the scheduler does not read the resource


def test_init_containers_reuse_later_requests_and_share_the_largest() -> None:
    """Upstream's mapping: an init container first reuses the requests of long-lived containers from its own
    index on, and only asks for what they do not cover; init containers then share the largest request."""
    asking = pod("job", container("app", 2), container("helper", 1),
                 init=(container("setup", 5), container("load", 3), container("proxy", 1, restartPolicy="Always")))
    assert pod_requests(asking) == {"example.com/gpu": 5}  # setup alone needs 5, more than app+helper+proxy
    requests, mappings = build_requests(asking, {"example.com/gpu": 5}, [CLASS])
    names = {r["name"]: r["exactly"]["count"] for r in requests}
    assert names == {"container-0-request-0": 1, "container-2-request-0": 1, "container-3-request-0": 2,
                     "container-4-request-0": 1}
    by_container: dict[str, list[str]] = {}
    for m in mappings:
        by_container.setdefault(m.container, []).append(m.request)
    assert by_container["setup"] == ["container-2-request-0", "container-3-request-0", "container-4-request-0",
                                     "container-0-request-0"]
    assert by_container["load"] == ["container-2-request-0", "container-3-request-0"]
    assert by_container["app"] == ["container-3-request-0"]
