"""`the request is rejected at "FIELD" by rule "RULE" [as a duplicate]` holds for a refusal at that field by
validation (Invalid, 422), or where kube-apiserver reports that violation (the list item for a duplicate, the map
for a bad key, each only with that kind of error), or by decoding (BadRequest, 400: an unknown field under Strict,
a wrong JSON type, a value the decoder names no field for), and fails for an accepted request, a refusal at another
field, another kind of error where only one kind is accepted, or another kind of refusal."""

from __future__ import annotations

import pytest

from draconform.steps.validation import Outcome, reported_at, request_rejected
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


# --- where kube-apiserver reports a violation: the path, its list item for a duplicate, its map for a key ---------
def test_a_duplicate_named_at_its_key_field_holds_at_the_list_item() -> None:
    """validateSet names the repeated item (`spec.devices[1]`), not the `name` the scenario may point at."""
    duplicate = FieldCause("spec.devices[1]", 'Duplicate value: "gpu-0"', reason="FieldValueDuplicate")
    outcome = _refused("Invalid", duplicate)
    request_rejected(outcome, "spec.devices[1].name", RULE)
    request_rejected(outcome, "spec.devices[1]", RULE, "a duplicate")


def test_a_bad_key_named_at_its_entry_holds_at_the_map() -> None:
    outcome = _refused("Invalid", FieldCause("spec.devices[0].attributes", 'Invalid value: "gpu-model": no C name'))
    request_rejected(outcome, "spec.devices[0].attributes[gpu-model]", RULE)
    request_rejected(_refused("Invalid", FieldCause("metadata.labels", 'Invalid value: "a/b/c": a qualified name')),
                     "metadata.labels[a/b/c]", RULE)


def test_the_cause_reason_of_a_live_server_is_read_before_the_message() -> None:
    outcome = _refused("Invalid", FieldCause("spec.devices[1]", "gpu-0", reason="FieldValueDuplicate"))
    request_rejected(outcome, "spec.devices[1]", RULE, "a duplicate")


def test_a_decoding_refusal_naming_no_field_holds() -> None:
    """A malformed quantity: Go's decoder says what is wrong but not where (no cause, no field in the message)."""
    outcome = Outcome(error=ApiError("BadRequest", 'ResourceSlice in version "v1" cannot be handled as a '
                                                   "ResourceSlice: quantities must match the regular expression"))
    request_rejected(outcome, "spec.sharedCounters[0].counters[memory].value", RULE)


@pytest.mark.parametrize(("outcome", "field", "kind"), [
    # an unrelated duplicate elsewhere in the object
    (_refused("Invalid", FieldCause("spec.sharedCounters[1]", "Duplicate value: x", reason="FieldValueDuplicate")),
     "spec.devices[1].name", None),
    # the right list item, but another kind of error: not the duplicate the scenario names
    (_refused("Invalid", FieldCause("spec.devices[1]", "Invalid value: null: only with perDeviceNodeSelection")),
     "spec.devices[1].name", None),
    # an ancestor beyond the enclosing list item
    (_refused("Invalid", FieldCause("spec.devices", "Duplicate value: x", reason="FieldValueDuplicate")),
     "spec.devices[1].name", None),
    # the map, but for too many entries rather than a bad key
    (_refused("Invalid", FieldCause("spec.devices[0].attributes", "Too many: 33: must have at most 32 items")),
     "spec.devices[0].attributes[gpu-model]", None),
    # the parent map of a value below an entry is not where that value is checked
    (_refused("Invalid", FieldCause("spec.devices[0].attributes", 'Invalid value: "x": bad key')),
     "spec.devices[0].attributes[model].string", None),
    # the right path, the wrong kind of error for `as a duplicate`
    (_refused("Invalid", FieldCause("spec.devices[1]", "Invalid value: x: must be an allocated device")),
     "spec.devices[1]", "a duplicate"),
    # a 400 that names another field is not a field-less decoding refusal
    (_refused("BadRequest", FieldCause("spec.confg", "unknown field")), "spec.devices[0].capacity[memory].value", None),
    # a 400 that is no decoding refusal at all
    (Outcome(error=ApiError("BadRequest", "the server rejected our request for an unknown reason")),
     "spec.devices[0].capacity[memory].value", None),
], ids=["duplicate-elsewhere", "item-other-error", "beyond-the-item", "map-too-many", "map-below-entry",
        "wrong-kind", "bad-request-other-field", "bad-request-not-decoding"])
def test_an_unrelated_cause_does_not_hold(outcome: Outcome, field: str, kind: str | None) -> None:
    with pytest.raises(AssertionError):
        request_rejected(outcome, field, RULE, kind)


def test_the_failure_says_what_would_have_held() -> None:
    with pytest.raises(AssertionError, match=r"'spec.devices\[1\].name'; or at 'spec.devices\[1\]' "
                                              r"\(FieldValueDuplicate\), its list item, where kube-apiserver reports"):
        request_rejected(_refused("Invalid", FieldCause("spec.driver", "Invalid value: x")), "spec.devices[1].name",
                         RULE)


def test_reported_at_lists_the_path_then_the_enclosing_item_or_map() -> None:
    assert [p.field for p in reported_at("status.reservedFor[1].uid")] == ["status.reservedFor[1].uid",
                                                                         "status.reservedFor[1]"]
    assert [p.field for p in reported_at("spec.devices[0].capacity[memory]")] == ["spec.devices[0].capacity[memory]",
                                                                                "spec.devices[0].capacity"]
    assert [p.field for p in reported_at("spec")] == ["spec"]
