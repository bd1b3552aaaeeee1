"""Steps that let cluster time pass. On the reference implementation this is a fake clock, so ten
minutes take microseconds; a live cluster may refuse (`Unsupported`) and the scenario is skipped."""

from __future__ import annotations

from pytest_bdd import parsers, when

from draconform.steps.common import DURATION, moves_clock, to_seconds
from draconform.sut import SystemUnderTest


@when(parsers.re(DURATION + r" pass(?:es)?"))
@moves_clock
def time_passes(sut: SystemUnderTest, amount: str, unit: str) -> None:
    sut.advance_clock(to_seconds(amount, unit))
