"""Extended resources backed by DRA (KEP-5004, gate DRAExtendedResource, GA in Kubernetes 1.37), as pure
rules the scheduler's DRA plugin and `draconform allocate` share.

A DeviceClass stands for an extended resource through `spec.extendedResourceName`, and every class
implicitly for `deviceclass.resource.kubernetes.io/<class name>`. A pod asking for such a resource in its
containers' requests (or limits) gets it through DRA on a node that does not advertise the resource in
`status.allocatable` (a node that does is served by its device plugin instead): the scheduler allocates a
claim it builds itself, with one request per container (`container-<i>-request-<j>`: i the container's index
in initContainers + containers, j the resource's index among the container's sorted request names), writes
it in PreBind as `<pod>-extended-resources-<suffix>`, owned by the pod (controller) and annotated
`resource.kubernetes.io/extended-resource-claim: "true"`, and records in the pod's
`status.extendedResourceClaimStatus` which container's resource maps to which request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from draconform.kube.values import parse_quantity
from draconform.sut import Obj

EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
IN_MEMORY_NAME = "<extended-resources>"  # not a valid object name, so never a real claim's


@dataclass(frozen=True)
class RequestMapping:
    container: str
    resource: str
    request: str

    def as_obj(self) -> Obj:
        return {"containerName": self.container, "resourceName": self.resource, "requestName": self.request}


def is_extended_name(name: str) -> bool:
    """An extended resource name: a domain outside kubernetes.io (the implicit class prefix is the exception)."""
    domain, slash, _ = name.partition("/")
    if not slash or name.startswith("requests."):
        return False
    return name.startswith(IMPLICIT_PREFIX) or not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def class_for(resource: str, classes: Sequence[Obj]) -> str | None:
    """The DeviceClass standing for `resource`: one naming it in extendedResourceName (the first by name when
    several do), else the class an implicit `deviceclass.resource.kubernetes.io/<class>` name points to."""
    explicit = sorted(str(c["metadata"]["name"]) for c in classes
                      if (c.get("spec") or {}).get("extendedResourceName") == resource)
    if explicit:
        return explicit[0]
    if resource.startswith(IMPLICIT_PREFIX):
        wanted = resource[len(IMPLICIT_PREFIX):]
        if any(c["metadata"]["name"] == wanted for c in classes):
            return wanted
    return None


def parse_count(value: Any) -> int:
    try:
        amount = parse_quantity(value)
    except ValueError:
        return 0
    return int(amount) if amount.denominator == 1 and amount > 0 else 0


def container_requests(container: Obj) -> dict[str, int]:
    """Extended resources a container asks for: its requests, or its limits where it sets no request (the API
    defaults an extended resource's request to its limit)."""
    resources = container.get("resources") or {}
    found: dict[str, int] = {}
    for source in (resources.get("limits") or {}, resources.get("requests") or {}):
        for name, value in source.items():
            if is_extended_name(str(name)):
                found[str(name)] = parse_count(value)
    return {name: count for name, count in found.items() if count}


def _containers(pod: Obj) -> tuple[list[Obj], int]:
    spec = pod.get("spec") or {}
    init = list(spec.get("initContainers") or [])
    return init + list(spec.get("containers") or []), len(init)


def _long_lived(container: Obj, index: int, init_count: int) -> bool:
    return index >= init_count or container.get("restartPolicy") == "Always"  # regular or sidecar


def pod_requests(pod: Obj) -> dict[str, int]:
    """What the pod as a whole needs of each extended resource: the long-lived containers together, or an
    init container with the sidecars started before it, whichever is more."""
    containers, init_count = _containers(pod)
    total: dict[str, int] = {}
    peak: dict[str, int] = {}
    sidecars: dict[str, int] = {}
    for index, container in enumerate(containers):
        asked = container_requests(container)
        if _long_lived(container, index, init_count):
            for name, count in asked.items():
                total[name] = total.get(name, 0) + count
                if index < init_count:
                    sidecars[name] = sidecars.get(name, 0) + count
        else:
            for name, count in asked.items():
                peak[name] = max(peak.get(name, 0), count + sidecars.get(name, 0))
    return {name: max(total.get(name, 0), peak.get(name, 0)) for name in set(total) | set(peak)}


def backed_requests(pod: Obj, classes: Sequence[Obj]) -> dict[str, int]:
    """The pod's extended resources that some DeviceClass stands for."""
    return {name: count for name, count in pod_requests(pod).items() if class_for(name, classes) is not None}


def via_dra_on(node: Obj, requests: Mapping[str, int], classes: Sequence[Obj]) -> tuple[dict[str, int], str | None]:
    """Which of the pod's extended resources this node serves through DRA: those a class stands for and the
    node does not advertise (or advertises as 0). Any other resource must be advertised in at least the amount
    asked (NodeResourcesFit's test, less what pods already bound there use): the first that is not makes the
    pod not fit, and the second value then names it."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    through_dra: dict[str, int] = {}
    for name, count in sorted(requests.items()):
        if count <= 0:
            continue
        advertised = parse_count(allocatable.get(name, 0))
        if class_for(name, classes) is not None and advertised == 0:
            through_dra[name] = count
        elif count > advertised:
            return {}, name
    return through_dra, None


def build_requests(pod: Obj, resources: Mapping[str, int],
                   classes: Sequence[Obj]) -> tuple[list[Obj], list[RequestMapping]]:
    """The special claim's device requests for the resources served through DRA, and the pod's request
    mappings: each long-lived container its own request; an init container first reuses the requests of
    long-lived containers after it, then asks for the rest, and all init containers share the largest such
    request (they never run at the same time)."""
    containers, init_count = _containers(pod)
    requests: list[Obj] = []
    mappings: list[RequestMapping] = []
    for resource in sorted(resources):
        class_name = class_for(resource, classes)
        if class_name is None:
            continue
        long_lived: dict[int, Obj] = {}
        long_mappings: list[RequestMapping] = []
        for index, container in enumerate(containers):
            if _long_lived(container, index, init_count):
                request, found = _container_request(index, container, resource, class_name, [])
                if request is not None:
                    long_lived[index] = request
                long_mappings += found
        largest: Obj | None = None
        short_names: set[str] = set()
        short_mappings: list[RequestMapping] = []
        for index, container in enumerate(containers):
            if _long_lived(container, index, init_count):
                continue
            reusable = [long_lived[i] for i in sorted(long_lived) if i >= index]
            request, found = _container_request(index, container, resource, class_name, reusable)
            if request is not None:
                short_names.add(request["name"])
                if largest is None or largest["exactly"]["count"] < request["exactly"]["count"]:
                    largest = request
            short_mappings += found
        if largest is not None:
            requests.append(largest)
            short_mappings = [RequestMapping(m.container, m.resource, largest["name"])
                              if m.request in short_names else m for m in short_mappings]
        requests += [long_lived[i] for i in sorted(long_lived)]
        mappings += long_mappings + short_mappings
    requests.sort(key=lambda r: str(r["name"]))
    return requests, mappings


def _container_request(index: int, container: Obj, resource: str, class_name: str,
                       reusable: list[Obj]) -> tuple[Obj | None, list[RequestMapping]]:
    asked = container_requests(container)
    wanted = asked.get(resource, 0)
    if not wanted:
        return None, []
    name = str(container.get("name", ""))
    mappings = []
    covered = 0
    for request in reusable:
        covered += int(request["exactly"]["count"])
        mappings.append(RequestMapping(name, resource, str(request["name"])))
        if covered >= wanted:
            return None, mappings
    declared = sorted(set((container.get("resources") or {}).get("requests") or {})
                      | set((container.get("resources") or {}).get("limits") or {}))
    position = declared.index(resource) if resource in declared else 0
    request_name = f"container-{index}-request-{position}"
    request = {"name": request_name, "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount",
                                                 "count": wanted - covered}}
    return request, [*mappings, RequestMapping(name, resource, request_name)]


def special_claim(pod: Obj, requests: list[Obj], name: str = IN_MEMORY_NAME) -> Obj:
    """The claim the scheduler allocates for a pod's DRA-backed extended resources (written in PreBind with a
    generated name)."""
    meta = pod["metadata"]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": name,
            "generateName": f"{meta['name']}-extended-resources-",
            "namespace": meta.get("namespace", "default"),
            "uid": f"in-memory-{meta.get('uid', meta['name'])}",
            "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                                 "uid": meta.get("uid", ""), "controller": True}],
        },
        "spec": {"devices": {"requests": requests}},
    }


def is_extended_claim_of(claim: Obj, pod: Obj) -> bool:
    """A claim the scheduler wrote for this pod's extended resources."""
    meta = claim["metadata"]
    if (meta.get("annotations") or {}).get(EXTENDED_CLAIM_ANNOTATION) != "true":
        return False
    return any(ref.get("controller") and ref.get("uid") == pod["metadata"].get("uid")
               and ref.get("name") == pod["metadata"]["name"] for ref in meta.get("ownerReferences") or [])
