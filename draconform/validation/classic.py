"""Validation of KEP-3063's classic API (cdi.k8s.io/v1alpha1, the seed's control-plane-controller
protocol): what the schemas under schemas/cdi.k8s.io/v1alpha1 cannot say about ResourceClass and
ResourceClaim, and the checks a classic cluster makes of a pod's resourceClaims (embedded templates,
containers' claim names as plain strings). Problems carry KEP-3063-CLASSIC rule IDs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from draconform.kube.kinds import CLASSIC_API
from draconform.validation.problems import Path, Problem
from draconform.validation.schema import kind_schema, schema_problems

Obj = dict[str, Any]
API_VERSION = CLASSIC_API
UNLIMITED_USERS = -1
MAX_NAME_LENGTH = 253
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_TEMPLATE_METADATA_FIELDS = frozenset({"labels", "annotations"})


def _problem(path: Path, message: str, rule: str) -> Problem:
    return Problem(path, message, f"KEP-3063-CLASSIC/{rule}")


def claim_rules(claim: Obj, old: Obj | None) -> list[Problem]:
    problems = list(_user_limit(claim))
    if old is not None and claim.get("spec") != old.get("spec"):
        problems.append(_problem(("spec",), "Invalid value: field is immutable", "CLAIM-SPEC-IMMUTABLE"))
    return problems


def _user_limit(claim: Obj) -> Iterator[Problem]:
    limit = (claim.get("status") or {}).get("userLimit")
    if isinstance(limit, int) and (limit == 0 or limit < UNLIMITED_USERS):
        yield _problem(("status", "userLimit"),
                       f"Invalid value: {limit}: must be -1 (unlimited) or at least 1", "USER-LIMIT")


def class_rules(resource_class: Obj, old: Obj | None) -> list[Problem]:
    return []  # the schema says all there is: a driver name and opaque parameters


RULES: dict[str, Callable[[Obj, Obj | None], list[Problem]]] = {
    "ResourceClaim": claim_rules,
    "ResourceClass": class_rules,
}


def pod_problems(pod: Obj) -> list[Problem]:
    """What a classic cluster refuses in a pod's resource claims (KEP-3063 API: PodResourceClaim,
    ResourceRequirements.Claims). The rest of the pod is not the classic API's business."""
    raw_spec = pod.get("spec")
    spec: Obj = raw_spec if isinstance(raw_spec, dict) else {}
    entries = spec.get("resourceClaims") or []
    problems: list[Problem] = []
    names: set[str] = set()
    pod_name = str((pod.get("metadata") or {}).get("name", ""))
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        problems.extend(_entry_problems(entry, ("spec", "resourceClaims", index), names, pod_name))
    problems.extend(_container_claim_problems(spec, names))
    return problems


def _entry_problems(entry: Any, path: Path, names: set[str], pod_name: str) -> list[Problem]:
    """One entry of `spec.resourceClaims`: named uniquely (its name is added to `names`), one source, and a
    template valid with the claim name it generates."""
    if not isinstance(entry, dict):
        return [_problem(path, "Invalid value: must be an object", "POD-CLAIM-ONE-SOURCE")]
    problems: list[Problem] = []
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        problems.append(_problem((*path, "name"), "Required value", "CONTAINER-CLAIMS-NAMED"))
    elif name in names:
        problems.append(_problem((*path, "name"), f"Duplicate value: {name!r}", "CONTAINER-CLAIMS-NAMED"))
    else:
        names.add(name)
    sources = [source for source in ("resourceClaimName", "template") if entry.get(source) is not None]
    if len(sources) != 1:
        problems.append(_problem(path, "Invalid value: exactly one of resourceClaimName or template must be set",
                                 "POD-CLAIM-ONE-SOURCE"))
    if entry.get("template") is not None:
        problems.extend(_template_problems(entry["template"], (*path, "template")))
        if isinstance(name, str) and name:
            problems.extend(_generated_name_problems(f"{pod_name}-{name}", (*path, "name")))
    return problems


def _container_claim_problems(spec: Obj, names: set[str]) -> list[Problem]:
    """Each container's `resources.claims`: names of entries of `spec.resourceClaims`."""
    problems: list[Problem] = []
    for where, container in _containers(spec):
        claims = ((container.get("resources") or {}).get("claims")) or []
        for position, claim in enumerate(claims if isinstance(claims, list) else []):
            if not isinstance(claim, str):
                problems.append(_problem((*where, "resources", "claims", position),
                                         f"Invalid value: {json.dumps(claim)[:80]}: must be a string (the classic "
                                         "API lists claims by name)", "CONTAINER-CLAIMS-NAMED"))
            elif claim not in names:
                problems.append(_problem((*where, "resources", "claims", position),
                                         f"Not found: {claim!r}: no entry of spec.resourceClaims has this name",
                                         "CONTAINER-CLAIMS-NAMED"))
    return problems


def generated_claim_name(pod_name: str, entry_name: str) -> str:
    """The name of the claim made for a pod's template entry (KEP-3063 API, PodResourceClaim.Template)."""
    return f"{pod_name}-{entry_name}"


def _generated_name_problems(name: str, path: Path) -> list[Problem]:
    if len(name) > MAX_NAME_LENGTH or not _DNS_SUBDOMAIN.match(name):
        return [_problem(path, f"Invalid value: the generated claim name {name!r} is not a valid object name "
                               f"(a DNS subdomain of at most {MAX_NAME_LENGTH} characters)", "GENERATED-NAME-VALID")]
    return []


def _template_problems(template: Any, path: Path) -> list[Problem]:
    if not isinstance(template, dict):
        return [_problem(path, "Invalid value: must be an object with metadata and spec", "TEMPLATE-METADATA")]
    problems = [
        _problem((*path, "metadata", key), "Forbidden: only labels and annotations may be set in a template",
                 "TEMPLATE-METADATA")
        for key in sorted((template.get("metadata") or {}).keys() - _TEMPLATE_METADATA_FIELDS)
    ]
    extra = sorted(template.keys() - {"metadata", "spec"})
    problems.extend(_problem((*path, key), "unknown field", "TEMPLATE-METADATA") for key in extra)
    if "spec" not in template:
        return [*problems, _problem((*path, "spec"), "Required value", "TEMPLATE-METADATA")]
    # The template's spec is validated exactly like a claim's: through the claim schema.
    claim_schema = kind_schema(API_VERSION, "ResourceClaim")
    assert claim_schema is not None, "the classic ResourceClaim schema ships with draconform"
    as_claim = {"apiVersion": API_VERSION, "kind": "ResourceClaim", "metadata": {"name": "template"},
                "spec": template["spec"]}
    for problem in schema_problems(claim_schema, as_claim):
        problems.append(Problem((*path, *problem.path), problem.message, problem.rule))
    return problems


def _containers(spec: Obj) -> Iterator[tuple[Path, Obj]]:
    for field in ("initContainers", "containers"):
        for index, container in enumerate(spec.get(field) or []):
            if isinstance(container, dict):
                yield ("spec", field, index), container
