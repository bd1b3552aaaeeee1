"""Runs variants: for each, `draconform run` in a child process over a copy of the project's code with the
variant's patches applied (the copy laid out as the installed package and put first on the child's
PYTHONPATH) and its overrides installed in the child and every process it starts (draconform.mutation.overrides),
over the feature folder of the rule's catalogue and every other feature file whose scenarios
cite the rule. The code a normal run executes carries no variant, so a variant runs exactly the code paths a
normal run does, fast paths included. A run is killed when at least one scenario fails or errors, or when it
hangs (it is stopped after a timeout); it survived when every scenario passed; it is broken when it wrote
no report (the harness itself fell over). A known-bad variant must be killed, a conforming one must survive
(pass); `summary` judges each by its kind."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

import draconform
from draconform.catalogue import CATALOGUE_FILE, Catalogue
from draconform.mutation import overrides
from draconform.mutation.variant import CONFORMING, Patch, Variant
from draconform.paths import FEATURES_DIR

if TYPE_CHECKING:
    from draconform.suite.tracing import Inventory

KILLED, SURVIVED, BROKEN = "killed", "survived", "broken"
HUNG = "hung"  # the run did not finish in time: a suite that never ends fails too, so this counts as killed
BASELINE = "baseline"  # the run of the unpatched copy, which must pass for the other verdicts to mean anything

# The checkout's top-level folders setup.py installs inside the package `draconform` (a wheel has them there
# already). Patch paths name files as the checkout lays them out: "reference/kubelet/kubelet.py".
SUBPACKAGES = ("reference", "steps", "features", "schemas")
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


class PatchError(Exception):
    """A variant's patch does not apply: its `old` text is not exactly once in the file (the code moved on)."""


def _package_dir(sub: str | None = None) -> Path:
    module = draconform if sub is None else importlib.import_module(f"draconform.{sub}")
    return Path(module.__file__ or "").parent


def copy_sources(dest: Path) -> Path:
    """Copy the project's code into `dest`, laid out as the installed package `dest/draconform` with
    reference/, steps/, features/ and schemas/ inside. Returns the directory to put first on PYTHONPATH."""
    package = dest / "draconform"
    shutil.copytree(_package_dir(), package, ignore=_IGNORED)
    for sub in SUBPACKAGES:
        if not (package / sub).is_dir():  # a checkout: the folder lives beside the package, not in it
            shutil.copytree(_package_dir(sub), package / sub, ignore=_IGNORED)
    return dest


def _in_copy(package: Path, path: str) -> Path:
    first, _, rest = path.partition("/")
    return package / rest if first == "draconform" else package / path


def source_file(path: str) -> Path:
    """The file a patch path names in the code this process runs (a checkout or an installed package)."""
    first, _, rest = path.partition("/")
    return _package_dir(first if first in SUBPACKAGES else None) / rest


def child_environment(root: Path) -> dict[str, str]:
    """The environment of a child process that imports the copy at `root`: it comes first on PYTHONPATH. Run
    the child with `root` as its working directory, since `python -m` puts that first on sys.path."""
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def apply_patches(variant_name: str, patches: Iterable[Patch], root: Path) -> None:
    """Apply `patches` in order to the copy at `root` (as copy_sources made it). Raises PatchError naming the
    variant, the file and the snippet when a patch's `old` does not occur exactly once."""
    for patch in patches:
        target = _in_copy(root / "draconform", patch.path)
        if not target.is_file():
            raise PatchError(f"variant {variant_name}: {patch.path}: no such file")
        text = target.read_text(encoding="utf-8")
        count = text.count(patch.old)
        if count != 1:
            raise PatchError(f"variant {variant_name}: {patch.path}: the snippet to replace occurs {count} times, "
                             f"not once:\n{patch.old}")
        target.write_text(text.replace(patch.old, patch.new), encoding="utf-8")


def variant_environment(variant: Variant, scratch: Path) -> dict[str, str]:
    """The environment of a child process (and all it starts) running as `variant`: a copy of the code with
    its patches in `scratch` first on PYTHONPATH, if it has patches, and its overrides installed. Run the child
    outside a checkout (`python -m` puts the working directory first on sys.path)."""
    env = dict(os.environ)
    if variant.patches:
        root = copy_sources(scratch)
        apply_patches(variant.name, variant.patches, root)
        env = child_environment(root)
    return overrides.environment(variant.name, env) if variant.overrides else env


def check_patches(variant: Variant) -> list[str]:
    """What is wrong with applying `variant` to the current code (empty when every patch applies once, in
    order, and every override's target exists and takes its defect's parameters), without copying anything:
    the fast check that keeps variants true as the code moves."""
    texts: dict[str, str] = {}
    problems = overrides.problems(variant.name, variant.overrides)
    for patch in variant.patches:
        target = source_file(patch.path)
        if patch.path not in texts:
            if not target.is_file():
                problems.append(f"variant {variant.name}: {patch.path}: no such file")
                continue
            texts[patch.path] = target.read_text(encoding="utf-8")
        count = texts[patch.path].count(patch.old)
        if count != 1:
            problems.append(f"variant {variant.name}: {patch.path}: the snippet occurs {count} times, not once: "
                            f"{patch.old!r}")
            continue
        start = texts[patch.path].index(patch.old)
        if start > 0 and texts[patch.path][start - 1] != "\n" and patch.old[:1].isspace():
            # Indentation matched inside a deeper line: the patch would land at the wrong depth.
            problems.append(f"variant {variant.name}: {patch.path}: the snippet starts inside a line: {patch.old!r}")
            continue
        texts[patch.path] = texts[patch.path].replace(patch.old, patch.new)
    for path, text in texts.items():
        # A variant whose code does not even compile would be "killed" by the crash, not by a scenario.
        if path.endswith(".py"):
            try:
                compile(text, path, "exec")
            except SyntaxError as error:
                problems.append(f"variant {variant.name}: {path}: the patched code does not compile: {error}")
    return problems


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


def run_one(name: str, patches: Sequence[Patch], paths: Sequence[Path], work_dir: Path, features_dir: Path,
            timeout: float | None = None, first_failure: bool = False,
            with_overrides: bool = False) -> tuple[str, tuple[str, ...], int, str]:
    """One `draconform run` in a child process over a fresh copy of the code with `patches` applied and, with
    `with_overrides`, the overrides of the variant `name` installed: (status, killers, scenarios, detail).
    With `first_failure` the run stops at the first failing scenario (pytest -x), which is enough for a verdict
    and much faster for the variants that are killed. Raises PatchError when a patch does not apply."""
    with tempfile.TemporaryDirectory(prefix=f"draconform-variant-{name}-") as scratch:
        root = copy_sources(Path(scratch))
        apply_patches(name, patches, root)
        env = child_environment(root)
        if with_overrides:
            env = overrides.environment(name, env)
        if first_failure:
            env["PYTEST_ADDOPTS"] = f"{env.get('PYTEST_ADDOPTS', '')} -x".strip()
        if features_dir.resolve() == FEATURES_DIR.resolve():  # the packaged features: run the copy's
            copied = root / "draconform" / "features"
            paths = [copied / Path(path).resolve().relative_to(FEATURES_DIR.resolve()) for path in paths]
            features_dir = copied
        command = [sys.executable, "-m", "draconform.cli", "run", *map(str, paths), "--report-dir", str(work_dir),
                   "--name", name, "--features-dir", str(features_dir)]
        # A session of its own, so that a run that hangs is stopped together with its children.
        with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True, cwd=root) as child:
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
            status, killers, count, detail = run_one(variant.name, variant.patches, plan.paths[variant.name],
                                                     work_dir, plan.features_dir, timeout, first_failure,
                                                     with_overrides=bool(variant.overrides))
        except PatchError as error:
            status, killers, count, detail = BROKEN, (), 0, str(error)
        verdict = Verdict(variant, catalogue.rules[variant.rule].kep, status, killers, count, detail)
        progress(verdict)
        return verdict

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, variants))
