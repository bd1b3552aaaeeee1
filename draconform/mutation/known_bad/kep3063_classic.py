"""Known-bad variants of KEP-3063-CLASSIC (the classic protocol): each a set of overrides of named functions
(draconform.mutation.overrides, mostly an Edit of a few lines) that turns the correct code back into one bug
breaking the rule it names."""

from __future__ import annotations

from draconform.kube.kinds import CLASSIC_API
from draconform.mutation.known_bad import defects
from draconform.mutation.overrides import Edit, Wrap
from draconform.mutation.variant import Variant

VARIANTS: tuple[Variant, ...] = (
    Variant(
        "classic-kubelet-leaves-reservation", "KEP-3063-CLASSIC/KUBELET-UNRESERVE-ON-DELETE",
        "the kubelet deletes the pod without taking it out of reservedFor, leaving that to kube-controller-manager",
        (
            Edit("draconform.reference.kubelet.classic:ClassicKubelets._unreserve",
                 ("        acted = False\n"
                  "        for _, name, _ in claim_names(pod):\n"),
                 ("        acted = False\n"
                  "        return acted\n"
                  "        for _, name, _ in claim_names(pod):\n")),
        ),
    ),
    # --- KEP-3063-CLASSIC: the classic protocol (docs/suite-power.md, its P5 section) -------------------
    Variant(
        "classic-class-parameters-dropped", "KEP-3063-CLASSIC/PARAMETERS-OPAQUE",
        "the API server prunes a ResourceClass's parameters as unknown fields",
        (
            Edit("draconform.reference.apiserver.classic:_apply_defaults",
                 '        new["status"] = {"phase": "Pending", "userLimit": DEFAULT_USER_LIMIT}\n',
                 ('        new["status"] = {"phase": "Pending", "userLimit": DEFAULT_USER_LIMIT}\n'
                  '    if new["kind"] == "ResourceClass":\n'
                  '        new.pop("parameters", None)  # the fault: a class\'s parameters pruned as unknown fields\n')),
        ),
    ),
    Variant(
        "classic-deleted-claim-handed-out", "KEP-3063-CLASSIC/CLAIM-BEING-DELETED-BLOCKS-POD",
        "the scheduler reserves a claim that is being deleted for a new pod while userLimit allows it",
        (
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources.pre_filter",
                 ('            if claim["metadata"].get("deletionTimestamp"):\n'
                  '                return Status(Code.UNSCHEDULABLE, f\'resource claim "{name}" is being deleted\')\n'),
                 ""),
        ),
    ),
    Variant(
        "classic-unowned-claim-used", "KEP-3063-CLASSIC/UNOWNED-CLAIM-BLOCKS-POD",
        "the scheduler uses a claim of the generated name that the pod does not own",
        (
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources.pre_filter",
                 ("            if generated and not _owned_by(claim, pod):\n"
                  "                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,\n"
                  '                              f\'resource claim "{name}" was not created for this pod\')\n'),
                 ""),
        ),
    ),
    Variant(
        "classic-users-by-name", "KEP-3063-CLASSIC/RESERVED-FOR-BY-UID",
        "the scheduler tells a claim's users apart by name, so a new pod takes a gone pod's entry for its own",
        (
            Edit("draconform.reference.scheduler.classic:distinct_users",
                 "def distinct_users(claim: Obj) -> set[str]:\n",
                 ("def distinct_users(claim: Obj) -> set[str]:\n"
                  '    return {entry.get("name", "") for entry in (claim.get("status") or {}).get("reservedFor") or []}\n')),
            Edit("draconform.reference.scheduler.classic:user_key",
                 '    return str(pod["metadata"]["uid"])\n',
                 '    return str(pod["metadata"]["name"])\n'),
        ),
    ),
    Variant(
        "classic-user-limit-ignored", "KEP-3063-CLASSIC/RESERVE-WITHIN-USER-LIMIT",
        "the scheduler reserves a claim for more pods than its userLimit",
        (
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources._has_room",
                 '        limit = (claim.get("status") or {}).get("userLimit", 1)\n',
                 ('        limit = (claim.get("status") or {}).get("userLimit", 1)\n'
                  "        return True\n")),
        ),
    ),
    Variant(
        "classic-unsuitable-nodes-ignored", "KEP-3063-CLASSIC/FILTER-DENY-LIST",
        "the scheduler's Filter does not read the driver's unsuitableNodes",
        (
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources.filter",
                 ('            elif (not is_allocated(claim) and node_name(node) in (driver_status.get("unsuitableNodes") or [])):\n'
                  '                reasons.append(f\'resource claim "{name}" cannot be allocated on this node\')\n'),
                 ""),
        ),
    ),
    Variant(
        "classic-never-deallocates", "KEP-3063-CLASSIC/POSTFILTER-DEALLOCATES",
        "Post-filter never sets an allocation that keeps the pod off every node to Reallocate",
        (
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources.post_filter",
                 ("        if pod_claims is None:\n"
                  "            return Status(Code.UNSCHEDULABLE)\n"),
                 "        return Status(Code.UNSCHEDULABLE)\n"),
        ),
    ),
    Variant(
        "classic-potential-nodes-always-written", "KEP-3063-CLASSIC/PRESCORE-WRITE-ON-CHANGE",
        "Pre-score writes potentialNodes on every attempt, changed or not",
        (
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources.pre_score",
                 ('            if scheduler.get("potentialNodes") == potential:\n'
                  "                continue  # written only when it changes\n"),
                 ""),
        ),
    ),
    Variant(
        "classic-binds-before-allocation", "KEP-3063-CLASSIC/BIND-AFTER-ALLOCATION",
        "Reserve takes the selected node for done and the pod is bound before its claim is allocated",
        (
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources._select_node",
                 '                    return Status(Code.ERROR, f"selecting node: {error}")\n',
                 ('                    return Status(Code.ERROR, f"selecting node: {error}")\n'
                  "        return SUCCESS\n")),
        ),
    ),
    Variant(
        "classic-retry-only-on-allocation", "KEP-3063-CLASSIC/RETRY-ON-CLAIM-CHANGE",
        "only a claim's allocation brings a waiting pod back, not unsuitableNodes or an unset selectedNode",
        (
            Edit("draconform.reference.scheduler.scheduler:Scheduler._handle",
                 '            self.waiting.object_changed(obj["metadata"]["uid"])\n',
                 ('            self.waiting.object_changed(obj["metadata"]["uid"])\n'
                  '            if (obj.get("apiVersion") == CLASSIC_API\n'
                  '                    and (obj.get("status") or {}).get("phase") != "Allocated"):\n'
                  "                return  # the fault: a classic claim's change other than its allocation brings no pod back\n"),
                 names={"CLASSIC_API": CLASSIC_API}),
        ),
    ),
    Variant(
        "classic-driver-ignores-selected-node", "KEP-3063-CLASSIC/ALLOCATES-ON-SELECTED-NODE",
        "the driver allocates a Delayed claim on its first node with room, not on the selected node",
        (
            Edit("draconform.reference.drivers.classic_controller:ClassicDriverController._negotiate",
                 "        if selected and self._can_allocate_on(selected):\n",
                 ("        if selected and self._can_allocate_on(selected):\n"
                  "            return self._allocate(claim, next(n for n in sorted(self.behaviour.capacity) if self._room_on(n)))\n")),
        ),
    ),
    Variant(
        "classic-driver-allocates-delayed-at-once", "KEP-3063-CLASSIC/DELAYED-WAITS-FOR-SELECTED-NODE",
        "the driver allocates a Delayed claim at once, as if it were Immediate",
        (
            Edit("draconform.reference.drivers.classic_controller:ClassicDriverController._handle",
                 ("        if immediate:\n"
                  "            node = next((n for n in sorted(self.behaviour.capacity) if self._room_on(n)), None)\n"
                  "            return node is not None and self._allocate(claim, node)\n"),
                 ("        node = next((n for n in sorted(self.behaviour.capacity) if self._room_on(n)), None)\n"
                  "        return node is not None and self._allocate(claim, node)\n")),
        ),
    ),
    Variant(
        "classic-driver-finds-claims-by-class", "KEP-3063-CLASSIC/FREE-WITHOUT-CLASS",
        "the driver finds its claims by their class only, so a claim whose class is gone is never freed",
        (
            Edit("draconform.reference.drivers.classic_controller:ClassicDriverController._mine",
                 ("        if recorded:\n"
                  "            return bool(recorded == self.behaviour.driver)\n"),
                 ""),
        ),
    ),
    Variant(
        "classic-driver-judges-first-potential-node", "KEP-3063-CLASSIC/UNSUITABLE-NODES",
        "the driver judges only the first of the potential nodes",
        (
            Edit("draconform.reference.drivers.classic_controller:ClassicDriverController._negotiate",
                 '        potential = scheduler.get("potentialNodes") or []\n',
                 ('        potential = scheduler.get("potentialNodes") or []\n'
                  "        potential = potential[:1]\n")),
        ),
    ),
    Variant(
        "classic-claim-create-gives-up", "KEP-3063-CLASSIC/CLAIM-CREATE-RETRIED",
        "kube-controller-manager stops retrying a claim's create after five failures",
        (
            Edit("draconform.reference.controllers.classic_claims:ClassicClaimController._retry_later",
                 "        self._retries[key] = attempts\n",
                 ("        self._retries[key] = attempts\n"
                  "        if attempts > 5:\n"
                  "            return  # the fault: a create still failing after a few attempts is dropped\n")),
        ),
    ),
    Variant(
        "classic-kubelet-any-reservation", "KEP-3063-CLASSIC/KUBELET-UNRESERVED-POD-NOT-RUN",
        "the kubelet runs a pod once its claim is reserved for anyone, not for this pod",
        (
            Edit("draconform.reference.kubelet.classic:ClassicKubelets._start",
                 "                if uid not in reserved:\n",
                 "                if uid not in reserved and not reserved:\n"),
        ),
    ),
    Variant(
        "classic-kubelet-constant-backoff", "KEP-3063-CLASSIC/KUBELET-PREPARE-FAILURE-RETRIED",
        "the kubelet retries a failed prepare at a fixed interval, without back-off",
        (
            Edit("draconform.reference.kubelet.classic:ClassicKubelets._retry",
                 "        delay = min(INITIAL_BACKOFF * (1 << min(attempts - 1, 16)), MAX_BACKOFF)\n",
                 ("        delay = min(INITIAL_BACKOFF * (1 << min(attempts - 1, 16)), MAX_BACKOFF)\n"
                  "        delay = INITIAL_BACKOFF\n")),
        ),
    ),
    Variant(
        "classic-kubelet-runs-without-claim", "KEP-3063-CLASSIC/KUBELET-MISSING-CLAIM-NOT-RUN",
        "the kubelet skips a claim that does not exist and runs the pod",
        (
            Edit("draconform.reference.kubelet.classic:ClassicKubelets._start",
                 "                if claim is None:\n",
                 ("                if claim is None:\n"
                  "                    continue\n")),
        ),
    ),
    Variant(
        "classic-driver-takes-every-claim", "KEP-3063-CLASSIC/DRIVER-HANDLES-ITS-CLAIMS",
        "the driver allocates the claims of every class, other drivers' too",
        (
            Edit("draconform.reference.drivers.classic_controller:ClassicDriverController._mine",
                 "    def _mine(self, claim: Obj) -> bool:\n",
                 ("    def _mine(self, claim: Obj) -> bool:\n"
                  "        return True\n")),
        ),
    ),
    Variant(
        "classic-reallocate-keeps-available-on", "KEP-3063-CLASSIC/REALLOCATE-FREES",
        "a claim freed on Reallocate keeps the availableOnNodes of its old allocation",
        (
            Edit("draconform.reference.drivers.classic_controller:ClassicDriverController._free",
                 ('        if status.get("phase") != "Pending" or status.get("attributes") or status.get("scheduling"):\n'
                  '            kept = ("userLimit", "driverName")\n'),
                 ('        if status.get("phase") != "Pending" or status.get("attributes"):\n'
                  '            kept = ("userLimit", "driverName")\n'
                  '            kept = ("userLimit", "driverName", "scheduling")\n')),
        ),
    ),
    Variant(
        "classic-claim-not-controlled", "KEP-3063-CLASSIC/TEMPLATE-CLAIM-OWNED",
        "the generated claim's owner reference to the pod is not its controller",
        (
            Edit("draconform.reference.controllers.classic_claims:_claim_for",
                 '                                 "controller": True}],\n',
                 '                                 "controller": False}],\n'),
        ),
    ),
    Variant(
        "classic-unsuitable-nodes-never-shrink", "KEP-3063-CLASSIC/UNSUITABLE-NODES-REFRESHED",
        "the driver adds nodes to unsuitableNodes as capacity goes but never takes one off when it comes back",
        (
            Edit("draconform.reference.drivers.classic_controller:ClassicDriverController._negotiate",
                 "        unsuitable = {node for node in potential if not self._can_allocate_on(node)}\n",
                 ("        unsuitable = {node for node in potential if not self._can_allocate_on(node)}\n"
                  '        unsuitable |= set(driver.get("unsuitableNodes") or []) & set(potential)\n')),
        ),
    ),
    Variant(
        "classic-kubelet-gate-ignored", "KEP-3063-CLASSIC/KUBELET-SKEW-STARTS-WITHOUT-RESOURCES",
        "a kubelet with DynamicResourceAllocation off still prepares claims",
        (
            Edit("draconform.reference.kubelet.classic:ClassicKubelets._start",
                 "        if self._gates.enabled(GATE):\n",
                 "        if True:  # the variant: the claims are prepared whatever the gate says\n"),
        ),
    ),
    Variant(
        "classic-scheduler-gate-ignored", "KEP-3063-CLASSIC/SKEW-SCHEDULER-WITHOUT-FEATURE",
        "a scheduler with DynamicResourceAllocation off still negotiates and reserves claims",
        (
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources.pre_filter",
                 "        gate = self._gates.enabled(GATE)\n",
                 "        gate = True\n"),
        ),
    ),
    Variant(
        "classic-missing-claim-ignored", "KEP-3063-CLASSIC/PREFILTER-MISSING-CLAIM",
        "the scheduler skips a claim that does not exist yet and binds the pod",
        (
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources.pre_filter",
                 ("            if claim is None:\n"
                  "                return Status(Code.UNSCHEDULABLE,\n"),
                 ("            if claim is None:\n"
                  "                continue\n"
                  "                return Status(Code.UNSCHEDULABLE,\n")),
        ),
    ),
    Variant(
        "classic-driver-name-not-recorded", "KEP-3063-CLASSIC/DRIVER-NAME-RECORDED",
        "the driver does not copy its name into the claim's status",
        (
            Edit("draconform.reference.drivers.classic_controller:ClassicDriverController._allocate",
                 '        status["driverName"] = self.behaviour.driver\n',
                 ""),
        ),
    ),
    Variant(
        "classic-immediate-waits-for-node", "KEP-3063-CLASSIC/IMMEDIATE-ALLOCATED-AT-ONCE",
        "the driver treats an Immediate claim as Delayed and waits for a selected node",
        (
            Edit("draconform.reference.drivers.classic_controller:ClassicDriverController._handle",
                 '        immediate = claim["spec"].get("allocationMode", "Delayed") == "Immediate"\n',
                 ('        immediate = claim["spec"].get("allocationMode", "Delayed") == "Immediate"\n'
                  "        immediate = False\n")),
        ),
    ),
    Variant(
        "classic-immediate-negotiated", "KEP-3063-CLASSIC/PREFILTER-IMMEDIATE-PENDING",
        "the scheduler negotiates an unallocated Immediate claim as if it were Delayed (potentialNodes, selectedNode)",
        (
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources.pre_filter",
                 ("            if not is_delayed(claim) and not is_allocated(claim):\n"
                  "                return Status(Code.UNSCHEDULABLE,\n"
                  '                              f\'resource claim "{name}" with immediate allocation is not allocated yet\')\n'),
                 ""),
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources.pre_score",
                 "            if not is_delayed(claim) or is_allocated(claim):\n",
                 "            if is_allocated(claim):\n"),
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources._select_node",
                 ("            if not is_delayed(claim):\n"
                  "                continue  # only the driver picks a node for an Immediate claim\n"),
                 ""),
        ),
    ),
    Variant(
        "classic-containers-counted-as-users", "KEP-3063-CLASSIC/CONTAINERS-NOT-USERS",
        "the scheduler counts each container using a claim as one of its users",
        (
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources._has_room",
                 '        limit = (claim.get("status") or {}).get("userLimit", 1)\n',
                 ('        limit = (claim.get("status") or {}).get("userLimit", 1)\n'
                  "        fits = len(users) + max(1, _containers_using(pod, claim)) <= limit\n"
                  "        return user_key(pod) in users or limit == UNLIMITED_USERS or fits\n")),
        ),
    ),
    Variant(
        "classic-writes-unconditional", "KEP-3063-CLASSIC/RESERVED-FOR-CONFLICT",
        "the API server takes a classic object's write from a stale read: the last write wins",
        (
            Edit("draconform.reference.apiserver.store:Store._existing",
                 '        wanted = meta.get("resourceVersion")\n',
                 ('        wanted = meta.get("resourceVersion")\n'
                  '        if obj.get("apiVersion") == CLASSIC_API:\n'
                  "            wanted = None  # the fault: a classic object's write from a stale read goes through (last write wins)\n"),
                 names={"CLASSIC_API": CLASSIC_API}),
        ),
    ),
    Variant(
        "classic-reserve-blind-write", "KEP-3063-CLASSIC/RESERVE-RACE",
        "the scheduler's Reserve writes reservedFor unconditionally (no resourceVersion): a reservation another "
        "scheduler made since its read is overwritten",
        (
            Edit("draconform.reference.scheduler.classic:ClassicDynamicResources.reserve",
                 '            try:  # conditioned on the resourceVersion read in Pre-filter: another scheduler may have won\n',
                 ('            claim["metadata"].pop("resourceVersion", None)  # the fault: a blind write\n'
                  '            try:  # conditioned on the resourceVersion read in Pre-filter: another scheduler may have won\n')),
        ),
    ),
    Variant(
        "classic-parameters-lose-null-entries", "KEP-3063-CLASSIC/PARAMETERS-OPAQUE",
        "the API server drops null entries from the lists of a claim's parameters, which are opaque to it",
        (
            Edit("draconform.reference.apiserver.classic:_apply_defaults",
                 "    if new[\"kind\"] == \"ResourceClaim\" and operation == \"CREATE\":\n"
                 "        spec = new.setdefault(\"spec\", {})\n",
                 "    if new[\"kind\"] == \"ResourceClaim\" and operation == \"CREATE\":\n"
                 "        spec = new.setdefault(\"spec\", {})\n"
                 "        if isinstance(spec.get(\"parameters\"), dict):\n"
                 "            spec[\"parameters\"] = {k: [x for x in v if x is not None] if isinstance(v, list) else v\n"
                 "                                  for k, v in spec[\"parameters\"].items()}\n"),
        ),
    ),
    Variant(
        "classic-recreates-changed-claims", "KEP-3063-CLASSIC/TEMPLATE-CLAIM-NOT-CHANGED",
        "the claim controller deletes a generated claim whose spec differs from the pod's template, and creates it "
        "again from the template",
        overrides=(Wrap("draconform.reference.controllers.classic_claims:ClassicClaimController._create_missing",
                        defects.classic_recreates_changed_claims),),
    ),
)
