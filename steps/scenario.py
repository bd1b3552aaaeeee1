"""The scenario's memory and its one wait, shared by every step module (not steps themselves): `ScenarioContext`
(the `ctx` fixture) with the hooks that fill it in, `tolerance` (what the scenario's rule tolerates), and
`observes`, the one way a `Then` step waits for what it reads: retried until it holds or the SUT's patience runs
out (`moves_clock` and @exact-time say when a Then step judges one moment instead). A pytest plugin of the
harness, for its fixture and hooks."""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from draconform.catalogue import Catalogue, Tolerance, load_catalogue
from draconform.sut import (
    OBSERVATIONS,
    ComponentConfig,
    DriverUnderTest,
    Obj,
    SystemUnderTest,
)

Step = TypeVar("Step", bound=Callable[..., Any])


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
    exact_tagged: bool = False  # the scenario, its rule or feature is tagged @exact-time
    exact_time: bool = False  # tagged, and the last Given/When moved the clock: Then steps judge that moment
    waited: float = 0.0  # simulated seconds Then steps have waited so far (`observes`), which durations may include
    borrowed: float = 0.0  # of those, the seconds the scenario's next clock steps have not yet paid back
    feature_dir: Path | None = None  # where the scenario's feature file lives: its named manifests are there
    rule: str | None = None  # the rule ID its Rule: block names
    # The slices handed to a driver under test, by the name the scenario gave them: (driver, pool). The driver
    # publishes them under names of its own choosing, so a Then step finds them by driver and pool.
    driver_slices: dict[str, tuple[str, str]] = field(default_factory=dict)
    # The devices a scenario names, by the name it gives them: (pool, device) as the driver under test publishes
    # them. A driver handed its devices publishes them under those names; a cluster's own driver under its own.
    devices: dict[str, tuple[str, str]] = field(default_factory=dict)
    # The cluster's own driver under test, when the scenario's driver, node and class names stand for it.
    own_driver: DriverUnderTest | None = None
    own_driver_alias: str | None = None  # the scenario's name for it


@pytest.fixture
def ctx() -> ScenarioContext:
    return ScenarioContext()


def pytest_bdd_before_scenario(request: pytest.FixtureRequest, feature: Any, scenario: Any) -> None:
    """Remember the feature file's folder, where `manifest` finds the scenario's named manifests, and the rule
    the scenario's `Rule:` block names (the leading ID of its title), whose tolerance a step may honour."""
    ctx = request.getfixturevalue("ctx")
    ctx.feature_dir = Path(feature.filename).parent
    ctx.rule = scenario.rule.name.split()[0] if scenario.rule and scenario.rule.name else None
    rule_tags = set(scenario.rule.tags) if scenario.rule else set()
    ctx.exact_tagged = EXACT_TIME in set(feature.tags) | set(scenario.tags) | rule_tags


@functools.cache
def _catalogue() -> Catalogue:
    return load_catalogue()


def tolerance(ctx: ScenarioContext) -> Tolerance:
    """What the scenario's rule tolerates (its catalogue `tolerance`), nothing for a scenario outside a rule."""
    rule = _catalogue().rules.get(ctx.rule or "")
    return rule.tolerance if rule else Tolerance()


# Simulated seconds between two looks of a waiting observation: fine at first (a component a second late
# passes at once), coarser later; they add up to the most a SUT's `Patience.simulated` allows.
SIMULATED_STEPS = (1.0, 1.0, 2.0, 2.0, 4.0, 5.0, 5.0, 10.0)
EXACT_TIME = "exact-time"  # the tag of a scenario, rule or feature whose Then steps judge exact moments


def observes(observation: str, eventually: bool = True) -> Callable[[Step], Step]:
    """Marks a `Then` step that reads the cluster (it takes the `sut` fixture): its assertions are retried
    until they hold or the SUT's patience for `observation` runs out, and then the last failure, which names
    the last state seen, is raised. A live SUT's patience is real time. A SUT on a fake clock (the reference
    implementation) looks once in real time, and while an observation does not hold moves its clock on in
    small steps, up to `Patience.simulated` seconds, so a component that reacts a little later conforms too.
    That simulated wait is for observations of something that eventually happens only: a step that says
    something has not happened (`eventually=False`) looks once, and so do, in a scenario tagged @exact-time
    (one that judges a timeout or a backoff bound at its moment), the Then steps right after a step that moved
    the clock: they judge that moment. A Then step after any other step still waits there. The seconds waited
    add up in `ctx.waited`, so a step judging a duration can allow for them, and the scenario's next clock step
    moves the clock that much less (`ctx.borrowed`), so its timeline stays where the scenario put it."""
    if observation not in OBSERVATIONS:
        raise ValueError(f"unknown observation {observation!r}; known: {', '.join(OBSERVATIONS)}")

    def decorate(step: Step) -> Step:
        signature = inspect.signature(step)
        takes_ctx = "ctx" in signature.parameters

        @functools.wraps(step)
        def patient_step(*args: Any, **kwargs: Any) -> Any:
            ctx = (kwargs.get("ctx") if takes_ctx else kwargs.pop("ctx", None)) or ScenarioContext()
            sut: SystemUnderTest = signature.bind(*args, **kwargs).arguments["sut"]
            patience = sut.patience(observation)
            simulated = list(SIMULATED_STEPS) if eventually and not ctx.exact_time else []
            waited, deadline = 0.0, time.monotonic() + patience.timeout
            while True:
                try:
                    return step(*args, **kwargs)
                except AssertionError as failure:
                    if simulated and waited + simulated[0] <= patience.simulated:
                        waited += simulated[0]
                        ctx.waited += simulated[0]
                        ctx.borrowed += simulated[0]
                        sut.advance_clock(simulated.pop(0))
                        continue
                    if time.monotonic() + patience.interval > deadline:
                        if waited:
                            later = f"(still so {waited:g} simulated seconds later)"
                            raise AssertionError(f"{failure}\n{later}") from failure
                        if not patience.timeout:
                            raise
                        raise AssertionError(f"{failure}\n(still so after {patience.timeout:g}s)") from failure
                time.sleep(patience.interval)

        if not takes_ctx:  # pytest-bdd hands the wrapper the scenario's memory, which says when time is exact
            ctx_parameter = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD)
            patient_step.__signature__ = signature.replace(  # type: ignore[attr-defined]
                parameters=[*signature.parameters.values(), ctx_parameter])
        return patient_step  # type: ignore[return-value]

    return decorate


def moves_clock(step: Step) -> Step:
    """Marks a `When` step that moves the cluster's clock (see `observes` and @exact-time)."""
    step.moves_clock = True  # type: ignore[attr-defined]
    return step


def pytest_bdd_before_step(request: pytest.FixtureRequest, feature: Any, scenario: Any, step: Any,
                           step_func: Callable[..., Any]) -> None:
    """In a scenario tagged @exact-time, the Then steps after a clock step judge that moment exactly, until the
    next Given or When."""
    if step.type != "then":
        ctx: ScenarioContext = request.getfixturevalue("ctx")
        ctx.exact_time = ctx.exact_tagged and getattr(step_func, "moves_clock", False)
