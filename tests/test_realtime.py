"""The stress run's selection stays complete: every test module that waits in real time (a timeout, a deadline,
a clock read, a second process, a socket) is marked `realtime` by tests/conftest.py, and every conformance
scenario that sets a real-time deadline is tagged @realtime, so `.ci/stress` runs them all under load."""

from __future__ import annotations

import re
from pathlib import Path

from draconform.paths import FEATURES_DIR
from tests.conftest import ROOT, realtime

# What a test module writes when it waits in real time or starts something that answers in real time.
WAITS = re.compile(r"\btime\.(?:monotonic|sleep|time|perf_counter)\(|\bsubprocess\.|\bPopen\(|"
                   r"\bsocket\.(?:socket|create_connection)\(|\bgrpc\.|\btimeout(?:_seconds)?=|timeoutSeconds=|"
                   r"\.wait\(|\bserve_plugin\(|\bKubeletPluginClient\(|\bregistration_info\(|\bnotify_registration\(")
# This module names the patterns above; it waits for nothing.
SELF = Path(__file__).resolve()
# The steps that set a deadline in real seconds.
REAL_SECONDS = re.compile(r"waits at most \d+ seconds? for a plugin call")


def test_every_test_module_that_waits_in_real_time_is_marked() -> None:
    unmarked = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path == SELF:
            continue
        relative = path.relative_to(ROOT).as_posix()
        found = WAITS.search(path.read_text(encoding="utf-8"))
        if found and not realtime(relative):
            unmarked.append(f"{relative}: {found.group(0)}")
    assert not unmarked, f"add these to tests/conftest.py REALTIME (they wait in real time): {unmarked}"


def test_every_scenario_with_a_real_time_deadline_is_tagged() -> None:
    untagged = []
    for path in sorted(FEATURES_DIR.rglob("*.feature")):
        pending: list[str] = []  # tags read since the last keyword line
        levels: dict[str, list[str]] = {}  # the tags of the current Feature, Rule and Scenario
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            text = line.strip()
            keyword = text.split(":", 1)[0].split(" ", 1)[0]
            if text.startswith("@"):
                pending += text.split()
            elif keyword in ("Feature", "Rule", "Scenario"):
                levels = {**{k: v for k, v in levels.items() if k == "Feature" or keyword == "Scenario"},
                          keyword: pending}
                pending = []
            elif REAL_SECONDS.search(text) and not any("@realtime" in tags for tags in levels.values()):
                untagged.append(f"{path.relative_to(FEATURES_DIR)}:{number}")
    assert not untagged, f"tag these scenarios @realtime (they set a deadline in real seconds): {untagged}"


def test_the_guard_sees_a_wait() -> None:
    assert WAITS.search("done = subprocess.run(command, timeout=60)")
    assert WAITS.search("with KubeletPluginClient(endpoint) as client:")
    assert not WAITS.search("socket=0, smt=[True]") and not WAITS.search("attributes.socket.includes(0)")
