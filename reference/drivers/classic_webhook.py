"""A driver's validating admission webhook for KEP-3063's classic API (seed API comments on
ResourceClaimSpec.ResourceClassName): the API server itself does not check that a claim's class
exists, but a driver may deploy a webhook that refuses such claims. Started like an external
controller; it refuses until stopped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from draconform.reference.apiserver.store import Operation, Store
from draconform.reference.clock import FakeClock
from draconform.sut import FieldCause, Obj

RULE = "KEP-3063-CLASSIC/CLASS-EXISTENCE-NOT-CHECKED"


class ResourceClassWebhook:
    def __init__(self, store: Store, clock: FakeClock, behaviour: Mapping[str, Any]) -> None:
        self._store = store
        self._active = True
        store.add_admission(self._check)

    def _check(self, operation: Operation, new: Obj, old: Obj | None) -> list[FieldCause]:
        if not self._active or operation != "CREATE" or new["kind"] != "ResourceClaim":
            return []
        name = (new.get("spec") or {}).get("resourceClassName", "")
        if self._store.get("ResourceClass", name) is None:
            return [FieldCause("spec.resourceClassName", f"Not found: resource class {name!r} does not exist", RULE)]
        return []

    def sync(self) -> bool:
        return False  # a webhook answers requests; it has no loop of its own

    def stop(self) -> None:
        self._active = False
