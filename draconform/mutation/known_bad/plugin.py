"""Known-bad variants of the reference drivers (reference/drivers/: the kubelet plugin of plugin.py, the
standalone plugin process, the classic plugin of classic_plugin.py, the driver of driver.py), each an override
of a named method (draconform.mutation.overrides). `PLUGIN_CHECK_DEFECTS`
names the ones `draconform plugin-check`'s tests plant in the standalone plugin: each breaks exactly one
DRA-PLUGIN rule a check judges, so the tests show each check catches its defect and no other check blames it.
The same variants run in `draconform mutants` against the scenarios citing their rule."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from draconform.kube.cdi import spec_text
from draconform.kubeletplugin.classic import ClassicPluginError
from draconform.kubeletplugin.types import ClaimRef, PreparedDevice, PrepareResult
from draconform.mutation.overrides import Replace, Wrap
from draconform.mutation.variant import Variant
from draconform.reference.allocator.compatibility import EMPTY, SetState
from draconform.reference.drivers.classic_plugin import ClassicNodePlugin
from draconform.reference.drivers.driver import ReferenceDriver
from draconform.reference.drivers.plugin import (
    Checkpoint,
    InventoryDevice,
    NodePlugin,
    PrepareRefused,
    cdi_kind,
    cdi_spec_file,
)
from draconform.sut import Obj

PLUGIN = "draconform.reference.drivers.plugin:NodePlugin"
CLASSIC = "draconform.reference.drivers.classic_plugin:ClassicNodePlugin"
Original = Callable[..., Any]


# --- what prepared claims are kept under, and which claim a request names -----------------------------------
def _key_by_name(self: NodePlugin, ref: ClaimRef) -> str:
    return f"{ref.namespace}/{ref.name}"


def _claim_by_name(self: NodePlugin, ref: ClaimRef) -> Obj | None:
    return self._store.get("ResourceClaim", ref.name, ref.namespace)


# --- the answers of one call ----------------------------------------------------------------------------------
def _answers_earlier_claims(original: Original, self: NodePlugin,
                            claims: Sequence[ClaimRef]) -> dict[str, PrepareResult]:
    answers: dict[str, PrepareResult] = original(self, claims)
    return {uid: held.result for uid, held in self._prepared.items()} | answers


def _refuses_the_rest(self: NodePlugin, claims: Sequence[ClaimRef]) -> dict[str, PrepareResult]:
    self.faults.before_call("prepare")
    answers: dict[str, PrepareResult] = {}
    for ref in claims:
        refused = any(answer.error for answer in answers.values())
        answers[ref.uid] = PrepareResult(error="an earlier claim of the call failed") if refused else self._answer(ref)
    return answers


def _refusal_spoils_later(self: NodePlugin, claims: Sequence[ClaimRef]) -> dict[str, PrepareResult]:
    self.faults.before_call("prepare")
    answers: dict[str, PrepareResult] = {}
    for ref in claims:
        refusals = [answer for answer in answers.values() if answer.error]
        held = self._prepared.get(self._key(ref)) is not None
        answers[ref.uid] = replace(refusals[-1]) if refusals and not held else self._answer(ref)
    return answers


def _permanent_marks_the_call(original: Original, self: NodePlugin,
                              claims: Sequence[ClaimRef]) -> dict[str, PrepareResult]:
    answers: dict[str, PrepareResult] = original(self, claims)
    if any(answer.permanent for answer in answers.values()):
        return {uid: replace(answer, permanent=True) for uid, answer in answers.items()}
    return answers


def _refusal_remembered_as_transient(original: Original, self: NodePlugin, ref: ClaimRef) -> PrepareResult:
    refused: set[str] = self.__dict__.setdefault("_refused_once", set())
    if ref.uid in refused and self._prepared.get(self._key(ref)) is None:
        return PrepareResult(error=f"claim {ref.namespace}/{ref.name} failed before")
    answer: PrepareResult = original(self, ref)
    if answer.error and not answer.devices:
        refused.add(ref.uid)
    return answer


@dataclass
class _Race:
    """The one answer buffer of a racy plugin: a call writes its answer there, waits for another call to write
    after it (one that has begun, or begins within WINDOW seconds), and answers with what the buffer then holds;
    so of calls that arrive together only the last gets its own answer, while a call alone gets its own after
    the short wait. Calls sent at once over open connections (plugin-check's concurrent-calls check connects
    first) begin milliseconds apart even on a loaded machine; every call alone pays the window."""

    WINDOW = 0.5
    WAIT = 30.0
    buffer: dict[str, PrepareResult] = field(default_factory=dict)
    begun: int = 0
    writes: int = 0
    changed: threading.Condition = field(default_factory=threading.Condition)

    def begin(self) -> None:
        with self.changed:
            self.begun += 1
            self.changed.notify_all()

    def share(self, answers: dict[str, PrepareResult]) -> dict[str, PrepareResult]:
        with self.changed:
            self.buffer = dict(answers)
            self.writes += 1
            mine = self.writes
            self.changed.notify_all()
            if self.begun <= mine:  # nobody else in flight: give a second call a moment to begin
                self.changed.wait_for(lambda: self.begun > mine, self.WINDOW)
            if self.begun > mine:  # a call in flight: its write will overwrite this one
                self.changed.wait_for(lambda: self.writes > mine, self.WAIT)
            return dict(self.buffer)


_RACES: dict[tuple[str, str], _Race] = {}  # per driver and node: a restarted plugin keeps its buffer


def _racy_answers(original: Original, self: NodePlugin, claims: Sequence[ClaimRef]) -> dict[str, PrepareResult]:
    race = _RACES.setdefault((self.driver, self.node), _Race())
    race.begin()
    return race.share(original(self, claims))


# --- which devices it prepares --------------------------------------------------------------------------------
def _results_of_every_driver(self: NodePlugin, allocation: Obj) -> list[Obj]:
    return list((allocation.get("devices") or {}).get("results") or [])


def _inventory_with_other_drivers(original: Original, self: NodePlugin,
                                  results: list[Obj]) -> dict[tuple[str, str], InventoryDevice]:
    theirs = {(str(r.get("pool", "")), str(r.get("device", ""))): InventoryDevice(
        str(r.get("pool", "")), str(r.get("device", "")), None, ()) for r in results}
    return theirs | dict(original(self, results))


def _inventory_by_name(self: NodePlugin, results: list[Obj]) -> dict[tuple[str, str], InventoryDevice]:
    mine = {device.name: device for device in self._inventory().values() if device.node in (None, self.node)}
    return {(str(r.get("pool", "")), str(r.get("device", ""))): mine[str(r.get("device", ""))]
            for r in results if str(r.get("device", "")) in mine}


def _no_exclusive_check(self: NodePlugin, where: str, ref: ClaimRef,
                        devices: list[tuple[Obj, InventoryDevice]]) -> None:
    return None


def _compatibility_of_own_claim_only(self: NodePlugin, where: str, devices: list[InventoryDevice]) -> None:
    states: dict[tuple[str, str], SetState] = {}
    for device in devices:  # the devices already prepared for other claims are never held
        for counter_set, groups in device.declared:
            key = (device.pool, counter_set)
            if not states.get(key, EMPTY).admits(groups):
                raise PrepareRefused(f"{where}: device {device.pool}/{device.name} is not compatible")
            states[key] = states.get(key, EMPTY).add(groups)


# --- what the answer names -------------------------------------------------------------------------------------
def _requests_named_after_the_last(original: Original, self: NodePlugin, claim: Obj,
                                   devices: list[tuple[Obj, InventoryDevice]]) -> tuple[PreparedDevice, ...]:
    requests = ((claim.get("spec") or {}).get("devices") or {}).get("requests") or [{}]
    last = str(requests[-1].get("name", ""))
    return tuple(replace(device, requests=(last,)) for device in original(self, claim, devices))


def _no_share_id(original: Original, self: NodePlugin, claim: Obj,
                 devices: list[tuple[Obj, InventoryDevice]]) -> tuple[PreparedDevice, ...]:
    return tuple(replace(device, share_id=None) for device in original(self, claim, devices))


# --- CDI spec files ---------------------------------------------------------------------------------------------
def _copy_name(self: NodePlugin, ref: ClaimRef) -> str:
    return cdi_spec_file(self.driver, ref.uid).replace(".json", "-copy.json")


def _spec_written_twice(original: Original, self: NodePlugin, ref: ClaimRef, result: PrepareResult) -> None:
    original(self, ref, result)
    if cdi_spec_file(self.driver, ref.uid) in self._cdi:
        self._cdi[_copy_name(self, ref)] = self._cdi[cdi_spec_file(self.driver, ref.uid)]


def _both_specs_removed(original: Original, self: NodePlugin, ref: ClaimRef) -> None:
    original(self, ref)
    self._cdi.pop(_copy_name(self, ref), None)


def _no_spec_written(self: NodePlugin, ref: ClaimRef, result: PrepareResult) -> None:
    return None


def _spec_left(self: NodePlugin, ref: ClaimRef) -> None:
    return None


def _every_spec_removed(original: Original, self: NodePlugin, ref: ClaimRef) -> None:
    original(self, ref)
    for name in [name for name in self._cdi if name.startswith(f"k8s.{self.driver}-")]:
        del self._cdi[name]


# --- unprepare and restarts ----------------------------------------------------------------------------------
def _unknown_claims_keep_their_specs(original: Original, self: NodePlugin,
                                     claims: Sequence[ClaimRef]) -> dict[str, str]:
    unknown = [cdi_spec_file(self.driver, ref.uid) for ref in claims if self._prepared.get(self._key(ref)) is None]
    kept = {name: self._cdi[name] for name in unknown if name in self._cdi}
    answers: dict[str, str] = original(self, claims)
    self._cdi.update(kept)
    return answers


_STARTS = itertools.count(1)


def _class_of_this_start(self: NodePlugin) -> str:
    """The CDI class the plugin names its devices under: one per start of the plugin, as a plugin putting its
    boot ID into CDI names would."""
    start: int = self.__dict__.setdefault("_start", next(_STARTS))
    return f"{cdi_kind(self.driver)}-start{start}"


def _cdi_ids_of_this_start(original: Original, self: NodePlugin, claim: Obj,
                           devices: list[tuple[Obj, InventoryDevice]]) -> tuple[PreparedDevice, ...]:
    return tuple(replace(device, cdi_device_ids=(f"{_class_of_this_start(self)}={device.device}",))
                 for device in original(self, claim, devices))


def _spec_of_this_start(original: Original, self: NodePlugin, ref: ClaimRef, result: PrepareResult) -> None:
    original(self, ref, result)
    name = cdi_spec_file(self.driver, ref.uid)
    if name in self._cdi:
        devices = {d.device: {"DRA_DEVICE": d.device} for d in result.devices}
        self._cdi[name] = spec_text(_class_of_this_start(self), devices)


def _state_in_memory_only(self: Checkpoint) -> Checkpoint:
    return Checkpoint(cdi=self.cdi)  # what it prepared was kept in memory only


def _failures_answered_as_success(original: Original, self: NodePlugin, claims: Sequence[ClaimRef]) -> dict[str, str]:
    return {uid: "" for uid in original(self, claims)}  # the failure swallowed


def _unknown_claim_refused(original: Original, self: NodePlugin, claims: Sequence[ClaimRef]) -> dict[str, str]:
    unknown = {ref.uid: f"claim {ref.namespace}/{ref.name} is not prepared on this node" for ref in claims
               if self._prepared.get(self._key(ref)) is None}
    return original(self, [ref for ref in claims if ref.uid not in unknown]) | unknown  # type: ignore[no-any-return]


def _take_over_wipes_node_state(original: Original, self: ReferenceDriver, previous: ReferenceDriver) -> None:
    original(self, previous)
    for files in self._checkpoint.cdi.values():
        files.clear()


# --- the classic plugin (KEP-3063-CLASSIC) -------------------------------------------------------------------------
def _classic_spec(self: ClassicNodePlugin, resource_uid: str) -> str:
    return f"k8s.{self.driver}-{resource_uid}.json"


def _classic_unprepare_keeps_state(original: Original, self: ClassicNodePlugin, resource_uid: str,
                                   cdi_devices: Sequence[str]) -> None:
    held, spec = self.prepared.get(resource_uid), self.cdi.get(_classic_spec(self, resource_uid))
    original(self, resource_uid, cdi_devices)
    if held is not None:  # answered OK, but the prepared answer and its spec file are kept
        self.prepared[resource_uid] = held
        if spec is not None:
            self.cdi[_classic_spec(self, resource_uid)] = spec


def _classic_writes_no_spec(original: Original, self: ClassicNodePlugin, resource_uid: str) -> Sequence[str]:
    written = _classic_spec(self, resource_uid) in self.cdi
    devices: Sequence[str] = original(self, resource_uid)
    if not written:
        self.cdi.pop(_classic_spec(self, resource_uid), None)
    return devices


def _classic_prepare_not_idempotent(original: Original, self: ClassicNodePlugin, resource_uid: str) -> Sequence[str]:
    if resource_uid in self.prepared:
        self._received("prepare", resource_uid)
        raise ClassicPluginError("ALREADY_EXISTS", f"resource claim {resource_uid} is already prepared")
    return original(self, resource_uid)  # type: ignore[no-any-return]


def _classic_bare_device_names(original: Original, self: ClassicNodePlugin, resource_uid: str) -> Sequence[str]:
    original(self, resource_uid)
    self.prepared[resource_uid] = (resource_uid,)
    return self.prepared[resource_uid]


def _classic_unknown_unprepare_ok(original: Original, self: ClassicNodePlugin, resource_uid: str,
                                  cdi_devices: Sequence[str]) -> None:
    try:
        original(self, resource_uid, cdi_devices)
    except ClassicPluginError as error:
        if error.code != "NOT_FOUND":
            raise


def plugin(name: str, rule: str, what: str, *overrides: Replace | Wrap) -> Variant:
    return Variant(name, rule, what, overrides=overrides)


VARIANTS: tuple[Variant, ...] = (
    # --- DRA-PLUGIN: the answers and the state of a kubelet plugin ------------------------------------------
    plugin("answers-earlier-claims", "DRA-PLUGIN/ANSWER-ONLY-ASKED",
           "every answer also carries the claims it prepared in earlier calls",
           Wrap(f"{PLUGIN}.prepare", _answers_earlier_claims)),
    plugin("first-refusal-refuses-the-rest", "DRA-PLUGIN/CLAIMS-INDEPENDENT",
           "after refusing one claim of a call it refuses the claims that follow",
           Replace(f"{PLUGIN}.prepare", _refuses_the_rest)),
    plugin("refusal-spoils-later-preparations", "DRA-PLUGIN/CLAIMS-INDEPENDENT",
           "after one claim of a call fails, claims the plugin still has to prepare get that failure; claims it "
           "prepared before are answered from its checkpoint",
           Replace(f"{PLUGIN}.prepare", _refusal_spoils_later)),
    plugin("ignores-uid", "DRA-PLUGIN/PER-CLAIM-ERRORS",
           "reads a claim by namespace and name and never compares its UID with the request's",
           Replace(f"{PLUGIN}._claim", _claim_by_name)),
    plugin("wrong-request-names", "DRA-PLUGIN/PREPARED-DEVICES-MATCH-ALLOCATION",
           "names every device after the last request of the claim",
           Wrap(f"{PLUGIN}._prepared_devices", _requests_named_after_the_last)),
    plugin("no-share-id", "DRA-PLUGIN/PREPARED-DEVICES-MATCH-ALLOCATION",
           "leaves out the share ID of a device allocated in shares",
           Wrap(f"{PLUGIN}._prepared_devices", _no_share_id)),
    plugin("prepares-other-drivers-devices", "DRA-PLUGIN/PREPARED-DEVICES-MATCH-ALLOCATION",
           "lists the devices of every driver in the allocation",
           Replace(f"{PLUGIN}._results", _results_of_every_driver),
           Wrap(f"{PLUGIN}._inventory_for", _inventory_with_other_drivers)),
    plugin("ignores-pool", "DRA-PLUGIN/DEVICES-ON-THIS-NODE",
           "looks an allocated device up by its name alone, whatever its pool",
           Replace(f"{PLUGIN}._inventory_for", _inventory_by_name)),
    plugin("prepares-a-device-twice", "DRA-PLUGIN/EXCLUSIVE-DEVICE-ONCE",
           "prepares a device held whole for a second claim",
           Replace(f"{PLUGIN}._check_exclusive", _no_exclusive_check)),
    plugin("state-by-name", "DRA-PLUGIN/CLAIM-IDENTITY-IS-UID", "keeps what it prepared by claim namespace and name",
           Replace(f"{PLUGIN}._key", _key_by_name)),
    plugin("defines-cdi-twice", "DRA-PLUGIN/CDI-ID-DEFINED-ONCE",
           "writes each prepared device into a second spec file of the same directory",
           Wrap(f"{PLUGIN}._write_cdi_spec", _spec_written_twice), Wrap(f"{PLUGIN}._remove_cdi_spec", _both_specs_removed)),
    plugin("leaves-cdi-specs", "DRA-PLUGIN/CDI-SPECS-REMOVED", "keeps a claim's CDI spec file when it unprepares it",
           Replace(f"{PLUGIN}._remove_cdi_spec", _spec_left)),
    plugin("loses-state-on-restart", "DRA-PLUGIN/SURVIVES-RESTART",
           "keeps what it prepared in memory only, and removes only the spec files of claims it knows",
           Replace("draconform.reference.drivers.plugin:Checkpoint.after_restart", _state_in_memory_only),
           Wrap(f"{PLUGIN}.unprepare", _unknown_claims_keep_their_specs)),
    plugin("cdi-ids-change-on-restart", "DRA-PLUGIN/SURVIVES-RESTART",
           "names its CDI devices under a class of its own per start, so a claim prepared again after a restart "
           "gets other CDI device IDs than the containers started before it hold",
           Wrap(f"{PLUGIN}._prepared_devices", _cdi_ids_of_this_start),
           Wrap(f"{PLUGIN}._write_cdi_spec", _spec_of_this_start)),
    plugin("racy-answers", "DRA-PLUGIN/CONCURRENT-CALLS", "builds every answer in one buffer shared by calls that run at once",
           Wrap(f"{PLUGIN}.prepare", _racy_answers)),
    plugin("plugin-writes-no-cdi-spec", "DRA-PLUGIN/CDI-SPEC-FILES",
           "the kubelet plugin answers with CDI device IDs no spec file on the node defines",
           Replace(f"{PLUGIN}._write_cdi_spec", _no_spec_written)),
    plugin("plugin-unprepare-removes-every-spec", "DRA-PLUGIN/CDI-SPEC-FILES",
           "unpreparing one claim removes the CDI spec files of every claim the driver prepared",
           Wrap(f"{PLUGIN}._remove_cdi_spec", _every_spec_removed)),
    # --- KEP-5322 and KEP-3063: what the driver answers -----------------------------------------------------
    plugin("permanent-marks-the-whole-call", "KEP-5322/PERMANENT-NEEDS-ERROR",
           "the driver marks every answer of a call permanent when one claim fails permanently",
           Wrap(f"{PLUGIN}.prepare", _permanent_marks_the_call)),
    plugin("permanent-refusal-remembered-as-transient", "KEP-5322/DRIVER-EXPECTS-REPEAT",
           "the driver answers a repeat of a permanently refused claim with an error not marked permanent",
           Wrap(f"{PLUGIN}._answer", _refusal_remembered_as_transient)),
    plugin("unprepare-of-unknown-claim-fails", "KEP-5322/DRIVER-UNPREPARE-AFTER-PERMANENT",
           "the driver refuses to unprepare a claim it never prepared",
           Wrap(f"{PLUGIN}.unprepare", _unknown_claim_refused)),
    plugin("unprepare-leaves-cdi-spec", "KEP-3063/KUBELET-UNPREPARE-UNDOES-PREPARE",
           "the plugin keeps a claim's CDI spec file when it unprepares it",
           Replace(f"{PLUGIN}._remove_cdi_spec", _spec_left)),
    plugin("unprepare-failure-answered-as-success", "KEP-3063/KUBELET-UNPREPARE-FAILURE-REPORTED",
           "a plugin that could not tear a claim down answers success",
           Wrap(f"{PLUGIN}.unprepare", _failures_answered_as_success)),
    plugin("driver-upgrade-wipes-node-state", "KEP-3063/DRIVER-UPGRADE-KEEPS-CLAIMS",
           "a restarted driver clears its state on the nodes, taking away running pods' CDI devices",
           Wrap("draconform.reference.drivers.driver:ReferenceDriver.take_over", _take_over_wipes_node_state)),
    # --- KEP-5963: the driver validates at prepare ------------------------------------------------------------
    plugin("plugin-checks-only-its-own-claim", "KEP-5963/DRIVER-VALIDATES-AT-PREPARE",
           "the kubelet plugin does not check against claims already prepared",
           Replace(f"{PLUGIN}._check_compatibility", _compatibility_of_own_claim_only)),
    # --- KEP-3063-CLASSIC: the classic plugin -----------------------------------------------------------------
    plugin("classic-plugin-unprepare-keeps-state", "KEP-3063-CLASSIC/PLUGIN-UNPREPARE-UNDOES",
           "the kubelet plugin answers unprepare with OK but keeps the prepared answer",
           Wrap(f"{CLASSIC}.unprepare", _classic_unprepare_keeps_state)),
    plugin("classic-plugin-writes-no-cdi-spec", "KEP-3063-CLASSIC/PLUGIN-PREPARE-CDI-FILES",
           "the kubelet plugin answers with CDI device names no spec file on the node defines",
           Wrap(f"{CLASSIC}.prepare", _classic_writes_no_spec)),
    plugin("classic-plugin-prepare-not-idempotent", "KEP-3063-CLASSIC/PLUGIN-PREPARE-IDEMPOTENT",
           "the kubelet plugin refuses a second prepare of a prepared claim",
           Wrap(f"{CLASSIC}.prepare", _classic_prepare_not_idempotent)),
    plugin("classic-plugin-cdi-names-unqualified", "KEP-3063-CLASSIC/PLUGIN-PREPARE-CDI-NAMES",
           "the kubelet plugin answers with a bare device name, not vendor/class=name",
           Wrap(f"{CLASSIC}.prepare", _classic_bare_device_names)),
    plugin("classic-plugin-unknown-unprepare-ok", "KEP-3063-CLASSIC/PLUGIN-UNPREPARE-NOT-FOUND",
           "the kubelet plugin unprepares a UID it never knew with OK",
           Wrap(f"{CLASSIC}.unprepare", _classic_unknown_unprepare_ok)),
)

# The variants plugin-check's tests plant in the standalone plugin, one check failing for each.
PLUGIN_CHECK_DEFECTS = (
    "answers-earlier-claims", "first-refusal-refuses-the-rest", "ignores-uid", "wrong-request-names", "no-share-id",
    "prepares-other-drivers-devices", "ignores-pool", "prepares-a-device-twice", "state-by-name", "defines-cdi-twice",
    "leaves-cdi-specs", "loses-state-on-restart", "cdi-ids-change-on-restart", "racy-answers",
)
