"""The simulated patience of `observes` on a SUT with a fake clock: an eventually-observation waits in small
simulated steps up to the SUT's `Patience.simulated`, a negative one and a Then step right after a clock step of
an @exact-time scenario look once, and the seconds waited are paid back by the next clock step."""

from __future__ import annotations

import pytest

from draconform.steps.clock import time_passes
from draconform.steps.scenario import ScenarioContext, observes
from draconform.sut import Patience


class FakeClockSut:
    """Only what `observes` and the clock step use: a clock and a fact that becomes true at `ready_at`."""

    def __init__(self, ready_at: float, simulated: float = 30.0) -> None:
        self.now = 0.0
        self.ready_at = ready_at
        self.simulated = simulated

    def patience(self, observation: str) -> Patience:
        return Patience(simulated=self.simulated)

    def advance_clock(self, seconds: float) -> None:
        self.now += seconds


@observes("pod")
def becomes_ready(sut: FakeClockSut) -> None:
    assert sut.now >= sut.ready_at, f"not ready at {sut.now:g}"


@observes("pod", eventually=False)
def not_ready(sut: FakeClockSut) -> None:
    assert sut.now >= sut.ready_at, f"not ready at {sut.now:g}"


def test_an_eventual_observation_waits_in_simulated_time_and_records_it() -> None:
    sut, ctx = FakeClockSut(ready_at=3), ScenarioContext()
    becomes_ready(sut=sut, ctx=ctx)
    assert sut.now == 4  # looked at 0, 1, 2 and 4 simulated seconds
    assert ctx.waited == ctx.borrowed == 4


def test_the_next_clock_step_pays_the_wait_back() -> None:
    sut, ctx = FakeClockSut(ready_at=3), ScenarioContext()
    becomes_ready(sut=sut, ctx=ctx)
    time_passes(sut=sut, ctx=ctx, amount="10", unit="seconds")  # type: ignore[arg-type]
    assert sut.now == 10 and ctx.borrowed == 0 and ctx.waited == 4


def test_it_gives_up_after_the_patience_and_says_how_long_it_waited() -> None:
    sut, ctx = FakeClockSut(ready_at=100), ScenarioContext()
    with pytest.raises(AssertionError, match="still so 30 simulated seconds later"):
        becomes_ready(sut=sut, ctx=ctx)
    assert sut.now == 30


@pytest.mark.parametrize("exact", [False, True])
def test_negative_and_exact_moment_observations_look_once(exact: bool) -> None:
    sut, ctx = FakeClockSut(ready_at=1), ScenarioContext(exact_time=exact)
    step = becomes_ready if exact else not_ready
    with pytest.raises(AssertionError, match="not ready at 0"):
        step(sut=sut, ctx=ctx)
    assert sut.now == 0 and ctx.waited == 0


def test_a_sut_without_simulated_patience_looks_once() -> None:
    sut, ctx = FakeClockSut(ready_at=1, simulated=0), ScenarioContext()
    with pytest.raises(AssertionError, match="not ready at 0"):
        becomes_ready(sut=sut, ctx=ctx)
