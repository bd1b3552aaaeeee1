"""The resources serve answers for, as discovery describes them: group, version, plural, kind, scope, short
names and categories as kube-apiserver 1.37 lists them, the subresources, and the discovery documents
(/version, /api, /apis, /apis/GROUP, the resource lists) that kubectl and the official clients read. The older
resource.k8s.io versions (v1beta1, v1beta2) are served beside v1 only when `--runtime-config` turns them on, as
kube-apiserver 1.37 keeps every beta group-version off by default (KEP-3136); v1 stays the preferred version."""

from __future__ import annotations

import platform
from dataclasses import dataclass

from draconform.kube.kinds import SERVED_KINDS
from draconform.live.kube import KINDS as API_KINDS
from draconform.sut import Obj
from draconform.validation.versions import GROUP as DRA_GROUP
from draconform.validation.versions import SERVED, served_versions

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
NO_COLLECTION_DELETE = ("Namespace",)  # upstream serves no deletecollection for namespaces
SHORT_NAMES = {"Pod": ["po"], "Namespace": ["ns"], "ConfigMap": ["cm"], "Node": ["no"], "Event": ["ev"]}
CATEGORIES = {"Pod": ["all"]}


@dataclass(frozen=True)
class Resource:
    kind: str
    group: str
    version: str
    plural: str
    namespaced: bool
    has_status: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """How upstream names the resource in messages: `pods`, `resourceclaims.resource.k8s.io`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


RESOURCES: dict[str, Resource] = {
    kind: Resource(kind, info.group, info.api_version.rsplit("/", 1)[-1], info.plural, info.namespaced,
                   SERVED_KINDS[kind].has_status)
    for kind, info in API_KINDS.items()
}
# The versions a runtime config may turn on, newest first (the order discovery lists a group's versions in).
OLDER_VERSIONS = ("v1beta2", "v1beta1")


@dataclass(frozen=True)
class Served:
    """The resources one server answers for: every stored kind at its stored version, and the DRA kinds at the
    older resource.k8s.io versions its release serves and its runtime config turns on."""

    resources: tuple[Resource, ...]

    @property
    def group_versions(self) -> tuple[tuple[str, str], ...]:
        """(group, version) pairs, groups sorted, a group's versions newest first (the preferred one first)."""
        order = {"v1": 0, **{v: i + 1 for i, v in enumerate(OLDER_VERSIONS)}}
        return tuple(sorted({(r.group, r.version) for r in self.resources}, key=lambda gv: (gv[0], order[gv[1]])))

    def find(self, group: str, version: str, plural: str) -> Resource | None:
        return next((r for r in self.resources if (r.group, r.version, r.plural) == (group, version, plural)), None)


def served(release: str = "1.37", enabled: frozenset[str] = frozenset()) -> Served:
    """What a server of `release` answers for with the group-versions `enabled` (as "resource.k8s.io/v1beta1")
    turned on beside the stored ones."""
    older = [Resource(kind, stored.group, version, stored.plural, stored.namespaced, stored.has_status)
             for version in OLDER_VERSIONS if f"{DRA_GROUP}/{version}" in enabled
             for kind, stored in RESOURCES.items()
             if kind in SERVED and version in served_versions(kind, release)]
    return Served((*RESOURCES.values(), *older))


def parse_runtime_config(text: str) -> frozenset[str]:
    """kube-apiserver's `--runtime-config` (`GROUP/VERSION[=true|false],...`, a bare key meaning true) as the
    set of older group-versions turned on; a key serve cannot serve is an error naming it."""
    known = {f"{DRA_GROUP}/{version}" for version in OLDER_VERSIONS}
    enabled: set[str] = set()
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, _, value = item.partition("=")
        if key not in known:
            raise ValueError(f"--runtime-config: {key!r} is not a group-version serve can turn on "
                             f"(it can: {', '.join(sorted(known))})")
        if value.lower() not in ("", "true", "false"):
            raise ValueError(f"--runtime-config: {item!r}: the value must be true or false")
        if value.lower() == "false":
            enabled.discard(key)
        else:
            enabled.add(key)
    return frozenset(enabled)


STORED = served()


def version_info(release: str) -> Obj:
    major, minor = release.split(".")[:2]
    return {"major": major, "minor": minor, "gitVersion": f"v{release}.0-draconform-reference",
            "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
            "buildDate": "1970-01-01T00:00:00Z", "goVersion": f"python{platform.python_version()}",
            "compiler": "cpython", "platform": f"{platform.system().lower()}/{platform.machine()}",
            "emulationMajor": major, "emulationMinor": minor}


def _group(group: str, what: Served) -> Obj:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for g, v in what.group_versions if g == group]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": versions,
            "preferredVersion": versions[0]}


def _resource_list(group: str, version: str, what: Served) -> Obj:
    resources: list[Obj] = []
    for resource in what.resources:
        if (resource.group, resource.version) != (group, version):
            continue
        entry: Obj = {"name": resource.plural, "singularName": resource.kind.lower(),
                      "namespaced": resource.namespaced, "kind": resource.kind, "verbs": VERBS}
        if resource.kind in NO_COLLECTION_DELETE:
            entry["verbs"] = [verb for verb in VERBS if verb != "deletecollection"]
        if resource.kind in SHORT_NAMES:
            entry["shortNames"] = SHORT_NAMES[resource.kind]
        if resource.kind in CATEGORIES:
            entry["categories"] = CATEGORIES[resource.kind]
        resources.append(entry)
        if resource.has_status:
            resources.append({"name": f"{resource.plural}/status", "singularName": "",
                              "namespaced": resource.namespaced, "kind": resource.kind,
                              "verbs": ["get", "patch", "update"]})
        if resource.kind == "Pod":
            resources.append({"name": "pods/binding", "singularName": "", "namespaced": True, "kind": "Binding",
                              "verbs": ["create"]})
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version, "resources": resources}


def discovery(path: str, release: str, what: Served = STORED) -> Obj | None:
    """The discovery document at `path` (without a trailing slash), or None when it is not one."""
    if path == "/version":
        return version_info(release)
    if path == "/api":
        return {"kind": "APIVersions", "apiVersion": "v1", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}
    groups = sorted({g for g, _ in what.group_versions if g})
    if path == "/apis":
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_group(g, what) for g in groups]}
    parts = [p for p in path.split("/") if p]
    if parts == ["api", "v1"]:
        return _resource_list("", "v1", what)
    if len(parts) == 2 and parts[0] == "apis" and parts[1] in groups:
        return _group(parts[1], what)
    if len(parts) == 3 and parts[0] == "apis" and (parts[1], parts[2]) in what.group_versions:
        return _resource_list(parts[1], parts[2], what)
    return None
