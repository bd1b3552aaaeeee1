"""The JSON Schemas under `schemas/` (draft 2020-12): found by the group/version/kind they declare,
cross-file `$ref`s resolved through one `referencing` registry, one compiled validator per kind.

Each kind is compiled twice, once: jsonschema-rs (Rust) answers "valid?" for the common, valid case
about a hundred times faster than python-jsonschema, which runs only on objects that fail, to list
every error with the schema path the rule lookup needs.

A schema error becomes a `Problem` whose rule comes from the nearest `x-rule` on the way from the
schema root to the failing keyword (see schemas/resource.k8s.io/v1/definitions.schema.json), and whose
message reads like kube-apiserver's field errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from draconform.paths import SCHEMAS_DIR
from draconform.validation.problems import MapKey, Path, Problem

DEFAULT_RULE = "DRA-API/OBJECT-SCHEMA"
_SKIP_DIRS = {"harness"}  # the harness's own file formats, not Kubernetes objects


if TYPE_CHECKING:
    import jsonschema


@dataclass(frozen=True)
class KindSchema:
    api_version: str
    kind: str
    schema: dict[str, Any]
    fast: Any  # jsonschema_rs validator
    _slow: list[Any] = field(default_factory=list, repr=False, compare=False)

    @property
    def validator(self) -> jsonschema.Draft202012Validator:
        """python-jsonschema's validator of the same schema, built (and jsonschema imported) only when an object
        fails: a run over valid files never pays for it."""
        if not self._slow:
            import jsonschema

            self._slow.append(jsonschema.Draft202012Validator(self.schema, registry=_python_registry()))
        validator: jsonschema.Draft202012Validator = self._slow[0]
        return validator


@cache
def _registry_and_kinds() -> tuple[list[tuple[str, dict[str, Any]]], dict[tuple[str, str], dict[str, Any]], Any]:
    raw: list[tuple[str, dict[str, Any]]] = []
    kinds: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(SCHEMAS_DIR.rglob("*.schema.json")):
        if _SKIP_DIRS & set(path.relative_to(SCHEMAS_DIR).parts):
            continue
        contents = json.loads(path.read_text(encoding="utf-8"))
        raw.append((contents["$id"], contents))
        gvk = contents.get("x-kubernetes-group-version-kind")
        if gvk:
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            kinds[(api_version, gvk["kind"])] = contents
    return raw, kinds, jsonschema_rs.Registry(raw)


@cache
def _python_registry() -> Any:
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    raw = _registry_and_kinds()[0]
    return Registry().with_resources((uri, DRAFT202012.create_resource(c)) for uri, c in raw).crawl()


def supported_kinds() -> list[tuple[str, str]]:
    """(apiVersion, kind) pairs draconform has schemas for."""
    return sorted(_registry_and_kinds()[1])


@cache
def kind_schema(api_version: str, kind: str) -> KindSchema | None:
    """The compiled validator of a kind, built once per process."""
    _, kinds, fast_registry = _registry_and_kinds()
    schema = kinds.get((api_version, kind))
    if schema is None:
        return None
    return KindSchema(api_version, kind, schema, jsonschema_rs.validator_for(schema, registry=fast_registry))


@cache
def harness_schema(name: str) -> KindSchema:
    """The compiled validator of one of the harness's own file formats, `schemas/harness/<name>.schema.json`
    (options, cluster and timeout configs, a driver's declaration, a submitted report), built once per process."""
    schema = json.loads((SCHEMAS_DIR / "harness" / f"{name}.schema.json").read_text(encoding="utf-8"))
    return KindSchema("", name, schema, jsonschema_rs.validator_for(schema))


def schema_problems(kind_schema: KindSchema, obj: Any) -> list[Problem]:
    if kind_schema.fast.is_valid(obj):
        return []
    return [problem for error in _leaf_errors(kind_schema.validator.iter_errors(obj))
            for problem in _problems(kind_schema, error)]


def _leaf_errors(errors: Iterator[jsonschema.ValidationError]) -> Iterator[jsonschema.ValidationError]:
    """Report the causes inside `allOf`/`anyOf` wrappers rather than the wrapper itself."""
    for error in errors:
        if error.validator in ("allOf",) and error.context:
            yield from _leaf_errors(iter(error.context))
        elif error.validator == "anyOf" and error.context:
            # an optional-or-null field: the branch that is not `null` says what is wrong
            best = [e for e in error.context if e.validator != "type" or e.validator_value != "null"]
            yield from _leaf_errors(iter(best[:1] or error.context[:1]))
        else:
            yield error


def _problems(kind_schema: KindSchema, error: jsonschema.ValidationError) -> list[Problem]:
    """The problems of one schema error: one each, but every unknown field of an object (strict decoding lists
    them all, where jsonschema raises one error per object)."""
    if error.validator == "additionalProperties" and error.validator_value is False:
        rule, _, path, _ = _walk(kind_schema, error)
        known = (error.schema.get("properties") or {}) if isinstance(error.schema, dict) else {}
        return [Problem((*path, key), "unknown field", rule) for key in error.instance if key not in known]
    return [_problem(kind_schema, error)]


def _problem(kind_schema: KindSchema, error: jsonschema.ValidationError) -> Problem:
    rule, message_hint, path, key_at_entry = _walk(kind_schema, error)
    keyword = error.validator
    value = error.instance
    if keyword == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else "?"
        return Problem((*path, missing), "Required value", rule)
    if keyword == "uniqueItems":  # upstream reports the repeated item, not the list
        for index, item in enumerate(value):
            if item in value[:index]:
                return Problem((*path, index), f"Duplicate value: {json.dumps(item)}", rule)
    if "propertyNames" in error.absolute_schema_path:
        # kube-apiserver's validateMap checks a key at the map itself (`...attributes`); a map marked
        # `x-key-errors: entry` is checked entry by entry, at `...[key]`
        where = (*path, MapKey(value)) if key_at_entry else path
        return Problem(where, _message(keyword, error.validator_value, value, message_hint or "invalid name"), rule)
    decoding = error.schema.get("x-decoding") if isinstance(error.schema, dict) else None
    return Problem(path, _message(keyword, error.validator_value, value, message_hint), rule, decoding=decoding)



def _message(keyword: str, limit: Any, value: Any, hint: str | None) -> str:
    # One case per JSON Schema keyword, each worded as the API server words it: a table of cases, kept in one
    # function so the wordings can be read side by side.
    if keyword == "maxItems":
        return f"Too many: {len(value)}: must have at most {limit} items"
    if keyword == "minItems":
        return hint or f"Required value: must have at least {limit} item{'s' if limit != 1 else ''}"
    if keyword == "maxProperties":
        return hint or f"Too many: {len(value)}: must have at most {limit} entries"
    if keyword == "minProperties":
        return hint or f"Required value: must have at least {limit} entries"
    if keyword == "maxLength":
        return f"Too long: may not be more than {limit} characters"
    if keyword == "minLength":
        return "Required value"
    if keyword == "pattern":  # a pattern standing for a length limit says so (`x-message: "Too long: ..."`)
        if hint and hint.startswith("Too long"):
            return hint
        return f"Invalid value: {value!r}: {hint or 'has an invalid format'}"
    if keyword == "enum":
        return f"Unsupported value: {value!r}: supported values: {', '.join(repr(v) for v in limit)}"
    if keyword == "const":
        return f"Invalid value: {json.dumps(value)}: {hint or f'must be {json.dumps(limit)}'}"
    if keyword == "uniqueItems":
        seen: list[Any] = []
        for item in value:
            if item in seen:
                return f"Duplicate value: {json.dumps(item)}"
            seen.append(item)
        return "Duplicate value"
    if keyword == "type":
        wanted = " or ".join(limit) if isinstance(limit, list) else limit
        if hint and wanted == "object":
            return hint
        return f"Invalid value: {json.dumps(value)[:80]}: must be of type {wanted}"
    if keyword in ("minimum", "exclusiveMinimum"):
        return f"Invalid value: {value}: must be greater than {'or equal to ' if keyword == 'minimum' else ''}{limit}"
    if keyword in ("maximum", "exclusiveMaximum"):
        return f"Invalid value: {value}: must be less than {'or equal to ' if keyword == 'maximum' else ''}{limit}"
    return f"Invalid value: {keyword} {limit!r}"


def _walk(kind_schema: KindSchema, error: jsonschema.ValidationError) -> tuple[str, str | None, Path, bool]:
    """Follow the error's schema path from the root, through `$ref`s, collecting the nearest `x-rule`
    (inherited downwards) and `x-message` (of the failing subschema or the `$ref` that led to it), and
    mark which instance path elements are map keys so they render as `[key]`. A map marked `x-value-errors: map`
    has its values' errors reported at the map (ValidateLabels: `metadata.labels`); the last part of the answer
    says whether the map of a failing key is marked `x-key-errors: entry` (checked at `[key]`)."""
    resolver = kind_schema.validator._resolver
    schema: Any = kind_schema.schema
    rule, hint = DEFAULT_RULE, None
    instance_path = list(error.absolute_path)
    path: list[str | int] = []
    position = 0
    steps = list(error.absolute_schema_path)
    property_next = False
    cut: int | None = None  # where a map reporting its values' errors at itself ends the path
    key_at_entry = False
    for step in steps[:-1]:
        if isinstance(schema, dict):
            rule, hint = _annotations(schema, rule, hint, None)
        if step == "$ref" and isinstance(schema, dict):
            continue  # some jsonschema versions name the `$ref` step, others go straight through it
        schema, resolver, rule, hint = _through_refs(schema, resolver, rule, hint, step)
        hint = None
        if isinstance(schema, dict) and cut is None and (
                step == "additionalProperties" and schema.get("x-value-errors") == "map"):
            cut = len(path)
        key_at_entry = key_at_entry or (step == "propertyNames" and isinstance(schema, dict)
                                        and schema.get("x-key-errors") == "entry")
        if _names_instance_element(step, schema, property_next) and position < len(instance_path):
            element = instance_path[position]
            path.append(MapKey(element) if step == "additionalProperties" else element)
            position += 1
        property_next = step in ("properties", "patternProperties") and not property_next
        schema = schema[step]
    last = steps[-1] if steps else None
    if isinstance(schema, dict):
        rule, hint = _annotations(schema, rule, hint, None)
    schema, resolver, rule, hint = _through_refs(schema, resolver, rule, hint, last)
    if isinstance(schema, dict):
        rule, hint = _annotations(schema, rule, hint, last)
    path.extend(instance_path[position:])
    return rule, hint, tuple(path[:cut] if cut is not None else path), key_at_entry


def _through_refs(schema: Any, resolver: Any, rule: str, hint: str | None,
                  step: Any) -> tuple[Any, Any, str, str | None]:
    """Follow `$ref`s from `schema` until one holds `step`, collecting the annotations of each schema reached."""
    while isinstance(schema, dict) and "$ref" in schema and step not in schema:
        resolved = resolver.lookup(schema["$ref"])
        schema, resolver = resolved.contents, resolved.resolver
        rule, hint = _annotations(schema, rule, hint, None)
    return schema, resolver, rule, hint


def _names_instance_element(step: Any, schema: Any, property_next: bool) -> bool:
    """Whether schema step `step` goes one element down the instance (a property's name, a list's item, a map's
    key), so the instance path advances with it."""
    return property_next or step == "items" or (
        step == "additionalProperties" and isinstance(schema, dict) and isinstance(schema.get(step), dict))


def _annotations(schema: dict[str, Any], rule: str, hint: str | None, keyword: Any) -> tuple[str, str | None]:
    tagged = schema.get("x-rule")
    if isinstance(tagged, str):
        rule = tagged
    elif isinstance(tagged, dict) and keyword in tagged:
        rule = tagged[keyword]
    return rule, schema.get("x-message", hint)
