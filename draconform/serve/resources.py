"""The resources serve answers for, as discovery describes them: group, version, plural, kind, scope, short
names and categories as kube-apiserver 1.37 lists them, the subresources, and the discovery documents
(/version, /api, /apis, /apis/GROUP, the resource lists) that kubectl and the official clients read."""

from __future__ import annotations

import platform
from dataclasses import dataclass

from draconform.kube.kinds import SERVED_KINDS
from draconform.live.kube import KINDS as API_KINDS
from draconform.sut import Obj

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
BY_PATH: dict[tuple[str, str, str], Resource] = {(r.group, r.version, r.plural): r for r in RESOURCES.values()}
GROUP_VERSIONS: list[tuple[str, str]] = sorted({(r.group, r.version) for r in RESOURCES.values()})


def version_info(release: str) -> Obj:
    major, minor = release.split(".")[:2]
    return {"major": major, "minor": minor, "gitVersion": f"v{release}.0-draconform-reference",
            "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
            "buildDate": "1970-01-01T00:00:00Z", "goVersion": f"python{platform.python_version()}",
            "compiler": "cpython", "platform": f"{platform.system().lower()}/{platform.machine()}",
            "emulationMajor": major, "emulationMinor": minor}


def _group(group: str) -> Obj:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for g, v in GROUP_VERSIONS if g == group]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": versions,
            "preferredVersion": versions[0]}


def _resource_list(group: str, version: str) -> Obj:
    resources: list[Obj] = []
    for resource in RESOURCES.values():
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


def discovery(path: str, release: str) -> Obj | None:
    """The discovery document at `path` (without a trailing slash), or None when it is not one."""
    if path == "/version":
        return version_info(release)
    if path == "/api":
        return {"kind": "APIVersions", "apiVersion": "v1", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}
    groups = sorted({g for g, _ in GROUP_VERSIONS if g})
    if path == "/apis":
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_group(g) for g in groups]}
    parts = [p for p in path.split("/") if p]
    if parts == ["api", "v1"]:
        return _resource_list("", "v1")
    if len(parts) == 2 and parts[0] == "apis" and parts[1] in groups:
        return _group(parts[1])
    if len(parts) == 3 and parts[0] == "apis" and (parts[1], parts[2]) in GROUP_VERSIONS:
        return _resource_list(parts[1], parts[2])
    return None
