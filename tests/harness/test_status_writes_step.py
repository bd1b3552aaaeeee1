"""The step counting a pod's status writes (KEP-5322/ONE-STATUS-WRITE) reads the seam's `object_writes`: it
counts the versions whose status changed, only of the pod by that name now, and a SUT written before the seam
had the method gets the scenario skipped as Unsupported rather than crashed."""

from __future__ import annotations

from typing import Any, cast

import pytest

from draconform.steps.kubelet import _status_writes
from draconform.sut import Obj, Patience, SystemUnderTest, Unsupported


def _pod(uid: str, rv: int, status: dict[str, Any] | None = None) -> Obj:
    pod: Obj = {"kind": "Pod", "metadata": {"name": "trainer", "namespace": "default", "uid": uid,
                                            "resourceVersion": str(rv)}}
    if status is not None:
        pod["status"] = status
    return pod


class OldSystem:
    """A vendor's SUT from before object_writes: it reads objects and nothing more."""

    def __init__(self, versions: list[Obj]) -> None:
        self.versions = versions

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return self.versions[-1]

    def patience(self, observation: str) -> Patience:
        return Patience()


class RecordingSystem(OldSystem):
    def object_writes(self, kind: str, name: str, namespace: str | None = None) -> list[Obj]:
        return list(self.versions)


def test_a_sut_without_object_writes_is_unsupported() -> None:
    with pytest.raises(Unsupported, match="does not provide object_writes"):
        _status_writes(cast(SystemUnderTest, OldSystem([_pod("u1", 1)])), "trainer")


def test_only_writes_that_change_the_current_pods_status_count() -> None:
    versions = [
        _pod("u0", 1), _pod("u0", 2, {"phase": "Failed"}),  # an earlier pod under the same name
        _pod("u1", 3), _pod("u1", 4, {"phase": "Pending"}), _pod("u1", 5, {"phase": "Pending"}),  # no change
        _pod("u1", 6, {"phase": "Failed", "message": "permanent"}),
    ]
    sut = cast(SystemUnderTest, RecordingSystem(versions))
    assert _status_writes(sut, "trainer") == 2
