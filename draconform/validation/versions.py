"""The resource.k8s.io API versions each Kubernetes release serves, and the conversion between them.

kube-apiserver decodes any served version into one internal form, validates that form and stores it; the
internal form of DRA is shaped like v1. draconform does the same: an object of another served version is
converted to v1 (`to_v1`), validated and stored as v1, and problems are reported at the field paths of the
version the user wrote (`path_in`). The conversion is upstream's documented one:

- v1beta2 has the v1 shapes;
- v1beta1 keeps a device's fields under `basic` (v1: on the device itself) and a request's fields on the
  request (v1: under `exactly`, unless the request has `firstAvailable`).

From 1.34 v1 is on by default; v1beta1 and v1beta2 are still served but only when enabled
(`--runtime-config=resource.k8s.io/v1beta1=true`), so validating them warns. DeviceTaintRule is served
from v1beta2 in 1.36 (off by default, like its gate) and from v1 in 1.37."""

from __future__ import annotations

import enum
from typing import Any

from draconform.kube.featuregates import release_tuple
from draconform.kube.kinds import CLASSIC_API, CLASSIC_KINDS
from draconform.sut import copy_object
from draconform.validation.problems import Path, Problem
from draconform.validation.schema import kind_schema

GROUP = "resource.k8s.io"
CLASSIC_GROUP = CLASSIC_API.rpartition("/")[0]
APIS = ("structured", "classic")
RELEASES = ("1.34", "1.35", "1.36", "1.37")
RULE = "DRA-API/SERVED-VERSIONS"
CORE_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")

# kind -> version -> (first release serving it, whether it is on by default there)
SERVED: dict[str, dict[str, tuple[str, bool]]] = {
    **{kind: {"v1": ("1.34", True), "v1beta2": ("1.34", False), "v1beta1": ("1.34", False)}
       for kind in CORE_KINDS},
    "DeviceTaintRule": {"v1": ("1.37", True), "v1beta2": ("1.36", False)},
}
# Alpha versions a release has (off by default) that draconform does not validate.
ALPHA = {"DeviceTaintRule": "v1alpha3"}
# A request's fields that v1beta1 keeps on the request itself and v1beta2 and v1 under `exactly`.
_REQUEST_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations",
                   "capacity", "derivedAttributes")


class Checked(enum.Enum):
    CHECKED = "checked"
    NOT_CHECKED = "not checked"


def served_versions(kind: str, release: str) -> list[str]:
    """The resource.k8s.io versions of `kind` that `release` serves, newest first."""
    return [version for version, (since, _) in SERVED.get(kind, {}).items()
            if release_tuple(since) <= release_tuple(release)]


def classify(obj: dict[str, Any], release: str, api: str = "structured") -> Checked | Problem:
    """Whether draconform checks `obj` (a DRA kind in a version `release` serves, or a core kind DRA relies
    on), leaves it unchecked (a kind outside DRA), or refuses it: a problem naming what the cluster serves.
    A cluster serves one DRA API: "structured" (resource.k8s.io) or "classic" (KEP-3063's cdi.k8s.io)."""
    api_version, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
    group, _, version = api_version.rpartition("/")
    if api == "classic":
        return _classify_classic(api_version, kind, group)
    if group == CLASSIC_GROUP:
        return Problem(("apiVersion",), f"Unsupported value: {api_version!r}: Kubernetes {release} does not serve "
                                        "KEP-3063's classic API (`draconform validate --api classic` judges it as a "
                                        "classic cluster would)", RULE)
    if group != GROUP:
        if kind_schema(api_version, kind) is not None:
            return Checked.CHECKED
        return _near_miss(api_version, group, kind, release) or Checked.NOT_CHECKED
    if kind not in SERVED:
        known = ", ".join(sorted(SERVED))
        return Problem(("kind",), f"Unsupported value: {kind!r}: {GROUP} has no such kind that draconform knows "
                                  f"(it knows {known})", RULE)
    served = served_versions(kind, release)
    if version not in served:
        since = min(first for first, _ in SERVED[kind].values())
        what = f"serves {kind} as {', '.join(f'{GROUP}/{v}' for v in served)}" if served else (
            f"serves {kind} only as the alpha {GROUP}/{ALPHA[kind]} (off by default), which draconform does not "
            f"validate (" + ", ".join(f"{v} from {first}" for v, (first, _) in sorted(
                SERVED[kind].items(), key=lambda item: release_tuple(item[1][0]))) + ")" if kind in ALPHA
            else f"does not serve {kind} (from {since})")
        return Problem(("apiVersion",), f"Unsupported value: {api_version!r}: Kubernetes {release} {what}", RULE)
    return Checked.CHECKED


def _near_miss(api_version: str, group: str, kind: str, release: str) -> Problem | None:
    """A problem for an apiVersion that looks like a mistyped resource.k8s.io one (a group a few letters from
    it, or a DRA kind in the core group), naming what `release` serves; None for anything else, which stays
    "not checked" (another group may well define a kind of the same name)."""
    if not (_distance(group, GROUP) <= 2 or (not group and kind in SERVED)):
        return None
    kinds = [kind] if kind in SERVED else sorted(SERVED)
    served = "; ".join(f"{name} as {', '.join(f'{GROUP}/{v}' for v in served_versions(name, release))}"
                       for name in kinds if served_versions(name, release))
    return Problem(("apiVersion",), f"Unsupported value: {api_version!r}: no such API group/version serves {kind}; "
                                    f"did you mean {GROUP}? Kubernetes {release} serves {served}", RULE)


def _distance(a: str, b: str) -> int:
    """Levenshtein distance (short strings only)."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


def _classify_classic(api_version: str, kind: str, group: str) -> Checked | Problem:
    """A classic cluster serves ResourceClass and ResourceClaim of cdi.k8s.io/v1alpha1 and no resource.k8s.io
    kind; a claim template is embedded in the pod (spec.resourceClaims[].template)."""
    if group == GROUP:
        return Problem(("apiVersion",), f"Unsupported value: {api_version!r}: a classic cluster serves "
                                        f"{CLASSIC_API} instead of {GROUP} (--api structured judges this object)")
    info = CLASSIC_KINDS.get(kind)
    if api_version == CLASSIC_API and (info is None or info.api_version != CLASSIC_API):
        return Problem(("kind",), f"Unsupported value: {kind!r}: {CLASSIC_API} has ResourceClass and ResourceClaim; "
                                  "a claim template is embedded in the pod (spec.resourceClaims[].template)")
    return Checked.CHECKED if kind_schema(api_version, kind) is not None else Checked.NOT_CHECKED


def off_by_default(obj: dict[str, Any], release: str) -> Problem | None:
    """A warning when the object's version is served by `release` only when enabled explicitly."""
    api_version, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
    group, _, version = api_version.rpartition("/")
    if group != GROUP or version not in served_versions(kind, release) or SERVED[kind][version][1]:
        return None
    return Problem(("apiVersion",), f"Kubernetes {release} serves {api_version} only when enabled "
                                    f"(--runtime-config={api_version}=true); it is off by default", RULE, "warning")


# ----- conversion -----------------------------------------------------------------------------------------

def version_of(obj: dict[str, Any]) -> str | None:
    """The resource.k8s.io version of `obj`, or None for another group."""
    group, _, version = str(obj.get("apiVersion")).rpartition("/")
    return version if group == GROUP else None


def to_v1(obj: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """A copy of `obj` in resource.k8s.io/v1, and the fields the source version does not have (unknown
    fields, at the source's paths). Objects of other groups and versions come back unchanged."""
    version = version_of(obj)
    if version not in ("v1beta1", "v1beta2"):
        return obj, []
    out: dict[str, Any] = copy_object(obj)
    out["apiVersion"] = f"{GROUP}/v1"
    problems: list[Problem] = []
    if version == "v1beta1":
        kind = out.get("kind")
        spec = out.get("spec")
        if kind == "ResourceSlice" and isinstance(spec, dict):
            problems += _lift_basic(spec)
        elif kind == "ResourceClaim" and isinstance(spec, dict):
            problems += _requests_to_v1(spec, ("spec",))
        elif kind == "ResourceClaimTemplate" and isinstance(spec, dict) and isinstance(spec.get("spec"), dict):
            problems += _requests_to_v1(spec["spec"], ("spec", "spec"))
    return out, problems


def from_v1(obj: dict[str, Any], version: str) -> dict[str, Any]:
    """A copy of a v1 object in `version` (v1beta1 or v1beta2), as the API server returns it when read
    through that version."""
    out: dict[str, Any] = copy_object(obj)
    out["apiVersion"] = f"{GROUP}/{version}"
    if version != "v1beta1":
        return out
    spec = out.get("spec")
    if out.get("kind") == "ResourceSlice" and isinstance(spec, dict):
        for device in _dicts(spec.get("devices")):
            basic = {key: device.pop(key) for key in list(device) if key != "name"}
            device["basic"] = basic
    elif out.get("kind") in ("ResourceClaim", "ResourceClaimTemplate") and isinstance(spec, dict):
        claim_spec = spec.get("spec") if out["kind"] == "ResourceClaimTemplate" else spec
        devices = claim_spec.get("devices") if isinstance(claim_spec, dict) else None
        for request in _dicts(devices.get("requests") if isinstance(devices, dict) else None):
            exactly = request.pop("exactly", None)
            if isinstance(exactly, dict):
                request.update(exactly)
    return out


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _lift_basic(spec: dict[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    devices = spec.get("devices")
    for index, device in enumerate(devices if isinstance(devices, list) else []):
        if not isinstance(device, dict):
            continue
        for key in [k for k in device if k not in ("name", "basic")]:
            problems.append(Problem(("spec", "devices", index, key), "unknown field: resource.k8s.io/v1beta1 keeps "
                                                                      "a device's fields under `basic`", RULE))
            del device[key]
        basic = device.pop("basic", None)
        if isinstance(basic, dict):
            device.update(basic)
    return problems


def _requests_to_v1(claim_spec: dict[str, Any], path: Path) -> list[Problem]:
    problems: list[Problem] = []
    devices = claim_spec.get("devices")
    requests = devices.get("requests") if isinstance(devices, dict) else None
    for index, request in enumerate(requests if isinstance(requests, list) else []):
        if not isinstance(request, dict):
            continue
        if "exactly" in request:
            problems.append(Problem((*path, "devices", "requests", index, "exactly"),
                                    "unknown field: resource.k8s.io/v1beta1 has a request's fields on the request "
                                    "itself (`exactly` is v1beta2 and v1)", RULE))
            del request["exactly"]
        moved = {key: request.pop(key) for key in _REQUEST_FIELDS if key in request}
        if not request.get("firstAvailable"):
            request.pop("firstAvailable", None)
            request["exactly"] = moved
        elif moved:  # both shapes at once: keep them apart so validation reports the one-of
            request["exactly"] = moved
    return problems


def path_in(version: str | None, kind: str, path: Path) -> Path:
    """The path of a v1 field in the version the user wrote (v1beta1 differs; the others are the same)."""
    if version != "v1beta1":
        return path
    if kind == "ResourceSlice" and path[:2] == ("spec", "devices") and len(path) > 3 and path[3] != "name":
        return (*path[:3], "basic", *path[3:])
    base = ("spec", "spec") if kind == "ResourceClaimTemplate" else ("spec",)
    start = len(base) + 3  # ..., devices, requests, i, exactly
    if path[: len(base) + 2] == (*base, "devices", "requests") and len(path) > start and path[start] == "exactly":
        return (*path[:start], *path[start + 1:])
    return path
