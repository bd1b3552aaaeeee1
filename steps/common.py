"""Helpers shared by the step modules (not steps themselves): the scenario's memory, YAML docstrings
and the ways a step names a claim. Everything goes through the `sut` seam."""

from __future__ import annotations

import functools
import inspect
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
import yaml
from deepdiff import DeepDiff

from draconform.catalogue import Catalogue, Tolerance, load_catalogue
from draconform.kube.kinds import NAMESPACED
from draconform.sut import (
    OBSERVATIONS,
    ApiError,
    ComponentConfig,
    DriverUnderTest,
    Obj,
    SystemUnderTest,
    Unsupported,
)

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


def manifest_object(ctx: ScenarioContext, kind: str, name: str) -> tuple[Path, Obj]:
    """The one object of `kind` called `name` among the feature folder's manifests, and its file."""
    assert ctx.feature_dir is not None, "the scenario's feature file is not known"
    folder = ctx.feature_dir / MANIFESTS
    found: list[tuple[Path, Obj]] = []
    known: list[str] = []
    for path in sorted(folder.glob("*.yaml")):
        for obj in manifest(ctx, path.name):
            known.append(f"{obj.get('kind')} {(obj.get('metadata') or {}).get('name')!r} ({path.name})")
            if obj.get("kind") == kind and (obj.get("metadata") or {}).get("name") == name:
                found.append((path, obj))
    if len(found) != 1:
        problem = "no" if not found else f"{len(found)}"
        raise LookupError(f"{problem} {kind} {name!r} in the manifests of {folder} (there are: "
                          f"{', '.join(known) or 'none'})")
    return found[0]


def manifest_variant(ctx: ScenarioContext, kind: str, name: str, changes: str | None,
                     table: list[list[str]] | None) -> Obj:
    """A named object of the manifests, changed as the step's table says (`set_fields`); `changes` is the
    step's closing `with:` (or `and:`), which a table must follow and only then."""
    file, obj = manifest_object(ctx, kind, name)
    where = f"manifest {file}: {kind} {name!r}"
    if (changes is None) != (table is None):
        raise ValueError(f"{where}: a step ending in 'with:' takes a table of changes, and only such a step")
    if table is not None:
        set_fields(obj, table, where)
    if kind in NAMESPACED:
        obj.setdefault("metadata", {}).setdefault("namespace", NAMESPACE)
    return obj


def parse_path(text: str) -> list[str | int]:
    """`spec.devices[0].attributes[gpu.example.com/model]` -> ["spec", "devices", 0, "attributes", "gpu..."]."""
    parts: list[str | int] = []
    for name, index in re.findall(r"([^.\[\]]+)|\[([^\]]*)\]", text):
        parts.append(name if name else int(index) if index.isdigit() else index)
    return parts


# The values of a field-variant table (`set_fields`) that are not YAML: leave the field out; grow a list or
# map to N entries; pad a string to N characters.
ABSENT = "(absent)"
ITEMS = re.compile(r"\((?P<count>\d+) items\)")
PADDED = re.compile(r'\(padded with "(?P<fill>[^"]*)" to (?P<length>\d+) characters\)')


def set_fields(obj: Obj, table: list[list[str]], where: str) -> Obj:
    """Change `obj` as a step's table says, row after row: a header `| field | value |`, then a field path
    (`spec.devices[0].name`, as `parse_path` reads it) and its new value, written as YAML (`3`, `true`,
    `"1.2"`, `[a, b]`, `{key: k}`); or `(absent)` to leave the field out; or `(N items)` to grow the list or
    map there to N entries by repeating its last one (names made distinct); or `(padded with "x" to N
    characters)`. Every part of a path but the last must exist; the last may be a new key of a mapping. A
    problem names `where` (the manifest and object) and the path."""
    if not table or [cell.strip() for cell in table[0]] != ["field", "value"]:
        raise ValueError(f"{where}: the table of changes must start with the header | field | value |")
    for row in table[1:]:
        if len(row) != 2:
            raise ValueError(f"{where}: a row of changes has {len(row)} cells, expected 2: {row}")
        path, text = row[0].strip(), row[1].strip()
        parts = parse_path(path)
        if not parts:
            raise ValueError(f"{where}: an empty field path")
        parent: Any = obj
        for depth, part in enumerate(parts[:-1]):
            parent = _step_into(parent, part, where, path, parts[: depth + 1])
        last = parts[-1]
        if text == ABSENT and isinstance(parent, dict):
            parent.pop(last, None)
        elif text == ABSENT:
            _step_into(parent, last, where, path, parts)
            del parent[last]
        elif (items := ITEMS.fullmatch(text)) or (padded := PADDED.fullmatch(text)):
            target = _step_into(parent, last, where, path, parts)
            try:
                if items:
                    grow_to(target, int(items["count"]))
                elif padded:
                    parent[last] = pad_to(target, padded["fill"], int(padded["length"]))
            except ValueError as exc:
                raise ValueError(f"{where}: {path}: {exc}") from exc
        else:
            _check_parent(parent, last, where, path, parts)
            parent[last] = _value(text, where, path)
    return obj


def _value(text: str, where: str, path: str) -> Any:
    if not text:
        raise ValueError(f'{where}: {path}: an empty value (write "" for the empty string, {ABSENT} to leave the '
                         "field out)")
    try:
        return yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError as exc:
        raise ValueError(f"{where}: {path}: the value {text!r} is not YAML: {exc}") from exc


def _check_parent(parent: Any, last: str | int, where: str, path: str, parts: list[str | int]) -> None:
    if isinstance(parent, list):
        _step_into(parent, last, where, path, parts)
    elif not isinstance(parent, dict) or not isinstance(last, str):
        raise ValueError(f"{where}: {path}: {_shown(parts[:-1])} is a {type(parent).__name__}, cannot take "
                         f"{last!r}")


def _step_into(value: Any, part: str | int, where: str, path: str, so_far: list[str | int]) -> Any:
    """`value[part]`, or an error naming `where`, the path and how far it resolved."""
    if isinstance(value, list) and isinstance(part, int):
        if part < len(value):
            return value[part]
        raise ValueError(f"{where}: {path}: {_shown(so_far[:-1])} has {len(value)} item(s), no [{part}]")
    if isinstance(value, dict) and isinstance(part, str):
        if part in value:
            return value[part]
        keys = ", ".join(map(str, value)) or "none"
        raise ValueError(f"{where}: {path}: {_shown(so_far)} does not exist (the keys there: {keys})")
    raise ValueError(f"{where}: {path}: {_shown(so_far[:-1])} is a {type(value).__name__}, cannot take {part!r}")


def _shown(parts: list[str | int]) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) or "." in p or "/" in p else f".{p}" for p in parts)
    return text.lstrip(".") or "the object"


def _unique(value: Any, number: int, separator: str) -> Any:
    """The `number`th copy of a list item or map key, made distinct where names must differ."""
    if isinstance(value, str):
        return f"{value}{separator}{number}"
    if isinstance(value, dict):
        copy = dict(value)
        for key in ("name", "uid", "counterSet", "type"):
            if isinstance(copy.get(key), str):
                copy[key] = f"{copy[key]}-{number}"
        return copy
    return value


def grow_to(target: Any, count: int) -> None:
    """Grow a list or map to `count` entries by repeating its last one, names made distinct."""
    if not isinstance(target, list | dict) or not target:
        raise ValueError(f"needs a list or map with an entry to repeat, not {target!r}")
    if isinstance(target, list):
        template = target[-1]
        target.extend(_unique(template, number, "-") for number in range(1, count - len(target) + 1))
    else:
        key, value = list(target.items())[-1]
        for number in range(1, count - len(target) + 1):
            target[_unique(key, number, "")] = value


def pad_to(target: Any, fill: str, length: int) -> str:
    """A string padded with `fill` (a space if empty) to `length` characters."""
    if not isinstance(target, str):
        raise ValueError(f"needs a string to pad, not {target!r}")
    return (target + (fill or " ") * length)[:length]


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
