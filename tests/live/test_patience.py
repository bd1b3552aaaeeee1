"""The one wait of the Then steps (`observes`): it looks once when the SUT has no patience, and otherwise
looks again until the step's assertions hold or the timeout passes, raising the last failure. The wait's clock
is a fake one here that sleeping moves on, so no verdict depends on how fast a loaded machine looks."""

from __future__ import annotations

from typing import Any

import pytest

from draconform.steps import scenario
from draconform.steps.scenario import observes
from draconform.sut import Patience
from tests.live.helpers import FakeTime


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(scenario, "time", fake)
    return fake


class FakeSystem:
    """Only what `observes` reads: the patience, and a value that becomes right after some looks."""

    def __init__(self, patience: Patience, right_after: int) -> None:
        self._patience = patience
        self.right_after = right_after
        self.looks = 0

    def patience(self, observation: str) -> Patience:
        return self._patience

    def value(self) -> int:
        self.looks += 1
        return 1 if self.looks > self.right_after else 0


@observes("claim")
def value_is_one(sut: Any) -> None:
    got = sut.value()
    assert got == 1, f"the value is {got}"


def test_without_patience_the_step_looks_once() -> None:
    sut = FakeSystem(Patience(), right_after=1)
    with pytest.raises(AssertionError, match="the value is 0") as failure:
        value_is_one(sut=sut)
    assert sut.looks == 1
    assert "still so" not in str(failure.value)


def test_with_patience_the_step_looks_until_it_holds() -> None:
    sut = FakeSystem(Patience(timeout=5, interval=0.001), right_after=3)
    value_is_one(sut=sut)
    assert sut.looks == 4


def test_a_state_that_never_comes_fails_with_the_last_state_seen_once_the_timeout_passes(clock: FakeTime) -> None:
    sut = FakeSystem(Patience(timeout=1, interval=0.25), right_after=10**9)
    started = clock.monotonic()
    with pytest.raises(AssertionError, match=r"the value is 0(.|\n)*\(still so after 1s\)"):
        value_is_one(sut=sut)
    assert sut.looks == 5  # at 0, 0.25, ... 1: a sixth look would come after the timeout
    assert clock.monotonic() - started == 1  # bounded: the timeout, not a hang


def test_an_unknown_observation_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown observation 'claims'"):
        observes("claims")


def test_a_patient_step_may_be_called_positionally_from_another_step() -> None:
    sut = FakeSystem(Patience(timeout=5, interval=0.001), right_after=1)
    value_is_one(sut)
    assert sut.looks == 2
