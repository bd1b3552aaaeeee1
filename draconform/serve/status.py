"""Refusals as kube-apiserver words them: a metav1.Status with reason, code, message and details (name,
group, kind, causes), from the store's `ApiError` or one of serve's own."""

from __future__ import annotations

from draconform.serve.resources import Resource
from draconform.sut import ApiError, Obj

HTTP_STATUS = {"BadRequest": 400, "Unauthorized": 401, "Forbidden": 403, "NotFound": 404, "MethodNotAllowed": 405,
               "NotAcceptable": 406, "AlreadyExists": 409, "Conflict": 409, "Gone": 410, "Expired": 410,
               "RequestEntityTooLarge": 413, "UnsupportedMediaType": 415, "Invalid": 422, "TooManyRequests": 429,
               "InternalError": 500, "ServiceUnavailable": 503, "Timeout": 504}
MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"
# A cause's reason from the start of its message, which is how upstream words each field.ErrorType
CAUSE_REASONS = (("Required value", "FieldValueRequired"), ("Forbidden", "FieldValueForbidden"),
                 ("Duplicate value", "FieldValueDuplicate"), ("Not found", "FieldValueNotFound"),
                 ("Unsupported value", "FieldValueNotSupported"), ("Too long", "FieldValueTooLong"),
                 ("Too many", "FieldValueTooMany"), ("Internal error", "InternalError"))


def success() -> Obj:
    """The Status of a write that answers no object (a binding, a collection deleted): no details, as upstream."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}


def failure(error: ApiError, resource: Resource | None = None, name: str | None = None) -> tuple[int, Obj]:
    """The HTTP code and Status body for `error`, worded as upstream when the resource is known."""
    code = HTTP_STATUS.get(error.reason, 500)
    message = error.message
    details: Obj = {}
    if resource is not None and name:
        details = {"name": name, "group": resource.group, "kind": resource.plural}
        if error.reason == "NotFound" and not message.startswith("namespaces "):
            message = f'{resource.qualified} "{name}" not found'
        elif error.reason == "AlreadyExists":
            message = f'{resource.qualified} "{name}" already exists'
        elif error.reason == "Conflict" and not message.startswith("Operation cannot be fulfilled"):
            reason = MODIFIED if "has been modified" in message else message
            message = f'Operation cannot be fulfilled on {resource.qualified} "{name}": {reason}'
        elif error.reason == "Invalid":
            details["kind"] = resource.kind
            listed = [f"{c.field}: {c.message}" for c in error.causes]
            if listed:
                message = f'{resource.kind} "{name}" is invalid: ' + (
                    listed[0] if len(listed) == 1 else "[" + ", ".join(listed) + "]")
    if error.causes and error.reason != "BadRequest":  # a decoding refusal names its fields in the message only
        details["causes"] = [{"reason": cause.error_type or cause_reason(cause.message), "message": cause.message,
                              "field": cause.field} for cause in error.causes]
    body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
                 "reason": error.reason if error.reason in HTTP_STATUS else "InternalError", "code": code}
    if details or error.reason == "NotFound":
        # kube-apiserver's NotFound always carries details, empty for a path it does not serve; kubectl debug reads
        # details.name of the 404 for pods/ephemeralcontainers and crashes on a Status without them
        body["details"] = details
    return code, body


def cause_reason(message: str) -> str:
    """The StatusCause reason of a field error worded `message` (FieldValueInvalid unless it says otherwise)."""
    return next((reason for start, reason in CAUSE_REASONS if message.startswith(start)), "FieldValueInvalid")
