"""Steps that let cluster time pass. On the reference implementation this is a fake clock, so ten
minutes take microseconds; a live cluster may refuse (`Unsupported`) and the scenario is skipped."""

from __future__ import annotations

from pytest_bdd import parsers, when

from draconform.steps.scenario import ScenarioContext, moves_clock
from draconform.steps.words import DURATION, to_seconds
from draconform.sut import SystemUnderTest


@when(parsers.re(DURATION + r" pass(?:es)?"))
@moves_clock
def time_passes(sut: SystemUnderTest, ctx: ScenarioContext, amount: str, unit: str) -> None:
    """Time since the previous step, less what Then steps meanwhile waited for (`ctx.borrowed`, see `observes`):
    "10 minutes pass" after the allocation still ends ten minutes after it."""
    seconds = to_seconds(amount, unit)
    repaid = min(ctx.borrowed, seconds)
    ctx.borrowed -= repaid
    if seconds > repaid:
        sut.advance_clock(seconds - repaid)
