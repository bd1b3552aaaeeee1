"""Known-bad variants of the other catalogues (KEP-3063, KEP-5322, KEP-5075, KEP-5004, DRA-PLUGIN, DRA-API):
each a set of overrides of named functions (draconform.mutation.overrides, mostly an Edit of a few lines) that
turns the correct code back into one bug breaking the rule it names."""

from __future__ import annotations

from typing import Any

from draconform.mutation.known_bad import defects
from draconform.mutation.known_bad.schema import loosened_schemas
from draconform.mutation.overrides import Edit, Replace
from draconform.mutation.variant import Variant
from draconform.reference.kubelet.kubelet import INITIAL_BACKOFF, MAX_BACKOFF, PREPARE_FAILED, Kubelet


def _rewrite_failed(self: Kubelet, namespace: str, name: str, message: str, attempt: int) -> None:
    """The failed pod's status message rewritten after each retry interval, as a kubelet that reports every
    attempt would, though it asks no plugin again."""
    delay = min(INITIAL_BACKOFF * 2 ** attempt, MAX_BACKOFF)

    def rewrite() -> None:
        pod = None if self._stopped else self._store.peek("Pod", name, namespace)
        if pod is None or (pod.get("status") or {}).get("phase") != "Failed":
            return
        self._set_phase(pod, "Failed", reason=PREPARE_FAILED, message=f"{message} (attempt {attempt + 1})")
        _rewrite_failed(self, namespace, name, message, attempt + 1)

    self._clock.call_at(self._clock.now() + delay, rewrite)


def _failure_conditions_unchecked(definitions: dict[str, Any]) -> None:
    """A device's bindingFailureConditions get a definition of their own that allows repeats."""
    if "bindingConditions" in definitions and "device" in definitions:
        definitions["bindingFailureConditions"] = {**definitions["bindingConditions"], "uniqueItems": False}
        definitions["device"]["properties"]["bindingFailureConditions"] = {"$ref": "#/$defs/bindingFailureConditions"}



def _as_written(name: str, driver: str) -> str:
    return name


VARIANTS: tuple[Variant, ...] = (
    Variant(
        "release-drops-first-reservation", "KEP-3063/RESERVATION-RELEASED",
        "the kubelet releasing a deleted pod's claim drops the oldest reservedFor entry, not the pod's own",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._drop_reservations",
                 '            remaining = [r for r in status["reservedFor"] if r.get("uid") != uid]\n',
                 ('            remaining = [r for r in status["reservedFor"] if r.get("uid") != uid]\n'
                  '            remaining = status["reservedFor"][1:]\n')),
        ),
    ),
    Variant(
        "last-claim-result-wins", "KEP-5322/ANY-CLAIM-FAILS-POD",
        "the kubelet judges a prepare call by its last claim's answer, so a permanent failure of an earlier claim is retried",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._prepare",
                 "                elif result.permanent and self._gates.enabled(PERMANENT_GATE):\n",
                 "                elif result.permanent and self._gates.enabled(PERMANENT_GATE) and not record is not pending[-1]:\n"),
        ),
    ),
    Variant(
        "restart-forgets-shares", "KEP-5075/SHARED-DEVICE",
        "a restarted scheduler forgets the shares of multi-allocatable devices already allocated",
        (
            Edit("draconform.reference.allocator.columnar.frames:Frames.__init__",
                 ("            self._put_claim(obj)\n"
                  "        self.view()  # built now, like a filled informer cache; again only when a slice changes\n"),
                 ("            self._put_claim(obj)\n"
                  "        self._sharing.clear()\n"
                  "        self.shared_total.clear()\n"
                  "        self.view()  # built now, like a filled informer cache; again only when a slice changes\n")),
        ),
    ),
    # --- issue 39: rules checked under one gate setting only ------------------------------------------------
    Variant(
        "cel-multiple-allocations-false-without-capacity-gate", "KEP-5075/CEL",
        "CEL sees allowMultipleAllocations as false whenever the scheduler's DRAConsumableCapacity is off, though "
        "the newer allocator the other gates select shows the device's own value",
        (
            Edit("draconform.reference.allocator.columnar.selection:Selection._judge",
                 "            shown = not self.frames.gates.stable_allocator  # D-4381-8: the stable allocator's CEL input\n",
                 "            shown = self.frames.gates.consumable_capacity\n"),
        ),
    ),
    Variant(
        "sidecar-counted-as-init-container", "KEP-5004/INIT-CONTAINERS",
        "the scheduler counts a sidecar's extended resources as an ordinary init container's, reused by the "
        "containers after it",
        (
            Edit("draconform.reference.scheduler.extendedresources:_long_lived",
                 '    return index >= init_count or container.get("restartPolicy") == "Always"  # regular or sidecar\n',
                 "    return index >= init_count\n"),
        ),
    ),
    # --- second angles of single-scenario MUST rules: KEP-5322, KEP-3063, KEP-5075, KEP-5004, DRA-PLUGIN,
    # DRA-API (docs/suite-power.md, "P5: the other catalogues") ------------------------------------------
    Variant(
        "failed-call-permanent", "KEP-5322/TRANSIENT-RETRIED",
        "with the gate on, a prepare call that fails as a whole (a crashed plugin) is taken for a permanent error",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._prepare",
                 "            except PluginCallError as err:\n",
                 ("            except PluginCallError as err:\n"
                  "                if self._gates.enabled(PERMANENT_GATE):\n"
                  "                    permanent.append(str(err))  # the whole call's failure taken for permanent\n"
                  "                    break\n")),
        ),
    ),
    Variant(
        "failed-pod-unprepared-on-deletion", "KEP-5322/UNPREPARE-AFTER-PERMANENT",
        "the claims of a pod failed on a permanent error are unprepared and released only once the pod is deleted",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._sync_pod",
                 '        finishing = bool(pod["metadata"].get("deletionTimestamp")) or phase in ("Succeeded", "Failed")\n',
                 ('        finishing = bool(pod["metadata"].get("deletionTimestamp")) or phase in ("Succeeded", "Failed")\n'
                  '        if phase == "Failed" and not pod["metadata"].get(\n'
                  '                "deletionTimestamp"):\n'
                  "            return False  # the failed pod's claims are left prepared and reserved until someone deletes it\n")),
        ),
    ),
    Variant(
        "failed-pod-two-status-writes", "KEP-5322/ONE-STATUS-WRITE",
        "the kubelet fails a pod in two status writes: the reason and message first, the phase Failed after",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._fail",
                 '        self._events.record(pod, "Warning", PREPARE_FAILED, message)\n',
                 ('        self._events.record(pod, "Warning", PREPARE_FAILED, message)\n'
                  '        self._set_phase(pod, "Pending", reason=PREPARE_FAILED, message=message)\n'
                  '        pod = self._store.peek("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"]) or pod\n')),
        ),
    ),
    Variant(
        "failed-pod-status-rewritten", "KEP-5322/ONE-STATUS-WRITE",
        "the kubelet rewrites a failed pod's status message at every retry interval, though it asks no plugin again",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._fail",
                 "        return failed\n",
                 ('        _rewrite_failed(self, pod["metadata"]["namespace"], pod["metadata"]["name"], message, 1)\n'
                  "        return failed\n"),
                 names={"_rewrite_failed": _rewrite_failed}),
        ),
    ),
    Variant(
        "failed-pod-status-rewritten-on-restart", "KEP-5322/ONE-STATUS-WRITE",
        "a restarted kubelet writes the status of a pod it had failed again, with a new message",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._sync_pod",
                 "            state = self._pods[key] = PodState(uid)\n",
                 ("            state = self._pods[key] = PodState(uid)\n"
                  '            if (pod.get("status") or {}).get(\n'
                  '                    "reason") == PREPARE_FAILED:  # a kubelet meeting a pod it failed reports the failure afresh\n'
                  '                status = pod["status"]\n'
                  '                return self._set_phase(pod, "Failed", reason=PREPARE_FAILED,\n'
                  '                                       message=f"{status.get(\'message\')} (seen again by the kubelet)")\n')),
        ),
    ),
    Variant(
        "ungenerated-claims-skipped", "KEP-3063/MISSING-CLAIM-BLOCKS-POD",
        "a template entry whose claim is not generated yet is skipped, so the pod is bound without it",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources.pre_enqueue",
                 "                    return f\"pod has no claim status for entry {entry['name']!r} yet\"\n",
                 "                    continue\n"),
        ),
    ),
    Variant(
        "joining-pod-not-reserved", "KEP-3063/RESERVED-FOR-POD",
        "a pod is added to reservedFor only in the write that allocates the claim, not when it joins an allocated one",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._write_claim",
                 "            changed = False\n",
                 ("            changed = False\n"
                  "            reserve = True\n")),
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._write_claim",
                 '            if not is_reserved_for(latest, pod["metadata"]["uid"]):\n',
                 ("            if assumed is None:\n"
                  "                reserve = False  # only the write that allocates adds the pod to reservedFor\n"
                  "            if reserve and not is_reserved_for(\n"
                  '                    latest, pod["metadata"]["uid"]):\n')),
        ),
    ),
    Variant(
        "failure-conditions-may-repeat", "DRA-API/BINDING-CONDITIONS-UNIQUE",
        "the API server checks only bindingConditions for repeats, not bindingFailureConditions",
        loosened_schemas(_failure_conditions_unchecked),
    ),
    Variant(
        "checkpoint-misses-joining-pods", "KEP-3063/KUBELET-UNPREPARE-EACH-PREPARE",
        "the kubelet's checkpoint records a claim's pods only when it calls the plugin, so a pod that joins a prepared claim is forgotten across a restart",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet.__init__",
                 "        self._stopped = False\n",
                 ("        self._stopped = False\n"
                  "        self._joined: dict[str, set[str]] = {}  # claim UID -> pods that joined it, in memory only\n")),
            Edit("draconform.reference.kubelet.kubelet:Kubelet._record",
                 '            self._checkpoint.claims[meta["uid"]] = record\n',
                 ('            self._checkpoint.claims[meta["uid"]] = record\n'
                  "        if record.prepared and pod_uid not in record.pods:\n"
                  '            self._joined.setdefault(meta["uid"], set()).add(pod_uid)  # in memory only: a restart loses it\n'
                  "            return record\n")),
            Edit("draconform.reference.kubelet.kubelet:Kubelet._unprepare_for",
                 "        for record in records:\n",
                 ("        records += [self._checkpoint.claims[uid] for uid, pods in self._joined.items()\n"
                  "                    if state.uid in pods and uid in self._checkpoint.claims]\n"
                  "        for record in records:\n"
                  "            joined = self._joined.get(record.ref.uid, set())\n"
                  "            if (record.pods | joined) - {state.uid}:\n"
                  "                record.pods.discard(state.uid)\n"
                  "                joined.discard(state.uid)\n"
                  "                continue\n")),
        ),
    ),
    Variant(
        "shares-take-no-counters", "KEP-5075/COUNTERS-ONCE",
        "the shares of a multi-allocatable device take none of the counters it consumes",
        (
            Edit("draconform.reference.allocator.columnar.search:Search._try",
                 "        counts = not (shared and self.ledger.in_use(device))\n",
                 "        counts = not shared\n"),
        ),
    ),
    Variant(
        "kubelet-ignores-extended-claim", "KEP-5004/RELEASED-WITH-POD",
        "the kubelet leaves the claim for a pod's extended resources alone, so a finished pod keeps it reserved",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._claims_of",
                 '        """The pod\'s claims, with the claim for its extended resources while DRAExtendedResource is on."""\n',
                 ('        """The pod\'s claims, with the claim for its extended resources while DRAExtendedResource is on."""\n'
                  "        return pod_claims(pod)  # the extended claim left to kube-controller-manager, which waits for us\n")),
        ),
    ),
    Variant(
        "restart-readmits-failed-pods", "KEP-5322/FAILED-STAYS-FAILED",
        "a restarted kubelet admits a pod that failed on a permanent error again, and prepares its claims",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._sync_pod",
                 '        uid = pod["metadata"]["uid"]\n',
                 ('        uid = pod["metadata"]["uid"]\n'
                  "        fresh = state is None\n")),
            Edit("draconform.reference.kubelet.kubelet:Kubelet._sync_pod",
                 '        finishing = bool(pod["metadata"].get("deletionTimestamp")) or phase in ("Succeeded", "Failed")\n',
                 ('        finishing = bool(pod["metadata"].get("deletionTimestamp")) or phase in ("Succeeded", "Failed")\n'
                  '        if fresh and phase == "Failed" and not pod["metadata"].get("deletionTimestamp") and (\n'
                  '                pod.get("status") or {}).get("reason") == PREPARE_FAILED:\n'
                  "            return self._start(pod, state)  # a pod this kubelet did not see fail is admitted again\n")),
        ),
    ),
    # Rules one scenario is enough for: the variant the one scenario kills, as evidence.
    Variant(
        "failed-pod-deleted", "KEP-5322/NO-EVICTION",
        "the kubelet deletes the pod it failed on a permanent error",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._fail",
                 '        failed = self._set_phase(pod, "Failed", reason=PREPARE_FAILED, message=message)\n',
                 ('        failed = self._set_phase(pod, "Failed", reason=PREPARE_FAILED, message=message)\n'
                  '        self._store.delete("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])\n')),
        ),
    ),
    Variant(
        "allocation-node-ignored", "KEP-3063/ALLOCATED-CLAIM-FILTERS-NODES",
        "an allocated claim of the pod does not restrict the nodes the pod may go to",
        (
            Edit("draconform.reference.scheduler.dynamicresources:_allocated_elsewhere",
                 "        allocation = _allocation(claim)\n",
                 ("        allocation = _allocation(claim)\n"
                  "        continue\n")),
        ),
    ),
    Variant(
        "generated-claim-not-controlled", "KEP-3063/TEMPLATE-CLAIM-CREATED",
        "the claim generated from a template names the pod as an owner but not as its controller",
        (
            Edit("draconform.reference.podclaims:claim_from_template",
                 '             "controller": True, "blockOwnerDeletion": True}\n',
                 '             "controller": False, "blockOwnerDeletion": True}\n'),
        ),
    ),
    Variant(
        "reservation-dropped-before-unprepare", "KEP-3063/KUBELET-RELEASE-AFTER-UNPREPARE",
        "the kubelet takes a deleted pod out of reservedFor before its claims are unprepared",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._terminate",
                 '        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])\n',
                 ('        key = (pod["metadata"]["namespace"], pod["metadata"]["name"])\n'
                  "        self._drop_reservations(pod)  # the pod leaves reservedFor whether or not its claims are unprepared\n")),
        ),
    ),
    Variant(
        "kubelet-without-dra-waits", "KEP-3063/KUBELET-FEATURE-OFF",
        "a kubelet with DynamicResourceAllocation off still waits for the pod's claims and prepares them",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._start",
                 ('        if not self._gates.enabled("DynamicResourceAllocation"):\n'
                  '            return self._set_phase(pod, "Running")  # the skew row: started without its resources\n'),
                 ""),
        ),
    ),
    Variant(
        "capacity-names-compared-as-written", "KEP-5075/MISSING-CAPACITY",
        "a capacity named with the driver's domain is another capacity than the same name without it",
        overrides=(Replace("draconform.reference.allocator.capacity:qualified", _as_written),),
    ),
    # --- one rule's gate-off behaviour wrong while the gate's own rule stays right (issue 39) --------------
    Variant(
        "gate-off-event-calls-permanent", "KEP-5322/EVENT-SAYS-PERMANENT",
        "a kubelet with DRAHandlePermanentDriverFailures off retries a permanent error but its event calls it permanent",
        (
            Edit("draconform.reference.kubelet.kubelet:Kubelet._prepare",
                 "                else:\n"
                 '                    transient.append(f"DRA driver {driver} failed to prepare {where}: {result.error}")\n',
                 "                elif result.permanent:\n"
                 '                    transient.append(f"DRA driver {driver} reported a permanent error preparing {where}: "\n'
                 '                                     f"{result.error}")\n'
                 "                else:\n"
                 '                    transient.append(f"DRA driver {driver} failed to prepare {where}: {result.error}")\n'),
        ),
    ),
    Variant(
        "gate-off-whole-allocation-gets-share-id", "KEP-5075/SHARE-ID",
        "with DRAConsumableCapacity off a multi-allocatable device allocated whole still gets a shareID",
        (
            Edit("draconform.reference.allocator.results:build_allocation",
                 "        if pick.consumed is not None:  # KEP-5075: a fresh share of the device and what it consumes\n",
                 "        if pick.consumed is None and pick.device.allow_multiple:\n"
                 '            result["shareID"] = str(uuid4())  # the variant: an id for a device held whole\n'
                 "        if pick.consumed is not None:  # KEP-5075: a fresh share of the device and what it consumes\n"),
        ),
    ),
    # --- KEP-5322: the faulty device, whichever the allocator chose ------------------------------------------
    Variant(
        "driver-taints-nothing", "KEP-5322/DRIVER-TAINTS-FAULTY-DEVICE",
        "the driver refuses a claim on a broken device permanently but never taints the device",
        overrides=(Replace("draconform.reference.drivers.driver:ReferenceDriver._broken", defects.driver_taints_nothing),),
    ),
    Variant(
        "driver-taints-whole-pool", "KEP-5322/DRIVER-TAINTS-FAULTY-DEVICE",
        "the driver taints every device of the broken device's pool, the healthy ones too",
        overrides=(Replace("draconform.reference.drivers.driver:ReferenceDriver._broken",
                           defects.driver_taints_whole_pool),),
    ),
    # --- each gated rule under both settings: the component ignores the gate's setting (issue 39) ---------
    *defects.gate_pair("KEP-5322/GATE", "kubelet", "DRAHandlePermanentDriverFailures", "kubelet-permanent-failures-gate"),
    *defects.gate_pair("KEP-5075/SCHEDULER-GATE-OFF", "kube-scheduler", "DRAConsumableCapacity", "scheduler-consumable-capacity-gate"),
    *defects.gate_pair("KEP-5004/GATE-OFF", "kube-scheduler", "DRAExtendedResource", "scheduler-extended-resource-gate"),
)
