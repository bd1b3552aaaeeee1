"""Selector verdicts of the columnar core (KEP-4381 "Device selection"): class and request selectors over the
usable devices, for every node at once or for one node, the common literal comparisons read without the CEL
runtime, and each node's candidate list in search order."""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence
from functools import partial

import polars as pl

from draconform.kube.cel import CelError, SelectorEngine, abbreviate
from draconform.kube.values import parse_attribute
from draconform.reference.allocator.columnar.frames import Frames
from draconform.reference.allocator.columnar.model import AltCandidates, Attempt, PoolView
from draconform.reference.allocator.columnar.pools import by_node
from draconform.reference.allocator.plans import Alternative
from draconform.sut import Obj

# `device.driver == "name"` (or !=) with a literal CEL reads the same in any escaping
_DRIVER_IS = re.compile(r"""^\s*device\.driver\s*(==|!=)\s*(["'])([A-Za-z0-9._/-]*)\2\s*$""")
# `device.attributes["domain"].name == "literal"` (or !=)
_ATTRIBUTE_IS = re.compile(r"""^\s*device\.attributes\["([A-Za-z0-9.-]+)"\]\.([A-Za-z_][A-Za-z0-9_]*)\s*(==|!=)\s*"""
                           r"""["]([A-Za-z0-9._/ -]*)["]\s*$""")


def _string_attribute(attributes: Obj, driver: str, domain: str, ident: str) -> str | None:
    """A string attribute as CEL's `device.attributes[domain].ident` reads it (bare names are in the driver's
    domain), from the published attributes; None when it is absent, not a string, or written both ways (left to
    the CEL runtime)."""
    qualified = parse_attribute(attributes.get(f"{domain}/{ident}"))
    bare = parse_attribute(attributes.get(ident)) if domain == driver else None
    if qualified is not None and bare is not None:
        return None
    value = qualified if qualified is not None else bare
    return value[1] if value is not None and value[0] == "string" else None


class Selection:
    """Which devices each request could take, per node, from the selectors of its class and its own, judged on
    the devices `frames` keeps (selector verdicts are cached in the pool view)."""

    def __init__(self, frames: Frames) -> None:
        self.frames = frames
        self._engine: SelectorEngine | None = None  # made at the first selector that needs the CEL runtime

    @property
    def engine(self) -> SelectorEngine:
        """The CEL runtime, set up when a selector first needs it: the commonest selectors (`device.driver` or a
        string attribute compared with a literal) are read from the columns and the entries, and a core that
        never meets another does not pay for the CEL environment."""
        if self._engine is None:
            self._engine = SelectorEngine()
        return self._engine

    def _verdicts(self, view: PoolView, expression: str, frame: pl.DataFrame, rows: list[int],
                  ids: list[int]) -> list[int] | None:
        """A selector's verdict on these rows of the frame (their device ids): 1 match, 0 no match, -1 error (the
        message is kept in `view.errors`); None when every one matches. Verdicts are kept per device, so a
        device judged for one node is not judged again."""
        if (driver_is := _DRIVER_IS.match(expression)) is not None:
            # The commonest class selector, a comparison of the driver name with a plain literal, is a column
            # comparison: it never errs, so no device needs the CEL runtime (or its parsed facts) for it.
            if frame is view.usable and len(rows) == frame.height and len(view.drivers) == 1:
                every = (driver_is.group(3) in view.drivers) == (driver_is.group(1) == "==")
                return None if every else [0] * len(rows)  # one driver: all devices match, or none
            drivers = frame.get_column("driver")
            drivers = drivers if len(rows) == frame.height else drivers.gather(rows)
            same = drivers == driver_is.group(3)
            matches = same if driver_is.group(1) == "==" else ~same
            return None if matches.all() else matches.cast(pl.Int8).to_list()
        known = view.verdicts.setdefault(expression, {})
        missing = [device_id for device_id in ids if device_id not in known]
        if missing:
            self._judge(view, expression, missing, known)
        verdicts = [known[device_id] for device_id in ids]
        return None if all(v == 1 for v in verdicts) else verdicts

    def _judge(self, view: PoolView, expression: str, missing: list[int], known: dict[int, int]) -> None:
        """Judge a selector on devices not judged yet, keeping each verdict in `known` (1, 0, or -1 with its
        message in `view.errors`)."""
        outcomes: list[bool | CelError | None] = [None] * len(missing)
        if (attribute_is := _ATTRIBUTE_IS.match(expression)) is not None:
            self._read_attribute(attribute_is, missing, outcomes)
        rest = [index for index, outcome in enumerate(outcomes) if outcome is None]
        facts = {index: self.frames.devices[missing[index]] for index in rest}
        try:
            shown = not self.frames.gates.stable_allocator  # D-4381-8: the stable allocator's CEL input
            found = self.engine.evaluate_many(expression, [(facts[i].cel_key, partial(facts[i].cel_input, shown))
                                                           for i in rest])
        except CelError as exc:  # a compile error: it counts for each device the selector is applied to
            found = [exc] * len(rest)
        for index, result in zip(rest, found, strict=True):
            outcomes[index] = result
        for device_id, outcome in zip(missing, outcomes, strict=True):
            if isinstance(outcome, Exception):
                known[device_id] = -1
                driver, pool, name = self.frames.keys[device_id]
                view.errors[(expression, device_id)] = (f"device {driver}/{pool}/{name}: "
                                                        f"selector {abbreviate(expression)}: {outcome}")
            else:
                known[device_id] = int(outcome is True)

    def _read_attribute(self, attribute_is: re.Match[str], missing: list[int],
                        outcomes: list[bool | CelError | None]) -> None:
        """A string attribute compared with a literal is read straight from the published entry, which is not
        parsed for it; only devices without it (a CEL error) or with another type are left (None) to the CEL
        runtime."""
        domain, ident, operator, literal = attribute_is.groups()
        published, qualified, equal = self.frames.devices.published, f"{domain}/{ident}", operator == "=="
        for index, device_id in enumerate(missing):
            driver, raw = published(device_id)
            attributes = raw.get("attributes") or {}
            full, bare = attributes.get(qualified), attributes.get(ident) if domain == driver else None
            one = full if bare is None else bare if full is None else None
            if isinstance(one, dict) and len(one) == 1 and isinstance(one.get("string"), str):
                outcomes[index] = (one["string"] == literal) == equal  # the usual case, read at once
                continue
            value = _string_attribute(attributes, driver, domain, ident)
            if value is not None:
                outcomes[index] = (value == literal) == equal

    def node_candidates(self, attempt: Attempt, node: Obj) -> dict[tuple[int, str], AltCandidates]:
        """The candidates a search on one node can reach, judged for that node only: a single allocation (as
        `draconform allocate` makes it, node after node until one fits) evaluates selectors on the devices of the
        nodes it tries, as upstream's allocator does, not on the whole cluster's."""
        by_selectors: dict[tuple[str, ...], AltCandidates] = {}
        found = {}
        node_name, reaching = str(node["metadata"]["name"]), self._per_device_here(attempt.view, node)
        for plan in attempt.plans:
            for alts in plan.requests:
                for alt in alts:
                    if alt.selectors not in by_selectors:
                        by_selectors[alt.selectors] = self._select(attempt.view, alt.selectors, node_name, reaching)
                    found[(alt.claim_index, alt.name)] = by_selectors[alt.selectors]
        return found

    def alt_candidates(self, view: PoolView, alt: Alternative) -> AltCandidates:
        """Class selectors, then request selectors: the first false one drops the device, the first error marks
        it (later selectors are not evaluated for it). Use and taints are the search's business, as upstream."""
        found = view.candidates.get(alt.selectors)
        if found is None:
            found = self._select(view, alt.selectors)
            view.candidates[alt.selectors] = found
        return found

    def _select(self, view: PoolView, selectors: tuple[str, ...], node: str | None = None,
                reaching: Sequence[str] = ()) -> AltCandidates:
        """The candidates among every usable device (for all nodes at once), or among those a search on `node` can
        reach (its own, those not bound to one node, and every device of the per-device slices in `reaching`).
        Per device, in search order: the first false selector drops it, the first error marks it, and later
        selectors are not evaluated for it."""
        if node is None:
            frame, columns = view.usable, view.columns
        else:
            frame = view.usable.filter(
                (pl.col("node_name") == node) | pl.col("node_name").is_null() | pl.col("slice").is_in(list(reaching)))
            columns = {column: frame.get_column(column).to_list()
                       for column in ("rank", "device_id", "node_name", "sel_id", "all_nodes")}
        ids = columns["device_id"]
        self.frames.work["devices selected"] += len(ids)
        keep = list(range(len(ids)))  # positions in rank order
        failed: dict[int, str] = {}  # position -> the error of the selector that failed on it
        for expression in selectors:
            judged = [p for p in keep if p not in failed] if failed else keep
            verdicts = self._verdicts(view, expression, frame, judged,
                                      ids if len(judged) == len(ids) else [ids[p] for p in judged])
            if verdicts is None:
                continue
            dropped = {p for p, v in zip(judged, verdicts, strict=True) if v == 0}
            failed.update((p, view.errors[(expression, ids[p])]) for p, v in zip(judged, verdicts, strict=True)
                          if v == -1)
            keep = [p for p in keep if p not in dropped]
        if node is None and not failed and len(keep) == len(ids) and view.everything is not None:
            return view.everything  # every device passes: the candidates grouped once per view
        return by_node(columns, keep, failed)

    def merge(self, found: AltCandidates, node: Obj, last: frozenset[tuple[str, str]],
              view: PoolView | None = None) -> list[int]:
        """This node's candidates: its own devices and the shared ones it can reach, in rank order, the pools in
        `last` moved behind the others. D-4381-9: a device of another node in a per-device slice reaching this
        node is in the list where its selectors fail with an error (the search reports it when it gets there)."""
        frames, devices = self.frames, self.frames.devices
        ranks, ids = found.local.get(str(node["metadata"]["name"]), ((), ()))
        shared = [(rank, d) for rank, d, sel_id in found.shared if frames.reach.on_node(sel_id, node)]
        if view is not None and view.per_device and found.errors:
            elsewhere = [(rank, d) for name in self._per_device_here(view, node) for rank, d in view.per_device[name]
                         if d in found.errors and not frames.reach.device_on_node(devices[d], node)]
            shared = sorted(shared + elsewhere) if elsewhere else shared
        merged = list(ids) if not shared else [d for _, d in heapq.merge(zip(ranks, ids, strict=True), shared)]
        if last:
            late = [(devices[d].driver, devices[d].pool) in last for d in merged]
            if any(late):
                merged = [d for d, x in zip(merged, late, strict=True) if not x] + [
                    d for d, x in zip(merged, late, strict=True) if x]
        return merged

    def _per_device_here(self, view: PoolView, node: Obj) -> list[str]:
        """The slices with perDeviceNodeSelection that reach the node: some device of theirs is usable there."""
        frames = self.frames
        return [name for name in view.per_device if name in frames.blocks and any(
            frames.reach.device_on_node(frames.devices[d], node) for d in frames.blocks[name].device_ids)]

    def pools_last(self, view: PoolView, node: Obj) -> frozenset[tuple[str, str]]:
        """D-5007-8: the pools holding a device with binding conditions in a slice reaching the node."""
        return frozenset(pool for pool, rows in view.binding_slices.items()
                         if any(self.frames.reach.slice_on_node(row, node) for row in rows))

