"""The columnar core's frames kept from store watch events (KEP-4381 structured parameters): slices into rows,
classes and taint rules, what allocated claims hold whole or in shares (KEP-5075), which generation of a pool a node
sees, and whether a slice or device reaches a node."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import polars as pl

from draconform.kube.featuregates import FeatureGates
from draconform.kube.values import parse_quantity
from draconform.reference.allocator.capacity import add_usage
from draconform.reference.allocator.columnar.model import (
    CONSUMPTION_SCHEMA,
    COUNTER_SCHEMA,
    HELD_SCHEMA,
    Choice,
    Columns,
    DeviceKey,
    Devices,
    PoolView,
    SliceBlock,
)
from draconform.reference.allocator.columnar.pools import pool_view
from draconform.reference.allocator.common import (
    AllocatedState,
    DeviceFacts,
    Gates,
    node_selector_matches,
)
from draconform.reference.allocator.compatibility import (
    ClaimResults,
)
from draconform.reference.apiserver.interface import ApiReader, WatchEvent
from draconform.sut import Obj


def _decimal(amount: Fraction) -> Decimal:
    return Decimal(amount.numerator) / Decimal(amount.denominator)


def held_devices(claim: Obj, gates: Gates, state: AllocatedState | None = None) -> list[DeviceKey]:
    """The devices a claim holds whole: not admin-access results, nor shares (with DRAConsumableCapacity on);
    `state` is the claim's `AllocatedState` where the caller has read it already."""
    return sorted((state or AllocatedState.of([claim], gates)).exclusive)


def _known_selection(spec: Obj) -> bool:
    """Whether a slice says where it reaches in a way this scheduler knows (else it contributes nothing)."""
    return any(spec.get(f) for f in ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection"))


def _understood(spec: Obj, gates: Gates) -> bool:
    """Whether this scheduler's gates let it use a slice. One they do not (counters or per-device node
    selection without DRAPartitionableDevices) reaches no node, but still counts as one of its pool's slices
    when upstream counts them all (D-4381-17)."""
    return gates.partitionable or not (spec.get("sharedCounters") or spec.get("perDeviceNodeSelection"))


def _counter_rows(spec: Obj, name: str, driver: str, pool: str) -> Columns:
    """The rows of a slice's shared counter sets: one per counter, one without a counter for an empty set."""
    counter_rows: dict[str, list[Any]] = {column: [] for column in COUNTER_SCHEMA}
    for set_index, counter_set in enumerate(spec.get("sharedCounters") or []):
        for counter, value in (counter_set.get("counters") or {}).items():
            try:
                amount = parse_quantity((value or {}).get("value", 0))
            except ValueError:
                amount = Fraction(0)
            for column, item in (("slice", name), ("set_index", set_index), ("driver", driver), ("pool", pool),
                                 ("counter_set", str(counter_set.get("name", ""))), ("counter", counter),
                                 ("value", _decimal(amount))):
                counter_rows[column].append(item)
        if not counter_set.get("counters"):  # a set without counters still exists (and can be duplicated)
            for column, item in (("slice", name), ("set_index", set_index), ("driver", driver), ("pool", pool),
                                 ("counter_set", str(counter_set.get("name", ""))), ("counter", None),
                                 ("value", None)):
                counter_rows[column].append(item)
    return counter_rows


class Frames:
    """The published slices, classes, taint rules and allocated claims of one store, kept from its watch: the
    long-lived state of `ColumnarAllocator`, handed to its selection and counting, which read what this one keeps
    (its public members) and never change it."""

    def __init__(self, store: ApiReader, gates: FeatureGates, slices: Iterable[Obj] = ()) -> None:
        """`slices`: ResourceSlices published besides the store's (see `ColumnarAllocator`)."""
        self.store = store
        self.gates = Gates.of(gates)
        # Work counted where it is done, for the cost checks (tests/test_costs.py): device rows built from slices,
        # rows joined into pool views, devices run through selectors, nodes judged by Filter or searched.
        self.work: Counter[str] = Counter()
        self._watch = store.watch("ResourceSlice", "DeviceClass", "ResourceClaim", "DeviceTaintRule")
        self.taint_rules: dict[str, Obj] = {obj["metadata"]["name"]: obj for obj in store.list("DeviceTaintRule")}
        self.blocks: dict[str, SliceBlock] = {}
        self.devices = Devices()
        self.keys: dict[int, DeviceKey] = {}  # device id -> (driver, pool, name), without parsing the device
        self.special: set[int] = set()  # devices whose counters, share, taints or binding conditions count
        self.classes: dict[str, Obj] = {}
        self._held: dict[tuple[str, str], list[DeviceKey]] = {}
        self.held_count: dict[DeviceKey, int] = {}  # device -> how many allocated claims hold it
        self.held_log: list[tuple[DeviceKey, int]] = []  # devices becoming held (+1) or free (-1), in order
        # KEP-5075: what each allocated claim's shares consume (parsed once), and the sum over all claims
        self._sharing: dict[tuple[str, str], dict[DeviceKey, dict[str, Fraction]]] = {}
        self.shared_total: dict[DeviceKey, dict[str, Fraction]] = {}
        self.claim_results = ClaimResults()  # KEP-5963: results with their snapshots, per claim
        self._selectors: dict[str, int] = {}  # node selector JSON -> sel_id
        self._selector_objs: list[Obj] = []
        self._selector_verdicts: dict[tuple[int, str, str], bool] = {}
        self._next_id = 0
        self.slice_version = 0
        self.claim_version = 0
        self._views: dict[Choice, PoolView] = {}  # per generation choice (almost always only the empty one)
        self._view_version = -1
        self._mixed: dict[tuple[str, str], list[dict[str, Any]]] = {}  # pools whose generation depends on the node
        self._mixed_version = -1
        self._held_frame: pl.DataFrame | None = None
        self._held_frame_version = -1
        # The initial list needs no copies: the core only reads what it keeps.
        for obj in itertools.chain(store.view("ResourceSlice"), slices):
            self._put_slice(obj)
        for obj in store.view("DeviceClass"):
            self.classes[obj["metadata"]["name"]] = obj
        for obj in store.view("ResourceClaim"):
            self._put_claim(obj)
        self.view()  # built now, like a filled informer cache; again only when a slice changes
        self.mixed_pools()

    # --- following the store -----------------------------------------------------------------------------

    def close(self) -> None:
        """Stop following the store, so a restarted scheduler leaves no stale watch behind."""
        self._watch.stop()

    def follow(self) -> None:
        """Take in the store's changes now (the scheduler does while the cluster settles, as an informer would),
        so the next pod does not pay for them."""
        self.sync()

    def sync(self) -> None:
        if self._watch.pending():  # the usual case within one scheduling attempt: nothing new
            for event in self._watch.drain():
                self._apply(event)

    def _apply(self, event: WatchEvent) -> None:
        obj = event.object
        kind, name = obj["kind"], obj["metadata"]["name"]
        if kind == "ResourceSlice":
            if event.type == "DELETED":
                self._drop_slice(name)
            else:
                self._put_slice(obj)
        elif kind == "DeviceClass":
            if event.type == "DELETED":
                self.classes.pop(name, None)
            else:
                self.classes[name] = obj
            self.slice_version += 1
        elif kind == "DeviceTaintRule":
            if event.type == "DELETED":
                self.taint_rules.pop(name, None)
            else:
                self.taint_rules[name] = obj
            self.slice_version += 1
        elif kind == "ResourceClaim":
            key = (obj["metadata"].get("namespace", ""), name)
            if event.type == "DELETED":
                self.claim_results.drop(key)
                self._set_held(key, [])
                self._set_sharing(key, {})
            else:
                self._put_claim(obj)

    def _put_claim(self, claim: Obj) -> None:
        key = (claim["metadata"].get("namespace", ""), claim["metadata"]["name"])
        self.claim_results.put(key, claim)
        state = AllocatedState.of([claim], self.gates)  # read once for what it holds whole and its shares
        self._set_held(key, held_devices(claim, self.gates, state))
        self._set_sharing(key, state.shared)

    def _set_sharing(self, key: tuple[str, str], shared: dict[DeviceKey, dict[str, Fraction]]) -> None:
        """What one claim's shares consume now; the running total follows so no attempt re-reads every claim."""
        before = self._sharing.get(key, {})
        if before == shared:
            return
        for device, usage in before.items():
            add_usage(self.shared_total.setdefault(device, {}), usage, device[0], -1)
            if not self.shared_total[device]:
                del self.shared_total[device]
        for device, usage in shared.items():
            add_usage(self.shared_total.setdefault(device, {}), usage, device[0])
        if shared:
            self._sharing[key] = shared
        else:
            self._sharing.pop(key, None)
        self.claim_version += 1

    def _set_held(self, key: tuple[str, str], held: list[DeviceKey]) -> None:
        """What one claim holds now; the per-device counts follow so an attempt need not rescan every claim."""
        before = self._held.get(key, [])
        if before == held:
            return
        for device in before:
            self.held_count[device] -= 1
            if not self.held_count[device]:
                del self.held_count[device]
                self.held_log.append((device, -1))
        for device in held:
            self.held_count[device] = self.held_count.get(device, 0) + 1
            if self.held_count[device] == 1:
                self.held_log.append((device, 1))
        if held:
            self._held[key] = held
        else:
            self._held.pop(key, None)
        self.claim_version += 1

    def _drop_slice(self, name: str) -> None:
        block = self.blocks.pop(name, None)
        if block is not None:
            for device_id in block.device_ids:
                self.devices.drop(device_id)
                self.keys.pop(device_id, None)
                self.special.discard(device_id)
        self.slice_version += 1

    def _selector_id(self, selector: Obj | None) -> int | None:
        if selector is None:
            return None
        text = json.dumps(selector, sort_keys=True)
        if text not in self._selectors:
            self._selectors[text] = len(self._selector_objs)
            self._selector_objs.append(selector)
        return self._selectors[text]

    def _put_slice(self, obj: Obj) -> None:
        """Turn one slice into its rows. Slices this scheduler's gates do not understand contribute nothing."""
        self._drop_slice(obj["metadata"]["name"])
        spec = obj.get("spec") or {}
        name = obj["metadata"]["name"]
        if not _known_selection(spec):
            return
        if not _understood(spec, self.gates):
            spec = {"driver": spec.get("driver"), "pool": spec.get("pool")}  # counted, nothing else
        elif self.gates.stable_allocator and spec.get("sharedCounters"):
            # D-4381-19: the stable allocator gathers every slice with shared counters for every node
            spec = {key: value for key, value in spec.items() if key not in ("nodeName", "nodeSelector")}
            spec["allNodes"] = True
        driver, pool = str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", ""))
        slice_row = {
            "slice": name, "driver": driver, "pool": pool,
            "generation": int((spec.get("pool") or {}).get("generation", 0)),
            "slice_count": int((spec.get("pool") or {}).get("resourceSliceCount", 0)),
            "node_name": spec.get("nodeName") or None, "sel_id": self._selector_id(spec.get("nodeSelector") or None),
            "all_nodes": bool(spec.get("allNodes")), "per_device": bool(spec.get("perDeviceNodeSelection")),
        }
        # Column by column: a device's flags are read from its entry, and only devices the frames need more of
        # (per-device node selection, counters) are parsed now; the others when a search first looks at them.
        entries = spec.get("devices") or []
        count, version = len(entries), obj["metadata"].get("resourceVersion", "")
        ids = list(range(self._next_id, self._next_id + count))
        self._next_id += count
        self.devices.add_slice(ids, spec, name, version, entries)
        self.work["device rows"] += count
        node_name, sel_id, all_nodes = slice_row["node_name"], slice_row["sel_id"], slice_row["all_nodes"]
        devices: Columns = {
            "device_id": ids, "slice": [name] * count, "driver": [driver] * count, "pool": [pool] * count,
            "name": [str(raw.get("name", "")) for raw in entries], "index": list(range(count)),
            "node_name": [node_name] * count, "sel_id": [sel_id] * count, "all_nodes": [all_nodes] * count,
            "has_binding": [bool(raw.get("bindingConditions")) for raw in entries],
            "consumes": [False] * count, "has_groups": [False] * count,
            "has_taints": [bool(raw.get("taints")) for raw in entries],
        }
        parsed = range(count) if slice_row["per_device"] else [
            i for i, raw in enumerate(entries) if raw.get("consumesCounters")]
        consumption = self._parse_devices(devices, ids, parsed)
        self.keys.update(zip(ids, ((driver, pool, device) for device in devices["name"]), strict=True))
        self._mark_special(ids, entries, devices)
        self.blocks[name] = SliceBlock(
            slice={column: [value] for column, value in slice_row.items()},
            devices=devices,
            counters=_counter_rows(spec, name, driver, pool),
            consumption=consumption,
            device_ids=ids,
        )
        self.slice_version += 1

    def _parse_devices(self, devices: Columns, ids: list[int], parsed: Iterable[int]) -> Columns:
        """Parse the devices at these positions now, filling their columns from the facts; their counter
        consumption rows."""
        consumption: Columns = {column: [] for column in CONSUMPTION_SCHEMA}
        for index in parsed:
            device_id = ids[index]
            facts = self.devices[device_id]
            devices["node_name"][index] = facts.node_name
            devices["sel_id"][index] = self._selector_id(facts.node_selector)
            devices["all_nodes"][index] = facts.all_nodes
            devices["consumes"][index] = bool(facts.consumes)
            devices["has_groups"][index] = facts.has_compatibility_groups
            for counter_set, counters in facts.consumes:
                for counter, amount in counters:
                    consumption["device_id"].append(device_id)
                    consumption["counter_set"].append(counter_set)
                    consumption["counter"].append(counter)
                    consumption["amount"].append(_decimal(amount))
        return consumption

    def _mark_special(self, ids: list[int], entries: list[Obj], devices: Columns) -> None:
        """Note the devices counting cannot settle: counters, taints, binding conditions or shares under the gates."""
        gates = self.gates
        self.special.update(itertools.compress(ids, (
            consumes or (tainted and gates.taints) or (binding and gates.binding)
            for consumes, tainted, binding in zip(devices["consumes"], devices["has_taints"], devices["has_binding"],
                                                  strict=True))))
        if gates.consumable_capacity:  # KEP-5075: a device allocated in shares (see is_shared)
            self.special.update(d for d, raw in zip(ids, entries, strict=True)
                                 if raw.get("allowMultipleAllocations") is True)

    # --- the pool view -----------------------------------------------------------------------------------
    def mixed_pools(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """The pools where a node may see another generation, completeness or validity than the whole cluster:
        several generations, more slices than a count says, or a device name in more than one place (D-4381-18:
        upstream checks names among the slices gathered for the node only). Every other pool looks the same from
        each node."""
        if self._mixed_version != self.slice_version:
            rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
            names: dict[tuple[str, str], list[tuple[int, str]]] = {}
            for block in self.blocks.values():
                row = {column: values[0] for column, values in block.slice.items()}
                key = (row["driver"], row["pool"])
                rows.setdefault(key, []).append(row)
                names.setdefault(key, []).extend((row["generation"], name) for name in block.devices["name"])
            self._named_twice = {key for key, found in names.items() if len(set(found)) < len(found)}
            self._mixed = {key: pool for key, pool in rows.items() if len({r["generation"] for r in pool}) > 1
                           or any(len(pool) > r["slice_count"] for r in pool) or key in self._named_twice}
            self._mixed_version = self.slice_version
        return self._mixed

    def choice(self, node: Obj) -> Choice:
        """Upstream picks a pool's generation per node: the newest among the slices reaching it. That one is
        complete when the node's own slices of it number resourceSliceCount, else when all its slices do; a newer
        generation elsewhere then means the driver is replacing it, and the pool is left out on this node."""
        entries = []
        for (driver, pool), rows in sorted(self.mixed_pools().items()):
            mine = [r for r in rows if self.slice_on_node(r, node)]
            if not mine:
                continue
            here = frozenset(r["slice"] for r in mine) if (driver, pool) in self._named_twice else None
            seen = max(r["generation"] for r in mine)
            counts = {r["slice_count"] for r in rows if r["generation"] == seen}
            own = sum(r["generation"] == seen for r in mine)
            newer = any(r["generation"] > seen for r in rows)
            if len(counts) == 1 and own == counts.pop():
                entries.append((driver, pool, seen, True, here))
            elif newer:
                entries.append((driver, pool, -1, False, None))
            elif seen != max(r["generation"] for r in rows) or here is not None:
                entries.append((driver, pool, seen, False, here))
        return tuple(entries)

    def view(self, choice: Choice = ()) -> PoolView:
        if self._view_version != self.slice_version:
            self._views = {}
            self._view_version = self.slice_version
        if choice not in self._views:
            blocks = list(self.blocks.values())
            self.work["pool view rows"] += sum(len(block.device_ids) for block in blocks)
            self._views[choice] = pool_view(blocks, self.gates, choice)
        return self._views[choice]

    def held_devices_frame(self) -> pl.DataFrame:
        if self._held_frame is None or self._held_frame_version != self.claim_version:
            devices = list(self.held_count)
            self._held_frame = pl.DataFrame({"driver": [d[0] for d in devices], "pool": [d[1] for d in devices],
                                             "name": [d[2] for d in devices]}, schema=HELD_SCHEMA)
            self._held_frame_version = self.claim_version
        return self._held_frame

    def on_node(self, sel_id: int | None, node: Obj) -> bool:
        """allNodes (None) reaches every node; a node selector is matched once per node state."""
        if sel_id is None:
            return True
        meta = node["metadata"]
        key = (sel_id, str(meta["name"]), json.dumps(meta.get("labels") or {}, sort_keys=True))
        verdict = self._selector_verdicts.get(key)
        if verdict is None:
            verdict = bool(node_selector_matches(self._selector_objs[sel_id], node))
            self._selector_verdicts[key] = verdict
        return verdict

    def slice_on_node(self, row: dict[str, Any], node: Obj) -> bool:
        if row["per_device"]:
            block = self.blocks.get(row["slice"])
            return block is not None and any(self.device_on_node(self.devices[d], node) for d in block.device_ids)
        if row["node_name"] is not None:
            return bool(row["node_name"] == node["metadata"]["name"])
        if row["sel_id"] is not None:
            return self.on_node(row["sel_id"], node)
        return bool(row["all_nodes"])

    def device_on_node(self, device: DeviceFacts, node: Obj) -> bool:
        if device.node_name is not None:
            return bool(device.node_name == node["metadata"]["name"])
        if device.node_selector is not None:
            return self.on_node(self._selector_id(device.node_selector), node)
        return bool(device.all_nodes)

