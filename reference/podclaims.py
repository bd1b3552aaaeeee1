"""Which ResourceClaims a pod uses: `spec.resourceClaims[]` names a claim directly
(`resourceClaimName`) or a template (`resourceClaimTemplateName`), whose generated claim the
resourceclaim controller records in `status.resourceClaimStatuses[]` (KEP-3063 Proposal); and the claim
generated from a template, made the same way by that controller and by `draconform allocate`."""

from __future__ import annotations

from dataclasses import dataclass

from draconform.sut import Obj, copy_object

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"


@dataclass(frozen=True)
class PodClaim:
    entry: str  # the name of the pod's spec.resourceClaims entry
    claim: str | None  # the ResourceClaim's name; None while a template's claim is not created yet
    template: str | None  # the template, for template entries


def pod_claims(pod: Obj) -> list[PodClaim]:
    generated = {
        status["name"]: status.get("resourceClaimName")
        for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []
    }
    claims = []
    for entry in pod.get("spec", {}).get("resourceClaims") or []:
        if entry.get("resourceClaimName"):
            claims.append(PodClaim(entry["name"], entry["resourceClaimName"], None))
        else:
            template = entry.get("resourceClaimTemplateName")
            claims.append(PodClaim(entry["name"], generated.get(entry["name"]), template))
    return claims


def pod_claims_with_extended(pod: Obj) -> list[PodClaim]:
    """The claims a kubelet prepares for the pod: those of its spec and, once the scheduler wrote it (KEP-5004),
    the claim for its extended resources that status.extendedResourceClaimStatus names, as upstream's kubelet
    appends it to the pod's claims."""
    claims = pod_claims(pod)
    extended = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    if extended:
        claims.append(PodClaim("extended-resources", str(extended), None))
    return claims


def consumer_reference(pod: Obj) -> dict[str, str]:
    """The `status.reservedFor` entry naming a pod."""
    return {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}


def is_reserved_for(claim: Obj, uid: str) -> bool:
    return any(entry.get("uid") == uid for entry in (claim.get("status") or {}).get("reservedFor") or [])


def pod_is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def claim_from_template(pod: Obj, entry: str, template: Obj) -> Obj:
    """The claim generated for the pod's claim entry `entry` from its ResourceClaimTemplate, as upstream's
    resourceclaim controller makes it (KEP-3063 "kube-controller-manager"): `generateName` from pod and entry,
    the template's labels and annotations plus the entry's annotation, owned by the pod (its uid where it has
    one: a pod as written in a manifest may have none yet), and a copy of the template's claim spec."""
    template_meta = (template.get("spec") or {}).get("metadata") or {}
    owner = {"apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"], "uid": pod["metadata"].get("uid"),
             "controller": True, "blockOwnerDeletion": True}
    if owner["uid"] is None:
        del owner["uid"]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "generateName": f"{pod['metadata']['name']}-{entry}-",
            "namespace": pod["metadata"]["namespace"],
            "labels": dict(template_meta.get("labels") or {}),
            "annotations": {**(template_meta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: entry},
            "ownerReferences": [owner],
        },
        "spec": copy_object((template.get("spec") or {}).get("spec") or {}),
    }
