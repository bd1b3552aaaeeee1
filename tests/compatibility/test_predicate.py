"""The compatibility predicate on its own (KEP-5963 "Unit tests": empty, nil, single and multiple groups;
nil-vs-nil, nil-vs-set, set-vs-set; [] treated as nil), the three states of docs/decisions.md D-5963-1, the snapshot
shape of #2 and the tracker's undo. The property tests compare the incremental rule with a whole-set
definition written here independently: a set of devices may share a counter set iff none has groups, or
all have groups and some group is common to all of them."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from draconform.kube.featuregates import FeatureGates
from draconform.reference.allocator.compatibility import (
    EMPTY,
    Mode,
    SetState,
    Tracker,
    admits,
    allocated_states,
    declared_groups,
    declares_groups,
    groups_of,
    snapshot,
)

PROPERTY = settings(max_examples=400, derandomize=True, deadline=None)
GROUP_LISTS = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=3, unique=True).map(tuple)


def compatible(members: Sequence[Sequence[str]]) -> bool:
    """Independent whole-set reading of the KEP: all group-less, or all grouped with a common group."""
    sets = [set(groups) for groups in members]
    if len(sets) <= 1:
        return True
    if all(not s for s in sets):
        return True
    if any(not s for s in sets):
        return False
    return bool(set.intersection(*sets))


# ----- nil matching ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("entry", [{}, {"compatibilityGroups": None}, {"compatibilityGroups": []}])
def test_unset_null_and_empty_all_mean_no_groups(entry: dict[str, object]) -> None:
    assert groups_of({"counterSet": "gpu-0", **entry}) == ()


@pytest.mark.parametrize(
    ("allocated", "candidate", "expected"),
    [
        ([], (), True),  # empty state admits a group-less device
        ([], ("mig",), True),  # ... and a grouped one
        ([()], (), True),  # nil vs nil
        ([()], ("mig",), False),  # nil vs set
        ([("mig",)], (), False),  # set vs nil
        ([("mig",)], ("mig",), True),  # set vs set, shared
        ([("mig",)], ("vgpu",), False),  # set vs set, disjoint
        ([("foo", "foobar")], ("bar", "foobar"), True),  # KEP example 4
        ([("foo", "foobar")], ("baz",), False),
        ([("foo", "foobar"), ("bar", "foobar")], ("foo",), False),  # narrowed to foobar
        ([("foo", "foobar"), ("bar", "foobar")], ("foobar", "x"), True),
        ([(), ("mig",)], (), False),  # mixed admits nothing
        ([(), ("mig",)], ("mig",), False),
    ],
)
def test_the_predicate_table(allocated: list[tuple[str, ...]], candidate: tuple[str, ...], expected: bool) -> None:
    assert admits(allocated, candidate) is expected


def test_state_names_follow_the_decision() -> None:
    assert EMPTY.kind == "empty"
    assert EMPTY.add(()).kind == "group-less"
    assert EMPTY.add(("a", "b")).kind == "groups"
    assert EMPTY.add(("a", "b")).groups == {"a", "b"}
    assert EMPTY.add(("a", "b")).add(("b", "c")).groups == {"b"}
    assert EMPTY.add(()).add(("a",)).kind == "mixed"


# ----- properties -----------------------------------------------------------------------------------------

@PROPERTY
@given(st.lists(GROUP_LISTS, max_size=6), GROUP_LISTS)
def test_admission_is_the_whole_set_rule_for_a_valid_state(allocated: list[tuple[str, ...]],
                                                           candidate: tuple[str, ...]) -> None:
    """From any state the whole-set rule accepts, admitting means the set stays acceptable."""
    if compatible(allocated):
        assert admits(allocated, candidate) == compatible([*allocated, candidate])
    else:  # only reachable through skew: nothing more may join
        assert not admits(allocated, candidate)


@PROPERTY
@given(st.lists(GROUP_LISTS, max_size=8))
def test_greedy_admission_keeps_every_prefix_compatible(offers: list[tuple[str, ...]]) -> None:
    state, taken = EMPTY, []
    for groups in offers:
        if state.admits(groups):
            state = state.add(groups)
            taken.append(groups)
        assert compatible(taken)


@PROPERTY
@given(st.lists(GROUP_LISTS, max_size=6))
def test_the_order_of_allocation_does_not_change_the_state(members: list[tuple[str, ...]]) -> None:
    forward, backward = EMPTY, EMPTY
    for groups in members:
        forward = forward.add(groups)
    for groups in reversed(members):
        backward = backward.add(groups)
    assert forward == backward


# ----- several counter sets, the tracker ------------------------------------------------------------------

def test_a_device_on_two_counter_sets_must_be_admitted_on_each() -> None:
    tracker = Tracker(Mode.ENFORCE, {("d", "p", "gpu"): EMPTY.add(("mig",)), ("d", "p", "nic"): EMPTY.add(())})
    assert tracker.admits("d", "p", (("gpu", ("mig",)), ("nic", ())))
    assert not tracker.admits("d", "p", (("gpu", ("mig",)), ("nic", ("x",))))
    assert not tracker.admits("d", "p", (("gpu", ("vgpu",)), ("nic", ())))


def test_counter_sets_of_other_pools_or_drivers_are_never_compared() -> None:
    tracker = Tracker(Mode.ENFORCE, {("d", "p", "gpu"): EMPTY.add(("mig",))})
    assert tracker.admits("d", "other-pool", (("gpu", ("vgpu",)),))
    assert tracker.admits("other.driver", "p", (("gpu", ("vgpu",)),))


@PROPERTY
@given(st.lists(st.tuples(st.sampled_from(["s1", "s2"]), GROUP_LISTS), min_size=1, max_size=6))
def test_undo_restores_exactly_the_state_before(additions: list[tuple[str, tuple[str, ...]]]) -> None:
    tracker = Tracker(Mode.ENFORCE, {("d", "p", "s1"): EMPTY.add(("a", "b"))})
    snapshots = []
    for counter_set, groups in additions:
        snapshots.append({key: tracker.state(key) for key in [("d", "p", "s1"), ("d", "p", "s2")]})
        tracker.add("d", "p", ((counter_set, groups),))
    for before in reversed(snapshots):
        tracker.undo()
        assert {key: tracker.state(key) for key in before} == before


def test_gate_off_blocks_only_counter_sets_with_snapshotted_groups() -> None:
    states = allocated_states(
        [{"driver": "d", "pool": "p", "device": "mig-0", "compatibilityGroups": {"gpu-0": ["mig"], "nic": []}},
         {"driver": "d", "pool": "p", "device": "plain"}],
        lambda key: ["gpu-1"] if key[2] == "plain" else None,
    )
    tracker = Tracker(Mode.SKIP, states)
    assert not tracker.admits("d", "p", (("gpu-0", ()),))
    assert tracker.admits("d", "p", (("nic", ()),))
    assert tracker.admits("d", "p", (("gpu-1", ()),))
    tracker.add("d", "p", (("gpu-1", ()),))
    tracker.undo()


@pytest.mark.parametrize(("gates", "mode"), [({}, Mode.SKIP), ({"DRADeviceCompatibilityGroups": True}, Mode.ENFORCE)])
def test_the_mode_follows_the_gate(gates: dict[str, bool], mode: Mode) -> None:
    """An older release has no mode of its own: it reads the API without the field (tests/scheduler/
    test_release_view.py)."""
    assert Mode.of(FeatureGates(gates)) is mode


# ----- snapshots, not slices ------------------------------------------------------------------------------

def test_the_snapshot_lists_every_consumed_counter_set_when_any_declares_a_group() -> None:
    declared = declared_groups([{"counterSet": "gpu", "compatibilityGroups": ["mig", "mig"]},
                                {"counterSet": "nic", "compatibilityGroups": None}])
    assert declares_groups(declared)
    assert snapshot(declared) == {"gpu": ["mig"], "nic": []}


def test_no_snapshot_without_groups() -> None:
    assert snapshot(declared_groups([{"counterSet": "gpu"}, {"counterSet": "nic", "compatibilityGroups": []}])) is None


def test_state_is_read_from_snapshots_and_falls_back_to_the_published_slice() -> None:
    published = {("d", "p", "now-grouped"): ["gpu"], ("d", "p", "plain"): ["gpu-2"]}
    states = allocated_states(
        [
            # the slice now says something else: the snapshot wins
            {"driver": "d", "pool": "p", "device": "now-grouped", "compatibilityGroups": {"gpu": ["mig"]}},
            # no snapshot: group-less wherever the published entry consumes
            {"driver": "d", "pool": "p", "device": "plain"},
            # no snapshot and no longer published: constrains nothing
            {"driver": "d", "pool": "p", "device": "gone"},
        ],
        lambda key: published.get(key),
    )
    assert states == {("d", "p", "gpu"): SetState(grouped=1, groups=frozenset({"mig"})),
                      ("d", "p", "gpu-2"): SetState(groupless=1)}
