"""The scheduler's classic DRA plugin (KEP-3063 Reserve/Unreserve) driven directly, where the seam cannot
interleave: a reservation that loses a race, Unreserve after a partial Reserve, and a property test that
any interleaving of several schedulers keeps reservedFor within userLimit."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from draconform.kube.featuregates import FeatureGates
from draconform.kube.kinds import CLASSIC_KINDS, with_pod_room
from draconform.reference.apiserver import classic as classic_api
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.reference.scheduler.classic import ClassicDynamicResources, distinct_users
from draconform.reference.scheduler.framework import Code, CycleState
from draconform.sut import Obj

NODE: Obj = with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}})


def _store() -> Store:
    store = Store(FakeClock(), FeatureGates(), kinds=CLASSIC_KINDS)
    classic_api.install(store)
    store.create(NODE)
    return store


def _allocated_claim(store: Store, name: str, user_limit: int) -> None:
    store.create({"apiVersion": "cdi.k8s.io/v1alpha1", "kind": "ResourceClaim",
                  "metadata": {"name": name, "namespace": "default"},
                  "spec": {"resourceClassName": "gpu", "allocationMode": "Immediate"}})
    claim = store.get("ResourceClaim", name, "default")
    assert claim is not None
    claim["status"] = {"phase": "Allocated", "userLimit": user_limit, "driverName": "gpu.example.com"}
    store.update_status(claim)


def _pod(store: Store, name: str, claims: list[str]) -> Obj:
    return store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                         "spec": {"containers": [{"name": "main", "image": "app"}],
                                  "resourceClaims": [{"name": f"c{i}", "resourceClaimName": claim}
                                                     for i, claim in enumerate(claims)]}})


def _reserved(store: Store, claim: str) -> set[str]:
    stored = store.get("ResourceClaim", claim, "default")
    assert stored is not None
    return {entry["name"] for entry in stored["status"].get("reservedFor") or []}


def test_a_reservation_from_a_stale_read_is_refused_and_retried() -> None:
    store = _store()
    _allocated_claim(store, "gpu", user_limit=1)
    plugin = ClassicDynamicResources(store, FeatureGates())
    first, second = _pod(store, "first", ["gpu"]), _pod(store, "second", ["gpu"])
    first_state, second_state = CycleState(), CycleState()
    assert plugin.pre_filter(first_state, first).ok
    assert plugin.pre_filter(second_state, second).ok  # both read the claim with room for one
    assert plugin.reserve(first_state, first, NODE).ok
    lost = plugin.reserve(second_state, second, NODE)
    assert lost.code == Code.ERROR, "the second write must fail on the resourceVersion it read"
    assert _reserved(store, "gpu") == {"first"}
    retry = CycleState()
    assert plugin.pre_filter(retry, second).code == Code.UNSCHEDULABLE, "on retry the claim is full"


def test_unreserve_takes_back_what_a_partial_reserve_wrote() -> None:
    store = _store()
    _allocated_claim(store, "a", user_limit=1)
    _allocated_claim(store, "b", user_limit=1)
    plugin = ClassicDynamicResources(store, FeatureGates())
    pod, rival = _pod(store, "pod", ["a", "b"]), _pod(store, "rival", ["b"])
    state, rival_state = CycleState(), CycleState()
    assert plugin.pre_filter(state, pod).ok
    assert plugin.pre_filter(rival_state, rival).ok
    assert plugin.reserve(rival_state, rival, NODE).ok  # the rival takes b in between
    assert not plugin.reserve(state, pod, NODE).ok
    assert _reserved(store, "a") == {"pod"}, "Reserve wrote claim a before failing on b"
    plugin.unreserve(state, pod, NODE)
    assert _reserved(store, "a") == set()
    assert _reserved(store, "b") == {"rival"}, "Unreserve must not touch what it did not write"


@settings(max_examples=60, deadline=None)
@given(limit=st.sampled_from([1, 2, 3]), pods=st.integers(2, 5), order=st.randoms(use_true_random=False))
def test_interleaved_schedulers_never_exceed_the_user_limit(limit: int, pods: int, order: object) -> None:
    """Every scheduler reads (Pre-filter) in some order, then writes (Reserve) in another: whatever the
    interleaving, optimistic concurrency keeps the distinct users of the claim within userLimit."""
    store = _store()
    _allocated_claim(store, "gpu", user_limit=limit)
    plugin = ClassicDynamicResources(store, FeatureGates())
    attempts = [(_pod(store, f"p{i}", ["gpu"]), CycleState()) for i in range(pods)]
    reads = list(attempts)
    order.shuffle(reads)  # type: ignore[attr-defined]
    started = [(pod, state) for pod, state in reads if plugin.pre_filter(state, pod).ok]
    order.shuffle(started)  # type: ignore[attr-defined]
    for pod, state in started:
        plugin.reserve(state, pod, NODE)
        claim = store.get("ResourceClaim", "gpu", "default")
        assert claim is not None
        assert len(distinct_users(claim)) <= limit
    assert _reserved(store, "gpu"), "someone must win the race"
