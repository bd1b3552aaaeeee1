"""Admin access to devices only in a namespace labelled `resource.kubernetes.io/admin-access: "true"` (issue 37),
as kube-apiserver's claim and template strategies check it: on create at the first request asking for it, on a
status write at the first result granting it unless the stored allocation already did; adminAccess false needs
no label. In process namespaces are no objects (the store keeps their labels); `serve` reads the Namespace."""

from __future__ import annotations

from typing import Any

import pytest

from draconform.kube.kinds import SERVED_KINDS
from draconform.reference.apiserver.admission import install
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.sut import ApiError
from draconform.validation import validate_gates, validate_manifest
from draconform.validation.adminaccess import LABEL, RULE

NS = "monitoring"


def claim(*admin: bool) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": NS},
            "spec": {"devices": {"requests": [{"name": f"r{i}", "exactly": {"deviceClassName": "gpu",
                                                                            "adminAccess": value}}
                                              for i, value in enumerate(admin)]}}}


def template(*admin: bool) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": NS}, "spec": {"spec": claim(*admin)["spec"]}}


def store(**kinds: Any) -> Store:
    api = Store(FakeClock(), **kinds)
    install(api)
    return api


def refusal(api: Store, obj: dict[str, Any]) -> list[tuple[str, str | None]]:
    with pytest.raises(ApiError) as refused:
        api.create(obj)
    assert refused.value.reason == "Invalid"
    return [(c.field, c.rule) for c in refused.value.causes]


@pytest.mark.parametrize("make", [claim, template])
def test_asking_for_admin_access_needs_the_label_on_the_namespace(make: Any) -> None:
    api = store()
    # the first request asking, at the claim spec's path, whatever the kind (as upstream reports it)
    assert refusal(api, make(False, True, True)) == [("spec.devices.requests[1].adminAccess", RULE)]
    with api.dry_run():
        api.create(make(False))  # adminAccess false needs nothing
    api.label_namespace(NS, {LABEL: "yes"})
    assert refusal(api, make(True)) == [("spec.devices.requests[0].adminAccess", RULE)]  # only "true" allows it
    api.label_namespace(NS, {LABEL: "true"})
    assert api.create(make(True))["metadata"]["namespace"] == NS


def test_an_allocation_granting_admin_access_needs_the_label_unless_one_was_granted_before() -> None:
    api = store()
    created = api.create(claim(False))
    result = {"request": "r0", "driver": "gpu.example.com", "pool": "p", "device": "gpu-0"}
    created["status"] = {"allocation": {"devices": {"results": [result, {**result, "adminAccess": True}]}}}
    with pytest.raises(ApiError) as refused:
        api.update_status(created)
    assert [c.field for c in refused.value.causes] == ["status.allocation.devices.results[1].adminAccess"]
    created["status"]["allocation"]["devices"]["results"][1]["adminAccess"] = False
    api.update_status(created)


def test_serve_reads_the_label_from_the_namespace_object() -> None:
    api = store(kinds=SERVED_KINDS)
    api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    assert refusal(api, claim(True)) == [("spec.devices.requests[0].adminAccess", RULE)]
    api.label_namespace(NS, {LABEL: "true"})
    assert api.get("Namespace", NS)["metadata"]["labels"] == {LABEL: "true"}  # type: ignore[index]
    api.create(claim(True))


def test_validate_warns_that_admin_access_needs_the_namespace_label() -> None:
    """`validate` sees no namespace: admin access is a warning there, never an error; in v1beta1 too."""
    found = validate_manifest(template(False, True), validate_gates(None, "1.37"))[1]
    assert [(p.field, p.severity, p.rule) for p in found] == [("spec.devices.requests[1].adminAccess", "warning",
                                                               RULE)]
    assert validate_manifest(claim(False), validate_gates(None, "1.37"))[1] == []
    old = {**claim(), "apiVersion": "resource.k8s.io/v1beta1",
           "spec": {"devices": {"requests": [{"name": "r", "deviceClassName": "gpu", "adminAccess": True}]}}}
    found = validate_manifest(old, validate_gates(None, "1.37"))[1]
    assert [(p.field, p.severity) for p in found if p.rule == RULE] == [("spec.devices.requests[0].adminAccess",
                                                                         "warning")]
