"""Which live scenarios may run side by side on one cluster, and the turns they take (`draconform run
--kubeconfig ... -n N`).

A scenario's names are its own (its namespace, `<id>-` before every node, class, pool and other cluster-scoped
name), its pods are scheduled onto its own nodes only, and it sees no other scenario's cluster-scoped objects;
so most scenarios cannot see one another. Some can, through what the cluster shares, and run alone:
- the scheduler's metrics: a counter's change since the scenario began counts every scenario's pods;
- a DeviceTaintRule: its selector (a driver, without a pool) taints the devices of every scenario;
- devices offered on every node or on the nodes a selector picks (`allNodes`, a slice's `nodeSelector`,
  `perDeviceNodeSelection`): any scenario's pod may be given them;
- an extended resource name a DeviceClass claims (`extendedResourceName`): one name, one class, cluster-wide;
- the cluster's own driver under test (`driverUnderTest` in the cluster config): its node, devices and plugin
  are the cluster's, not the scenario's;
- a scenario tagged `@live-alone` (for a reason this list misses).

On a cluster running draconform's programmable reference driver and controllers (`referencePrograms`, as
`draconform serve`), a driver of one name runs once in the whole cluster and serves plugins on every node: a
scenario programming one holds the programs lock (`hold_programs`) from its first program to its end, so the
scenarios that program them take turns among themselves while the others run on.

The workers take turns through two lock files: a scenario that runs alone holds the run lock exclusively, the
others share it; a scenario waiting to run alone first takes the turnstile, so none starts beside it meanwhile."""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

ALONE_TAG = "live-alone"
ALONE_GROUP = "draconform-live-alone"  # the xdist group: the scenarios that run alone go to one worker
DRIVER_UNDER_TEST_STEP = re.compile(r'driver "[^"]+" under test publishes devices')
MANIFEST_STEP = re.compile(r'manifests? "(?P<names>[^"]+)"')
SLICE = re.compile(r"\bkind:\s*ResourceSlice\b")
NODE_SELECTOR = re.compile(r"\bnodeSelector:")
# What a scenario's steps, tables, docstrings and manifests say that makes it visible to others, and why.
SHARED = (
    (re.compile(r'\bthe metric "'), "it reads the scheduler's metrics, which count every scenario's pods"),
    (re.compile(r"\bDeviceTaintRule\b"), "a DeviceTaintRule taints the devices of every scenario it selects"),
    (re.compile(r"\ballNodes\b|\bperDeviceNodeSelection\b"),
     "devices offered on every node may be given to any scenario's pod"),
    (re.compile(r"\bextendedResourceName\b"), "an extended resource name belongs to one class in the whole cluster"),
)


def alone_reasons(texts: Iterable[str], tags: Iterable[str], driver_under_test: bool) -> list[str]:
    """Why a scenario (its steps' texts, tables, docstrings and manifests; its and its feature's tags) must run
    alone on the cluster; empty when it may run beside others. `driver_under_test`: the cluster config names a
    driver of the cluster's own."""
    texts = list(texts)
    text = "\n".join(texts)
    reasons = [reason for pattern, reason in SHARED if pattern.search(text)]
    documents = [doc for part in texts for doc in re.split(r"^---\s*$", part, flags=re.MULTILINE)]
    if any(SLICE.search(doc) and NODE_SELECTOR.search(doc) for doc in documents):
        reasons.append("devices offered on the nodes a selector picks may be given to any scenario's pod")
    if driver_under_test and DRIVER_UNDER_TEST_STEP.search(text):
        reasons.append("it uses the cluster's own driver under test, its node and devices")
    if ALONE_TAG in set(tags):
        reasons.append(f"it is tagged @{ALONE_TAG}")
    return reasons


def manifest_names(step_texts: Iterable[str]) -> list[str]:
    """The manifests a scenario's steps name (read for `alone_reasons` like its docstrings)."""
    return [name.strip() for text in step_texts for match in MANIFEST_STEP.finditer(text)
            for name in match["names"].split(",") if name.strip()]


@contextmanager
def turn(lock_dir: Path, alone: bool) -> Iterator[None]:
    """Hold the cluster for one scenario: exclusively (`alone`) or shared with the others."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    run_fd = os.open(lock_dir / "run.lock", os.O_RDWR | os.O_CREAT, 0o644)
    turnstile_fd = os.open(lock_dir / "turnstile.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(turnstile_fd, fcntl.LOCK_EX)  # waits while a scenario waits to run alone
        if alone:
            fcntl.flock(run_fd, fcntl.LOCK_EX)  # waits for the scenarios running now to end
            fcntl.flock(turnstile_fd, fcntl.LOCK_UN)
        else:
            fcntl.flock(turnstile_fd, fcntl.LOCK_UN)
            fcntl.flock(run_fd, fcntl.LOCK_SH)
        yield
    finally:
        fcntl.flock(run_fd, fcntl.LOCK_UN)
        fcntl.flock(turnstile_fd, fcntl.LOCK_UN)
        os.close(run_fd)
        os.close(turnstile_fd)


class ProgramsLock:
    """The programs lock a scenario takes on its first program and gives back when it ends."""

    def __init__(self, lock_dir: Path) -> None:
        self._path = lock_dir / "programs.lock"
        self._fd: int | None = None

    def take(self) -> None:
        if self._fd is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._fd = fd

    def give_back(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the file gives the lock back
            self._fd = None
