"""Known-bad variants of KEP-5007 (binding conditions): each a set of overrides of named functions
(draconform.mutation.overrides, mostly an Edit of a few lines) that turns the correct code back into one bug
breaking the rule it names."""

from __future__ import annotations

from draconform.mutation.known_bad import defects
from draconform.mutation.known_bad.schema import loosened_schema
from draconform.mutation.overrides import Edit
from draconform.mutation.variant import Variant

VARIANTS: tuple[Variant, ...] = (
    # --- KEP-5007: API server ----------------------------------------------------------------------
    Variant(
        "five-binding-conditions-accepted", "KEP-5007/CONDITIONS-MAX-FOUR",
        "the API server accepts 5 conditions",
        loosened_schema("bindingConditions", maxItems=5),
    ),
    Variant(
        "condition-type-syntax-unchecked", "KEP-5007/CONDITION-TYPE-FORMAT",
        "any string is a condition type",
        loosened_schema("bindingConditions", items={"type": "string"}),
    ),
    Variant(
        "binding-lists-unpaired", "KEP-5007/CONDITION-LISTS-PAIRED",
        "one list may be set without the other",
        (
            Edit("draconform.validation.rules:_binding_conditions",
                 ("    if bool(conditions) != bool(failures):\n"
                  '        present, missing = ("bindingConditions", "bindingFailureConditions") if conditions else (\n'
                  '            "bindingFailureConditions", "bindingConditions")\n'
                  '        yield Problem((*path, missing), f"Invalid value: null: required when `{present}` is set",\n'
                  '                      "DRA-API/BINDING-CONDITIONS-TOGETHER")\n'),
                 ""),
        ),
    ),
    Variant(
        "binding-fields-kept-with-gate-off", "KEP-5007/APISERVER-STRIPS-FIELDS",
        "a gate-off API server keeps the binding fields",
        (
            Edit("draconform.validation.gates:strip_disabled",
                 ("            continue\n"
                  "        for path, parent, key in list(_find(obj, gated.steps)):\n"),
                 ("            continue\n"
                  "        if gated.gates == BINDING:\n"
                  "            continue  # the variant: a gate-off API server keeps the field\n"
                  "        for path, parent, key in list(_find(obj, gated.steps)):\n")),
        ),
    ),
    Variant(
        "stored-binding-fields-dropped-on-update", "KEP-5007/DISABLE-KEEPS-WORKLOADS",
        "a gate-off API server drops stored binding fields when the object is updated",
        (
            Edit("draconform.validation.gates:_kept_from",
                 "    return known and in_use(old, gated)\n",
                 "    return known and in_use(old, gated) and not gated.gates == BINDING\n"),
        ),
    ),
    # --- KEP-5007: allocation ----------------------------------------------------------------------
    Variant(
        "failure-conditions-not-copied", "KEP-5007/RESULT-COPIES-CONDITIONS",
        "the result copies bindingConditions but not bindingFailureConditions",
        (
            Edit("draconform.reference.allocator.results:build_allocation",
                 '            result["bindingFailureConditions"] = list(device.binding_failure_conditions)\n',
                 ""),
        ),
    ),
    Variant(
        "allocation-timestamp-overwritten", "KEP-5007/ALLOCATION-TIMESTAMP",
        "a pod joining an allocated claim rewrites allocationTimestamp",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._write_claim",
                 ("                changed = True\n"
                  '            if not is_reserved_for(latest, pod["metadata"]["uid"]):\n'),
                 ("                changed = True\n"
                  '            elif self.binding and status.get("allocation"):\n'
                  '                status["allocation"] = {**status["allocation"],\n'
                  '                                        "allocationTimestamp": format_time(self._clock.now())}\n'
                  "                changed = True\n"
                  '            if not is_reserved_for(latest, pod["metadata"]["uid"]):\n')),
        ),
    ),
    Variant(
        "binding-needs-one-gate", "KEP-5007/GATES-BOTH-REQUIRED",
        "DRADeviceBindingConditions alone turns the feature on",
        (
            Edit("draconform.reference.allocator.gates:Gates.of",
                 '            binding=gates.enabled("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"),\n',
                 '            binding=gates.enabled("DRADeviceBindingConditions", *()),\n'),
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources.__init__",
                 "        self.binding = gates.enabled(*BINDING_GATES)\n",
                 "        self.binding = gates.enabled(*BINDING_GATES[:1])\n"),
        ),
    ),
    Variant(
        "binds-to-node-ignored", "KEP-5007/BINDS-TO-NODE",
        "bindsToNode does not pin the allocation",
        (
            Edit("draconform.reference.allocator.results:allocation_node_selector",
                 "    binds_to_node = gates.binding\n",
                 "    binds_to_node = False\n"),
        ),
    ),
    Variant(
        "reservation-written-after-wait", "KEP-5007/ALLOCATION-PERSISTED-BEFORE-WAIT",
        "the pod's reservation is written only once the conditions are met",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._decide",
                 ('            if (claim is None or claim["metadata"]["uid"] != ref.uid or not _allocation(claim)\n'
                  "                    or not is_reserved_for(claim, uid)):\n"),
                 '            if claim is None or claim["metadata"]["uid"] != ref.uid or not _allocation(claim):\n'),
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._decide",
                 "        if overall.outcome == Outcome.READY:\n",
                 ("        if overall.outcome == Outcome.READY:\n"
                  "            for claim in claims:\n"
                  "                if claim is not None:\n"
                  "                    self._write_claim(claim, pod)\n")),
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._write_claim",
                 "            changed = False\n",
                 ("            changed = False\n"
                  "            reserve = True\n")),
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._write_claim",
                 '            if not is_reserved_for(latest, pod["metadata"]["uid"]):\n',
                 ("                reserve = not _needs_conditions(allocation)\n"
                  "            if reserve and not is_reserved_for(\n"
                  '                    latest, pod["metadata"]["uid"]):\n')),
        ),
    ),
    Variant(
        "pool-devices-need-a-node", "KEP-5007/DDS-POOL-DEVICES-ALLOCATABLE",
        "allNodes devices with bindsToNode are never candidates",
        (
            Edit("draconform.reference.allocator.columnar.pools:_usable",
                 '        keep = _without(keep, newest_devices["has_binding"])\n',
                 ('        keep = _without(keep, newest_devices["has_binding"])\n'
                  '    keep = _without(keep, [bound and node is None for bound, node in zip(\n'
                  '        newest_devices["has_binding"], newest_devices["node_name"], strict=True)])\n')),
        ),
    ),
    # --- KEP-5007: PreBind --------------------------------------------------------------------------
    Variant(
        "any-condition-true-is-ready", "KEP-5007/PREBIND-ALL-TRUE",
        "one True binding condition is enough",
        (
            Edit("draconform.reference.scheduler.bindingconditions:claim_verdict",
                 ("    )\n"
                  "    for result in results:\n"),
                 ("    )\n"
                  "    ready = any(\n"
                  "        _is_true(device_conditions(claim, result), wanted)\n"
                  "        for result in results\n"
                  '        for wanted in result["bindingConditions"]\n'
                  "    )\n"
                  "    for result in results:\n")),
        ),
    ),
    Variant(
        "status-not-false-is-met", "KEP-5007/PREBIND-STATUS-ONLY",
        "Unknown or missing counts as met",
        (
            Edit("draconform.reference.scheduler.bindingconditions:_is_true",
                 '    status = (conditions.get(condition_type) or {}).get("status")\n',
                 ('    status = (conditions.get(condition_type) or {}).get("status")\n'
                  '    return status != "False"\n')),
        ),
    ),
    Variant(
        "conditions-from-any-device", "KEP-5007/PREBIND-STATUS-ONLY",
        "a condition reported for one device counts for another",
        (
            Edit("draconform.reference.scheduler.bindingconditions:device_conditions",
                 ("        if device_id(entry) == wanted:\n"
                  '            return {c.get("type", ""): c for c in entry.get("conditions") or []}\n'),
                 '        return {c.get("type", ""): c for c in entry.get("conditions") or []}\n'),
        ),
    ),
    Variant(
        "pending-event-without-conditions", "KEP-5007/PREBIND-NO-CONDITIONS",
        "pods without binding conditions get a BindingConditionsPending event",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources.pre_bind",
                 '            self._observe("success", False, entered)\n',
                 ('            self._observe("success", False, entered)\n'
                  '            self._events.record(pod, "Normal", PENDING_REASON, "checked the binding conditions")\n')),
        ),
    ),
    Variant(
        "failure-ignored", "KEP-5007/PREBIND-FAILURE",
        "binding failure conditions are never looked at",
        (
            Edit("draconform.reference.scheduler.bindingconditions:claim_verdict",
                 "    for result in results:\n",
                 ("    for result in results:\n"
                  "        break\n")),
        ),
    ),
    Variant(
        "ready-wins-over-failure", "KEP-5007/FAILURE-WINS",
        "all conditions True binds despite a failure",
        (
            Edit("draconform.reference.scheduler.bindingconditions:claim_verdict",
                 ("    )\n"
                  "    for result in results:\n"),
                 ("    )\n"
                  "    if ready:\n"
                  "        return READY\n"
                  "    for result in results:\n")),
        ),
    ),
    Variant(
        "failure-checked-only-on-entry", "KEP-5007/FAILURE-THROUGHOUT",
        "failures are looked for only when PreBind starts",
        (
            Edit("draconform.reference.scheduler.bindingconditions:claim_verdict",
                 "    for result in results:\n",
                 ("    for result in results:\n"
                  "        if now != entered:\n"
                  "            break\n")),
        ),
    ),
    Variant(
        "clear-drops-only-reservation", "KEP-5007/CLEAR-ALLOCATION",
        "clearing leaves the allocation to other components",
        (
            Edit("draconform.reference.scheduler.bindingconditions:cleared_status",
                 '    remaining = [entry for entry in status.get("reservedFor") or [] if entry.get("uid") != pod_uid]\n',
                 ('    remaining = [entry for entry in status.get("reservedFor") or [] if entry.get("uid") != pod_uid]\n'
                  '    status["reservedFor"] = remaining\n'
                  "    return status\n")),
        ),
    ),
    Variant(
        "clear-keeps-device-status", "KEP-5007/CLEAR-ALLOCATION",
        "clearing keeps the stale per-device status",
        (
            Edit("draconform.reference.scheduler.bindingconditions:cleared_status",
                 '    kept = [entry for entry in status.get("devices") or [] if device_id(entry) not in allocated]\n',
                 ('    kept = [entry for entry in status.get("devices") or [] if device_id(entry) not in allocated]\n'
                  '    kept = list(status.get("devices") or [])\n')),
        ),
    ),
    Variant(
        "clear-deallocates-shared-claim", "KEP-5007/CLEAR-ALLOCATION",
        "clearing deallocates a claim another pod still holds",
        (
            Edit("draconform.reference.scheduler.bindingconditions:cleared_status",
                 ("    if remaining:\n"
                  '        status["reservedFor"] = remaining\n'
                  "        return status\n"),
                 ""),
        ),
    ),
    Variant(
        "pod-waits-on-first-claim-only", "KEP-5007/MULTI-CLAIM",
        "only the pod's first claim is waited on",
        (
            Edit("draconform.reference.scheduler.bindingconditions:pod_verdict",
                 "    collected = list(verdicts)\n",
                 ("    collected = list(verdicts)\n"
                  "    collected = collected[:1]\n")),
        ),
    ),
    Variant(
        "pending-event-missing", "KEP-5007/EVENT-PENDING",
        "no BindingConditionsPending event",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources.pre_bind",
                 ("        if status.code == Code.PENDING:\n"
                  "            self._events.record(\n"
                  '                pod, "Normal", PENDING_REASON,\n'
                  '                f"waiting for the binding conditions of its devices before binding to node {node_name(node)}",\n'
                  "            )\n"),
                 ""),
        ),
    ),
    # --- KEP-5007: timeout --------------------------------------------------------------------------
    Variant(
        "never-times-out", "KEP-5007/TIMEOUT",
        "a wait never times out",
        (
            Edit("draconform.reference.scheduler.bindingconditions:claim_verdict",
                 ("    if now >= deadline:\n"
                  '        return Verdict(Outcome.TIMEOUT, f"claim {name} binding timeout", deadline)\n'),
                 ""),
        ),
    ),
    Variant(
        "default-timeout-five-minutes", "KEP-5007/TIMEOUT-DEFAULT",
        "the default timeout is 5 minutes",
        (
            Edit("draconform.reference.scheduler.bindingconditions:parse_binding_timeout",
                 "        return DEFAULT_BINDING_TIMEOUT\n",
                 "        return timedelta(minutes=5)\n"),
        ),
    ),
    Variant(
        "binding-timeout-argument-ignored", "KEP-5007/TIMEOUT-CONFIGURABLE",
        "bindingTimeout is not read",
        (
            Edit("draconform.reference.scheduler.bindingconditions:parse_binding_timeout",
                 '    raw = args.get("bindingTimeout")\n',
                 ('    raw = args.get("bindingTimeout")\n'
                  "    raw = None\n")),
        ),
    ),
    Variant(
        "timeout-from-prebind-entry", "KEP-5007/TIMEOUT-ANCHOR",
        "the timeout counts from when the pod entered PreBind",
        (
            Edit("draconform.reference.scheduler.bindingconditions:binding_deadline",
                 '    stamp = ((claim.get("status") or {}).get("allocation") or {}).get("allocationTimestamp")\n',
                 ('    stamp = ((claim.get("status") or {}).get("allocation") or {}).get("allocationTimestamp")\n'
                  "    stamp = None\n")),
        ),
    ),
    Variant(
        "missing-timestamp-times-out-at-once", "KEP-5007/TIMEOUT-WITHOUT-TIMESTAMP",
        "a claim without allocationTimestamp times out at once",
        (
            Edit("draconform.reference.scheduler.bindingconditions:binding_deadline",
                 '    stamp = ((claim.get("status") or {}).get("allocation") or {}).get("allocationTimestamp")\n',
                 ('    stamp = ((claim.get("status") or {}).get("allocation") or {}).get("allocationTimestamp")\n'
                  "    if not stamp:\n"
                  "        return entered\n")),
        ),
    ),
    Variant(
        "timeout-leaves-claim-allocated", "KEP-5007/DDS-AFTER-TIMEOUT",
        "a timeout does not clear the claim",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._decide",
                 "        for claim, verdict in zip(claims, verdicts, strict=True):\n",
                 ("        for claim, verdict in zip(claims, verdicts, strict=True):\n"
                  "            if verdict.outcome == Outcome.TIMEOUT:\n"
                  "                continue\n")),
        ),
    ),
    # --- KEP-5007: restart, metrics, skew, rollout ----------------------------------------------------
    Variant(
        "restart-binds-allocated-claims", "KEP-5007/RESTART-RESUMES",
        "a pod whose claims are already allocated is bound without checking its conditions",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources.pre_bind",
                 ("            return SUCCESS\n"
                  "        wait = BindingWait(entered, [_ref(claim) for claim in written])\n"),
                 ("            return SUCCESS\n"
                  "        if not claims_state.unallocated:\n"
                  '            self._observe("success", True, entered)\n'
                  "            return SUCCESS\n"
                  "        wait = BindingWait(entered, [_ref(claim) for claim in written])\n")),
        ),
    ),
    Variant(
        "metric-counts-pods-without-conditions", "KEP-5007/METRIC-ALLOCATIONS",
        "pods without binding conditions are counted",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._observe",
                 ("        if self.metrics is not None:\n"
                  "            seconds = (self._clock.now() - entered).total_seconds()\n"),
                 ("        if self.metrics is not None:\n"
                  "            requires = True\n"
                  "            seconds = (self._clock.now() - entered).total_seconds()\n")),
        ),
    ),
    Variant(
        "prebind-duration-without-wait", "KEP-5007/METRIC-PREBIND-DURATION",
        "the duration leaves out the wait",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._observe",
                 "            seconds = (self._clock.now() - entered).total_seconds()\n",
                 ("            seconds = (self._clock.now() - entered).total_seconds()\n"
                  "            seconds = 0.0\n")),
        ),
    ),
    Variant(
        "older-scheduler-sees-binding-fields", "KEP-5007/SKEW-OLDER-SCHEDULER",
        "an older scheduler acts on fields it cannot know",
        (
            Edit("draconform.reference.scheduler.releaseview:hidden_fields",
                 "    return tuple(unknown_fields(gates))\n",
                 ('    hidden = [gated for gated in unknown_fields(gates) if not "DRADeviceBindingConditions" in gated.gates]\n'
                 "    return tuple(hidden)\n")),
        ),
    ),
    Variant(
        "older-apiserver-keeps-stored-fields", "KEP-5007/DOWNGRADED-APISERVER",
        "an older API server keeps stored fields it does not know on update, as a gate-off one does",
        (
            Edit("draconform.reference.apiserver.store:Store._existing",
                 ("            )\n"
                  "        return key, self._served(old)  # what this release decodes from storage is what the write starts from\n"),
                 ("            )\n"
                  "        return key, old\n"
                  "        return key, self._served(old)  # what this release decodes from storage is what the write starts from\n")),
            Edit("draconform.validation.gates:_kept_from",
                 "    known = known_to(gated, gates)\n",
                 "    known = True\n"),
        ),
    ),
    Variant(
        "gate-off-allocates-binding-devices", "KEP-5007/SKEW-GATE-OFF-SCHEDULER",
        "a gate-off scheduler allocates devices with binding conditions",
        (
            Edit("draconform.reference.allocator.columnar.pools:_usable",
                 ("    if not gates.binding:\n"
                  '        keep = _without(keep, newest_devices["has_binding"])\n'),
                 ""),
        ),
    ),
    Variant(
        "timeout-counted-as-failure", "KEP-5007/ROLLOUT-NO-CONTROLLER",
        "timeouts are counted as failures",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._observe",
                 ("        if self.metrics is not None:\n"
                  "            seconds = (self._clock.now() - entered).total_seconds()\n"),
                 ("        if self.metrics is not None:\n"
                  '            if status == "timeout":\n'
                  '                status = "failure"\n'
                  "            seconds = (self._clock.now() - entered).total_seconds()\n")),
        ),
    ),
    Variant(
        "binding-gates-latched-at-first-start", "KEP-5007/REENABLE-RESUMES",
        "a restarted scheduler keeps the binding gates it first ran with",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources.__init__",
                 "        self.binding = gates.enabled(*BINDING_GATES)\n",
                 ("        self.binding = gates.enabled(*BINDING_GATES)\n"
                  "        self.binding = _LATCHED.setdefault(id(store), self.binding)\n"),
                 names={"_LATCHED": {}}),  # the gates of each store's first scheduler
        ),
    ),
    # --- KEP-5007: controllers and the scaler (the reference's own) ----------------------------------
    Variant(
        "controller-reports-first-condition-only", "KEP-5007/CONTROLLER-REPORTS-READINESS",
        "the binding controller sets only the first of several binding conditions",
        (
            Edit("draconform.reference.controllers.binding:BindingController._answer",
                 '                wanted_types = result["bindingConditions"]\n',
                 ('                wanted_types = result["bindingConditions"]\n'
                  "                wanted_types = wanted_types[:1]\n")),
        ),
    ),
    Variant(
        "failed-binding-parks-pod-unschedulable", "KEP-5007/CONTROLLER-OUTAGE",
        "a pod whose wait failed or timed out is parked until a cluster event instead of retried",
        (
            Edit("draconform.reference.scheduler.scheduler:Scheduler._fail",
                 ("        if status.code == Code.ERROR:\n"
                  "            self.queue.add_backoff(_key(pod))\n"
                  "        else:\n"
                  "            self.queue.add_unschedulable(_key(pod))\n"),
                 "        self.queue.add_unschedulable(_key(pod))\n"),
        ),
    ),
    Variant(
        "attached-device-keeps-binding-conditions", "KEP-5007/DDS-RESCHEDULE-ONTO-ATTACHED",
        "the scaler publishes the attached device with the pool device's binding conditions",
        (
            Edit("draconform.reference.controllers.scaler:DynamicDeviceScaler._publish_on_node",
                 ("            device = {k: copy_object(v) for k, v in published.items()\n"
                  "                      if k not in BINDING_FIELDS}\n"),
                 "            device = {k: copy_object(v) for k, v in published.items()}\n"),
        ),
    ),
    Variant(
        "scaler-ignores-vanished-devices", "KEP-5007/DDS-POOL-SHRINK",
        "the scaler does not reschedule pods whose pool device left the pool",
        (
            Edit("draconform.reference.controllers.scaler:DynamicDeviceScaler.sync",
                 ('        if any(event.object["kind"] == "ResourceSlice" for event in events):\n'
                  "            self._reschedule_vanished()\n"),
                 ""),
        ),
    ),
    # --- a component that honours the gate but gets one rule's gate-off side wrong (issue 39) -------------
    Variant(
        "gate-off-prebind-waits-on-copied-conditions", "KEP-5007/PREBIND-ALL-TRUE",
        "with a binding gate off the scheduler picks no device with conditions, yet still waits on a claim that "
        "was allocated with some",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources.pre_bind",
                 "        if not self.binding:\n            return SUCCESS\n",
                 "        if not self.binding and not any(map(requires_binding_conditions, written)):\n"
                 "            return SUCCESS\n"),
        ),
    ),
    Variant(
        "gate-off-prebind-still-aborts-on-failure", "KEP-5007/PREBIND-FAILURE",
        "with a binding gate off the scheduler does not wait, yet still gives up and clears a claim allocated with "
        "binding conditions when a failure condition is True or its timeout has passed",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources.pre_bind",
                 "        if not self.binding:\n            return SUCCESS\n",
                 "        if not self.binding and not any(map(requires_binding_conditions, written)):\n"
                 "            return SUCCESS\n"
                 "        if not self.binding:\n"
                 "            verdict = self._decide(BindingWait(entered, [_ref(c) for c in written]), pod, written)\n"
                 "            return SUCCESS if verdict.code == Code.PENDING else verdict\n"),
        ),
    ),
    Variant(
        "timestamp-needs-one-gate", "KEP-5007/ALLOCATION-TIMESTAMP",
        "the scheduler stamps allocationTimestamp whenever DRADeviceBindingConditions is on, whatever "
        "DRAResourceClaimDeviceStatus says (everything else follows both gates)",
        (
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources.__init__",
                 '        self.extended_resources = gates.enabled("DRAExtendedResource")\n',
                 '        self.extended_resources = gates.enabled("DRAExtendedResource")\n'
                 "        self.stamps = gates.enabled(*BINDING_GATES[:1])\n"),
            Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._write_claim",
                 '                if self.binding and not allocation.get("allocationTimestamp"):\n',
                 '                if self.stamps and not allocation.get("allocationTimestamp"):\n'),
        ),
    ),
    # --- each gated rule under both settings: the component ignores the gate's setting (issue 39) ---------
    *defects.gate_pair("KEP-5007/SKEW-GATE-OFF-SCHEDULER", "kube-scheduler", "DRADeviceBindingConditions", "scheduler-binding-conditions-gate"),
    *defects.gate_pair("KEP-5007/APISERVER-STRIPS-FIELDS", "kube-apiserver", "DRADeviceBindingConditions", "apiserver-binding-conditions-gate"),
)
