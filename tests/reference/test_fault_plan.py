"""The reference plugin's fault plan: a fault that follows the first device it meets (KEP-5322's broken device,
whichever device the allocator chose) stays on that device and leaves the others alone."""

from __future__ import annotations

import pytest

from draconform.reference.drivers.faults import FaultPlan, check_fault
from draconform.sut import PluginFault


def test_a_fault_following_the_first_device_stays_on_it() -> None:
    plan = FaultPlan()
    plan.add(PluginFault("permanent", "prepare", first_device=True))
    assert plan.claim_fault("prepare", ["gpu-1"]) is not None  # whichever device comes first breaks
    assert plan.claim_fault("prepare", ["gpu-0"]) is None  # another device works
    assert plan.claim_fault("prepare", ["gpu-1"]) is not None  # the broken one stays broken
    assert plan.claim_fault("unprepare", ["gpu-1"]) is None


def test_a_fault_names_a_device_or_follows_the_first_not_both() -> None:
    with pytest.raises(ValueError, match="not both"):
        check_fault(PluginFault("permanent", "prepare", device="gpu-0", first_device=True))
