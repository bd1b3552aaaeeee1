"""The pytest plugin behind `draconform run`: loads the shared step vocabulary, provides the `sut`
fixture through the seam in `draconform.sut`, and records results (see `recorder.py`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from draconform.sut import DEFAULT_SUT, SystemUnderTest, load_factory

pytest_plugins = [
    "draconform.steps.scenario",
    "draconform.steps.objects",
    "draconform.steps.scheduling",
    "draconform.steps.clock",
    "draconform.steps.observe",
    "draconform.steps.allocation",
    "draconform.steps.controllers",
    "draconform.steps.metrics",
    "draconform.steps.compatibility",
    "draconform.steps.drivers",
    "draconform.steps.kubelet",
    "draconform.steps.classic",
    "draconform.steps.lifecycle",
    "draconform.steps.conditions",
    "draconform.steps.validation",
    "draconform.harness.recorder",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("draconform")
    group.addoption(
        "--sut",
        default=DEFAULT_SUT,
        help="module:factory returning the system under test (default: the reference implementation)",
    )


@pytest.fixture
def sut(request: pytest.FixtureRequest) -> Iterator[SystemUnderTest]:
    """A fresh system under test for every scenario, so scenarios never share state."""
    factory = load_factory(request.config.getoption("--sut"))
    system = factory()
    yield system
    close = getattr(system, "close", None)
    if callable(close):
        close()
