"""The catalogue of known-bad variants of the reference implementation: each names a fault switch
(`draconform.faults`, read at the point of the code that implements the rule), the catalogued rule it
breaks, and how the variant is wrong. Every MUST / MUST NOT rule of KEP-5007, KEP-5963 and the
structured allocator (KEP-4381) has at least one; `tests/harness/test_mutation.py` keeps it so."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from draconform.catalogue import Catalogue

# The catalogues whose MUST rules must each have a variant.
KEPS_WITH_VARIANTS = ("KEP-5007", "KEP-5963", "KEP-4381")


@dataclass(frozen=True)
class Variant:
    name: str  # the fault switch
    rule: str  # the catalogued rule it breaks
    what: str  # the bug, in a few words


def _v(name: str, rule: str, what: str) -> Variant:
    return Variant(name, rule, what)


VARIANTS: tuple[Variant, ...] = (
    # --- KEP-5007: API server ----------------------------------------------------------------------
    _v("five-binding-conditions-accepted", "KEP-5007/CONDITIONS-MAX-FOUR", "the API server accepts 5 conditions"),
    _v("condition-type-syntax-unchecked", "KEP-5007/CONDITION-TYPE-FORMAT", "any string is a condition type"),
    _v("binding-lists-unpaired", "KEP-5007/CONDITION-LISTS-PAIRED", "one list may be set without the other"),
    _v("binding-fields-kept-with-gate-off", "KEP-5007/APISERVER-STRIPS-FIELDS",
       "a gate-off API server keeps the binding fields"),
    _v("stored-binding-fields-dropped-on-update", "KEP-5007/DISABLE-KEEPS-WORKLOADS",
       "a gate-off API server drops stored binding fields when the object is updated"),
    # --- KEP-5007: allocation ----------------------------------------------------------------------
    _v("failure-conditions-not-copied", "KEP-5007/RESULT-COPIES-CONDITIONS",
       "the result copies bindingConditions but not bindingFailureConditions"),
    _v("allocation-timestamp-overwritten", "KEP-5007/ALLOCATION-TIMESTAMP",
       "a pod joining an allocated claim rewrites allocationTimestamp"),
    _v("binding-needs-one-gate", "KEP-5007/GATES-BOTH-REQUIRED",
       "DRADeviceBindingConditions alone turns the feature on"),
    _v("binds-to-node-ignored", "KEP-5007/BINDS-TO-NODE", "bindsToNode does not pin the allocation"),
    _v("reservation-written-after-wait", "KEP-5007/ALLOCATION-PERSISTED-BEFORE-WAIT",
       "the pod's reservation is written only once the conditions are met"),
    _v("pool-devices-need-a-node", "KEP-5007/DDS-POOL-DEVICES-ALLOCATABLE",
       "allNodes devices with bindsToNode are never candidates"),
    # --- KEP-5007: PreBind --------------------------------------------------------------------------
    _v("any-condition-true-is-ready", "KEP-5007/PREBIND-ALL-TRUE", "one True binding condition is enough"),
    _v("status-not-false-is-met", "KEP-5007/PREBIND-STATUS-ONLY", "Unknown or missing counts as met"),
    _v("conditions-from-any-device", "KEP-5007/PREBIND-STATUS-ONLY",
       "a condition reported for one device counts for another"),
    _v("pending-event-without-conditions", "KEP-5007/PREBIND-NO-CONDITIONS",
       "pods without binding conditions get a BindingConditionsPending event"),
    _v("failure-ignored", "KEP-5007/PREBIND-FAILURE", "binding failure conditions are never looked at"),
    _v("ready-wins-over-failure", "KEP-5007/FAILURE-WINS", "all conditions True binds despite a failure"),
    _v("failure-checked-only-on-entry", "KEP-5007/FAILURE-THROUGHOUT",
       "failures are looked for only when PreBind starts"),
    _v("clear-drops-only-reservation", "KEP-5007/CLEAR-ALLOCATION",
       "clearing leaves the allocation to other components"),
    _v("clear-keeps-device-status", "KEP-5007/CLEAR-ALLOCATION", "clearing keeps the stale per-device status"),
    _v("clear-deallocates-shared-claim", "KEP-5007/CLEAR-ALLOCATION",
       "clearing deallocates a claim another pod still holds"),
    _v("pod-waits-on-first-claim-only", "KEP-5007/MULTI-CLAIM", "only the pod's first claim is waited on"),
    _v("pending-event-missing", "KEP-5007/EVENT-PENDING", "no BindingConditionsPending event"),
    # --- KEP-5007: timeout --------------------------------------------------------------------------
    _v("never-times-out", "KEP-5007/TIMEOUT", "a wait never times out"),
    _v("default-timeout-five-minutes", "KEP-5007/TIMEOUT-DEFAULT", "the default timeout is 5 minutes"),
    _v("binding-timeout-argument-ignored", "KEP-5007/TIMEOUT-CONFIGURABLE", "bindingTimeout is not read"),
    _v("timeout-from-prebind-entry", "KEP-5007/TIMEOUT-ANCHOR",
       "the timeout counts from when the pod entered PreBind"),
    _v("missing-timestamp-times-out-at-once", "KEP-5007/TIMEOUT-WITHOUT-TIMESTAMP",
       "a claim without allocationTimestamp times out at once"),
    _v("timeout-leaves-claim-allocated", "KEP-5007/DDS-AFTER-TIMEOUT", "a timeout does not clear the claim"),
    # --- KEP-5007: restart, metrics, skew, rollout ----------------------------------------------------
    _v("restart-binds-allocated-claims", "KEP-5007/RESTART-RESUMES",
       "a pod whose claims are already allocated is bound without checking its conditions"),
    _v("metric-counts-pods-without-conditions", "KEP-5007/METRIC-ALLOCATIONS",
       "pods without binding conditions are counted"),
    _v("prebind-duration-without-wait", "KEP-5007/METRIC-PREBIND-DURATION", "the duration leaves out the wait"),
    _v("older-scheduler-sees-binding-fields", "KEP-5007/SKEW-OLDER-SCHEDULER",
       "an older scheduler acts on fields it cannot know"),
    _v("older-apiserver-keeps-stored-fields", "KEP-5007/DOWNGRADED-APISERVER",
       "an older API server keeps stored fields it does not know on update, as a gate-off one does"),
    _v("gate-off-allocates-binding-devices", "KEP-5007/SKEW-GATE-OFF-SCHEDULER",
       "a gate-off scheduler allocates devices with binding conditions"),
    _v("timeout-counted-as-failure", "KEP-5007/ROLLOUT-NO-CONTROLLER", "timeouts are counted as failures"),
    _v("binding-gates-latched-at-first-start", "KEP-5007/REENABLE-RESUMES",
       "a restarted scheduler keeps the binding gates it first ran with"),
    # --- KEP-5007: controllers and the scaler (the reference's own) ----------------------------------
    _v("controller-reports-first-condition-only", "KEP-5007/CONTROLLER-REPORTS-READINESS",
       "the binding controller sets only the first of several binding conditions"),
    _v("failed-binding-parks-pod-unschedulable", "KEP-5007/CONTROLLER-OUTAGE",
       "a pod whose wait failed or timed out is parked until a cluster event instead of retried"),
    _v("attached-device-keeps-binding-conditions", "KEP-5007/DDS-RESCHEDULE-ONTO-ATTACHED",
       "the scaler publishes the attached device with the pool device's binding conditions"),
    _v("scaler-ignores-vanished-devices", "KEP-5007/DDS-POOL-SHRINK",
       "the scaler does not reschedule pods whose pool device left the pool"),
    # --- KEP-5963: API server ----------------------------------------------------------------------
    _v("three-groups-accepted", "KEP-5963/GROUP-LIMITS", "the API server accepts 3 groups"),
    _v("repeated-groups-accepted", "KEP-5963/GROUP-LIMITS", "a group may be listed twice"),
    _v("group-name-syntax-unchecked", "KEP-5963/GROUP-LIMITS", "any string is a group name"),
    _v("groups-kept-with-gate-off", "KEP-5963/APISERVER-GATE-OFF-STRIPS", "a gate-off API server keeps groups"),
    _v("stored-groups-dropped-on-update", "KEP-5963/APISERVER-GATE-OFF-STRIPS",
       "a gate-off API server drops stored groups when the object is updated"),
    # --- KEP-5963: snapshots --------------------------------------------------------------------------
    _v("snapshot-omits-sets-without-groups", "KEP-5963/SNAPSHOT-WRITTEN",
       "the snapshot leaves out consumed counter sets without groups"),
    _v("snapshot-always-written", "KEP-5963/SNAPSHOT-ONLY-WITH-GROUPS", "devices without groups get a snapshot"),
    _v("snapshots-ignored", "KEP-5963/SNAPSHOTS-NOT-SLICES", "allocated devices are judged without their snapshot"),
    _v("candidate-groups-from-first-publication", "KEP-5963/CANDIDATES-FROM-CURRENT-SLICE",
       "a candidate is judged by the groups it was first published with"),
    _v("unsnapshotted-results-ignored", "KEP-5963/UNSNAPSHOTTED-ALLOCATIONS",
       "results without a snapshot constrain nothing"),
    _v("unpublished-devices-forgotten", "KEP-5963/STATE-UNTIL-RELEASE",
       "an allocated device no longer published stops constraining its counter set"),
    # --- KEP-5963: matching ---------------------------------------------------------------------------
    _v("empty-group-list-is-a-group", "KEP-5963/NIL-GROUP-EQUIVALENCE", "compatibilityGroups: [] declares a group"),
    _v("groupless-set-admits-grouped", "KEP-5963/NIL-GROUP-MATCHING",
       "a counter set holding devices without groups admits a grouped device"),
    _v("grouped-set-admits-groupless", "KEP-5963/NIL-GROUP-MATCHING",
       "a counter set holding grouped devices admits a device without groups"),
    _v("any-groups-compatible", "KEP-5963/SHARED-GROUP-REQUIRED", "devices with disjoint groups are admitted"),
    _v("intersection-not-narrowed", "KEP-5963/ROLLING-INTERSECTION",
       "a candidate is checked against the first device's groups only"),
    _v("other-claims-ignored-by-groups", "KEP-5963/ANY-CLAIM-ANY-POD", "other claims' devices are not counted"),
    _v("own-picks-not-tracked", "KEP-5963/ANY-CLAIM-ANY-POD",
       "devices picked earlier in the same attempt are not counted"),
    _v("only-first-counter-set-judged", "KEP-5963/PER-COUNTER-SET",
       "a device is judged on its first counter set only"),
    _v("groups-compared-across-counter-sets", "KEP-5963/UNRELATED-COUNTER-SETS",
       "groups are compared across the counter sets of a pool"),
    _v("mixed-set-admits-shared-group", "KEP-5963/MIXED-ADMITS-NOTHING",
       "a counter set with and without groups admits a device sharing a group"),
    _v("rejection-ends-search", "KEP-5963/BACKTRACK-ON-REJECTION",
       "after one compatibility rejection no candidate is admitted"),
    _v("groups-ignored-when-nothing-fits", "KEP-5963/UNSCHEDULABLE-WITHOUT-COMBINATION",
       "when no compatible combination exists, groups are ignored"),
    _v("groups-replace-match-constraints", "KEP-5963/MATCH-ATTRIBUTE-CONJUNCTION",
       "with the gate on, matchAttribute constraints are dropped"),
    _v("grouped-devices-skip-counters", "KEP-5963/COUNTERS-UNCHANGED",
       "devices with groups are not checked against counters"),
    # --- KEP-5963: gates and skew -------------------------------------------------------------------
    _v("gate-off-scheduler-acts-as-older", "KEP-5963/VERSION-SKEW-MATRIX",
       "a gate-off scheduler ignores groups as an older one would"),
    _v("gate-off-allocates-grouped-devices", "KEP-5963/GATE-OFF-SKIPS-GROUPED-DEVICES",
       "a gate-off scheduler allocates devices with groups"),
    _v("gate-off-ignores-snapshots", "KEP-5963/GATE-OFF-RESPECTS-SNAPSHOTS",
       "a gate-off scheduler allocates on counter sets with snapshotted groups"),
    _v("older-apiserver-serves-stored-fields", "KEP-5963/DOWNGRADED-APISERVER",
       "an older API server serves stored fields it does not know"),
    _v("older-scheduler-skips-grouped-devices", "KEP-5963/DOWNGRADE-KEEPS-ALLOCATIONS",
       "a scheduler older than the feature skips devices with groups"),
    _v("scheduler-gates-latched-at-first-start", "KEP-5963/UPGRADE-DOWNGRADE-UPGRADE",
       "a restarted scheduler keeps the gates it first ran with"),
    _v("plugin-checks-only-its-own-claim", "KEP-5963/DRIVER-VALIDATES-AT-PREPARE",
       "the kubelet plugin does not check against claims already prepared"),
    _v("plugin-writes-no-cdi-spec", "DRA-PLUGIN/CDI-SPEC-FILES",
       "the kubelet plugin answers with CDI device IDs no spec file on the node defines"),
    _v("plugin-unprepare-removes-every-spec", "DRA-PLUGIN/CDI-SPEC-FILES",
       "unpreparing one claim removes the CDI spec files of every claim the driver prepared"),
    # --- KEP-4381: the structured allocator -----------------------------------------------------------
    _v("older-generations-allocated", "KEP-4381/POOL-NEWEST-GENERATION", "devices of older generations count"),
    _v("incomplete-pools-allocated", "KEP-4381/POOL-INCOMPLETE", "incomplete pools are used"),
    _v("invalid-pools-allocated", "KEP-4381/POOL-INVALID", "invalid pools are used"),
    _v("node-selector-values-ignored", "KEP-4381/NODE-REACH", "an In requirement matches any value"),
    _v("class-selectors-ignored", "KEP-4381/SELECTORS", "the DeviceClass's selectors are not applied"),
    _v("missing-class-matches-everything", "KEP-4381/CLASS-MISSING", "a missing DeviceClass selects every device"),
    _v("deleted-classes-remembered", "KEP-4381/CLASS-MISSING",
       "the allocator keeps a DeviceClass after it is deleted"),
    _v("count-ignored", "KEP-4381/EXACT-COUNT", "ExactCount gives one device whatever the count"),
    _v("all-mode-takes-one", "KEP-4381/ALL-MODE", "All mode gives one device"),
    _v("subrequests-tried-last-first", "KEP-4381/FIRST-AVAILABLE", "firstAvailable is tried from the end"),
    _v("only-first-subrequest-tried", "KEP-4381/FIRST-AVAILABLE", "only the first subrequest is tried"),
    _v("allocated-devices-reused", "KEP-4381/DEVICE-IN-USE", "devices held by other claims are allocated"),
    _v("device-twice-in-claim", "KEP-4381/DEVICE-IN-USE", "one claim may get the same device twice"),
    _v("release-drops-first-reservation", "KEP-3063/RESERVATION-RELEASED",
       "the kubelet releasing a deleted pod's claim drops the oldest reservedFor entry, not the pod's own"),
    _v("last-claim-result-wins", "KEP-5322/ANY-CLAIM-FAILS-POD",
       "the kubelet judges a prepare call by its last claim's answer, so a permanent failure of an earlier claim "
       "is retried"),
    _v("classic-kubelet-leaves-reservation", "KEP-3063-CLASSIC/KUBELET-UNRESERVE-ON-DELETE",
       "the kubelet deletes the pod without taking it out of reservedFor, leaving that to kube-controller-manager"),
    # --- KEP-3063-CLASSIC: the classic protocol (docs/suite-power.md, its P5 section) -------------------
    _v("classic-class-parameters-dropped", "KEP-3063-CLASSIC/PARAMETERS-OPAQUE",
       "the API server prunes a ResourceClass's parameters as unknown fields"),
    _v("classic-deleted-claim-handed-out", "KEP-3063-CLASSIC/CLAIM-BEING-DELETED-BLOCKS-POD",
       "the scheduler reserves a claim that is being deleted for a new pod while userLimit allows it"),
    _v("classic-unowned-claim-used", "KEP-3063-CLASSIC/UNOWNED-CLAIM-BLOCKS-POD",
       "the scheduler uses a claim of the generated name that the pod does not own"),
    _v("classic-users-by-name", "KEP-3063-CLASSIC/RESERVED-FOR-BY-UID",
       "the scheduler tells a claim's users apart by name, so a new pod takes a gone pod's entry for its own"),
    _v("classic-user-limit-ignored", "KEP-3063-CLASSIC/RESERVE-WITHIN-USER-LIMIT",
       "the scheduler reserves a claim for more pods than its userLimit"),
    _v("classic-unsuitable-nodes-ignored", "KEP-3063-CLASSIC/FILTER-DENY-LIST",
       "the scheduler's Filter does not read the driver's unsuitableNodes"),
    _v("classic-never-deallocates", "KEP-3063-CLASSIC/POSTFILTER-DEALLOCATES",
       "Post-filter never sets an allocation that keeps the pod off every node to Reallocate"),
    _v("classic-potential-nodes-always-written", "KEP-3063-CLASSIC/PRESCORE-WRITE-ON-CHANGE",
       "Pre-score writes potentialNodes on every attempt, changed or not"),
    _v("classic-binds-before-allocation", "KEP-3063-CLASSIC/BIND-AFTER-ALLOCATION",
       "Reserve takes the selected node for done and the pod is bound before its claim is allocated"),
    _v("classic-retry-only-on-allocation", "KEP-3063-CLASSIC/RETRY-ON-CLAIM-CHANGE",
       "only a claim's allocation brings a waiting pod back, not unsuitableNodes or an unset selectedNode"),
    _v("classic-driver-ignores-selected-node", "KEP-3063-CLASSIC/ALLOCATES-ON-SELECTED-NODE",
       "the driver allocates a Delayed claim on its first node with room, not on the selected node"),
    _v("classic-driver-allocates-delayed-at-once", "KEP-3063-CLASSIC/DELAYED-WAITS-FOR-SELECTED-NODE",
       "the driver allocates a Delayed claim at once, as if it were Immediate"),
    _v("classic-driver-finds-claims-by-class", "KEP-3063-CLASSIC/FREE-WITHOUT-CLASS",
       "the driver finds its claims by their class only, so a claim whose class is gone is never freed"),
    _v("classic-driver-judges-first-potential-node", "KEP-3063-CLASSIC/UNSUITABLE-NODES",
       "the driver judges only the first of the potential nodes"),
    _v("classic-claim-create-gives-up", "KEP-3063-CLASSIC/CLAIM-CREATE-RETRIED",
       "kube-controller-manager stops retrying a claim's create after five failures"),
    _v("classic-kubelet-any-reservation", "KEP-3063-CLASSIC/KUBELET-UNRESERVED-POD-NOT-RUN",
       "the kubelet runs a pod once its claim is reserved for anyone, not for this pod"),
    _v("classic-plugin-unprepare-keeps-state", "KEP-3063-CLASSIC/PLUGIN-UNPREPARE-UNDOES",
       "the kubelet plugin answers unprepare with OK but keeps the prepared answer"),
    _v("restart-forgets-shares", "KEP-5075/SHARED-DEVICE",
       "a restarted scheduler forgets the shares of multi-allocatable devices already allocated"),
    _v("restart-forgets-allocations", "KEP-4381/DEVICE-IN-USE",
       "a restarted scheduler knows only allocations written after it started"),
    _v("admin-access-ignored", "KEP-4381/ADMIN-ACCESS", "adminAccess is treated as an ordinary request"),
    _v("admin-access-holds-device", "KEP-4381/ADMIN-ACCESS", "an admin-access allocation holds its device"),
    _v("toleration-effect-ignored", "KEP-4381/TAINTS", "a toleration's effect is not compared"),
    _v("no-execute-taints-ignored", "KEP-4381/TAINTS", "NoExecute taints do not block"),
    _v("tolerations-not-copied", "KEP-4381/TAINTS", "results do not carry the request's tolerations"),
    _v("device-taint-rules-ignored", "KEP-4381/DEVICE-TAINT-RULES",
       "the allocator sees only the taints drivers publish, not those of DeviceTaintRules"),
    _v("deleted-taint-rules-remembered", "KEP-4381/DEVICE-TAINT-RULES",
       "the allocator keeps the taint of a DeviceTaintRule after the rule is deleted"),
    _v("allocated-devices-consume-no-counters", "KEP-4381/COUNTERS",
       "counters ignore what allocated devices consume"),
    _v("match-constraints-dropped", "KEP-4381/MATCH-ATTRIBUTE", "matchAttribute constraints are ignored"),
    _v("distinct-constraints-dropped", "KEP-4381/DISTINCT-ATTRIBUTE", "distinctAttribute constraints are ignored"),
    _v("pools-in-reverse-order", "KEP-4381/SEARCH-ORDER", "pools, slices and devices are searched from the end"),
    _v("no-backtracking", "KEP-4381/SEARCH-ORDER", "a failed later request does not undo earlier choices"),
    _v("claim-limit-unchecked", "KEP-4381/CLAIM-LIMIT", "claims needing more than 32 devices are not refused"),
    _v("gate-off-honours-binds-to-node", "KEP-4381/BINDING-CONDITIONS-GATED",
       "with a binding gate off, bindsToNode still pins the allocation"),
    _v("binding-devices-not-last", "KEP-4381/BINDING-CONDITIONS-LAST",
       "devices with binding conditions are not moved behind the others"),
    _v("conditions-copied-to-every-result", "KEP-4381/BINDING-CONDITIONS-COPIED",
       "every result of a claim gets the conditions of one of its devices"),
    _v("admin-access-false-written", "KEP-4381/RESULT-FIELDS", "results say adminAccess: false"),
    _v("allocation-always-pinned", "KEP-4381/RESULT-NODE-SELECTOR",
       "every allocation is pinned to the node, even of devices usable everywhere"),
    _v("claim-config-for-every-request", "KEP-4381/RESULT-CONFIG",
       "claim configs for requests that got nothing are copied too"),
    _v("config-requests-cleared-by-count", "KEP-4381/RESULT-CONFIG",
       "a config naming as many entries as the claim has requests loses its requests (upstream's old check)"),
    _v("bare-attributes-outside-driver-domain", "KEP-4381/CEL-ENVIRONMENT",
       "unqualified attributes are not in the driver's domain"),
    _v("cel-errors-mean-no-match", "KEP-4381/CEL-ERRORS", "a selector that fails at evaluation means no match"),
    # --- second angles of single-scenario MUST rules: KEP-5322, KEP-3063, KEP-5075, KEP-5004, DRA-PLUGIN,
    # DRA-API (docs/suite-power.md, "P5: the other catalogues") ------------------------------------------
    _v("failed-call-permanent", "KEP-5322/TRANSIENT-RETRIED",
       "with the gate on, a prepare call that fails as a whole (a crashed plugin) is taken for a permanent error"),
    _v("failed-pod-unprepared-on-deletion", "KEP-5322/UNPREPARE-AFTER-PERMANENT",
       "the claims of a pod failed on a permanent error are unprepared and released only once the pod is deleted"),
    _v("ungenerated-claims-skipped", "KEP-3063/MISSING-CLAIM-BLOCKS-POD",
       "a template entry whose claim is not generated yet is skipped, so the pod is bound without it"),
    _v("joining-pod-not-reserved", "KEP-3063/RESERVED-FOR-POD",
       "a pod is added to reservedFor only in the write that allocates the claim, not when it joins an allocated one"),
    _v("failure-conditions-may-repeat", "DRA-API/BINDING-CONDITIONS-UNIQUE",
       "the API server checks only bindingConditions for repeats, not bindingFailureConditions"),
)


def must_rules_without_variant(catalogue: Catalogue, variants: tuple[Variant, ...] = VARIANTS) -> list[str]:
    """The MUST / MUST NOT rules of KEPS_WITH_VARIANTS that no variant breaks: the mutation check's claim
    that every one has a variant holds when this is empty (`draconform mutants` reports it)."""
    broken = {variant.rule for variant in variants}
    return sorted(rule.id for rule in catalogue.rules.values()
                  if rule.kep in KEPS_WITH_VARIANTS and rule.level in ("MUST", "MUST NOT") and rule.id not in broken)


def must_rules(catalogue: Catalogue) -> list[str]:
    """The MUST / MUST NOT rules of KEPS_WITH_VARIANTS."""
    return sorted(rule.id for rule in catalogue.rules.values()
                  if rule.kep in KEPS_WITH_VARIANTS and rule.level in ("MUST", "MUST NOT"))
