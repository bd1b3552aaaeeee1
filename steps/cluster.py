"""What steps read and write of the cluster, through the seam only: objects that must exist (`must_get`), a
read-modify-write that retries a conflict as kubectl does (`rewrite`), the claims of a pod, slices and devices as
the scenario names them, a component's configuration (`configure`), a seam method a provider may lack
(`seam_method`), and `assert_same`, structural comparison naming each differing field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import yaml
from deepdiff import DeepDiff

from draconform.kube.kinds import NAMESPACED
from draconform.steps.manifests import NAMESPACE
from draconform.steps.scenario import ScenarioContext
from draconform.sut import (
    ApiError,
    ComponentConfig,
    Obj,
    SystemUnderTest,
    Unsupported,
)


def device_named(ctx: ScenarioContext, name: str) -> str:
    """The device a scenario calls `name`: the driver under test's device that name stands for, else `name`."""
    return ctx.devices.get(name, ("", name))[1]


def seam_method(sut: SystemUnderTest, name: str, what: str) -> Callable[..., Any]:
    """The SUT's method `name`, or `Unsupported` naming `what` it is needed for: a provider written before the
    seam offered that method is reported skipped, not crashed."""
    method = getattr(sut, name, None)
    if method is None:
        raise Unsupported(f"{type(sut).__name__} does not provide {name}, so it cannot {what}")
    return cast(Callable[..., Any], method)


def slice_devices(sut: SystemUnderTest, ctx: ScenarioContext, name: str) -> list[Obj] | None:
    """The devices of the ResourceSlice a scenario calls `name`: the slice stored under that name, or, for a slice
    the scenario handed a driver (whose slice names are its own), every stored slice of that driver and pool.
    None when there is none."""
    if name not in ctx.driver_slices:
        obj = sut.get("ResourceSlice", name)
        return None if obj is None else list(obj["spec"].get("devices") or [])
    # A driver may publish a pool as several slices, one of which may carry the name it was handed: read them
    # all, at the pool's newest generation (older slices are on their way out).
    driver, pool = ctx.driver_slices[name]
    found = [s for s in sut.list("ResourceSlice")
             if s["spec"].get("driver") == driver and (s["spec"].get("pool") or {}).get("name") == pool]
    newest = max((int(s["spec"]["pool"].get("generation") or 0) for s in found), default=0)
    return [device for s in found if int(s["spec"]["pool"].get("generation") or 0) == newest
            for device in s["spec"].get("devices") or []] if found else None


def must_get(sut: SystemUnderTest, kind: str, name: str) -> Obj:
    obj = sut.get(kind, name, NAMESPACE if kind in NAMESPACED else None)
    assert obj is not None, f"{kind} {name!r} does not exist"
    return obj


# How often a read-modify-write step reads again after a 409 Conflict, as kubectl's edit and patch retry.
CONFLICT_ATTEMPTS = 5


def rewrite(sut: SystemUnderTest, kind: str, name: str, change: Callable[[Obj], object], status: bool = False,
            read: Callable[[], Obj] | None = None) -> Obj:
    """Read an object, `change` it in place and write it back (through the status subresource with `status`),
    as kubectl does: when another client (the scheduler, a controller, the kubelet) wrote it between the read
    and the write, the API server answers 409 Conflict, and the step reads it again and makes its change once
    more. Every step that gets, changes and updates an object goes through here, except those whose rule is
    about the conflict itself. `read` replaces the plain read (a claim found through its pod)."""
    for attempt in range(CONFLICT_ATTEMPTS):
        obj = read() if read is not None else must_get(sut, kind, name)
        change(obj)
        try:
            return sut.update_status(obj) if status else sut.update(obj)
        except ApiError as error:
            if error.reason != "Conflict" or attempt == CONFLICT_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")  # the loop returns or raises


def generated_claims(sut: SystemUnderTest, ctx: ScenarioContext, pod: str) -> list[Obj]:
    """The claims the controller generated for a pod from its templates, found by owner UID so that
    they can still be found after the pod is deleted."""
    uid = ctx.pod_uids.get(pod)
    assert uid is not None, f"the scenario never created pod {pod!r}"
    return [
        claim
        for claim in sut.list("ResourceClaim", NAMESPACE)
        if any(ref.get("uid") == uid for ref in claim["metadata"].get("ownerReferences") or [])
    ]


def resolve_claim(sut: SystemUnderTest, ctx: ScenarioContext, claim: str | None, pod: str | None) -> Obj:
    """A claim named directly (`claim "x"`) or as the one claim generated for a pod."""
    if claim:
        return must_get(sut, "ResourceClaim", claim)
    assert pod is not None
    claims = generated_claims(sut, ctx, pod)
    assert len(claims) == 1, f"pod {pod!r} has {len(claims)} generated claims, expected exactly one"
    return claims[0]


def pod_claim_names(sut: SystemUnderTest, pod: str) -> list[str]:
    """The claims a pod uses: those it names, and those generated for its template entries."""
    obj = must_get(sut, "Pod", pod)
    generated = {
        status["name"]: status.get("resourceClaimName")
        for status in (obj.get("status") or {}).get("resourceClaimStatuses") or []
    }
    names = []
    for entry in obj["spec"].get("resourceClaims") or []:
        name = entry.get("resourceClaimName") or generated.get(entry["name"])
        assert name, f"pod {pod!r} has no claim for entry {entry['name']!r} yet"
        names.append(name)
    return names


def configure(
    sut: SystemUnderTest,
    ctx: ScenarioContext,
    component: str,
    gates: dict[str, bool] | None = None,
    version: str | None = None,
    args: dict[str, Any] | None = None,
) -> None:
    """Add to a component's configuration and hand the whole of it to the SUT."""
    config = ctx.configs.setdefault(component, ComponentConfig())
    config.feature_gates.update(gates or {})
    config.args.update(args or {})
    if version is not None:
        config.version = version
    sut.configure(component, ComponentConfig(dict(config.feature_gates), config.version, dict(config.args)))


def assert_same(got: Any, expected: Any, what: str) -> None:
    """Structural equality (list order matters) with a failure message naming each differing path, so
    a driver author sees which field of a large object is off rather than two walls of YAML."""
    difference = DeepDiff(expected, got, verbose_level=2)
    if difference:
        shown = yaml.safe_dump(got, sort_keys=False, default_flow_style=None).strip()
        raise AssertionError(f"{what} differs from the expected value:\n{difference.pretty()}\nactual:\n{shown}")
