"""Programmable faults of the reference driver's kubelet plugin (the seam's `PluginFault`), so scenarios can
show how a kubelet copes with a driver that fails: per-claim errors, transient or permanent (KEP-5322), a call
that hangs past the caller's deadline, a plugin that dies in the middle of a call. These are failures a correct
plugin may meet; plugins that break a rule are known-bad variants in draconform.mutation, never switches here.

Calls arrive on gRPC worker threads while the cluster's thread waits for them, so the plan guards its
counters with a lock; a hung call waits on an event that `release()` sets when the fault is cleared or the
plugin closes (`hang_seconds` only frees a thread a forgotten hang holds), so a caller's deadline always passes
first, however slow a loaded machine makes the call."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass

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


def check_fault(fault: PluginFault) -> None:
    if fault.kind not in PLUGIN_FAULT_KINDS:
        raise ValueError(f"unknown plugin fault {fault.kind!r}; known: {', '.join(PLUGIN_FAULT_KINDS)}")
    if fault.method not in ("prepare", "unprepare"):
        raise ValueError(f"a plugin fault applies to prepare or unprepare, not {fault.method!r}")
    if fault.times is not None and fault.times < 1:
        raise ValueError(f"a plugin fault's times must be at least 1, got {fault.times}")
    if fault.first_device and fault.device is not None:
        raise ValueError(f"a plugin fault names device {fault.device!r} or follows the first device, not both")


def _raise_crash() -> None:
    raise PluginCrashed("the plugin crashed in the middle of the call (injected fault)")


@dataclass
class _Active:
    fault: PluginFault
    remaining: int | None
    devices: frozenset[str] | None = None  # a first_device fault: the devices of the first claim it affected


class FaultPlan:
    """The faults one plugin shows now. `on_crash` is what a crash does: in-process the call fails; a
    plugin running as its own process exits."""

    def __init__(self, on_crash: Callable[[], None] = _raise_crash, hang_seconds: float = HANG_SECONDS,
                 ) -> None:
        self._on_crash = on_crash
        self._hang_seconds = hang_seconds
        self._active: list[_Active] = []
        self._lock = threading.Lock()
        self._released = threading.Event()

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
                if fault.first_device:
                    if devices is None or (active.devices is not None and not active.devices & set(devices)):
                        continue
                    active.devices = active.devices or frozenset(devices)
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
