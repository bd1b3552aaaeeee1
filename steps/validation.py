"""Steps for API validation scenarios: write an object as a user would (create, update its spec or
status), possibly grown to a limit, and observe whether the API server accepted it and, if not, which
field and rule it cited. Everything goes through the `sut` seam, so the same scenarios check a real
kube-apiserver (whose causes carry no rule IDs: there only the field is compared)."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from pytest_bdd import given, parsers, then, when

from draconform.kube.kinds import CLASSIC_KINDS, NAMESPACED
from draconform.kube.kinds import KINDS as API_KINDS
from draconform.steps.cluster import must_get, rewrite
from draconform.steps.manifests import (
    NAMESPACE,
    grow_to,
    load_docstring,
    manifest,
    manifest_variant,
    pad_to,
    parse_path,
    set_fields,
)
from draconform.steps.scenario import ScenarioContext, observes
from draconform.steps.words import split_names
from draconform.sut import ApiError, Obj, SystemUnderTest

# Every kind of either API a user writes (Nodes are given by the cluster, not created by the scenarios).
KINDS = "(?P<kind>" + "|".join(sorted((set(API_KINDS) | set(CLASSIC_KINDS)) - {"Node"}, key=len, reverse=True)) + ")"
# An optional way to grow the docstring's object to a limit: repeat the last item of a list (or entry
# of a map) until it has N entries, or pad a string to N characters.
GROWTH = (r'(?: with "(?P<path>[^"]+)" (?:repeated (?P<times>\d+) times'
          r'|padded with "(?P<pad>[^"]*)" to (?P<length>\d+) characters))?')


@dataclass
class Outcome:
    """The answer to the last write: the stored object, or the API error."""

    obj: Obj | None = None
    error: ApiError | None = None


@pytest.fixture
def outcome() -> Outcome:
    return Outcome()


def _locate(obj: Any, path: list[str | int]) -> Any:
    for part in path:
        obj = obj[part]
    return obj


def grow(obj: Obj, path: str | None, times: str | None, pad: str | None, length: str | None) -> Obj:
    """Apply the GROWTH clause of a step to `obj`."""
    if path is None:
        return obj
    parts = parse_path(path)
    parent = _locate(obj, parts[:-1])
    if length is not None:
        parent[parts[-1]] = pad_to(parent[parts[-1]], pad or "", int(length))
    else:
        grow_to(parent[parts[-1]], int(times or 0))
    return obj


def _attempt(outcome: Outcome, write: Any) -> None:
    outcome.obj, outcome.error = None, None
    try:
        outcome.obj = write()
    except ApiError as error:
        outcome.error = error


def _namespace(kind: str) -> str | None:
    return NAMESPACE if kind in NAMESPACED else None


@when(parsers.re(r"the user creates the " + KINDS + GROWTH + ":"))
def user_creates(sut: SystemUnderTest, outcome: Outcome, kind: str, docstring: str, path: str | None,
                 times: str | None, pad: str | None, length: str | None) -> None:
    (obj,) = load_docstring(docstring, kind)
    metadata = obj.setdefault("metadata", {})
    metadata.setdefault("name", kind.lower())
    if kind in NAMESPACED:
        metadata.setdefault("namespace", NAMESPACE)
    _attempt(outcome, lambda: sut.create(grow(obj, path, times, pad, length)))


@when(parsers.re(r'the user creates the objects of manifests? "(?P<names>[^"]+)"'))
def user_creates_manifests(sut: SystemUnderTest, ctx: ScenarioContext, outcome: Outcome, names: str) -> None:
    """Create a named manifest's objects (features/<folder>/manifests/), the first refusal ending the attempt."""
    objects = [obj for name in split_names(names) for obj in manifest(ctx, name)]
    for obj in objects:
        if obj.get("kind") in NAMESPACED:
            obj.setdefault("metadata", {}).setdefault("namespace", NAMESPACE)

    def create_all() -> Obj:
        return [sut.create(obj) for obj in objects][-1]

    _attempt(outcome, create_all)


@when(parsers.re(r'the user creates the ' + KINDS + r' "(?P<name>[^"]+)" from the manifests(?P<changes> with:)?'))
def user_creates_from_manifests(sut: SystemUnderTest, ctx: ScenarioContext, outcome: Outcome, kind: str, name: str,
                                changes: str | None, datatable: list[list[str]] | None = None) -> None:
    """Create a named object of the feature folder's manifests, changed first by the step's table of field
    paths and values: the variant the scenario is about (see `set_fields`)."""
    obj = manifest_variant(ctx, kind, name, changes, datatable)
    _attempt(outcome, lambda: sut.create(obj))


@when(parsers.re(r'the user updates the ' + KINDS + r' "(?P<name>[^"]+)" with:'))
def user_changes(sut: SystemUnderTest, outcome: Outcome, kind: str, name: str, datatable: list[list[str]]) -> None:
    """Change fields of the stored object as the table says (see `set_fields`) and write it back: through the
    status subresource when every path lies in `status`, as an update of the object when none does."""
    paths = {row[0].strip().split(".")[0].split("[")[0] for row in datatable[1:]}
    if "status" in paths and paths != {"status"}:
        raise ValueError(f"{kind} {name!r}: one write changes either the status or the rest, not both: {paths}")
    where = f"the stored {kind} {name!r}"
    _attempt(outcome, lambda: rewrite(sut, kind, name, lambda obj: set_fields(obj, datatable, where),
                                      status=paths == {"status"}))


@when(parsers.re(r'the user updates the (?P<part>spec|status) of ' + KINDS + r' "(?P<name>[^"]+)"' + GROWTH + ":"))
def user_updates(sut: SystemUnderTest, outcome: Outcome, part: str, kind: str, name: str, docstring: str,
                 path: str | None, times: str | None, pad: str | None, length: str | None) -> None:
    """Replace the object's spec (an update) or status (through the status subresource)."""
    (new_part,) = load_docstring(docstring) if docstring.strip() else ({},)

    def change(obj: Obj) -> None:
        obj[part] = copy.deepcopy(new_part)
        grow(obj, path, times, pad, length)

    _attempt(outcome, lambda: rewrite(sut, kind, name, change, status=part == "status"))


@given(parsers.re(r'the (?P<kind>ResourceClaim) "(?P<name>[^"]+)" has the status:'))
def claim_has_status(sut: SystemUnderTest, kind: str, name: str, docstring: str) -> None:
    """Status written as the scheduler or a driver would; the write must succeed."""
    (status,) = load_docstring(docstring)
    rewrite(sut, kind, name, lambda obj: obj.__setitem__("status", status), status=True)


@then("the request is accepted")
def request_accepted(outcome: Outcome) -> None:
    assert outcome.error is None, f"the API server refused the request: {outcome.error}"


# An optional `as ...` after the rule: the kind of field error (the Status cause's reason) the refusal must be.
ERROR_TYPES = {
    "a duplicate": "FieldValueDuplicate", "invalid": "FieldValueInvalid", "required": "FieldValueRequired",
    "too many": "FieldValueTooMany", "too long": "FieldValueTooLong", "forbidden": "FieldValueForbidden",
    "not supported": "FieldValueNotSupported", "not found": "FieldValueNotFound",
}
# A map key's own checks (kube-apiserver's validateMap and ValidateLabels report them at the map)
KEY_ERRORS = frozenset({"FieldValueInvalid", "FieldValueTooLong", "FieldValueRequired"})


@dataclass(frozen=True)
class Place:
    """A field path where a refusal may name the violation the scenario names, with the error types accepted
    there (None: any) and why kube-apiserver reports it there."""

    field: str
    types: frozenset[str] | None = None
    why: str = ""


def reported_at(field: str, wanted: str | None = None) -> list[Place]:
    """Where kube-apiserver may report a violation at `field`: the field itself; for a field of a list item, the
    item, as a duplicate (validateSet names the repeated item, `spec.devices[1]`, not its `name`); for a map
    entry, the map, as a bad key (validateMap and ValidateLabels check keys at the map: `...attributes`,
    `...counters`, `metadata.labels`). Only the enclosing item or map, and only with that kind of error: a cause
    elsewhere, or of another kind, is not this violation. `wanted` narrows every place to that error type."""
    places = [Place(field)]
    item = re.fullmatch(r"(?P<item>.+\[\d+\])\.[A-Za-z]\w*", field)
    if item:
        places.append(Place(item["item"], frozenset({"FieldValueDuplicate"}),
                            "its list item, where kube-apiserver reports a duplicate entry"))
    entry = re.fullmatch(r"(?P<map>.+)\[(?!\d+\])[^\]]+\]", field)
    if entry:
        places.append(Place(entry["map"], KEY_ERRORS, "its map, where kube-apiserver checks the keys"))
    if wanted is None:
        return places
    only = frozenset({wanted})
    return [Place(p.field, only & p.types if p.types is not None else only, p.why) for p in places
            if p.types is None or wanted in p.types]


def _describe(places: list[Place]) -> str:
    def one(place: Place) -> str:
        kinds = f" ({' or '.join(sorted(place.types))})" if place.types is not None else ""
        return f"{place.field!r}{kinds}" + (f", {place.why}" if place.why else "")
    return "a cause at " + "; or at ".join(one(place) for place in places)


@then(parsers.re(r'the request is rejected at "(?P<field>[^"]*)" by rule "(?P<rule>[^"]+)"'
                 r'(?: as (?P<kind>' + "|".join(ERROR_TYPES) + r'))?'))
def request_rejected(outcome: Outcome, field: str, rule: str, kind: str | None = None) -> None:
    """Refused for the violation at `field`: by validation (Invalid, a 422) with a cause where kube-apiserver
    reports it (`reported_at`), or already by decoding the body (BadRequest, a 400): an unknown field or a value
    of the wrong JSON type at `field` (a live client reads these from the message; Go's unmarshal error names the
    path without list indices), or a value the decoder refuses without naming any field (a malformed quantity:
    "cannot be handled as a ResourceSlice: quantities must match ..."). A cause citing another rule (only the
    reference names rules) does not count."""
    error = outcome.error
    assert error is not None, "the API server accepted the request"
    assert error.reason in ("Invalid", "BadRequest"), f"expected an Invalid or BadRequest error, got {error}"
    places = reported_at(field, ERROR_TYPES[kind] if kind else None)
    ours = [cause for cause in error.causes if cause.rule in (None, rule)]
    if error.reason == "BadRequest":
        unindexed = re.sub(r"\[\d+\]", "", field)
        if any(cause.field in (field, unindexed) for cause in ours):
            return  # the decoder's causes carry no error type
        if not error.causes and "cannot be handled as" in error.message:
            return  # refused while decoding, at a value the decoder names no field for
    elif any(cause.field == place.field and (place.types is None or cause.error_type in place.types)
             for cause in ours for place in places):
        return
    listed = "; ".join(f"{c.field}: {c.message} ({c.error_type or 'no type'}, {c.rule or 'no rule'})"
                       for c in error.causes) or error.message
    raise AssertionError(f"expected {_describe(places)}, citing {rule}; the causes were: {listed}")


@then(parsers.re(r'the stored ' + KINDS + r' "(?P<name>[^"]+)"'
                 r' (?P<verb>has|has no) field "(?P<path>[^"]+)"(?: set to (?P<value>.+))?'))
@observes("object")
def stored_field(sut: SystemUnderTest, kind: str, name: str, verb: str, path: str, value: str | None) -> None:
    """With `set to VALUE` (YAML), the field is present with that value, as a client reading it back sees it."""
    obj = must_get(sut, kind, name)
    try:
        found = _locate(obj, parse_path(path))
        present = True
    except (KeyError, IndexError, TypeError):
        present = False
    assert present == (verb == "has"), f"{kind} {name!r} {'lacks' if verb == 'has' else 'still has'} {path}"
    if value is not None:
        assert found == yaml.safe_load(value), f"{kind} {name!r} has {path} = {found!r}, expected {value}"
