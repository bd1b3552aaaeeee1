"""A body kube-apiserver refuses while decoding it (a 400 with no causes in its Status) reaches the seam with a
cause per field its message names: each unknown field of a Strict write, the field of a value of the wrong type,
so the API-validation steps can tell where it was refused (DRA-API/OBJECT-SCHEMA)."""

from __future__ import annotations

from draconform.live.kube import decoding_causes
from draconform.sut import FieldCause


def test_every_unknown_field_of_a_strict_decoding_error_is_a_cause() -> None:
    message = ('ResourceClaim in version "v1beta1" cannot be handled as a ResourceClaim: strict decoding error: '
               'unknown field "spec.devices.requests[0].exactly", unknown field "spec.devices.requests[1].bogus", '
               'duplicate field "metadata.name"')
    assert decoding_causes(message) == [
        FieldCause("spec.devices.requests[0].exactly", "unknown field"),
        FieldCause("spec.devices.requests[1].bogus", "unknown field"),
        FieldCause("metadata.name", "duplicate field")]


def test_one_unknown_field() -> None:
    message = ('DeviceClass in version "v1" cannot be handled as a DeviceClass: strict decoding error: unknown field '
               '"spec.selector"')
    assert [c.field for c in decoding_causes(message)] == ["spec.selector"]


def test_an_unmarshal_error_names_the_path_without_the_struct_type() -> None:
    message = ('DeviceClass in version "v1" cannot be handled as a DeviceClass: json: cannot unmarshal string into Go '
               'struct field DeviceClassSpec.spec.selectors of type []v1.DeviceSelector')
    assert decoding_causes(message) == [
        FieldCause("spec.selectors", "Invalid value: string: must be of type []v1.DeviceSelector")]
    nested = ('ResourceClaim in version "v1" cannot be handled as a ResourceClaim: json: cannot unmarshal string into '
              'Go struct field ExactDeviceRequest.spec.devices.requests.exactly.count of type int64')
    assert [c.field for c in decoding_causes(nested)] == ["spec.devices.requests.exactly.count"]


def test_other_messages_name_no_field() -> None:
    assert decoding_causes('resourceclaims.resource.k8s.io "gpu" already exists') == []
    assert decoding_causes("the body of the request could not be decoded: Expecting value") == []
    assert decoding_causes('json: cannot unmarshal string into Go value of type v1.DeviceClass') == []


def test_a_validation_status_gives_each_cause_its_reason() -> None:
    """kube-apiserver's 422 names each cause's error type (FieldValueDuplicate, ...): the seam keeps it, so the
    rejected-at step can tell a duplicate at a list item from another error there (issue 37)."""
    from lightkube.core.exceptions import ApiError as LightkubeApiError
    from lightkube.models import meta_v1

    from draconform.live.kube import api_error

    status = meta_v1.Status.from_dict({
        "kind": "Status", "status": "Failure", "reason": "Invalid", "code": 422,
        "message": 'ResourceSlice.resource.k8s.io "s" is invalid: spec.devices[1]: Duplicate value: "gpu-0"',
        "details": {"causes": [{"reason": "FieldValueDuplicate", "message": 'Duplicate value: "gpu-0"',
                                "field": "spec.devices[1]"}]}})
    error = api_error(LightkubeApiError(status=status))
    assert [(c.field, c.reason, c.error_type) for c in error.causes] == [
        ("spec.devices[1]", "FieldValueDuplicate", "FieldValueDuplicate")]
