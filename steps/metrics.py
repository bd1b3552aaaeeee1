"""Steps that read the metrics a SUT exposes in the Prometheus text format, as an operator's scrape
would: a sample's value by name and labels, and a histogram's observation count and sum."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families
from pytest_bdd import parsers, then

from draconform.steps.scenario import ScenarioContext, observes
from draconform.steps.words import split_names
from draconform.sut import SystemUnderTest

LABELS = r'(?: with labels "(?P<labels>[^"]*)")?'


def _labels(text: str | None) -> dict[str, str]:
    labels = {}
    for item in split_names(text or ""):
        name, _, value = item.partition("=")
        labels[name.strip()] = value.strip()
    return labels


def sample_value(sut: SystemUnderTest, name: str, labels: dict[str, str]) -> float:
    """The sum of the samples called `name` whose labels include `labels`; 0 when none exists (a
    counter that never moved and a labelled series never touched read the same to an operator)."""
    total = 0.0
    for family in text_string_to_metric_families(sut.metrics_text()):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


@then(parsers.re(r'the metric "(?P<name>[^"]+)"' + LABELS + r" is (?P<bound>at least )?(?P<value>\d+(?:\.\d+)?)"))
@observes("metric")
def metric_value(sut: SystemUnderTest, name: str, labels: str | None, bound: str | None, value: str) -> None:
    got = sample_value(sut, name, _labels(labels))
    if bound:
        assert got >= float(value), f"{name}{{{labels or ''}}} is {got}, expected at least {value}"
    else:
        assert got == float(value), f"{name}{{{labels or ''}}} is {got}, expected {value}"


REAL_TIME_TOLERANCE = 1.0  # seconds


@then(parsers.re(
    r'the histogram "(?P<name>[^"]+)"' + LABELS + r" has (?P<count>\d+) observations?"
    r"(?: summing to (?P<total>\d+(?:\.\d+)?) seconds)?"
))
@observes("metric")
def histogram_observations(
    sut: SystemUnderTest, ctx: ScenarioContext, name: str, labels: str | None, count: str, total: str | None
) -> None:
    wanted = _labels(labels)
    got = sample_value(sut, name + "_count", wanted)
    assert got == float(count), f"{name}{{{labels or ''}}} has {got} observations, expected {count}"
    if total is not None:
        seconds = sample_value(sut, name + "_sum", wanted)
        # A cluster on real time (one whose Then steps wait) adds the time its own work took; on a fake clock, a
        # component that noticed later (the simulated seconds Then steps waited for it) may have measured longer.
        tolerance = REAL_TIME_TOLERANCE if sut.patience("metric").timeout else 1e-6
        assert float(total) - tolerance < seconds < float(total) + tolerance + ctx.waited, (
            f"{name}{{{labels or ''}}} sums to {seconds}, expected {total}"
            + (f" (up to {ctx.waited:g} s more: Then steps waited that long)" if ctx.waited else "")
        )
