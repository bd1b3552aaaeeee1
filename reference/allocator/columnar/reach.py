"""Which nodes a published slice or device reaches (KEP-4381 "ResourceSlice"): nodeName, a node selector,
allNodes, or per device with perDeviceNodeSelection (KEP-4815). Node selectors are kept once each, by an id the
frames' rows carry, and matched once per node state."""

from __future__ import annotations

import json
from typing import Any

from draconform.reference.allocator.columnar.model import Devices, SliceBlock
from draconform.reference.allocator.devices import DeviceFacts, node_selector_matches
from draconform.sut import Obj


class NodeReach:
    """Where the slices and devices `Frames` keeps reach: built by it over its (live) blocks and devices, whose
    node selectors it names by id here; read by the frames' generation choice, the selection and the allocator."""

    def __init__(self, blocks: dict[str, SliceBlock], devices: Devices) -> None:
        self.blocks, self.devices = blocks, devices
        self._selectors: dict[str, int] = {}  # node selector JSON -> sel_id
        self._selector_objs: list[Obj] = []
        self._selector_verdicts: dict[tuple[int, str, str], bool] = {}

    def selector_id(self, selector: Obj | None) -> int | None:
        """The id of a node selector (the same for equal selectors); None for none."""
        if selector is None:
            return None
        text = json.dumps(selector, sort_keys=True)
        if text not in self._selectors:
            self._selectors[text] = len(self._selector_objs)
            self._selector_objs.append(selector)
        return self._selectors[text]

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
            return self.on_node(self.selector_id(device.node_selector), node)
        return bool(device.all_nodes)
