"""core/v1 NodeSelector matching: terms are ORed, the requirements of a term ANDed; matchExpressions
look at node labels, matchFields at `metadata.name` (the only field Kubernetes supports there)."""

from __future__ import annotations

from typing import Any

from draconform.sut import Obj


def _requirement_matches(requirement: dict[str, Any], value: str | None) -> bool:
    operator = requirement.get("operator")
    values = requirement.get("values") or []
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in ("Gt", "Lt"):
        try:
            number, bound = int(value or ""), int(values[0])
        except (ValueError, IndexError):
            return False
        return number > bound if operator == "Gt" else number < bound
    return False


def term_matches(term: dict[str, Any], node: Obj) -> bool:
    labels = node.get("metadata", {}).get("labels") or {}
    fields = {"metadata.name": node["metadata"]["name"]}
    expressions = term.get("matchExpressions") or []
    field_requirements = term.get("matchFields") or []
    if not expressions and not field_requirements:
        return False  # an empty term matches nothing
    return all(_requirement_matches(req, labels.get(req["key"])) for req in expressions) and all(
        _requirement_matches(req, fields.get(req["key"])) for req in field_requirements
    )


def selector_matches(selector: dict[str, Any] | None, node: Obj) -> bool:
    """A missing selector matches every node."""
    if selector is None:
        return True
    return any(term_matches(term, node) for term in selector.get("nodeSelectorTerms") or [])


def pinned_to(node_name: str) -> dict[str, Any]:
    """The selector an allocation gets when its devices are usable only on one node."""
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
        ]
    }
