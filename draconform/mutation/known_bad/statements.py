"""Known-bad variants for the KEP statements that issue 32 turned into rules (KEP-3063 lifecycle paths and
kubelet duties, KEP-5322's reading of plugin answers, KEP-5007's binding details): each is a set of overrides
of named functions (mostly an Edit of a few lines) that breaks one rule the way a plausible implementation
would, and the suite must kill it (listed with the others by draconform.mutation.catalogue)."""

from __future__ import annotations

from draconform.mutation.overrides import Edit, Set
from draconform.mutation.variant import Variant
from draconform.validation.versions import _REQUEST_FIELDS

VARIANTS: tuple[Variant, ...] = (
    # --- KEP-3063: lifecycle paths ----------------------------------------------------------------------------
    Variant(
        "vanished-pod-keeps-reservation", "KEP-3063/VANISHED-POD-RELEASED",
        "the claim controller keeps reservedFor entries of pods that no longer exist, leaving them to a kubelet",
        (Edit("draconform.reference.controllers.resourceclaim:ResourceClaimController._consumer_active",
              '        if pod is None or pod["metadata"]["uid"] != entry.get("uid"):\n            return False\n',
              '        if pod is None:\n            return True  # the kubelet releases it\n'
              '        if pod["metadata"]["uid"] != entry.get("uid"):\n            return False\n'),),
    ),
    Variant(
        "no-pod-gc-for-deleted-nodes", "KEP-3063/VANISHED-POD-RELEASED",
        "the pods of a deleted node are never garbage-collected, so their claims stay reserved",
        (Edit("draconform.reference.kubelet.nodes:Kubelets._handle",
              "                self._clock.call_at(self._clock.now() + ORPHAN_QUARANTINE, "
              "lambda: self._collect_orphans(name))\n",
              ""),),
    ),
    Variant(
        "pod-starts-without-unregistered-driver", "KEP-3063/KUBELET-WAITS-FOR-PLUGIN",
        "a claim whose driver has no plugin on the node is skipped and the pod starts without it",
        (Edit("draconform.reference.kubelet.kubelet:Kubelet._prepare",
              "            except PluginUnavailable as err:\n                transient.append(str(err))\n",
              "            except PluginUnavailable:\n"),),
    ),
    Variant(
        "requests-counted-one-by-one", "KEP-3063/CLAIM-REQUESTS-ON-ONE-NODE",
        "the filter counts each request against the node's free devices on its own, not all of them together",
        (Edit("draconform.reference.allocator.columnar.counting:Counting.count",
              "                enough = enough and free >= total\n",
              "                enough = enough and free >= need\n"),),
    ),
    Variant(
        "v1beta1-tolerations-left-on-request", "KEP-3063/SERVED-VERSIONS-ROUND-TRIP",
        "converting a v1beta1 request leaves its tolerations behind instead of moving them under exactly",
        (Set("draconform.validation.versions:_REQUEST_FIELDS",
             tuple(field for field in _REQUEST_FIELDS if field != "tolerations")),),
    ),
    # --- KEP-3063: API and kubelet ----------------------------------------------------------------------------
    Variant(
        "claim-update-writes-status", "KEP-3063/CLAIM-STATUS-SUBRESOURCE",
        "an ordinary update of a claim stores the status it carries",
        (Edit("draconform.reference.apiserver.store:Store.update",
              '            if "status" in old and self.admitted(old):\n'
              '                new["status"] = old["status"]  # an admitted object\'s status is shared (see `_sharing`)\n'
              '                self.work["shared on write"] += 1\n'
              '            elif "status" in old:\n'
              '                new["status"] = copy_object(old["status"])\n'
              '                self.work["copied on write"] += 1\n',
              '            if "status" in obj:\n                new["status"] = copy_object(obj["status"])\n'),),
    ),
    Variant(
        "not-found-gives-up", "KEP-3063/KUBELET-RETRY-NOT-FOUND",
        "a prepare call failing with NOT_FOUND is taken for final and the pod fails",
        (Edit("draconform.reference.kubelet.kubelet:Kubelet._prepare",
              "            except PluginCallError as err:\n"
              "                transient.append(str(err))\n",
              "            except PluginCallError as err:\n"
              '                if err.code == "NOT_FOUND":\n'
              "                    permanent.append(str(err))\n"
              "                    break\n"
              "                transient.append(str(err))\n"),),
    ),
    Variant(
        "not-found-retried-at-fixed-interval", "KEP-3063/KUBELET-RETRY-NOT-FOUND",
        "a prepare call failing with NOT_FOUND is retried every 10 seconds, without exponential back off",
        (Edit("draconform.reference.kubelet.kubelet:Kubelet._back_off",
              "        delay = min(INITIAL_BACKOFF * 2 ** state.attempts, MAX_BACKOFF)\n",
              "        delay = timedelta(seconds=10)\n"),),
    ),
    Variant(
        "failed-prepare-not-retried", "KEP-3063/KUBELET-RETRY-WITH-BACKOFF",
        "a prepare that failed transiently is not tried again until the pod or its claims change",
        (Edit("draconform.reference.kubelet.kubelet:Kubelet._start_with_claims",
              '            self._back_off((namespace, pod["metadata"]["name"]), state)\n',
              "            state.attempts += 1\n"),),
    ),
    Variant(
        "pod-claims-count-only-immutable", "KEP-3063/POD-CLAIMS-IMMUTABLE",
        "a pod update may change its claims as long as their number stays",
        (Edit("draconform.validation.pod:pod_rules",
              '    if isinstance(old_spec, dict) and old_spec.get("resourceClaims") != spec.get("resourceClaims"):\n',
              '    if isinstance(old_spec, dict) and len(old_spec.get("resourceClaims") or []) != len(\n'
              '            spec.get("resourceClaims") or []):\n'),),
    ),
    Variant(
        "kubelet-trusts-status-claim-name", "KEP-3063/KUBELET-REFUSES-UNOWNED-CLAIM",
        "the kubelet uses whatever claim the pod's status names for a template entry, owner or not",
        (Edit("draconform.reference.kubelet.kubelet:Kubelet._start_with_claims",
              "            if entry.template is not None and not any(\n",
              "            if False and entry.template is not None and not any(\n"),),
    ),
    Variant(
        "gate-off-fails-running-pods", "KEP-3063/KUBELET-GATE-OFF-KEEPS-RUNNING-PODS",
        "a kubelet restarted with the feature off fails the running pods that have claims",
        (Edit("draconform.reference.kubelet.kubelet:Kubelet._sync_pod",
              '        if phase == "Running":  # its containers run until the runtime reports them ended\n',
              '        if phase == "Running" and not self._gates.enabled("DynamicResourceAllocation") and (\n'
              "                self._claims_of(pod)):\n"
              '            return self._set_phase(pod, "Failed", reason="UnexpectedAdmissionError")\n'
              '        if phase == "Running":  # its containers run until the runtime reports them ended\n'),),
    ),
    Variant(
        "release-without-gate-taken-for-gate-on", "KEP-3063/KUBELET-SKEW-OLD-NODE",
        "only an explicit gate setting turns DRA off; a kubelet release without the gate prepares claims",
        (Edit("draconform.reference.kubelet.kubelet:Kubelet._start",
              '        if not self._gates.enabled("DynamicResourceAllocation"):\n'
              '            return self._set_phase(pod, "Running")',
              '        if self._gates.known("DynamicResourceAllocation") and not self._gates.enabled(\n'
              '                "DynamicResourceAllocation"):\n'
              '            return self._set_phase(pod, "Running")'),),
    ),
    # --- KEP-5322: reading a plugin's answer ------------------------------------------------------------------
    Variant(
        "permanent-flag-without-error-fails", "KEP-5322/PERMANENT-WITHOUT-ERROR-SUCCEEDS",
        "permanent_error set on a successful answer is taken for a permanent failure",
        (Edit("draconform.reference.kubelet.kubelet:Kubelet._prepare",
              "                elif not result.failed:\n",
              "                elif not result.failed and not result.permanent:\n"),),
    ),
    Variant(
        "devices-beside-error-used", "KEP-5322/ERROR-DEVICES-IGNORED",
        "an answer that names devices counts as prepared even though it carries an error",
        (Edit("draconform.reference.kubelet.kubelet:Kubelet._prepare",
              "                elif not result.failed:\n",
              "                elif not result.failed or result.devices:\n"),),
    ),
    # --- KEP-5007: binding details ------------------------------------------------------------------------------
    Variant(
        "binds-to-node-needs-conditions", "KEP-5007/BINDS-TO-NODE",
        "bindsToNode pins the allocation only when the device also has binding conditions",
        (Edit("draconform.reference.allocator.results:allocation_node_selector",
              "(binds_to_node and p.device.binds_to_node) for p in picks):\n",
              "(binds_to_node and p.device.binds_to_node\n"
              "                 and bool(p.device.binding_conditions)) for p in picks):\n"),),
    ),
    Variant(
        "conditions-older-than-allocation-stale", "KEP-5007/PREBIND-STATUS-ONLY",
        "a True condition whose lastTransitionTime predates the allocation is taken for stale",
        (Edit("draconform.reference.scheduler.bindingconditions:claim_verdict",
              "    ready = all(\n        _is_true(device_conditions(claim, result), wanted)\n",
              '    allocated_at = ((claim.get("status") or {}).get("allocation") or {}).get(\n'
              '        "allocationTimestamp") or ""\n'
              "    ready = all(\n        _is_true(device_conditions(claim, result), wanted)\n"
              "        and str(device_conditions(claim, result)[wanted].get(\n"
              '            "lastTransitionTime", "")) >= allocated_at\n'),),
    ),
    Variant(
        "failure-condition-any-status", "KEP-5007/PREBIND-STATUS-ONLY",
        "a failure condition counts as soon as it is reported, whatever its status",
        (Edit("draconform.reference.scheduler.bindingconditions:failed_condition",
              "        if _is_true(conditions, failure):\n            return conditions[failure]\n",
              "        if failure in conditions:\n            return conditions[failure]\n"),),
    ),
    Variant(
        "only-first-failure-condition", "KEP-5007/PREBIND-FAILURE",
        "only a device's first binding failure condition is looked at",
        (Edit("draconform.reference.scheduler.bindingconditions:failed_condition",
              '    for failure in result.get("bindingFailureConditions") or []:\n',
              '    for failure in (result.get("bindingFailureConditions") or [])[:1]:\n'),),
    ),
    Variant(
        "binding-failure-names-no-claim", "KEP-3063/UNSCHEDULABLE-EXPLAINED",
        "the scheduler's message for a failed binding does not say which claim failed",
        (Edit("draconform.reference.scheduler.bindingconditions:claim_verdict", '                f"claim {name} binding failed: device',
              '                f"binding failed: device'),),
    ),
    Variant(
        "timeout-reported-as-failure", "KEP-5007/TIMEOUT",
        "a binding that timed out is reported as a failed one",
        (Edit("draconform.reference.scheduler.bindingconditions:claim_verdict", '        return Verdict(Outcome.TIMEOUT, f"claim {name} binding timeout", deadline)',
              '        return Verdict(Outcome.TIMEOUT, f"claim {name} binding failed", deadline)'),),
    ),
)
