"""What kube-apiserver refuses of a pod's containers outside DRA (issue 37): a container without an image, an
extended resource requested without an equal limit, a request above its limit, a resource name containers
cannot ask for; the limits a pod sets stand in for its missing requests once stored. `validate` and the
reference store give the same verdicts, at upstream's paths."""

from __future__ import annotations

from typing import Any

import pytest

from draconform.reference.apiserver.admission import install
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.sut import ApiError
from draconform.validation import validate_gates, validate_manifest

IMAGE = "registry.k8s.io/pause:3.10"


def pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": list(containers), **spec}}


def container(resources: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    return {"name": "main", "image": IMAGE, **({"resources": resources} if resources else {}), **fields}


def deployment(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"app": "a"}},
                     "template": {"metadata": {"labels": {"app": "a"}}, "spec": spec}}}


def problems(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p.field, p.message) for p in validate_manifest(obj, validate_gates(None, "1.37"))[1]]


def store() -> Store:
    api = Store(FakeClock())
    install(api)
    return api


@pytest.mark.parametrize(("obj", "expected"), [
    (pod({"name": "main"}), [("spec.containers[0].image", "Required value")]),
    (pod(container(), initContainers=[{"name": "setup"}]), [("spec.initContainers[0].image", "Required value")]),
    (pod(), [("spec.containers", "Required value")]),
    (pod(container(), ephemeralContainers=[{"name": "debug", "image": IMAGE}]),
     [("spec.ephemeralContainers", "Forbidden: cannot be set on create")]),
    # a workload's template is validated as a pod spec: the image is required there too
    (deployment({"containers": [{"name": "main"}]}), [("spec.template.spec.containers[0].image", "Required value")]),
])
def test_a_container_needs_an_image(obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert problems(obj) == expected


@pytest.mark.parametrize(("resources", "expected"), [
    ({"requests": {"example.com/gpu": "1"}},
     [("spec.containers[0].resources.limits", "Required value: Limit must be set for non overcommitable resources")]),
    ({"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "2"}},
     [("spec.containers[0].resources.requests", 'Invalid value: "1": must be equal to example.com/gpu limit of 2')]),
    ({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
     [("spec.containers[0].resources.requests", 'Invalid value: "2": must be less than or equal to cpu limit of 1')]),
    ({"limits": {"example.com/gpu": "500m"}},
     [("spec.containers[0].resources.limits[example.com/gpu]", 'Invalid value: "500m": must be an integer')]),
    ({"requests": {"memory": "-1Gi"}},
     [("spec.containers[0].resources.requests[memory]", 'Invalid value: "-1Gi": must be greater than or equal to 0')]),
    ({"requests": {"pods": "1"}},
     [("spec.containers[0].resources.requests[pods]", 'Invalid value: "pods": must be a standard resource for '
                                                      'containers')]),
    ({"requests": {"hugepages-2Mi": "2Mi"}, "limits": {"hugepages-2Mi": "2Mi"}},
     [("spec.containers[0].resources", "Forbidden: HugePages require cpu or memory")]),
])
def test_requests_and_limits_as_upstream_checks_them(resources: dict[str, Any],
                                                     expected: list[tuple[str, str]]) -> None:
    assert problems(pod(container(resources))) == expected


@pytest.mark.parametrize("resources", [
    {"limits": {"example.com/gpu": "1"}},  # the request is defaulted from the limit
    {"requests": {"example.com/gpu": "2"}, "limits": {"example.com/gpu": "2"}},
    {"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
    {"requests": {"deviceclass.resource.kubernetes.io/gpu": "1"}},  # native (kubernetes.io): may overcommit
])
def test_what_upstream_accepts(resources: dict[str, Any]) -> None:
    assert problems(pod(container(resources))) == []


def test_the_store_refuses_what_validate_refuses_and_defaults_requests_from_limits() -> None:
    api = store()
    with pytest.raises(ApiError) as refused:
        api.create(pod(container({"requests": {"example.com/gpu": "1"}}, image="")))
    assert refused.value.reason == "Invalid"
    assert sorted(c.field for c in refused.value.causes) == ["spec.containers[0].image",
                                                             "spec.containers[0].resources.limits"]
    stored = api.create(pod(container({"limits": {"example.com/gpu": "1", "cpu": "1"},
                                       "requests": {"cpu": "500m"}})))
    assert stored["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "example.com/gpu": "1"}
