"""Conforming variants of the reference implementation: each makes another choice that a KEP or upstream
Kubernetes allows (a MAY or SHOULD, "any of", an order the KEP leaves open, a timing within its bounds, an
event's wording), tied to the rule it exercises and the sentence that allows it. The suite must pass every
one (a failure is a false failure of the suite, and `draconform mutants` exits non-zero on it);
docs/suite-power.md ("Freedoms per KEP") lists them beside the rules."""

from __future__ import annotations

from datetime import timedelta

from draconform.mutation import choices
from draconform.mutation.overrides import Edit, Override, Set, Wrap
from draconform.mutation.variant import CONFORMING as KIND
from draconform.mutation.variant import Variant


def conforming(name: str, rule: str, what: str, allows: str, *overrides: Override) -> Variant:
    return Variant(name=name, rule=rule, what=what, overrides=overrides, kind=KIND, allows=allows)


CONFORMING: tuple[Variant, ...] = (
    # --- KEP-3063 core DRA: claims, kubelet -----------------------------------------------------------------
    conforming(
        "kubelet-backoff-capped-at-two-minutes", "KEP-3063/KUBELET-RETRY-WITH-BACKOFF",
        "the kubelet's backoff between prepare attempts grows to at most two minutes, not five",
        "KEP-3063 kubelet NodePrepareResource errors: exponential back off, cap not given",
        Set("draconform.reference.kubelet.kubelet:MAX_BACKOFF", timedelta(minutes=2)),
    ),
    conforming(
        "kubelet-backoff-starts-at-two-seconds", "KEP-3063/KUBELET-RETRY-WITH-BACKOFF",
        "the kubelet's first retry of a failed prepare comes after 2 seconds instead of 1",
        "KEP-3063 kubelet NodePrepareResource errors: retried with exponential back off, amounts not given",
        Set("draconform.reference.kubelet.kubelet:INITIAL_BACKOFF", timedelta(seconds=2)),
    ),
    conforming(
        "kubelet-retries-prepare-every-ten-seconds", "KEP-3063/KUBELET-RETRY-WITH-BACKOFF",
        "the kubelet retries a failed prepare every 10 seconds, as upstream's pod worker does, except after "
        "NOT_FOUND, which it still retries at growing intervals",
        "KEP-3063 Resource allocation flow: failed operations are retried until they succeed; NodePrepareResource "
        "Errors ask for exponential back off only after NOT_FOUND",
        Edit("draconform.reference.kubelet.kubelet:Kubelet._start_with_claims",
             '            self._back_off((namespace, pod["metadata"]["name"]), state)\n',
             '            self._back_off((namespace, pod["metadata"]["name"]), state,\n'
             '                           fixed=not any("NOT_FOUND" in failure for failure in transient))\n'),
        Edit("draconform.reference.kubelet.kubelet:Kubelet._back_off",
             "    def _back_off(self, key: PodKey, state: PodState) -> None:\n"
             "        delay = min(INITIAL_BACKOFF * 2 ** state.attempts, MAX_BACKOFF)\n",
             "    def _back_off(self, key: PodKey, state: PodState, fixed: bool = False) -> None:\n"
             "        delay = (timedelta(seconds=10) if fixed\n"
             "                 else min(INITIAL_BACKOFF * 2 ** state.attempts, MAX_BACKOFF))\n"),
    ),
    conforming(
        "kubelet-re-prepares-after-restart", "KEP-3063/KUBELET-UNPREPARE-EACH-PREPARE",
        "a restarted kubelet asks the plugin once more to prepare the claims of the running or Failed pods it meets",
        "DRA kubelet plugin API: NodePrepareResources is idempotent, so a kubelet may repeat it; KEP-5322 Pod "
        "Admission Failure: 'In some cases, the kubelet will re-reconcile Pods in a Failed phase'",
        Edit("draconform.reference.kubelet.kubelet:Kubelet._sync_pod",
             "            state = self._pods[key] = PodState(uid)\n",
             "            state = self._pods[key] = PodState(uid)\n"
             '            if (pod.get("status") or {}).get("phase") in ("Running", "Failed"):  # met after a restart\n'
             "                for record in self._checkpoint.of_pod(uid):\n"
             "                    for driver in sorted(record.sent):\n"
             "                        try:\n"
             "                            self._plugins.client(driver).prepare([record.ref])\n"
             "                        except (PluginUnavailable, PluginCallError):\n"
             "                            pass\n"),
    ),
    conforming(
        "generated-names-random-suffix", "KEP-3063/TEMPLATE-CLAIM-CREATED",
        "the API server completes a generateName with five random characters, as upstream does",
        "KEP-3063 (resourceclaim controller): a generated claim's name is not predictable and is found through "
        "the pod's status; upstream's API server appends a random suffix",
        Edit("draconform.reference.apiserver.store:Store.create",
             'meta["name"] = f"{meta[\'generateName\']}{next(self._generated_names):05d}"',
             'meta["name"] = f"{meta[\'generateName\']}{__import__(\'secrets\').token_hex(3)[:5]}"'),
    ),
    conforming(
        "kubelet-asks-drivers-in-reverse", "KEP-3063/KUBELET-PREPARE-BEFORE-START",
        "the kubelet asks a pod's drivers in reverse name order",
        "KEP-3063 kubelet: each driver's plugin prepares the pod's claims before the pod starts; the order of "
        "drivers is not given",
        Edit("draconform.reference.kubelet.kubelet:Kubelet._prepare",
             "for driver in sorted({d for record in records for d in record.drivers if d not in record.prepared}):",
             "for driver in sorted({d for record in records for d in record.drivers if d not in record.prepared},"
             " reverse=True):"),
    ),
    conforming(
        "kubelet-sends-claims-in-reverse", "KEP-3063/KUBELET-PREPARE-BEFORE-START",
        "the kubelet lists a pod's claims in one prepare call in reverse order",
        "DRA kubelet plugin API: NodePrepareResources takes a list of claims and answers per claim UID; no "
        "order is given",
        Edit("draconform.reference.kubelet.kubelet:Kubelet._prepare",
             "results = client.prepare([record.ref for record in pending])",
             "results = client.prepare([record.ref for record in reversed(pending)])"),
    ),
    conforming(
        "kubelet-repeats-successful-unprepare", "KEP-3063/KUBELET-UNPREPARE-EACH-PREPARE",
        "the kubelet asks the plugin once more to unprepare claims it just unprepared",
        "KEP-3063 NodeUnprepareResource: a claim is unprepared at least once after its last pod; the call is "
        "idempotent (DRA-PLUGIN/UNPREPARE-IDEMPOTENT), so a kubelet may repeat it",
        Edit("draconform.reference.kubelet.kubelet:Kubelet._unprepare_for",
             "                errors = self._plugins.client(driver).unprepare([record.ref for record in held])\n",
             "                errors = self._plugins.client(driver).unprepare([record.ref for record in held])\n"
             "                if errors and not any(errors.values()):\n"
             "                    self._plugins.client(driver).unprepare([record.ref for record in held])\n"),
    ),
    conforming(
        "scheduler-own-unschedulable-message", "KEP-3063/UNSCHEDULABLE-EXPLAINED",
        "the scheduler words the message of an unschedulable pod's condition and event its own way",
        "KEP-3063 kube-scheduler: a pod that fits no node stays pending with a reason; the message is for "
        "humans and no KEP words it",
        Edit("draconform.reference.scheduler.scheduler:_summarise",
             '    return Status(code, f"0/{node_count} nodes are available: {reasons or \'no nodes\'}.")',
             '    return Status(code, f"no node of {node_count} fits the pod ({reasons or \'there are no nodes\'})")'),
    ),
    # --- KEP-3063 classic protocol --------------------------------------------------------------------------
    conforming(
        "classic-kubelet-upstream-event-reasons", "KEP-3063-CLASSIC/KUBELET-UNRESERVED-POD-NOT-RUN",
        "the classic kubelet records every failure to make a pod's claims ready as FailedPrepareDynamicResources",
        "KEP-3063 kubelet: the kubelet reports why a pod does not start with a suitable event, no reason named; "
        "upstream's kubelet uses the one reason FailedPrepareDynamicResources",
        *(Set(f"draconform.reference.kubelet.classic:{reason}", "FailedPrepareDynamicResources")
          for reason in ("CLAIM_NOT_FOUND", "CLAIM_NOT_RESERVED", "PREPARE_FAILED")),
    ),
    conforming(
        "classic-kubelet-unprepares-twice", "KEP-3063-CLASSIC/KUBELET-UNRESERVE-ON-DELETE",
        "the classic kubelet repeats each successful unprepare call once",
        "KEP-3063 kubelet plugin: NodeUnprepareResource is idempotent, so a kubelet may ask again "
        "(docs/decisions.md classic 6: extra idempotent calls are allowed)",
        Edit("draconform.reference.kubelet.classic:ClassicKubelets._unprepare",
             "        self._call(driver, node, lambda client: client.unprepare(claim_uid, cdi_devices))",
             "        self._call(driver, node, lambda client: client.unprepare(claim_uid, cdi_devices))\n"
             "        self._call(driver, node, lambda client: client.unprepare(claim_uid, cdi_devices))"),
    ),
    conforming(
        "classic-kubelet-backoff-starts-at-two-seconds", "KEP-3063-CLASSIC/KUBELET-PREPARE-FAILURE-RETRIED",
        "the classic kubelet's first retry of a failed prepare comes after 2 seconds instead of 1",
        "KEP-3063 kubelet: failed operations are retried with exponential back off, amounts not given",
        Set("draconform.reference.kubelet.classic:INITIAL_BACKOFF", timedelta(seconds=2)),
    ),
    conforming(
        "classic-potential-nodes-unsorted", "KEP-3063-CLASSIC/PRESCORE-POTENTIAL-NODES",
        "the scheduler writes potentialNodes in reverse name order",
        "KEP-3063 Pre-score: the scheduler lists the nodes that passed filtering; the list's order is not given",
        Edit("draconform.reference.scheduler.classic:ClassicDynamicResources.pre_score",
             "potential = sorted(node_name(node) for node in nodes)",
             "potential = sorted((node_name(node) for node in nodes), reverse=True)"),
    ),
    conforming(
        "classic-postfilter-picks-last-eligible", "KEP-3063-CLASSIC/POSTFILTER-ONE-IN-FLIGHT",
        "Post-filter deallocates the last eligible claim of the pod instead of the first",
        "KEP-3063 kube-scheduler Post-filter: the scheduler picks one of the eligible claims (at random); "
        "any of them may be chosen (docs/decisions.md, classic item 3)",
        Edit("draconform.reference.scheduler.classic:ClassicDynamicResources.post_filter",
             "        for claim in pod_claims.claims:\n"
             "            if not (is_delayed(claim) and is_allocated(claim)) or distinct_users(claim):",
             "        for claim in reversed(pod_claims.claims):\n"
             "            if not (is_delayed(claim) and is_allocated(claim)) or distinct_users(claim):"),
    ),
    # --- structured allocation and the scheduler in general -------------------------------------------------
    conforming(
        "ties-go-to-the-last-node", "KEP-4381/BINDING-CONDITIONS-LAST",
        "among nodes with the best score the scheduler picks the last by name, not the first",
        "upstream kube-scheduler picks at random among the nodes with the highest score (selectHost); no "
        "KEP names a node among equals",
        Edit("draconform.reference.scheduler.scheduler:Scheduler.schedule_one",
             "chosen = feasible[scores.index(max(scores))]",
             "chosen = feasible[len(scores) - 1 - scores[::-1].index(max(scores))]"),
    ),
    # --- KEP-5007 binding conditions ------------------------------------------------------------------------
    conforming(
        "binding-devices-last-per-device", "KEP-5007/PREFER-NO-CONDITIONS",
        "the allocator tries every plain device before every device with binding conditions, pool or not",
        "KEP-5007 Goals 3: the scheduler should prefer devices without binding conditions over those with "
        "them (a per-device order; upstream orders whole pools, D-5007-8 accepts both)",
        Edit("draconform.reference.allocator.columnar.selection:Selection.merge",
             "late = [(devices[d].driver, devices[d].pool) in last for d in merged]",
             "late = [bool(devices[d].binding_conditions) for d in merged]"),
    ),
    conforming(
        "no-binding-conditions-node-score", "KEP-5007/PREFER-NO-CONDITIONS",
        "the scheduler gives every feasible node the same score, whatever binding conditions its devices have",
        "KEP-5007 Goals 3 orders devices, not nodes; upstream has no node score for binding conditions",
        Edit("draconform.reference.scheduler.dynamicresources:DynamicResources.score_nodes",
             "        return [1 if not allocations or not any(map(_needs_conditions, allocations)) else 0 "
             "for allocations in found]",
             "        return [1] * len(nodes)"),
    ),
    conforming(
        "failed-device-withdrawn-late", "KEP-5007/CONTROLLER-FAILURE-NOT-REPICKED",
        "the binding controller withdraws a failed device 2 seconds after reporting the failure, so the "
        "scheduler's next attempt picks it once more",
        "KEP-5007 Handling attachment failures: the controller should ensure the device is not picked again, "
        "with no bound on when; the rule tolerates one re-pick before the withdrawal reaches the scheduler",
        Edit("draconform.reference.controllers.binding:BindingController._answer",
             "            for driver, pool, device in updates:\n"
             "                remove_device(self._store, driver, pool, device)",
             "            for driver, pool, device in updates:\n"
             "                self._clock.call_at(self._clock.now() + __import__('datetime').timedelta(seconds=2),\n"
             "                                    lambda d=driver, p=pool, n=device: "
             "remove_device(self._store, d, p, n) and None)"),
    ),
    conforming(
        "prebind-polls-each-second", "KEP-5007/PREBIND-ALL-TRUE",
        "the scheduler notices a claim's change up to a second later, as a PreBind that polls the claims",
        "KEP-5007 PreBind Process: the scheduler waits until the conditions are met, with no bound on how "
        "soon it notices; upstream's PreBind polls the claims",
        Edit("draconform.reference.scheduler.scheduler:Scheduler._handle",
             '            self.waiting.object_changed(obj["metadata"]["uid"])',
             '            self._clock.call_at(self._clock.now() + __import__("datetime").timedelta(seconds=1),\n'
             '                                lambda uid=obj["metadata"]["uid"]: self.waiting.object_changed(uid))'),
    ),
    conforming(
        "prebind-polls-every-five-seconds", "KEP-5007/PREBIND-FAILURE",
        "the scheduler notices a claim's change up to five seconds later, as upstream's PreBind polls its claims "
        "every 5 s, so a failure's FailedScheduling, the cleared claim and the retry come seconds after the cause",
        "KEP-5007 PreBind Process and Handling attachment failures: the scheduler waits until the conditions are "
        "met or one fails, with no bound on how soon it notices; upstream polls every 5 seconds",
        Edit("draconform.reference.scheduler.scheduler:Scheduler._handle",
             '            self.waiting.object_changed(obj["metadata"]["uid"])',
             '            self._clock.call_at(self._clock.now() + __import__("datetime").timedelta(seconds=5),\n'
             '                                lambda uid=obj["metadata"]["uid"]: self.waiting.object_changed(uid))'),
    ),
    conforming(
        "binding-controller-own-condition-wording", "KEP-5007/CONTROLLER-REPORTS-READINESS",
        "the binding controller's conditions carry its own reason and message",
        "KEP-5007 PreBind Process: only the condition's type and status matter; reason and message are the "
        "controller's (standard metav1.Condition)",
        Edit("draconform.reference.controllers.binding:BindingController._answer",
             'condition(wanted, "True", "DevicePrepared", "the device is ready for the pod", now)',
             'condition(wanted, "True", "FabricAttached", "attached through the fabric manager", now)'),
    ),
    conforming(
        "binding-controller-own-failure-wording", "KEP-5007/PREBIND-FAILURE",
        "the binding controller's failure condition carries its own reason and message",
        "KEP-5007 Handling attachment failures: a binding failure condition that is True aborts the wait; "
        "its reason and message are the controller's",
        Edit("draconform.reference.controllers.binding:BindingController._answer",
             '"True", "PreparationFailed",\n                              "the device could not be prepared", now)',
             '"True", "FabricError",\n                              "the fabric manager gave up attaching", now)'),
    ),
    # --- KEP-5075 consumable capacity -----------------------------------------------------------------------
    conforming(
        "share-ids-time-based", "KEP-5075/SHARE-ID",
        "the scheduler gives each share a time-based UUID instead of a random one",
        "KEP-5075: each share of a device gets its own shareID, a UUID; which kind of UUID is not given",
        Edit("draconform.reference.allocator.results:build_allocation",
             '            result["shareID"] = str(uuid4())',
             '            result["shareID"] = str(__import__("uuid").uuid1())'),
    ),
    # --- KEP-5322 permanent driver failures -----------------------------------------------------------------
    conforming(
        "driver-names-its-slices", "KEP-5322/DRIVER-TAINTS-FAULTY-DEVICE",
        "the reference driver publishes its ResourceSlices under names of its own, not those it was handed",
        "ResourceSlice names are the driver's (upstream's helper lets the API server generate them); a slice "
        "is known by its driver, pool and devices",
        Edit("draconform.reference.drivers.publisher:SlicePublisher.desired",
             '            wanted[slice_["metadata"]["name"]] = slice_',
             '            slice_["metadata"]["name"] = f"{pool}-{self.driver}-{len(wanted)}-own"\n'
             '            wanted[slice_["metadata"]["name"]] = slice_'),
    ),
    conforming(
        "driver-splits-pools-over-slices", "KEP-5322/DRIVER-TAINTS-FAULTY-DEVICE",
        "the reference driver publishes each pool of several devices as two ResourceSlices: the first device "
        "under the slice's name, the rest in a second slice of the same pool",
        "KEP-4381 ResourceSlice: a pool may span several slices (resourceSliceCount); how a driver splits its "
        "devices is its own choice",
        Edit("draconform.reference.drivers.publisher:SlicePublisher.desired",
             "            wanted[slice_[\"metadata\"][\"name\"]] = slice_\n"
             "        return wanted\n",
             "            wanted[slice_[\"metadata\"][\"name\"]] = slice_\n"
             "        split: dict[str, Obj] = {}\n"
             "        extra: dict[str, int] = {}\n"
             "        for name, slice_ in wanted.items():\n"
             "            spec = slice_[\"spec\"]\n"
             "            devices = spec.get(\"devices\") or []\n"
             "            if len(devices) > 1 and not spec.get(\"sharedCounters\"):\n"
             "                second = copy_object(slice_)\n"
             "                second[\"metadata\"][\"name\"] = f\"{name}-part-2\"\n"
             "                spec[\"devices\"], second[\"spec\"][\"devices\"] = devices[:1], devices[1:]\n"
             "                split[second[\"metadata\"][\"name\"]] = second\n"
             "                extra[spec[\"pool\"][\"name\"]] = extra.get(spec[\"pool\"][\"name\"], 0) + 1\n"
             "            split[name] = slice_\n"
             "        for slice_ in split.values():\n"
             "            pool = slice_[\"spec\"][\"pool\"]\n"
             "            pool[\"resourceSliceCount\"] = (pool.get(\"resourceSliceCount\", 1)\n"
             "                                          + extra.get(pool[\"name\"], 0))\n"
             "        return split\n"),
    ),
    conforming(
        "request-mappings-reversed", "KEP-5004/POD-STATUS",
        "the scheduler writes a pod's requestMappings in the reverse of its own order",
        "KEP-5004 pod status: each mapping names a container, an extended resource and the claim's request; "
        "the list's order is not given",
        Edit("draconform.reference.scheduler.dynamicresources:DynamicResources._write_extended_claim",
             '"requestMappings": [mapping.as_obj() for mapping in mappings],',
             '"requestMappings": [mapping.as_obj() for mapping in reversed(mappings)],'),
    ),
    conforming(
        "scheduler-backoff-starts-at-four-seconds", "KEP-5007/TIMEOUT",
        "kube-scheduler backs a pod off for 4 seconds after a failed attempt (a binding timeout among them), not 1",
        "KEP-5007 timeout: the pod is tried again after the claim is cleared, with no bound on how soon; "
        "upstream's podInitialBackoffSeconds is a setting of the scheduler",
        Set("draconform.reference.scheduler.queue:INITIAL_BACKOFF", timedelta(seconds=4)),
    ),
    conforming(
        "kubelet-own-failure-wording", "KEP-5322/EVENT-SAYS-PERMANENT",
        "the kubelet words its failed-prepare messages its own way (a permanent one still says permanent)",
        "KEP-5322 Diagnosing Permanent Errors: the event refers to the permanent error; the wording is the "
        "kubelet's, and a transient failure's message need only not call it permanent",
        Edit("draconform.reference.kubelet.kubelet:Kubelet._prepare",
             'permanent.append(f"DRA driver {driver} reported a permanent error preparing {where}: "',
             'permanent.append(f"{where}: driver {driver} says this failure is permanent, not retrying: "'),
        Edit("draconform.reference.kubelet.kubelet:Kubelet._prepare",
             'transient.append(f"DRA driver {driver} failed to prepare {where}: {result.error}")',
             'transient.append(f"{where} not ready yet, driver {driver} answered: {result.error}")'),
    ),
    conforming(
        "transient-failure-says-not-permanent", "KEP-5322/EVENT-SAYS-PERMANENT",
        "the kubelet's message for a transient failure says in words that it is not a permanent error",
        "KEP-5322 Diagnosing Permanent Errors: only a permanent error's event must say so; a transient one's "
        "wording is the kubelet's, and denying permanence is not calling the error permanent",
        Edit("draconform.reference.kubelet.kubelet:Kubelet._prepare",
             'transient.append(f"DRA driver {driver} failed to prepare {where}: {result.error}")',
             'transient.append(f"DRA driver {driver} failed to prepare {where} (not a permanent error, '
             'will retry): {result.error}")'),
    ),
    conforming(
        "driver-own-taint-key", "KEP-5322/DRIVER-TAINTS-FAULTY-DEVICE",
        "the driver taints an unusable device with a key and value of its own",
        "KEP-5322 Preventing Repeated Failures: the driver taints the device NoSchedule; key and value are "
        "the driver's",
        Edit("draconform.reference.drivers.publisher:SlicePublisher.unusable_taint",
             'return {"key": f"{self.driver}/unusable", "value": "permanent-failure", "effect": "NoSchedule"}',
             'return {"key": f"{self.driver}/health", "value": "broken", "effect": "NoSchedule"}'),
    ),
    # --- kubelet plugins ------------------------------------------------------------------------------------
    conforming(
        "plugin-own-cdi-naming", "DRA-PLUGIN/CDI-ID-PER-DEVICE",
        "the driver's kubelet plugin names its CDI devices with its own vendor, class and device names",
        "DRA kubelet plugin API: the CDI device IDs are the driver's, any valid fully qualified CDI name that "
        "its spec files define",
        Edit("draconform.reference.drivers.plugin:cdi_device_id",
             '    return f"{cdi_kind(driver)}={device}"',
             '    return f"{cdi_kind(driver)}=dev-{device}"'),
        Edit("draconform.reference.drivers.plugin:NodePlugin._write_cdi_spec",
             '        devices = {d.device: {"DRA_DEVICE": d.device',
             '        devices = {f"dev-{d.device}": {"DRA_DEVICE": d.device'),
        Edit("draconform.reference.drivers.plugin:cdi_kind",
             '    return f"k8s.{driver}/device"',
             '    return f"vendor.{driver}/accelerator"'),
        Edit("draconform.reference.drivers.plugin:cdi_spec_file",
             '    return f"k8s.{driver}-{claim_uid}.json"',
             '    return f"claim-{claim_uid}.json"'),
    ),
    # --- KEP-5007 binding conditions: the pending event's words ------------------------------------------------
    conforming(
        "pending-event-other-wording", "KEP-5007/EVENT-PENDING",
        "the BindingConditionsPending event says in other words that the pod waits",
        "KEP-5007, 'How can someone using this feature know that it is working for their instance?': the event is "
        "named by its reason, BindingConditionsPending; its message is the implementation's own",
        Edit("draconform.reference.scheduler.dynamicresources:DynamicResources.pre_bind",
             '                f"waiting for the binding conditions of its devices before binding to node '
             '{node_name(node)}",\n',
             '                f"pod is waiting for device binding conditions on {node_name(node)}",\n'),
    ),
    # --- KEP-5322: the faulty device is whichever the allocator chose --------------------------------------
    Variant(
        "driver-lists-devices-in-reverse", "KEP-5322/DRIVER-TAINTS-FAULTY-DEVICE",
        "the driver lists its devices last to first in each ResourceSlice, so the allocator picks gpu-1 before gpu-0",
        kind=KIND,
        allows="KEP-4381 ResourceSlice: the devices of a slice are the driver's list, in its order; no KEP-5322 rule "
               "fixes which of two equal devices a claim gets, so the fault follows the device that was allocated",
        overrides=(Wrap("draconform.reference.drivers.publisher:SlicePublisher.desired",
                        choices.driver_lists_devices_in_reverse),),
    ),
)
