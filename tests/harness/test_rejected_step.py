"""`the request is rejected at "FIELD" by rule "RULE"` holds for a refusal at that field by validation (Invalid,
422) or by decoding (BadRequest, 400: an unknown field under Strict, a wrong JSON type), and fails for an accepted
request, a refusal at another field, or another kind of refusal."""

from __future__ import annotations

import pytest

from draconform.steps.validation import Outcome, request_rejected
from draconform.sut import ApiError, FieldCause

RULE = "DRA-API/OBJECT-SCHEMA"


def _refused(reason: str, *causes: FieldCause) -> Outcome:
    return Outcome(error=ApiError(reason, "refused", causes))


@pytest.mark.parametrize("outcome", [
    _refused("Invalid", FieldCause("spec.selector", "unknown field", RULE)),
    _refused("Invalid", FieldCause("spec.selector", "unknown field")),  # a real API server's causes cite no rule
    _refused("BadRequest", FieldCause("spec.confg", "unknown field"), FieldCause("spec.selector", "unknown field")),
], ids=["invalid-with-rule", "invalid-without-rule", "strict-decoding"])
def test_a_refusal_at_the_field_holds(outcome: Outcome) -> None:
    request_rejected(outcome, "spec.selector", RULE)


def test_an_unmarshal_error_at_the_field_holds_without_list_indices() -> None:
    """Go's unmarshal error names the path without list indices."""
    outcome = _refused("BadRequest", FieldCause("spec.devices.requests.exactly.count", "Invalid value"))
    request_rejected(outcome, "spec.devices.requests[0].exactly.count", RULE)


@pytest.mark.parametrize("outcome", [
    Outcome(obj={"kind": "DeviceClass"}),
    _refused("Invalid", FieldCause("spec.selectors[0].cel", "Required value")),
    _refused("BadRequest", FieldCause("spec.confg", "unknown field")),
    _refused("BadRequest"),  # a 400 whose message named no field
    _refused("Invalid", FieldCause("spec.selector", "unknown field", "DRA-API/OBJECT-METADATA")),
    _refused("Forbidden", FieldCause("spec.selector", "unknown field")),
    _refused("Invalid", FieldCause("spec.selector.x", "unknown field")),
], ids=["accepted", "invalid-elsewhere", "strict-elsewhere", "bad-request-without-causes", "another-rule",
        "forbidden", "a-field-below"])
def test_anything_else_fails(outcome: Outcome) -> None:
    with pytest.raises(AssertionError):
        request_rejected(outcome, "spec.selector", RULE)


def test_an_indexed_cause_must_match_its_index() -> None:
    """Only a cause without indices (Go's unmarshal path) is compared without them."""
    with pytest.raises(AssertionError):
        request_rejected(_refused("BadRequest", FieldCause("spec.devices.requests[1].exactly", "unknown field")),
                         "spec.devices.requests[0].exactly", RULE)
