"""The pure consumable-capacity rules (reference/allocator/capacity.py) both cores call: rounding up, never
down; defaults; refusals; name resolution; fitting beside other shares."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from draconform.kube.values import parse_quantity
from draconform.reference.allocator.capacity import (
    Capacity,
    RequestPolicy,
    add_usage,
    consumed_amount,
    fits,
    format_amount,
    parse_capacity,
    share_consumption,
    violates_policy,
)

GI = 2**30
MI = 2**20


def q(text: str) -> Fraction:
    return parse_quantity(text)


RANGE = Capacity(q("40Gi"), RequestPolicy(default=q("1Gi"), minimum=q("1Gi"), maximum=q("8Gi"), step=q("1Gi")))
VALUES = Capacity(q("100"), RequestPolicy(default=q("10"), valid_values=(q("10"), q("25"), q("50"))))


@pytest.mark.parametrize(("requested", "expected"), [
    ("1500Mi", "2Gi"),  # up to the next step, never down to 1Gi
    ("2Gi", "2Gi"),  # on the grid: unchanged
    ("100Mi", "1Gi"),  # below min: min
    ("7.5Gi", "8Gi"),
    ("8193Mi", "9Gi"),  # rounds past max: refused later, not clamped
])
def test_valid_range_rounds_up_to_the_step(requested: str, expected: str) -> None:
    assert consumed_amount(q(requested), RANGE) == q(expected)


def test_a_range_without_step_takes_the_request_from_min_on() -> None:
    capacity = Capacity(q("10"), RequestPolicy(default=q("2"), minimum=q("2")))
    assert consumed_amount(q("3.5"), capacity) == q("3.5")
    assert consumed_amount(q("1"), capacity) == q("2")


@pytest.mark.parametrize(("requested", "expected"), [("5", "10"), ("10", "10"), ("11", "25"), ("50", "50"),
                                                     ("51", "51")])
def test_valid_values_round_up_to_the_next_valid_value(requested: str, expected: str) -> None:
    assert consumed_amount(q(requested), VALUES) == q(expected)


def test_no_amount_consumes_the_default_or_everything() -> None:
    assert consumed_amount(None, RANGE) == q("1Gi")
    assert consumed_amount(None, Capacity(q("10G"))) == q("10G")
    assert consumed_amount(q("3G"), Capacity(q("10G"))) == q("3G")  # no policy: as asked


def test_policy_refusals() -> None:
    assert violates_policy(q("9Gi"), RANGE.policy)  # above max
    assert not violates_policy(q("8Gi"), RANGE.policy)
    assert violates_policy(q("51"), VALUES.policy)
    assert not violates_policy(q("25"), VALUES.policy)
    off_grid = RequestPolicy(default=q("2"), minimum=q("2"), step=q("2"))
    assert violates_policy(q("3"), off_grid)
    assert not violates_policy(q("4"), off_grid)


def test_share_consumption_rounds_each_capacity_and_fills_the_rest() -> None:
    capacity = {"memory": RANGE, "example.com/cores": VALUES, "bandwidth": Capacity(q("10G"))}
    got = share_consumption({"gpu.example.com/memory": q("1500Mi"), "example.com/cores": q("11")},
                            "gpu.example.com", capacity)
    assert got == {"memory": q("2Gi"), "example.com/cores": q("25"), "bandwidth": q("10G")}


def test_a_request_naming_a_missing_capacity_skips_the_device() -> None:
    assert share_consumption({"cores": q("1")}, "gpu.example.com", {"memory": RANGE}) is None


def test_a_request_naming_one_capacity_twice_is_refused() -> None:
    assert share_consumption({"memory": q("1Gi"), "gpu.example.com/memory": q("2Gi")}, "gpu.example.com",
                             {"memory": RANGE}) is None


def test_a_request_beyond_every_valid_value_is_refused() -> None:
    assert share_consumption({"cores": q("60")}, "d", {"cores": VALUES}) is None
    assert share_consumption({"memory": q("9Gi")}, "d", {"memory": RANGE}) is None


def test_fits_counts_other_shares_and_add_usage_undoes_exactly() -> None:
    capacity = {"bandwidth": Capacity(q("10G"))}
    used: dict[str, Fraction] = {}
    add_usage(used, {"bandwidth": "6G"}, "nic.example.com")
    assert fits({"bandwidth": q("4G")}, used, "nic.example.com", capacity)
    assert not fits({"bandwidth": q("5G")}, used, "nic.example.com", capacity)
    add_usage(used, {"nic.example.com/bandwidth": q("6G")}, "nic.example.com", -1)
    assert used == {}  # released once, nothing left: a second release would go negative
    assert fits({"bandwidth": q("10G")}, used, "nic.example.com", capacity)


def test_parse_capacity_reads_the_policy_and_the_unit_style() -> None:
    parsed = parse_capacity({"value": "40Gi", "requestPolicy": {
        "default": "1Gi", "validRange": {"min": "1Gi", "max": "8Gi", "step": "1Gi"}}})
    assert parsed == Capacity(q("40Gi"), RequestPolicy(q("1Gi"), (), q("1Gi"), q("8Gi"), q("1Gi")), True)
    assert parse_capacity({"value": "10G"}).policy is None


@pytest.mark.parametrize(("amount", "binary", "text"), [
    (2 * GI, True, "2Gi"), (1500 * MI, True, "1500Mi"), (10**10, False, "10G"), (1500, False, "1500"),
    (Fraction(1, 2), False, "500m"), (0, False, "0"),
])
def test_format_amount(amount: Fraction | int, binary: bool, text: str) -> None:
    assert format_amount(Fraction(amount), binary) == text
    assert parse_quantity(text) == amount


@given(st.integers(0, 10**6), st.integers(0, 1000), st.integers(1, 1000))
def test_range_rounding_is_the_least_grid_value_not_below_the_request(requested: int, low: int, step: int) -> None:
    capacity = Capacity(Fraction(10**9), RequestPolicy(default=Fraction(low), minimum=Fraction(low),
                                                        step=Fraction(step)))
    amount = consumed_amount(Fraction(requested), capacity)
    assert amount >= requested and amount >= low
    assert (amount - low) % step == 0
    assert amount - step < max(requested, low) or amount == low
    assert not violates_policy(amount, capacity.policy)
