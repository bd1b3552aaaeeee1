"""The older resource.k8s.io versions (v1beta1, v1beta2) at their own paths: a body written in one is converted
to the stored v1 form on the way in and every object answered there is converted back, as kube-apiserver
decodes every served version into one internal form and encodes answers in the version of the request path.
The conversion itself is the validation layer's (draconform/validation/versions.py), which the store uses too."""

from __future__ import annotations

from draconform.serve.resources import OLDER_VERSIONS, Resource
from draconform.sut import ApiError, FieldCause, Obj
from draconform.validation.versions import GROUP, from_v1, to_v1


def is_older(resource: Resource) -> bool:
    return resource.group == GROUP and resource.version in OLDER_VERSIONS


def is_older_api_version(api_version: str) -> bool:
    group, _, version = api_version.rpartition("/")
    return group == GROUP and version in OLDER_VERSIONS


def to_stored(resource: Resource, body: Obj) -> Obj:
    """`body`, written in the version of `resource`, in the stored v1 form; a field the version does not have
    (v1's `exactly` in a v1beta1 request, a device's fields beside `basic`) is a 422 naming it."""
    if not is_older(resource):
        return body
    converted, problems = to_v1(body)
    if problems:
        causes = [FieldCause(p.field, p.message, p.rule) for p in problems]
        raise ApiError("Invalid", f"{resource.kind} is invalid: " + "; ".join(f"{c.field}: {c.message}"
                                                                              for c in causes), causes)
    return converted


def served_form(resource: Resource, obj: Obj) -> Obj:
    """A stored (v1) object as answered at the path of `resource`: converted for an older version, else as is."""
    return from_v1(obj, resource.version) if is_older(resource) and obj.get("apiVersion") != resource.api_version \
        else obj
