"""Steps that let cluster time pass. On the reference implementation this is a fake clock, so ten
minutes take microseconds; a live cluster may refuse (`Unsupported`) and the scenario is skipped."""

from __future__ import annotations

from pytest_bdd import parsers, when

from draconform.sut import SystemUnderTest

UNIT_SECONDS = {"second": 1, "seconds": 1, "minute": 60, "minutes": 60, "hour": 3600, "hours": 3600}


@when(parsers.re(r"(?P<amount>\d+(?:\.\d+)?) (?P<unit>seconds?|minutes?|hours?) pass(?:es)?"))
def time_passes(sut: SystemUnderTest, amount: str, unit: str) -> None:
    sut.advance_clock(float(amount) * UNIT_SECONDS[unit])
