"""The older resource.k8s.io versions (v1beta1, v1beta2) at their own paths: a body written in one is converted
to the stored v1 form on the way in and every object answered there is converted back, as kube-apiserver
decodes every served version into one internal form and encodes answers in the version of the request path.
The conversion itself is the validation layer's (draconform/validation/versions.py), which the store uses too."""

from __future__ import annotations

from draconform.serve.resources import OLDER_VERSIONS, Resource
from draconform.sut import Obj
from draconform.validation.problems import Problem
from draconform.validation.versions import GROUP, from_v1, to_v1


def is_older(resource: Resource) -> bool:
    return resource.group == GROUP and resource.version in OLDER_VERSIONS


def is_older_api_version(api_version: str) -> bool:
    group, _, version = api_version.rpartition("/")
    return group == GROUP and version in OLDER_VERSIONS


def to_stored(resource: Resource, body: Obj) -> tuple[Obj, list[Problem]]:
    """`body`, written in the version of `resource`, in the stored v1 form, and the fields the version does not
    have (v1's `exactly` in a v1beta1 request, a device's fields beside `basic`), which decoding into the
    version's Go types finds unknown. Objects of v1 and of other groups come back as they are."""
    if not is_older(resource):
        return body, []
    return to_v1(body)


def served_form(resource: Resource, obj: Obj) -> Obj:
    """A stored (v1) object as answered at the path of `resource`: converted for an older version, else as is."""
    return from_v1(obj, resource.version) if is_older(resource) and obj.get("apiVersion") != resource.api_version \
        else obj
