"""The other choices of the conforming variants added for issue 39's last pass, each swapped in by an override
(draconform.mutation.overrides) that draconform.mutation.conforming names: a choice a KEP sentence, or upstream
where the KEP is silent, allows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from draconform.reference.drivers.publisher import SlicePublisher
from draconform.sut import Obj

Original = Callable[..., Any]


def driver_lists_devices_in_reverse(original: Original, self: SlicePublisher) -> dict[str, Obj]:
    """The driver lists each slice's devices last to first: the allocator, trying devices in slice order
    (KEP-4381 SEARCH-ORDER), then picks another device among equals than with the handed order."""
    wanted: dict[str, Obj] = original(self)
    for slice_ in wanted.values():
        spec = slice_.get("spec") or {}
        if spec.get("devices"):
            spec["devices"] = list(reversed(spec["devices"]))
    return wanted
