"""A reference binding controller (KEP-5007 "PreBind Process", "Handling attachment failures",
Dependencies: "External controller") with programmable behaviour, so scenarios can drive the
scheduler's wait the way a device controller would: through the claim's per-device status only.

Behaviour (the seam's `run_controller("binding-controller", behaviour)`):
  driver:  the driver whose allocated devices it prepares (absent: every driver)
  outcome: "ready" (sets every binding condition True), "fail" (sets the first binding failure
           condition True) or "never" (watches, never answers: a hung or missing controller)
  after:   seconds between seeing an allocation and answering (default 0)
  remove_failed_device: with "fail", also take the device out of its ResourceSlice so that it is
           not picked again, as the KEP asks of a controller that reports a failure"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from draconform.reference.apiserver.interface import ApiStore
from draconform.reference.clock import Clock
from draconform.reference.controllers.external import (
    ClaimFollower,
    condition,
    now_text,
    remove_device,
    results_of,
    seconds,
    set_device_conditions,
)
from draconform.reference.scheduler.bindingconditions import DeviceId, device_id
from draconform.sut import Obj

NAME = "binding-controller"
OUTCOMES = ("ready", "fail", "never")
KNOWN_KEYS = {"driver", "outcome", "after", "remove_failed_device"}


class BindingController:
    def __init__(self, store: ApiStore, clock: Clock, behaviour: Mapping[str, Any]) -> None:
        unknown = set(behaviour) - KNOWN_KEYS
        if unknown:
            raise ValueError(f"{NAME}: unknown behaviour keys {sorted(unknown)}; known: {sorted(KNOWN_KEYS)}")
        self.outcome = str(behaviour.get("outcome", "ready"))
        if self.outcome not in OUTCOMES:
            raise ValueError(f"{NAME}: outcome must be one of {OUTCOMES}, got {self.outcome!r}")
        self.driver: str | None = behaviour.get("driver")
        self.remove_failed_device = bool(behaviour.get("remove_failed_device", False))
        self._store = store
        self._clock = clock
        self._follower = ClaimFollower(
            store, clock, seconds(behaviour, "after"),
            wants=lambda claim: self.outcome != "never" and bool(results_of(claim, self.driver)),
            act=self._answer,
        )

    def sync(self) -> bool:
        return self._follower.sync()

    def stop(self) -> None:
        self._follower.stop()

    def _answer(self, claim: Obj) -> None:
        now = now_text(self._clock)
        updates: dict[DeviceId, list[Obj]] = {}
        for result in results_of(claim, self.driver):
            key = device_id(result)
            if self.outcome == "ready":
                wanted_types = result["bindingConditions"]
                updates[key] = [
                    condition(wanted, "True", "DevicePrepared", "the device is ready for the pod", now)
                    for wanted in wanted_types
                ]
            elif result.get("bindingFailureConditions"):
                updates[key] = [
                    condition(result["bindingFailureConditions"][0], "True", "PreparationFailed",
                              "the device could not be prepared", now)
                ]
        if self.outcome == "fail" and self.remove_failed_device:
            for driver, pool, device in updates:
                remove_device(self._store, driver, pool, device)
        set_device_conditions(self._store, claim, updates)
