"""What kube-apiserver checks of the parts of a core/v1 Pod that DRA relies on (pkg/apis/core/validation:
a PodResourceClaim names exactly one source, and each container's `resources.claims` entry names one of
the pod's claims), beyond what schemas/core/v1/pod.schema.json says about their shapes. The rest of a
Pod is not draconform's business. Every workload kind's pod template (Deployment, StatefulSet, DaemonSet,
ReplicaSet, Job, CronJob, PodTemplate, ReplicationController) is checked the same way, at the path through the
template. Problems carry the rule DRA-API/POD-CLAIMS, and a pod update that changes spec.resourceClaims is
refused (KEP-3063/POD-CLAIMS-IMMUTABLE). What upstream checks of every container besides (an image, requests
and limits: containers.py), and that a pod spec has containers, are checked too, under no rule: a scenario's
pod must pass them on a real cluster."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from draconform.validation.containers import container_rules
from draconform.validation.problems import Path, Problem

RULE = "DRA-API/POD-CLAIMS"
IMMUTABLE_RULE = "KEP-3063/POD-CLAIMS-IMMUTABLE"
SOURCES = ("resourceClaimName", "resourceClaimTemplateName")
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
# Kubernetes 1.26-1.30 wrapped the source in `source: {resourceClaimName | resourceClaimTemplateName}`;
# 1.31 moved both fields onto the entry. Old manifests still carry the wrapper.
OLD_SOURCE = "source"
CLASSIC_TEMPLATE = "template"  # the seed's classic API embeds the claim template in the entry


# workload kind -> where its pod template is
TEMPLATES: dict[str, Path] = {
    **dict.fromkeys(("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController"),
                    ("spec", "template")),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "PodTemplate": ("template",),
}


def pod_rules(pod: dict[str, Any], old: dict[str, Any] | None, gates: Any) -> Iterator[Problem]:
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    old_spec = (old or {}).get("spec")
    if old_spec is spec:
        # The stored spec itself: a status write, whose spec the reference store takes from the stored object and
        # shares with it (only for an object it admitted, whose spec passed these rules, which read nothing else).
        # kube-apiserver's pod status strategy likewise validates the status and metadata, not the spec.
        return
    if isinstance(old_spec, dict) and old_spec.get("resourceClaims") != spec.get("resourceClaims"):
        # kube-apiserver lets a pod update change only a few fields; the claims a pod uses are not among them
        yield Problem(("spec",), "Forbidden: pod updates may not change spec.resourceClaims",
                      IMMUTABLE_RULE)
    if old is None and spec.get("ephemeralContainers"):  # added later through the ephemeralcontainers subresource
        yield Problem(("spec", "ephemeralContainers"), "Forbidden: cannot be set on create")
    yield from pod_spec_rules(spec, ("spec",))


def template_rules(workload: dict[str, Any], old: dict[str, Any] | None, gates: Any) -> Iterator[Problem]:
    """A workload's pod template, checked as a Pod is (the schema has checked the way to it)."""
    template: Any = workload
    for field in TEMPLATES[str(workload.get("kind"))]:
        template = template.get(field) if isinstance(template, dict) else None
    spec = template.get("spec") if isinstance(template, dict) else None
    if isinstance(spec, dict):
        where = (*TEMPLATES[str(workload.get("kind"))], "spec")
        if spec.get("ephemeralContainers"):
            yield Problem((*where, "ephemeralContainers"), "Forbidden: ephemeral containers not allowed in pod "
                                                           "template")
        yield from pod_spec_rules(spec, where)


def pod_spec_rules(spec: dict[str, Any], where: Path) -> Iterator[Problem]:
    """The claims of a pod spec at `where` (a Pod's `spec`, or a workload's template's)."""
    names: set[str] = set()
    entries = spec.get("resourceClaims")
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict):
            continue  # the schema reports the type
        path: Path = (*where, "resourceClaims", index)
        name = entry.get("name")
        if isinstance(name, str) and name:
            if name in names:
                yield Problem((*path, "name"), f"Duplicate value: {name!r}", RULE)
            names.add(name)
        yield from _one_source(entry, path)
    if not spec.get("containers"):
        yield Problem((*where, "containers"), "Required value")
    for container_path, container in _containers(spec, where):
        yield from _container_claims(container, container_path, names)
        yield from container_rules(container, container_path)


def _one_source(entry: dict[str, Any], path: Path) -> Iterator[Problem]:
    given = [source for source in SOURCES if entry.get(source) is not None]
    if len(given) > 1:
        yield Problem(path, "Invalid value: at most one of `resourceClaimName` or `resourceClaimTemplateName` may "
                            "be specified", RULE)
    elif not given:
        hint = (" (the `source` wrapper of Kubernetes 1.26-1.30 is gone: put the field on the entry itself)"
                if OLD_SOURCE in entry else " (an embedded `template` is KEP-3063's classic API: --api classic)"
                if CLASSIC_TEMPLATE in entry else "")
        yield Problem(path, f"Invalid value: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
                            f"{hint}", RULE)


def _container_claims(container: dict[str, Any], where: Path, names: set[str]) -> Iterator[Problem]:
    resources = container.get("resources")
    claims = resources.get("claims") if isinstance(resources, dict) else None
    seen: set[str] = set()
    for index, claim in enumerate(claims if isinstance(claims, list) else []):
        if not isinstance(claim, dict) or not isinstance(claim.get("name"), str):
            continue  # the schema reports a missing or mistyped name
        path: Path = (*where, "resources", "claims", index)
        name, request = claim["name"], claim.get("request")
        if not name:
            yield Problem(path, "Required value", RULE)
            continue
        key = f"{name}/{request}" if isinstance(request, str) and request else name
        if key in seen:
            yield Problem(path, f"Duplicate value: {key!r}", RULE)
        seen.add(key)
        if name not in names:
            known = f": {', '.join(sorted(names))}" if names else " which is empty"
            yield Problem(path, f"Not found: {name!r}: must be one of the names in pod.spec.resourceClaims{known}",
                          RULE)


def _containers(spec: dict[str, Any], where: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    for field in CONTAINER_LISTS:
        listed = spec.get(field)
        for index, container in enumerate(listed if isinstance(listed, list) else []):
            if isinstance(container, dict):
                yield (*where, field, index), container
