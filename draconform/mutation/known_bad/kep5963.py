"""Known-bad variants of KEP-5963 (compatibility groups): each a set of overrides of named functions
(draconform.mutation.overrides, mostly an Edit of a few lines) that turns the correct code back into one bug
breaking the rule it names."""

from __future__ import annotations

from draconform.mutation.known_bad import defects
from draconform.mutation.known_bad.schema import loosened_schema
from draconform.mutation.overrides import Edit
from draconform.mutation.variant import Variant
from draconform.validation.gates import GATED_FIELDS

GROUPS_GATE = "DRADeviceCompatibilityGroups"

VARIANTS: tuple[Variant, ...] = (
    # --- KEP-5963: API server ----------------------------------------------------------------------
    Variant(
        "three-groups-accepted", "KEP-5963/GROUP-LIMITS",
        "the API server accepts 3 groups",
        loosened_schema("compatibilityGroups", maxItems=3),
    ),
    Variant(
        "repeated-groups-accepted", "KEP-5963/GROUP-LIMITS",
        "a group may be listed twice",
        loosened_schema("compatibilityGroups", uniqueItems=False),
    ),
    Variant(
        "group-name-syntax-unchecked", "KEP-5963/GROUP-LIMITS",
        "any string is a group name",
        loosened_schema("compatibilityGroups", items={"type": "string"}),
    ),
    Variant(
        "groups-kept-with-gate-off", "KEP-5963/APISERVER-GATE-OFF-STRIPS",
        "a gate-off API server keeps groups",
        (
            Edit("draconform.validation.gates:strip_disabled",
                 ("            continue\n"
                  "        for path, parent, key in list(_find(obj, gated.steps)):\n"),
                 ("            continue\n"
                  '        if "DRADeviceCompatibilityGroups" in gated.gates:\n'
                  "            continue  # the variant: a gate-off API server keeps the field\n"
                  "        for path, parent, key in list(_find(obj, gated.steps)):\n")),
        ),
    ),
    Variant(
        "stored-groups-dropped-on-update", "KEP-5963/APISERVER-GATE-OFF-STRIPS",
        "a gate-off API server drops stored groups when the object is updated",
        (
            Edit("draconform.validation.gates:_kept_from",
                 "    return known and in_use(old, gated)\n",
                 '    return known and in_use(old, gated) and not "DRADeviceCompatibilityGroups" in gated.gates\n'),
        ),
    ),
    # --- KEP-5963: a gate-off scheduler (issue 39: one rule's gate-off behaviour) --------------------------
    Variant(
        "gate-off-skips-any-groups-field", "KEP-5963/NIL-GROUP-EQUIVALENCE",
        "a gate-off scheduler skips every device whose consumesCounters carries the field, null or [] too",
        (
            Edit("draconform.reference.allocator.devices:parse_device",
                 "        has_compatibility_groups=declares_groups(declared),\n",
                 '        has_compatibility_groups=any("compatibilityGroups" in entry\n'
                 '                                     for entry in raw.get("consumesCounters") or []),\n'),
        ),
    ),
    # --- KEP-5963: snapshots --------------------------------------------------------------------------
    Variant(
        "snapshot-omits-sets-without-groups", "KEP-5963/SNAPSHOT-WRITTEN",
        "the snapshot leaves out consumed counter sets without groups",
        (
            Edit("draconform.reference.allocator.compatibility:snapshot",
                 "        return None\n",
                 ("        return None\n"
                  "    return {counter_set: list(groups) for counter_set, groups in declared if groups}\n")),
        ),
    ),
    Variant(
        "snapshot-always-written", "KEP-5963/SNAPSHOT-ONLY-WITH-GROUPS",
        "devices without groups get a snapshot",
        (
            Edit("draconform.reference.allocator.compatibility:snapshot",
                 ("    if not declares_groups(declared):\n"
                  "        return None\n"),
                 ""),
        ),
    ),
    Variant(
        "snapshots-ignored", "KEP-5963/SNAPSHOTS-NOT-SLICES",
        "allocated devices are judged without their snapshot",
        (
            Edit("draconform.reference.allocator.compatibility:result_holdings",
                 '    taken: Mapping[str, Any] | None = result.get("compatibilityGroups")\n',
                 "    taken: Mapping[str, Any] | None = None\n"),
        ),
    ),
    Variant(
        "candidate-groups-from-first-publication", "KEP-5963/CANDIDATES-FROM-CURRENT-SLICE",
        "a candidate is judged by the groups it was first published with",
        (
            Edit("draconform.reference.allocator.devices:parse_device",
                 '    declared = declared_groups(raw.get("consumesCounters") or [])\n',
                 ('    declared = declared_groups(raw.get("consumesCounters") or [])\n'
                  '    key = (str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", "")), str(raw.get("name", "")))\n'
                  "    declared = _FIRST_DECLARED.setdefault(key, declared)\n"),
                 names={"_FIRST_DECLARED": {}}),  # each device's groups as first published
        ),
    ),
    Variant(
        "unsnapshotted-results-ignored", "KEP-5963/UNSNAPSHOTTED-ALLOCATIONS",
        "results without a snapshot constrain nothing",
        (
            Edit("draconform.reference.allocator.compatibility:result_holdings",
                 '    sets = published((driver, pool, str(result.get("device", ""))))\n',
                 ('    sets = published((driver, pool, str(result.get("device", ""))))\n'
                  "    return []\n")),
        ),
    ),
    Variant(
        "unpublished-devices-forgotten", "KEP-5963/STATE-UNTIL-RELEASE",
        "an allocated device no longer published stops constraining its counter set",
        (
            Edit("draconform.reference.allocator.compatibility:result_holdings",
                 '    taken: Mapping[str, Any] | None = result.get("compatibilityGroups")\n',
                 ('    taken: Mapping[str, Any] | None = result.get("compatibilityGroups")\n'
                  "    if taken and published(\n"
                  '            (driver, pool, str(result.get("device", "")))) is None:\n'
                  "        return []\n")),
        ),
    ),
    # --- KEP-5963: matching ---------------------------------------------------------------------------
    Variant(
        "empty-group-list-is-a-group", "KEP-5963/NIL-GROUP-EQUIVALENCE",
        "compatibilityGroups: [] declares a group",
        (
            Edit("draconform.reference.allocator.compatibility:groups_of",
                 '    raw = consumption.get("compatibilityGroups") or ()\n',
                 ('    raw = consumption.get("compatibilityGroups") or ()\n'
                  '    if consumption.get("compatibilityGroups") == []:\n'
                  '        return ("",)\n')),
        ),
    ),
    Variant(
        "groupless-set-admits-grouped", "KEP-5963/NIL-GROUP-MATCHING",
        "a counter set holding devices without groups admits a grouped device",
        (
            Edit("draconform.reference.allocator.compatibility:SetState.admits",
                 "            return not groups\n",
                 "            return True\n"),
        ),
    ),
    Variant(
        "grouped-set-admits-groupless", "KEP-5963/NIL-GROUP-MATCHING",
        "a counter set holding grouped devices admits a device without groups",
        (
            Edit("draconform.reference.allocator.compatibility:SetState.admits",
                 ("            if not groups:\n"
                  "                return False\n"),
                 ("            if not groups:\n"
                  "                return True\n")),
        ),
    ),
    Variant(
        "any-groups-compatible", "KEP-5963/SHARED-GROUP-REQUIRED",
        "devices with disjoint groups are admitted",
        (
            Edit("draconform.reference.allocator.compatibility:SetState.admits",
                 "            return not self.groups.isdisjoint(groups)\n",
                 "            return True\n"),
        ),
    ),
    Variant(
        "intersection-not-narrowed", "KEP-5963/ROLLING-INTERSECTION",
        "a candidate is checked against the first device's groups only",
        (
            Edit("draconform.reference.allocator.compatibility:SetState.add",
                 "        narrowed = self.groups.intersection(groups) if self.grouped else frozenset(groups)\n",
                 ("        narrowed = self.groups.intersection(groups) if self.grouped else frozenset(groups)\n"
                  "        if self.grouped:\n"
                  "            narrowed = self.groups\n")),
        ),
    ),
    Variant(
        "other-claims-ignored-by-groups", "KEP-5963/ANY-CLAIM-ANY-POD",
        "other claims' devices are not counted",
        (
            Edit("draconform.reference.allocator.compatibility:allocated_states",
                 "    states: dict[CounterSetKey, SetState] = {}\n",
                 ("    states: dict[CounterSetKey, SetState] = {}\n"
                  "    return states\n")),
        ),
    ),
    Variant(
        "own-picks-not-tracked", "KEP-5963/ANY-CLAIM-ANY-POD",
        "devices picked earlier in the same attempt are not counted",
        (
            Edit("draconform.reference.allocator.compatibility:Tracker.add",
                 ("        if self.mode is Mode.ENFORCE:\n"
                  "            for counter_set, groups in declared:\n"
                  "                key = (driver, pool, counter_set)\n"
                  "                record.append((key, self._overlay.get(key)))\n"
                  "                self._overlay[key] = self.state(key).add(groups)\n"),
                 ""),
        ),
    ),
    Variant(
        "only-first-counter-set-judged", "KEP-5963/PER-COUNTER-SET",
        "a device is judged on its first counter set only",
        (
            Edit("draconform.reference.allocator.compatibility:Tracker.admits",
                 "                self.state((driver, pool, s)).grouped == 0 for s, _ in declared)\n",
                 ("                self.state((driver, pool, s)).grouped == 0 for s, _ in declared)\n"
                  "        declared = declared[:1]\n")),
        ),
    ),
    Variant(
        "groups-compared-across-counter-sets", "KEP-5963/UNRELATED-COUNTER-SETS",
        "groups are compared across the counter sets of a pool",
        (
            Edit("draconform.reference.allocator.compatibility:Tracker.admits",
                 "                self.state((driver, pool, s)).grouped == 0 for s, _ in declared)\n",
                 ("                self.state((driver, pool, s)).grouped == 0 for s, _ in declared)\n"
                  "        states = [state for key, state in {**self._base, **self._overlay}.items() if key[:2] == (driver, pool)]\n"
                  "        return all(state.admits(groups) for state in states for _, groups in declared)\n")),
        ),
    ),
    Variant(
        "groups-compared-across-pools", "KEP-5963/GROUPS-WITHIN-POOL",
        "a counter set is known by its name alone: devices of other pools and drivers are compared by their groups",
        (
            Edit("draconform.reference.allocator.compatibility:Tracker.admits",
                 "        verdict = all(self.state((driver, pool, s)).admits(groups) for s, groups in declared)\n",
                 ("        states = {**self._base, **self._overlay}\n"
                  "        verdict = all(state.admits(groups) for s, groups in declared\n"
                  "                      for key, state in states.items() if key[2] == s)\n")),
        ),
    ),
    Variant(
        "groups-compared-across-drivers", "KEP-5963/GROUPS-WITHIN-POOL",
        "a counter set is known by pool and name: a same-named pool of another driver is compared by its groups",
        (
            Edit("draconform.reference.allocator.compatibility:Tracker.admits",
                 "        verdict = all(self.state((driver, pool, s)).admits(groups) for s, groups in declared)\n",
                 ("        states = {**self._base, **self._overlay}\n"
                  "        verdict = all(state.admits(groups) for s, groups in declared\n"
                  "                      for key, state in states.items() if key[1:] == (pool, s))\n")),
        ),
    ),
    Variant(
        "mixed-set-admits-shared-group", "KEP-5963/MIXED-ADMITS-NOTHING",
        "a counter set with and without groups admits a device sharing a group",
        (
            Edit("draconform.reference.allocator.compatibility:SetState.admits",
                 ("            if self.groupless:\n"
                  "                return False\n"),
                 ""),
        ),
    ),
    Variant(
        "rejection-ends-search", "KEP-5963/BACKTRACK-ON-REJECTION",
        "after one compatibility rejection no candidate is admitted",
        (
            Edit("draconform.reference.allocator.compatibility:Tracker.__init__",
                 "        self._undo: list[list[tuple[CounterSetKey, SetState | None]]] = []\n",
                 ("        self._undo: list[list[tuple[CounterSetKey, SetState | None]]] = []\n"
                  "        self.rejected = False\n")),
            Edit("draconform.reference.allocator.compatibility:Tracker.admits",
                 "        verdict = all(self.state((driver, pool, s)).admits(groups) for s, groups in declared)\n",
                 ("        verdict = all(self.state((driver, pool, s)).admits(groups) for s, groups in declared)\n"
                  "        self.rejected = self.rejected or not verdict\n"
                  "        return verdict and not self.rejected\n")),
        ),
    ),
    Variant(
        "groups-ignored-when-nothing-fits", "KEP-5963/UNSCHEDULABLE-WITHOUT-COMBINATION",
        "when no compatible combination exists, groups are ignored",
        (
            Edit("draconform.reference.allocator.columnar.allocator:ColumnarAllocator.allocate",
                 "        fitted = search.run()\n",
                 ("        fitted = search.run()\n"
                  "        if not fitted:  # a tracker without a base admits all\n"
                  "            from draconform.reference.allocator.compatibility import Mode\n"
                  "            search = Search(attempt, lists, errors, devices, Tracker(Mode.SKIP), available, self.gates,\n"
                  "                             self._consumption_of, taints)\n"
                  "            fitted = search.run()\n")),
        ),
    ),
    Variant(
        "groups-replace-match-constraints", "KEP-5963/MATCH-ATTRIBUTE-CONJUNCTION",
        "with the gate on, matchAttribute constraints are dropped",
        (
            Edit("draconform.reference.allocator.plans:plan_claims",
                 '            if raw.get("matchAttribute"):\n',
                 ('            if raw.get("matchAttribute"):\n'
                  "                if gates.compatibility is Mode.ENFORCE:\n"
                  "                    continue\n")),
        ),
    ),
    Variant(
        "grouped-devices-skip-counters", "KEP-5963/COUNTERS-UNCHANGED",
        "devices with groups are not checked against counters",
        (
            Edit("draconform.reference.allocator.columnar.search:Search._try",
                 "        if any(self.left.get(key, Fraction(0)) < amount for key, amount in needs):\n",
                 "        if any(self.left.get(key, Fraction(0)) < amount for key, amount in needs) and not device.has_compatibility_groups:\n"),
        ),
    ),
    # --- KEP-5963: gates and skew -------------------------------------------------------------------
    Variant(
        "gate-off-scheduler-acts-as-older", "KEP-5963/VERSION-SKEW-MATRIX",
        "a gate-off scheduler ignores groups as an older one would",
        (
            Edit("draconform.reference.scheduler.releaseview:hidden_fields",
                 "    return tuple(unknown_fields(gates))\n",
                 ("    hidden = [gated for gated in unknown_fields(gates)]\n"
                 "    if gates.known(GROUPS_GATE) and not gates.enabled(GROUPS_GATE):\n"
                 "        hidden += [gated for gated in GATED_FIELDS if GROUPS_GATE in gated.gates]\n"
                 "    return tuple(hidden)\n"),
                 names={"GROUPS_GATE": GROUPS_GATE, "GATED_FIELDS": GATED_FIELDS}),
        ),
    ),
    Variant(
        "gate-off-allocates-grouped-devices", "KEP-5963/GATE-OFF-SKIPS-GROUPED-DEVICES",
        "a gate-off scheduler allocates devices with groups",
        (
            Edit("draconform.reference.allocator.columnar.pools:_usable",
                 ("    if gates.compatibility is Mode.SKIP:\n"
                  '        keep = _without(keep, newest_devices["has_groups"])\n'),
                 ""),
        ),
    ),
    Variant(
        "gate-off-ignores-snapshots", "KEP-5963/GATE-OFF-RESPECTS-SNAPSHOTS",
        "a gate-off scheduler allocates on counter sets with snapshotted groups",
        (
            Edit("draconform.reference.allocator.compatibility:Tracker.admits",
                 ("            return all(\n"
                  "                self.state((driver, pool, s)).grouped == 0 for s, _ in declared)\n"),
                 "            return True\n"),
        ),
    ),
    Variant(
        "older-apiserver-serves-stored-fields", "KEP-5963/DOWNGRADED-APISERVER",
        "an older API server serves stored fields it does not know",
        (
            Edit("draconform.reference.apiserver.store:Store.gates",
                 "        self._unknown = unknown_fields(gates)\n",
                 "        self._unknown = ()\n"),
        ),
    ),
    Variant(
        "older-scheduler-skips-grouped-devices", "KEP-5963/DOWNGRADE-KEEPS-ALLOCATIONS",
        "a scheduler older than the feature skips devices with groups",
        (
            Edit("draconform.reference.scheduler.releaseview:hidden_fields",
                 "    return tuple(unknown_fields(gates))\n",
                 ("    hidden = [gated for gated in unknown_fields(gates) if not GROUPS_GATE in gated.gates]\n"
                 "    return tuple(hidden)\n"),
                 names={"GROUPS_GATE": GROUPS_GATE}),
        ),
    ),
    Variant(
        "scheduler-gates-latched-at-first-start", "KEP-5963/UPGRADE-DOWNGRADE-UPGRADE",
        "a restarted scheduler keeps the gates it first ran with",
        (
            Edit("draconform.reference.scheduler.scheduler:Scheduler.__init__",
                 "        self._stopped = False\n",
                 ("        self._stopped = False\n"
                  "        config = SchedulerConfig(_FIRST_GATES.setdefault(id(store), config.gates), config.args)\n"
                  "        self.config = config\n"),
                 names={"_FIRST_GATES": {}}),  # the gates of each store's first scheduler
        ),
    ),
    # --- each gated rule under both settings: the component ignores the gate's setting (issue 39) ---------
    *defects.gate_pair("KEP-5963/GATE-OFF-SKIPS-GROUPED-DEVICES", "kube-scheduler", "DRADeviceCompatibilityGroups", "scheduler-compatibility-groups-gate"),
    *defects.gate_pair("KEP-5963/APISERVER-GATE-OFF-STRIPS", "kube-apiserver", "DRADeviceCompatibilityGroups", "apiserver-compatibility-groups-gate"),
    *defects.gate_pair("KEP-5963/DRIVER-OMITS-WHEN-GATE-OFF", "dra-driver", "DRADeviceCompatibilityGroups", "driver-compatibility-groups-gate"),
)
