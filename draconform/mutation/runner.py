"""Runs variants: for each, `draconform run` in a child process with the variant's overrides installed in the
child and every process it starts (draconform.mutation.overrides), over the feature folder of the rule's
catalogue and every other feature file whose scenarios cite the rule. The code a normal run executes carries
no variant, so a variant runs exactly the code paths a normal run does, fast paths included. A run is killed
when at least one scenario fails or errors, or when it hangs (it is stopped after a timeout); it survived when
every scenario passed; it is broken when it wrote no report (the harness itself fell over). A known-bad
variant must be killed, a conforming one must survive (pass); `summary` judges each by its kind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from draconform.catalogue import CATALOGUE_FILE, Catalogue
from draconform.mutation import overrides
from draconform.mutation.variant import CONFORMING, Variant

if TYPE_CHECKING:
    from draconform.suite.tracing import Inventory

KILLED, SURVIVED, BROKEN = "killed", "survived", "broken"
HUNG = "hung"  # the run did not finish in time: a suite that never ends fails too, so this counts as killed
BASELINE = "baseline"  # the run without any variant, which must pass for the other verdicts to mean anything

def variant_environment(variant: Variant) -> dict[str, str]:
    """The environment of a child process (and all it starts) running as `variant`: its overrides installed."""
    return overrides.environment(variant.name, dict(os.environ))


def check_variant(variant: Variant) -> list[str]:
    """What is wrong with `variant` against the current code (empty when every target exists, every Replace or
    Wrap takes its target's parameters, every Edit's text is once in its function and the edited function
    compiles, every Set's attribute exists): the fast check that keeps variants true as the code moves."""
    return overrides.problems(variant.name, variant.overrides)


@dataclass(frozen=True)
class Verdict:
    variant: Variant
    kep: str
    status: str
    killers: tuple[str, ...] = ()  # "feature_file:line scenario name" of every scenario that failed or errored
    scenarios: int = 0  # how many ran
    detail: str = ""  # for a broken run, the tail of its output

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.variant.name, "kind": self.variant.kind, "rule": self.variant.rule, "kep": self.kep,
            "what": self.variant.what, **({"allows": self.variant.allows} if self.variant.allows else {}),
            "status": self.status, "scenarios": self.scenarios, "killed_by": list(self.killers),
            **({"detail": self.detail} if self.detail else {}),
        }  # fmt: skip


@dataclass
class Plan:
    """Which feature paths each variant runs, worked out once from the catalogues and the feature files."""

    features_dir: Path
    paths: dict[str, tuple[Path, ...]] = field(default_factory=dict)  # variant name -> feature paths

    @classmethod
    def create(cls, variants: Iterable[Variant], catalogue: Catalogue, inventory: Inventory,
               features_dir: Path) -> Plan:
        folders = _kep_folders(features_dir)
        plan = cls(features_dir)
        for variant in variants:
            if variant.kind == CONFORMING:
                # another allowed choice may show anywhere (a node chosen among equals, a later reaction): a
                # conforming variant must pass the whole suite, not only its rule's folder
                plan.paths[variant.name] = (features_dir,)
                continue
            folder = folders[catalogue.rules[variant.rule].kep]
            extra = sorted({features_dir / ref.feature_file for ref in inventory.covering(variant.rule)
                            if not ref.feature_file.startswith(folder.name + "/")})
            plan.paths[variant.name] = (folder, *extra)
        return plan

    def all_paths(self) -> tuple[Path, ...]:
        return tuple(sorted({path for paths in self.paths.values() for path in paths}))


def _kep_folders(features_dir: Path) -> dict[str, Path]:
    folders = {}
    for path in sorted(features_dir.rglob(CATALOGUE_FILE)):
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        folders[str(data["kep"])] = path.parent
    return folders


def run_one(name: str, paths: Sequence[Path], work_dir: Path, features_dir: Path, timeout: float | None = None,
            first_failure: bool = False, variant: bool = True) -> tuple[str, tuple[str, ...], int, str]:
    """One `draconform run` in a child process with the overrides of the variant `name` installed (without them
    when not `variant`: the baseline): (status, killers, scenarios, detail). With `first_failure` the run stops at
    the first failing scenario (pytest -x), which is enough for a verdict and much faster for the variants that
    are killed."""
    env = overrides.environment(name, dict(os.environ)) if variant else dict(os.environ)
    if first_failure:
        env["PYTEST_ADDOPTS"] = f"{env.get('PYTEST_ADDOPTS', '')} -x".strip()
    command = [sys.executable, "-m", "draconform.cli", "run", *map(str, paths), "--report-dir", str(work_dir),
               "--name", name, "--features-dir", str(features_dir)]
    # A session of its own, so that a run that hangs is stopped together with its children; the report folder
    # as working directory, so that `python -m` puts no checkout first on the child's sys.path.
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          start_new_session=True, cwd=work_dir) as child:
        try:
            output, _ = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return HUNG, (f"the run did not finish within {timeout:.0f} s",), 0, ""
    report = work_dir / name / "report.json"
    if not report.exists():
        return BROKEN, (), 0, output[-2000:]
    scenarios = json.loads(report.read_text(encoding="utf-8"))["scenarios"]
    # A known upstream divergence kills too: the reference gives the KEP's outcome, so its failure is the mutant's.
    killers = tuple(f"{s['feature_file']}:{s['line']} {s['name']}" for s in scenarios
                    if s["status"] in ("failed", "error", "upstream divergence"))
    return (KILLED if killers else SURVIVED), killers, len(scenarios), ""


def run_variants(variants: Sequence[Variant], plan: Plan, catalogue: Catalogue, work_dir: Path, workers: int,
                 timeout: float, first_failure: bool,
                 progress: Callable[[Verdict], None] = lambda verdict: None) -> list[Verdict]:
    def one(variant: Variant) -> Verdict:
        try:
            status, killers, count, detail = run_one(variant.name, plan.paths[variant.name], work_dir,
                                                     plan.features_dir, timeout, first_failure)
        except overrides.OverrideError as error:
            status, killers, count, detail = BROKEN, (), 0, str(error)
        verdict = Verdict(variant, catalogue.rules[variant.rule].kep, status, killers, count, detail)
        progress(verdict)
        return verdict

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, variants))
