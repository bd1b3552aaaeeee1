"""Marks `realtime` the tests that wait in real time: a gRPC deadline, a second process, a socket, a served API
or a timeout of their own. `.ci/stress` runs them (with the conformance scenarios tagged @realtime) at more
workers than cores under a CPU hog, to show that load eats none of their margins; tests/test_realtime.py keeps
REALTIME complete by looking for such waits in every test module."""

from __future__ import annotations

from pathlib import Path

import pytest

# Test files, or folders ending in "/", relative to the checkout.
REALTIME = (
    "tests/live/",  # the served reference's processes, the live SUT's real-time patience and timeouts
    "tests/plugincheck/",  # plugin-check against a plugin process, deadlines and restarts
    "tests/serve/",  # `draconform serve` in a thread or as processes, watches with timeouts, kubectl
    "tests/harness/test_end_to_end.py",
    "tests/harness/test_interrupted.py",
    "tests/harness/test_mutation.py",
    "tests/harness/test_progress.py",
    "tests/reference/test_driver.py",
    "tests/test_kubeletplugin.py",
    "tests/test_costs.py",  # its served cluster's requests carry timeouts (the figures are counts, not times)
    "tests/test_layers.py",
    "tests/validation/test_start.py",
)
# Of those, the ones the main test run of .ci/run leaves to the stress run (marked `long` too): the whole
# conformance suite live against `draconform serve` (tests/live/test_suite_live.py), which .ci/stress runs beside
# the other realtime tests, under the same CPU hog, in a pytest of its own (its one test starts its own served
# clusters and runs them side by side, so it needs no workers).
LONG = ("tests/live/test_suite_live.py",)
ROOT = Path(__file__).resolve().parent.parent


def realtime(path: str) -> bool:
    """Whether the test file at `path` (relative to the checkout) is one of REALTIME."""
    return any(path == entry or (entry.endswith("/") and path.startswith(entry)) for entry in REALTIME)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "realtime: waits in real time; .ci/stress runs it under load")
    config.addinivalue_line("markers", "long: .ci/stress runs it beside the other realtime tests, not the main run")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(item.path).resolve()
        relative = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else ""
        if realtime(relative):
            item.add_marker(pytest.mark.realtime)
        if relative in LONG:
            item.add_marker(pytest.mark.long)
