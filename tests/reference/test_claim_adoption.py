"""The resourceclaim controller finds a claim it generated earlier by owner and entry (its index, not a list
of every claim), so a pod whose status never recorded the claim's name gets no second claim."""

from __future__ import annotations

from draconform.reference import components
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.reference.events import EventRecorder
from draconform.reference.podclaims import POD_CLAIM_NAME_ANNOTATION
from draconform.sut import Obj

TEMPLATE: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                 "metadata": {"name": "gpu", "namespace": "default"},
                 "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}}}}
POD: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "pod-uid"},
            "spec": {"containers": [{"name": "c", "image": "i"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]}}


def earlier_claim(name: str) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "annotations": {POD_CLAIM_NAME_ANNOTATION: "gpu"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "pod-uid",
                                              "controller": True}]},
            "spec": TEMPLATE["spec"]["spec"]}


def claims(store: Store) -> list[str]:
    return [claim["metadata"]["name"] for claim in store.list("ResourceClaim")]


def test_a_claim_generated_before_a_restart_is_adopted() -> None:
    clock = FakeClock()
    store = Store(clock)
    for obj in (TEMPLATE, POD, earlier_claim("p-gpu-earlier")):
        store.load(obj)
    controller = components.claim_controller(store, EventRecorder(clock))
    controller.sync()
    assert claims(store) == ["p-gpu-earlier"]
    assert store.get("Pod", "p", "default")["status"]["resourceClaimStatuses"] == [  # type: ignore[index]
        {"name": "gpu", "resourceClaimName": "p-gpu-earlier"}]


def test_a_claim_seen_through_the_watch_is_adopted_and_a_deleted_one_is_not() -> None:
    clock = FakeClock()
    store = Store(clock)
    store.load(TEMPLATE)
    controller = components.claim_controller(store, EventRecorder(clock))
    store.create(earlier_claim("p-gpu-seen"))
    controller.sync()
    store.load(POD)
    controller.sync()
    assert claims(store) == ["p-gpu-seen"]
    store.delete("ResourceClaim", "p-gpu-seen", "default")
    pod = store.get("Pod", "p", "default")
    assert pod is not None
    pod["status"] = {}
    store.update_status(pod)
    controller.sync()
    assert len(claims(store)) == 1 and claims(store) != ["p-gpu-seen"]
