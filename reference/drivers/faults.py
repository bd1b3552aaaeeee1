"""Programmable faults of the reference driver's kubelet plugin (the seam's `PluginFault`), so scenarios can
show how a kubelet copes with a driver that fails: per-claim errors, transient or permanent (KEP-5322), a call
that hangs past the caller's deadline, a plugin that dies in the middle of a call. `DEFECTS` is the catalogue
of defects a plugin can be started with (`standalone.py --defect`): each breaks exactly one DRA-PLUGIN rule that
`draconform plugin-check` judges, so the tests show each check catches its defect and nothing else does.

Calls arrive on gRPC worker threads while the cluster's thread waits for them, so the plan guards its
counters with a lock; a hung call waits on an event that `release()` sets when the fault is cleared or the
plugin closes (`hang_seconds` only frees a thread a forgotten hang holds), so a caller's deadline always passes
first, however slow a loaded machine makes the call."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from draconform.kubeletplugin.types import CallFailed
from draconform.sut import PLUGIN_FAULT_KINDS, PluginFault

# A hung call answers only when released (the fault cleared, the plugin closed): no deadline a caller sets may
# depend on the hang ending first, under any load. This bound only frees the thread of a hang nobody releases.
HANG_SECONDS = 120.0
# Per-claim answers shaped the way KEP-5322 says a kubelet must read: permanent_error with an empty error (a
# success), and devices next to an error (a failure whose devices are ignored).
ANSWER_FAULTS = ("permanent-without-error", "error-with-devices")


class PluginCrashed(Exception):
    """The plugin died in the middle of a call (in-process: the call fails as a whole)."""


class PluginHung(Exception):
    """A hung call that was finally let go; its caller gave up long ago."""


# name -> (the rule it breaks, what the plugin does wrong)
DEFECTS: dict[str, tuple[str, str]] = {
    "answers-earlier-claims": ("DRA-PLUGIN/ANSWER-ONLY-ASKED",
                               "every answer also carries the claims it prepared in earlier calls"),
    "refuses-the-rest": ("DRA-PLUGIN/CLAIMS-INDEPENDENT",
                         "after refusing one claim of a call it refuses the claims that follow"),
    "ignores-uid": ("DRA-PLUGIN/PER-CLAIM-ERRORS",
                    "reads a claim by namespace and name and never compares its UID with the request's"),
    "wrong-request-names": ("DRA-PLUGIN/PREPARED-DEVICES-MATCH-ALLOCATION",
                            "names every device after the last request of the claim"),
    "no-share-id": ("DRA-PLUGIN/PREPARED-DEVICES-MATCH-ALLOCATION",
                    "leaves out the share ID of a device allocated in shares"),
    "prepares-other-drivers-devices": ("DRA-PLUGIN/PREPARED-DEVICES-MATCH-ALLOCATION",
                                       "lists the devices of every driver in the allocation"),
    "ignores-pool": ("DRA-PLUGIN/DEVICES-ON-THIS-NODE",
                     "looks an allocated device up by its name alone, whatever its pool"),
    "prepares-a-device-twice": ("DRA-PLUGIN/EXCLUSIVE-DEVICE-ONCE",
                                "prepares a device held whole for a second claim"),
    "state-by-name": ("DRA-PLUGIN/CLAIM-IDENTITY-IS-UID", "keeps what it prepared by claim namespace and name"),
    "defines-cdi-twice": ("DRA-PLUGIN/CDI-ID-DEFINED-ONCE",
                          "writes each prepared device into a second spec file of the same directory"),
    "leaves-cdi-specs": ("DRA-PLUGIN/CDI-SPECS-REMOVED", "keeps a claim's CDI spec file when it unprepares it"),
    "loses-state-on-restart": ("DRA-PLUGIN/SURVIVES-RESTART",
                               "keeps what it prepared in memory only, and removes only the spec files of "
                               "claims it knows"),
    "racy-answers": ("DRA-PLUGIN/CONCURRENT-CALLS",
                     "builds every answer in one buffer shared by calls that run at once"),
}
# A racy plugin waits this long for a second call to begin beside the first, and at most RACE_WAIT_SECONDS for
# one that began to write its answer, so the race shows every time calls arrive together. Calls sent at once
# over connections already open (plugin-check's concurrent-calls check connects first) begin milliseconds apart
# even on a loaded machine; every call that comes alone pays the window, so it stays well below a second.
RACE_WINDOW_SECONDS = 0.5
RACE_WAIT_SECONDS = 30.0


def check_defects(names: Collection[str]) -> frozenset[str]:
    unknown = sorted(set(names) - set(DEFECTS))
    if unknown:
        raise ValueError(f"unknown plugin defects {', '.join(unknown)}; known: {', '.join(DEFECTS)}")
    return frozenset(names)


def check_fault(fault: PluginFault) -> None:
    if fault.kind not in PLUGIN_FAULT_KINDS:
        raise ValueError(f"unknown plugin fault {fault.kind!r}; known: {', '.join(PLUGIN_FAULT_KINDS)}")
    if fault.method not in ("prepare", "unprepare"):
        raise ValueError(f"a plugin fault applies to prepare or unprepare, not {fault.method!r}")
    if fault.times is not None and fault.times < 1:
        raise ValueError(f"a plugin fault's times must be at least 1, got {fault.times}")


def _raise_crash() -> None:
    raise PluginCrashed("the plugin crashed in the middle of the call (injected fault)")


@dataclass
class _Active:
    fault: PluginFault
    remaining: int | None


class FaultPlan:
    """The faults one plugin shows now. `on_crash` is what a crash does: in-process the call fails; a
    plugin running as its own process exits."""

    def __init__(self, on_crash: Callable[[], None] = _raise_crash, hang_seconds: float = HANG_SECONDS,
                 defects: Collection[str] = ()) -> None:
        self._on_crash = on_crash
        self._hang_seconds = hang_seconds
        self._active: list[_Active] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self.defects = check_defects(defects)
        self._race = _Race()

    def has(self, defect: str) -> bool:
        """Whether the plugin was started with this defect of DEFECTS."""
        assert defect in DEFECTS, defect
        return defect in self.defects

    def race(self) -> _Race:
        return self._race

    def add(self, fault: PluginFault | None) -> None:
        """Show `fault` too; None clears every fault and lets hung calls go."""
        if fault is None:
            with self._lock:
                self._active.clear()
            self.release()
            return
        check_fault(fault)
        with self._lock:
            self._released.clear()
            self._active.append(_Active(fault, fault.times))

    def release(self) -> None:
        self._released.set()

    def _take(self, method: str, kinds: Collection[str], devices: Collection[str] | None) -> PluginFault | None:
        with self._lock:
            for active in self._active:
                fault = active.fault
                if fault.method != method or fault.kind not in kinds:
                    continue
                if fault.device is not None and (devices is None or fault.device not in devices):
                    continue
                if active.remaining is not None:
                    active.remaining -= 1
                    if active.remaining == 0:
                        self._active.remove(active)
                return fault
        return None

    def before_call(self, method: str) -> None:
        """Hang or crash, if a fault says so, before the plugin looks at the call."""
        fault = self._take(method, ("hang", "crash", "not-found"), None)
        if fault is None:
            return
        if fault.kind == "not-found":  # KEP-3063 "NodePrepareResource Errors": the call fails with 5 NOT_FOUND
            raise CallFailed("NOT_FOUND", f"{method}: the resource does not exist (injected NOT_FOUND)")
        if fault.kind == "crash":
            self._on_crash()
            return
        self._released.wait(self._hang_seconds)
        raise PluginHung(f"{method} hung (injected fault) and was let go")

    def claim_fault(self, method: str, devices: Collection[str]) -> PluginFault | None:
        """A transient or permanent error for a claim with these devices, or one of the answers of ANSWER_FAULTS,
        if a fault says so."""
        return self._take(method, ("transient", "permanent", *ANSWER_FAULTS), devices)


@dataclass
class _Race:
    """The one answer buffer of a racy plugin: a call writes its answer there, waits for another call to write
    after it (one that has begun, or begins within RACE_WINDOW_SECONDS), and answers with what the buffer then
    holds; so of calls that arrive together only the last gets its own answer, while a call alone gets its own
    after the short wait."""

    buffer: dict[str, Any] = field(default_factory=dict)
    begun: int = 0
    writes: int = 0
    changed: threading.Condition = field(default_factory=threading.Condition)

    def begin(self) -> None:
        with self.changed:
            self.begun += 1
            self.changed.notify_all()

    def share(self, answers: dict[str, Any]) -> dict[str, Any]:
        with self.changed:
            self.buffer = dict(answers)
            self.writes += 1
            mine = self.writes
            self.changed.notify_all()
            if self.begun <= mine:  # nobody else in flight: give a second call a moment to begin
                self.changed.wait_for(lambda: self.begun > mine, RACE_WINDOW_SECONDS)
            if self.begun > mine:  # a call in flight: its write will overwrite this one
                self.changed.wait_for(lambda: self.writes > mine, RACE_WAIT_SECONDS)
            return dict(self.buffer)
