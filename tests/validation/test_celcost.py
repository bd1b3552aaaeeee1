"""The static cost estimate of CEL selectors: simple lookups are cheap, each nested loop over a device's
attributes multiplies the cost by the 32 entries a map may hold, and `validate` refuses what exceeds the
1,000,000 limit with the estimate in the message while the allocator's runtime budget stays the second line."""

from __future__ import annotations

import itertools

import pytest

from draconform.validation import validate_gates, validate_manifest
from draconform.validation.celcost import MAX_COST, CostError, estimate_cost


def nested(depth: int) -> str:
    expression = "a0 != \"x\""
    for level in range(depth):
        expression = f"device.attributes.all(a{level}, {expression})" if level else \
            f"device.attributes.all(a0, {expression})"
    return expression


def test_simple_selectors_cost_little() -> None:
    assert estimate_cost('device.driver == "gpu.example.com"') < 20
    assert estimate_cost('device.attributes["gpu.example.com"].model == "a100" && '
                         'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0') < 50
    assert estimate_cost('cel.bind(g, device.attributes["gpu.example.com"], g.model.startsWith("a") || '
                         'g.count > 2)') < 50


def test_each_nested_loop_over_attributes_multiplies_the_cost_by_32() -> None:
    costs = [estimate_cost(nested(depth)) for depth in (1, 2, 3, 4)]
    assert costs == sorted(costs)
    for smaller, larger in itertools.pairwise(costs):
        assert 30 * smaller < larger < 40 * smaller
    assert costs[2] < MAX_COST < costs[3]


def test_string_work_inside_loops_costs_per_character() -> None:
    plain = estimate_cost("device.attributes.all(d, device.attributes[d].all(n, true))")
    with_strings = estimate_cost('device.attributes.all(d, device.attributes[d].all(n, (d + n).contains("x")))')
    assert with_strings > plain


def test_unparsable_input_is_left_to_the_compiler() -> None:
    with pytest.raises(CostError):
        estimate_cost("device.driver ==")


@pytest.mark.parametrize(("depth", "refused"), [(3, False), (4, True)])
def test_validation_refuses_too_complex_selectors_with_the_estimate(depth: int, refused: bool) -> None:
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
             "spec": {"selectors": [{"cel": {"expression": nested(depth)}}]}}
    problems = [p for p in validate_manifest(claim, validate_gates(None, "1.37"))[1] if p.rule == "DRA-API/CEL-COST"]
    assert bool(problems) is refused
    if refused:
        assert problems[0].field == "spec.selectors[0].cel.expression"
        assert f"estimated worst-case cost {estimate_cost(nested(depth)):,} exceeds the limit of 1,000,000" in \
            problems[0].message


def test_the_committed_checked_module_matches_its_proto() -> None:
    """Fails when checked.proto changed without `python -m draconform.kube.cel.generate`."""
    from draconform.kube.cel import checked_pb2
    from draconform.kube.cel.generate import compile_descriptors
    from tests.descriptors import committed_descriptor, without_json_names

    (compiled,) = compile_descriptors().file
    assert without_json_names(committed_descriptor(checked_pb2)) == without_json_names(compiled)


def test_an_unreadable_checked_expression_is_a_cost_error() -> None:
    from draconform.validation.celcost import checked_cost

    with pytest.raises(CostError, match="unreadable checked expression"):
        checked_cost(b"\x12\x05\x22\xff\xff\xff\xff")
