"""Known-bad variants of KEP-4381 (the structured allocator): each a set of overrides of named functions
(draconform.mutation.overrides, mostly an Edit of a few lines) that turns the correct code back into one bug
breaking the rule it names."""

from __future__ import annotations

from draconform.mutation.known_bad import defects
from draconform.mutation.overrides import Edit
from draconform.mutation.variant import Variant

VARIANTS: tuple[Variant, ...] = (
    # --- KEP-4381: the structured allocator -----------------------------------------------------------
    Variant(
        "older-generations-allocated", "KEP-4381/POOL-NEWEST-GENERATION",
        "devices of older generations count",
        (
            Edit("draconform.reference.allocator.columnar.frames:Frames.choice",
                 '        generation elsewhere then means the driver is replacing it, and the pool is left out on this node."""\n',
                 ('        generation elsewhere then means the driver is replacing it, and the pool is left out on this node."""\n'
                  "        return ()\n")),
            Edit("draconform.reference.allocator.columnar.pools:_pools",
                 '        newest = [b for b in slices if b.slice["generation"][0] == generation]\n',
                 "        newest = list(slices)\n"),
            Edit("draconform.reference.allocator.columnar.allocator:ColumnarAllocator.feasible_nodes",
                 ("        if self.frames.mixed_pools():\n"
                  "            groups: dict[Choice, list[int]] = {}\n"
                  "            for i, node in enumerate(nodes):\n"
                  "                groups.setdefault(self.frames.choice(node), []).append(i)\n"
                  "        else:\n"
                  "            groups = {(): list(range(len(nodes)))}\n"),
                 "        groups = {(): list(range(len(nodes)))}\n"),
        ),
    ),
    Variant(
        "incomplete-pools-allocated", "KEP-4381/POOL-INCOMPLETE",
        "incomplete pools are used",
        (
            Edit("draconform.reference.allocator.columnar.pools:_pools",
                 "        complete = (len(counts) == 1 and len(newest) == counts.pop()) or own\n",
                 ("        complete = (len(counts) == 1 and len(newest) == counts.pop()) or own\n"
                  "        complete = True\n")),
        ),
    ),
    Variant(
        "invalid-pools-allocated", "KEP-4381/POOL-INVALID",
        "invalid pools are used",
        (
            Edit("draconform.reference.allocator.columnar.pools:_pools",
                 "        invalid = invalid_reason(newest, gates, here) if complete else None\n",
                 "        invalid = None\n"),
        ),
    ),
    Variant(
        "node-selector-values-ignored", "KEP-4381/NODE-REACH",
        "an In requirement matches any value",
        (
            Edit("draconform.reference.nodeselector:_requirement_matches",
                 "        return value is not None and value in values\n",
                 "        return value is not None\n"),
        ),
    ),
    Variant(
        "class-selectors-ignored", "KEP-4381/SELECTORS",
        "the DeviceClass's selectors are not applied",
        (
            Edit("draconform.reference.allocator.plans:_alternative",
                 '    class_selectors = (device_class.get("spec") or {}).get("selectors")\n',
                 "    class_selectors = []\n"),
        ),
    ),
    Variant(
        "missing-class-matches-everything", "KEP-4381/CLASS-MISSING",
        "a missing DeviceClass selects every device",
        (
            Edit("draconform.reference.allocator.plans:_alternative",
                 "    device_class = classes.get(class_name)\n",
                 ("    device_class = classes.get(class_name)\n"
                  "    if device_class is None:\n"
                  "        device_class = {}\n")),
        ),
    ),
    Variant(
        "deleted-classes-remembered", "KEP-4381/CLASS-MISSING",
        "the allocator keeps a DeviceClass after it is deleted",
        (
            Edit("draconform.reference.allocator.columnar.frames:Frames._apply",
                 "                self.classes.pop(name, None)\n",
                 "                pass\n"),
        ),
    ),
    Variant(
        "count-ignored", "KEP-4381/EXACT-COUNT",
        "ExactCount gives one device whatever the count",
        (
            Edit("draconform.reference.allocator.plans:_alternative",
                 '    count = int(spec.get("count") or 1) if mode == "ExactCount" else 0\n',
                 ('    count = int(spec.get("count") or 1) if mode == "ExactCount" else 0\n'
                  "    count = 1\n")),
        ),
    ),
    Variant(
        "all-mode-takes-one", "KEP-4381/ALL-MODE",
        "All mode gives one device",
        (
            Edit("draconform.reference.allocator.plans:_alternative",
                 '    count = int(spec.get("count") or 1) if mode == "ExactCount" else 0\n',
                 ('    count = int(spec.get("count") or 1) if mode == "ExactCount" else 0\n'
                  '    if mode == "All":\n'
                  '        mode, count = "ExactCount", 1\n')),
        ),
    ),
    Variant(
        "subrequests-tried-last-first", "KEP-4381/FIRST-AVAILABLE",
        "firstAvailable is tried from the end",
        (
            Edit("draconform.reference.allocator.plans:plan_claims",
                 '                        for sub in request["firstAvailable"]]\n',
                 ('                        for sub in request["firstAvailable"]]\n'
                  "                alts.reverse()\n")),
        ),
    ),
    Variant(
        "only-first-subrequest-tried", "KEP-4381/FIRST-AVAILABLE",
        "only the first subrequest is tried",
        (
            Edit("draconform.reference.allocator.plans:plan_claims",
                 '                        for sub in request["firstAvailable"]]\n',
                 ('                        for sub in request["firstAvailable"]]\n'
                  "                alts = alts[:1]\n")),
        ),
    ),
    Variant(
        "allocated-devices-reused", "KEP-4381/DEVICE-IN-USE",
        "devices held by other claims are allocated",
        (
            Edit("draconform.reference.allocator.columnar.search:Search._in_use",
                 ("            return not alt.admin_access and device.key in self.held\n"
                  "        mine = any(self.devices[d].key == device.key for _, d, _ in self.chosen[claim])\n"
                  "        if mine:\n"
                  "            return True\n"
                  "        busy = device.key in self.busy\n"
                  "        return not alt.admin_access and (busy or device.key in self.held)\n"),
                 ("            return False\n"
                  "        mine = any(self.devices[d].key == device.key for _, d, _ in self.chosen[claim])\n"
                  "        if mine:\n"
                  "            return True\n"
                  "        busy = device.key in self.busy\n"
                  "        return False\n")),
            # the search's early skip of a device in use, before it is parsed, must forget the held ones too
            Edit("draconform.reference.allocator.columnar.search:Search._try",
                 "            if (key in self.busy or key in self.held) and not (multiple and self.gates.consumable_capacity):\n",
                 "            if key in self.busy and not (multiple and self.gates.consumable_capacity):\n"),
        ),
    ),
    Variant(
        "device-twice-in-claim", "KEP-4381/DEVICE-IN-USE",
        "one claim may get the same device twice",
        (
            Edit("draconform.reference.allocator.columnar.search:Search._in_use",
                 ("        if mine:\n"
                  "            return True\n"
                  "        busy = device.key in self.busy\n"),
                 "        busy = device.key in self.busy and not mine\n"),
        ),
    ),
    # The counting fast path of the columnar core: a node "fits" when each request alone has enough free
    # candidates, where all requests together must have them (issue 25's finding). One loop counts for many nodes
    # (the scheduler's Filter) and for one (`feasible` asks `feasible_nodes` with one node), so one variant covers
    # both; a separate one-node variant would patch the same line.
    Variant(
        "counting-each-request-alone", "KEP-4381/DEVICE-IN-USE",
        "the counting verdict (for one node or the scheduler's Filter over many) takes a node for fitting when"
        " each request alone has a free device",
        (
            Edit("draconform.reference.allocator.columnar.counting:Counting.count",
                 "                enough = enough and free >= total\n",
                 "                enough = enough and free >= need\n"),
        ),
    ),
    Variant(
        "restart-forgets-allocations", "KEP-4381/DEVICE-IN-USE",
        "a restarted scheduler knows only allocations written after it started",
        (
            Edit("draconform.reference.allocator.columnar.frames:Frames.__init__",
                 '        for obj in store.view("ResourceClaim"):\n',
                 "        for obj in []:\n"),
        ),
    ),
    Variant(
        "admin-access-ignored", "KEP-4381/ADMIN-ACCESS",
        "adminAccess is treated as an ordinary request",
        (
            Edit("draconform.reference.allocator.plans:_alternative",
                 '    admin = bool(spec.get("adminAccess")) and allow_admin\n',
                 "    admin = False\n"),
        ),
    ),
    Variant(
        "admin-access-holds-device", "KEP-4381/ADMIN-ACCESS",
        "an admin-access allocation holds its device",
        (
            Edit("draconform.reference.allocator.columnar.frames:held_devices",
                 '    return sorted((state or AllocatedState.of([claim], gates)).exclusive)\n',
                 ('    allocation = (claim.get("status") or {}).get("allocation") or {}\n'
                  '    return [(str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", "")))\n'
                  '            for r in (allocation.get("devices") or {}).get("results") or []]\n')),
        ),
    ),
    Variant(
        "admin-access-skips-counters", "KEP-4381/ADMIN-ACCESS",
        "an admin-access pick neither checks nor takes shared counters in the attempt (D-4381-13)",
        (
            Edit("draconform.reference.allocator.columnar.search:Search._try",
                 "        counts = not (shared and self.ledger.in_use(device))\n",
                 "        counts = not alt.admin_access and not (shared and self.ledger.in_use(device))\n"),
        ),
    ),
    Variant(
        "toleration-effect-ignored", "KEP-4381/TAINTS",
        "a toleration's effect is not compared",
        (
            Edit("draconform.reference.allocator.devices:tolerates",
                 ('        if effect and effect != taint.get("effect"):\n'
                  "            continue\n"),
                 ""),
        ),
    ),
    Variant(
        "no-execute-taints-ignored", "KEP-4381/TAINTS",
        "NoExecute taints do not block",
        (
            Edit("draconform.reference.allocator.devices:blocking_taints",
                 '    blocking = ("NoSchedule", "NoExecute")\n',
                 '    blocking = ("NoSchedule",)\n'),
        ),
    ),
    Variant(
        "tolerations-not-copied", "KEP-4381/TAINTS",
        "results do not carry the request's tolerations",
        (
            Edit("draconform.reference.allocator.results:build_allocation",
                 ("        if pick.alt.tolerations:\n"
                  '            result["tolerations"] = [dict(t) for t in pick.alt.tolerations]\n'),
                 ""),
        ),
    ),
    Variant(
        "device-taint-rules-ignored", "KEP-4381/DEVICE-TAINT-RULES",
        "the allocator sees only the taints drivers publish, not those of DeviceTaintRules",
        (
            Edit("draconform.reference.allocator.devices:DeviceTaints.of",
                 "    def of(self, device: DeviceFacts) -> tuple[Obj, ...]:\n",
                 ("    def of(self, device: DeviceFacts) -> tuple[Obj, ...]:\n"
                  "        return device.taints\n")),
        ),
    ),
    Variant(
        "deleted-taint-rules-remembered", "KEP-4381/DEVICE-TAINT-RULES",
        "the allocator keeps the taint of a DeviceTaintRule after the rule is deleted",
        (
            Edit("draconform.reference.allocator.columnar.frames:Frames._apply",
                 "                self.taint_rules.pop(name, None)\n",
                 "                pass\n"),
        ),
    ),
    Variant(
        "allocated-devices-consume-no-counters", "KEP-4381/COUNTERS",
        "counters ignore what allocated devices consume",
        (
            Edit("draconform.reference.allocator.columnar.allocator:ColumnarAllocator._available",
                 '                held = pl.concat([held, pl.DataFrame(extra, schema=HELD_SCHEMA, orient="row")])\n',
                 ('                held = pl.concat([held, pl.DataFrame(extra, schema=HELD_SCHEMA, orient="row")])\n'
                  "            held = held.clear()\n")),
        ),
    ),
    Variant(
        "match-constraints-dropped", "KEP-4381/MATCH-ATTRIBUTE",
        "matchAttribute constraints are ignored",
        (
            Edit("draconform.reference.allocator.plans:plan_claims",
                 '            if raw.get("matchAttribute"):\n',
                 ('            if raw.get("matchAttribute"):\n'
                  "                continue\n")),
        ),
    ),
    Variant(
        "distinct-constraints-dropped", "KEP-4381/DISTINCT-ATTRIBUTE",
        "distinctAttribute constraints are ignored",
        (
            Edit("draconform.reference.allocator.plans:plan_claims",
                 '                                          "DRAListTypeAttributes and DRADeviceCompatibilityGroups all off")\n',
                 ('                                          "DRAListTypeAttributes and DRADeviceCompatibilityGroups all off")\n'
                  "                continue\n")),
        ),
    ),
    Variant(
        "pools-in-reverse-order", "KEP-4381/SEARCH-ORDER",
        "pools, slices and devices are searched from the end",
        (
            Edit("draconform.reference.allocator.columnar.pools:_usable",
                 "    positions = [i for i, kept in enumerate(keep) if kept]\n",
                 "    positions = [i for i, kept in enumerate(keep) if kept][::-1]\n"),
        ),
    ),
    Variant(
        "no-backtracking", "KEP-4381/SEARCH-ORDER",
        "a failed later request does not undo earlier choices",
        (
            Edit("draconform.reference.allocator.columnar.search:Search._choose",
                 "                self._release(claim)\n",
                 ("                self._release(claim)\n"
                  "                return False\n")),
        ),
    ),
    Variant(
        "claim-limit-unchecked", "KEP-4381/CLAIM-LIMIT",
        "claims needing more than 32 devices are not refused",
        (
            Edit("draconform.reference.allocator.plans:check_claim_size",
                 ("    if least > MAX_DEVICES_PER_CLAIM:\n"
                  '        raise AllocationError(f"claim {plan.name}: needs at least {least} devices, which exceeds the claim limit "\n'
                  '                              f"of {MAX_DEVICES_PER_CLAIM}")\n'),
                 ""),
            Edit("draconform.reference.allocator.columnar.search:Search._try",
                 ("        if len(self.chosen[claim]) == MAX_DEVICES_PER_CLAIM:\n"
                  "            return False\n"),
                 ""),
        ),
    ),
    Variant(
        "gate-off-honours-binds-to-node", "KEP-4381/BINDING-CONDITIONS-GATED",
        "with a binding gate off, bindsToNode still pins the allocation",
        (
            Edit("draconform.reference.allocator.results:allocation_node_selector",
                 "    binds_to_node = gates.binding\n",
                 "    binds_to_node = True\n"),
        ),
    ),
    Variant(
        "binding-devices-not-last", "KEP-4381/BINDING-CONDITIONS-LAST",
        "devices with binding conditions are not moved behind the others",
        (
            Edit("draconform.reference.allocator.columnar.pools:_pools",
                 ("        if not gates.stable_allocator:  # D-5007-8, per pool\n"
                  '            flagged = [{**_row(b), "own": own} for b in newest if any(b.devices["has_binding"])]\n'
                  "            if flagged:\n"
                  "                binding_slices[key] = flagged\n"),
                 ""),
        ),
    ),
    Variant(
        "binding-devices-last-only-with-consumable-capacity", "KEP-4381/BINDING-CONDITIONS-LAST",
        "pools with binding-condition devices are moved last only while DRAConsumableCapacity is on, though the "
        "binding gates alone select the newer allocator",
        (
            Edit("draconform.reference.allocator.columnar.pools:_pools",
                 "        if not gates.stable_allocator:  # D-5007-8, per pool\n",
                 "        if gates.consumable_capacity:  # D-5007-8, per pool\n"),
        ),
    ),
    Variant(
        "empty-taint-selector-selects-nothing", "KEP-4381/DEVICE-TAINT-RULES",
        "a DeviceTaintRule whose deviceSelector is empty taints no device (the API says it matches every device)",
        (
            Edit("draconform.reference.allocator.devices:_selects",
                 '    """A rule without a selector matches no device; each field set must equal the device\'s."""\n'
                 "    if not isinstance(selector, dict):\n",
                 '    """A rule without a selector matches no device; each field set must equal the device\'s."""\n'
                 "    if not isinstance(selector, dict) or not selector:\n"),
        ),
    ),
    Variant(
        "gate-off-compares-version-lists", "KEP-4381/DISTINCT-ATTRIBUTE",
        "with DRAListTypeAttributes off the scheduler still compares lists of versions as sets (it knows the "
        "other list types only)",
        (
            Edit("draconform.reference.allocator.columnar.search:Search._constraints_hold",
                 "                    holds = value[0] not in LIST_KINDS and constraint_admits(\n"
                 '                        "distinct", value, [v for v in present if v[0] not in LIST_KINDS])\n',
                 '                    holds = value[0] not in ("ints", "bools", "strings") and constraint_admits(\n'
                 '                        "distinct", value, [v for v in present if v[0] not in ("ints", "bools", '
                 '"strings")])\n'),
        ),
    ),
    Variant(
        "gate-off-refuses-distinct-scalars", "KEP-4381/DISTINCT-ATTRIBUTE",
        "with DRAListTypeAttributes off the scheduler refuses every second device under distinctAttribute, "
        "scalars too",
        (
            Edit("draconform.reference.allocator.columnar.search:Search._constraints_hold",
                 "                    holds = value[0] not in LIST_KINDS and constraint_admits(\n",
                 "                    holds = False and constraint_admits(\n"),
        ),
    ),
    Variant(
        "conditions-copied-to-every-result", "KEP-4381/BINDING-CONDITIONS-COPIED",
        "every result of a claim gets the conditions of one of its devices",
        (
            Edit("draconform.reference.allocator.results:build_allocation",
                 "        device = pick.device\n",
                 ("        device = pick.device\n"
                  "        device = next((p.device for p in picks if p.device.binding_conditions), device)\n")),
        ),
    ),
    Variant(
        "admin-access-false-written", "KEP-4381/RESULT-FIELDS",
        "results say adminAccess: false",
        (
            Edit("draconform.reference.allocator.results:build_allocation",
                 ("        if pick.alt.admin_access:\n"
                  '            result["adminAccess"] = pick.alt.admin_access\n'),
                 '        result["adminAccess"] = pick.alt.admin_access\n'),
        ),
    ),
    Variant(
        "allocation-always-pinned", "KEP-4381/RESULT-NODE-SELECTOR",
        "every allocation is pinned to the node, even of devices usable everywhere",
        (
            Edit("draconform.reference.allocator.results:allocation_node_selector",
                 ("    if any(\n"
                  "            p.device.node_name is not None or (binds_to_node and p.device.binds_to_node) for p in picks):\n"
                  "        pinned: Obj = pinned_to(node_name)\n"
                  "        return pinned\n"),
                 ("    pinned: Obj = pinned_to(node_name)\n"
                  "    return pinned\n")),
        ),
    ),
    Variant(
        "claim-config-for-every-request", "KEP-4381/RESULT-CONFIG",
        "claim configs for requests that got nothing are copied too",
        (
            Edit("draconform.reference.allocator.results:_configs",
                 ("        if not wanted or any(name in allocated for name in wanted):\n"
                  '            item: Obj = {"source": "FromClaim", **_config_body(entry)}\n'
                  "            if wanted:\n"
                  '                item["requests"] = wanted\n'
                  "            config.append(item)\n"),
                 ('        item: Obj = {"source": "FromClaim", **_config_body(entry)}\n'
                  "        if wanted:\n"
                  '            item["requests"] = wanted\n'
                  "        config.append(item)\n")),
        ),
    ),
    Variant(
        "config-requests-cleared-by-count", "KEP-4381/RESULT-CONFIG",
        "a config naming as many entries as the claim has requests loses its requests (upstream's old check)",
        (
            Edit("draconform.reference.allocator.results:_omit_requests_covering_all",
                 "        reaches_all = all(r in names or chosen.get(r, r) in names for r in top_level)\n",
                 ("        reaches_all = all(r in names or chosen.get(r, r) in names for r in top_level)\n"
                  "        reaches_all = len(names) == len(top_level)\n")),
        ),
    ),
    Variant(
        "bare-attributes-outside-driver-domain", "KEP-4381/CEL-ENVIRONMENT",
        "unqualified attributes are not in the driver's domain",
        (
            Edit("draconform.kube.cel.library:device_input",
                 ("        if not domain:\n"
                  "            domain = driver\n"),
                 ""),
        ),
    ),
    Variant(
        "cel-errors-mean-no-match", "KEP-4381/CEL-ERRORS",
        "a selector that fails at evaluation means no match",
        (
            Edit("draconform.kube.cel.engine:SelectorEngine.evaluate_many",
                 "                verdicts = [_verdict(selector.program, item) for item in inputs]\n",
                 ("                verdicts = [_verdict(selector.program, item) for item in inputs]\n"
                  "            verdicts = [False if isinstance(verdict, CelError) else verdict for verdict in verdicts]\n")),
        ),
    ),
    # --- each gated rule under both settings: the component ignores the gate's setting (issue 39) ---------
    *defects.gate_pair("KEP-4381/FIRST-AVAILABLE", "kube-scheduler", "DRAPrioritizedList", "scheduler-prioritized-list-gate"),
    *defects.gate_pair("KEP-4381/TAINTS", "kube-scheduler", "DRADeviceTaints", "scheduler-device-taints-gate"),
    *defects.gate_pair("KEP-4381/COUNTERS", "kube-scheduler", "DRAPartitionableDevices", "scheduler-partitionable-devices-gate"),
    *defects.gate_pair("KEP-4381/ADMIN-ACCESS", "kube-scheduler", "DRAAdminAccess", "scheduler-admin-access-gate"),
    *defects.gate_pair("KEP-4381/DEVICE-TAINT-RULES", "kube-scheduler", "DRADeviceTaintRules", "scheduler-device-taint-rules-gate"),
)
