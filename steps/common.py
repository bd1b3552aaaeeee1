"""Helpers shared by the step modules (not steps themselves): the scenario's memory, YAML docstrings
and the ways a step names a claim. Everything goes through the `sut` seam."""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from deepdiff import DeepDiff

from draconform.kube.kinds import NAMESPACED
from draconform.sut import OBSERVATIONS, ComponentConfig, Obj, SystemUnderTest

Step = TypeVar("Step", bound=Callable[..., Any])

NAMESPACE = "default"
API_VERSIONS = {
    "DeviceClass": "resource.k8s.io/v1",
    "ResourceSlice": "resource.k8s.io/v1",
    "ResourceClaim": "resource.k8s.io/v1",
    "ResourceClaimTemplate": "resource.k8s.io/v1",
    "DeviceTaintRule": "resource.k8s.io/v1",
    "Pod": "v1",
    "Node": "v1",
}


@dataclass
class ScenarioContext:
    """What a scenario remembers between steps that the cluster itself may forget: the UIDs of pods
    (to find their generated claims after the pod is gone), the last API error, and each component's
    configuration so far (the seam replaces a component's whole configuration, steps add to it). What a
    kubelet plugin answered lives in the `kubelet` fixture of steps/drivers.py."""

    pod_uids: dict[str, str] = field(default_factory=dict)
    configs: dict[str, ComponentConfig] = field(default_factory=dict)
    last_error: Exception | None = None
    slice_count: int = 0
    claim_reads: list[Obj] = field(default_factory=list)  # one claim as several schedulers read it
    feature_dir: Path | None = None  # where the scenario's feature file lives: its named manifests are there


@pytest.fixture
def ctx() -> ScenarioContext:
    return ScenarioContext()


def pytest_bdd_before_scenario(request: pytest.FixtureRequest, feature: Any, scenario: Any) -> None:
    """Remember the feature file's folder, where `manifest` finds the scenario's named manifests."""
    request.getfixturevalue("ctx").feature_dir = Path(feature.filename).parent


MANIFESTS = "manifests"  # beside the feature files of a folder: objects several scenarios share


def manifest(ctx: ScenarioContext, name: str, kind: str | None = None) -> list[Obj]:
    """The objects of a named manifest, `<feature folder>/manifests/<name>`, read as a docstring is."""
    assert ctx.feature_dir is not None, "the scenario's feature file is not known"
    path = ctx.feature_dir / MANIFESTS / name
    if not path.is_file():
        known = sorted(p.name for p in (ctx.feature_dir / MANIFESTS).glob("*.yaml"))
        raise FileNotFoundError(f"no manifest {name!r} in {path.parent} (there are: {', '.join(known) or 'none'})")
    try:
        return load_docstring(path.read_text(encoding="utf-8"), kind)
    except (yaml.YAMLError, ValueError) as exc:
        raise ValueError(f"manifest {path}: {exc}") from exc


def load_docstring(text: str, kind: str | None = None) -> list[Obj]:
    """Objects from a YAML docstring; `kind` fills in kind/apiVersion when the docstring omits them."""
    objects = []
    for document in yaml.load_all(text, Loader=yaml.CSafeLoader):
        if document is None:
            continue
        if not isinstance(document, dict):
            raise ValueError(f"a docstring document must be a mapping, got {type(document).__name__}")
        if kind is not None:
            document.setdefault("kind", kind)
        if document.get("kind") in API_VERSIONS:
            document.setdefault("apiVersion", API_VERSIONS[document["kind"]])
        objects.append(document)
    return objects


def named(kind: str, name: str, **body: Any) -> Obj:
    """A bare object of `kind` called `name` (in the default namespace when namespaced)."""
    metadata: dict[str, Any] = {"name": name}
    if kind in NAMESPACED:
        metadata["namespace"] = NAMESPACE
    return {"apiVersion": API_VERSIONS[kind], "kind": kind, "metadata": metadata, **body}


def must_get(sut: SystemUnderTest, kind: str, name: str) -> Obj:
    obj = sut.get(kind, name, NAMESPACE if kind in NAMESPACED else None)
    assert obj is not None, f"{kind} {name!r} does not exist"
    return obj


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


# The two ways a step names a claim; steps use it inside parsers.re patterns.
CLAIM = r'(?:claim "(?P<claim>[^"]+)"|the claim of pod "(?P<pod>[^"]+)")'


# A span of cluster time in a step, e.g. "10 minutes"; `to_seconds` reads its two groups.
DURATION = r"(?P<amount>\d+(?:\.\d+)?) (?P<unit>seconds?|minutes?|hours?)"
UNIT_SECONDS = {"second": 1, "seconds": 1, "minute": 60, "minutes": 60, "hour": 3600, "hours": 3600}


def to_seconds(amount: str, unit: str) -> float:
    return float(amount) * UNIT_SECONDS[unit]


def split_names(text: str) -> list[str]:
    return [part.strip().strip('"') for part in text.split(",") if part.strip()]


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



def observes(observation: str) -> Callable[[Step], Step]:
    """Marks a `Then` step that reads the cluster (it takes the `sut` fixture): its assertions are retried
    until they hold or the SUT's patience for `observation` runs out, and then the last failure, which names
    the last state seen, is raised. With no patience (the reference implementation, whose settle() has
    already made everything true) the step runs once and nothing sleeps."""
    if observation not in OBSERVATIONS:
        raise ValueError(f"unknown observation {observation!r}; known: {', '.join(OBSERVATIONS)}")

    def decorate(step: Step) -> Step:
        signature = inspect.signature(step)

        @functools.wraps(step)
        def patient_step(*args: Any, **kwargs: Any) -> Any:
            patience = signature.bind(*args, **kwargs).arguments["sut"].patience(observation)
            deadline = time.monotonic() + patience.timeout
            while True:
                try:
                    return step(*args, **kwargs)
                except AssertionError as failure:
                    if time.monotonic() + patience.interval > deadline:
                        if not patience.timeout:
                            raise
                        raise AssertionError(f"{failure}\n(still so after {patience.timeout:g}s)") from failure
                time.sleep(patience.interval)

        return patient_step  # type: ignore[return-value]

    return decorate
