"""The workload registry of `draconform bench`: each benchmark is a `Workload` (name, one-line summary,
a function from `BenchOptions` to a list of `Measurement`s), registered with `@workload(name, summary)` in a
provider module listed in `PROVIDERS`. It lives below the command so the workloads never import the CLI
layer; `draconform.commands.bench` only parses arguments and prints."""

from __future__ import annotations

import gc
import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

PROVIDERS = (
    "draconform.bench.validation",
    "draconform.bench.dra",
    "draconform.bench.bindingconditions",
    "draconform.bench.compatibility",
    "draconform.bench.consumable",
    "draconform.bench.allocator",
    "draconform.bench.serve",
)


@dataclass(frozen=True)
class BenchOptions:
    scale: float = 1.0  # multiplies node, pod and object counts; 1.0 is the full (upstream) shape
    allocators: tuple[str, ...] = ("columnar",)  # allocation cores the scheduler workloads run with
    oracle_pods: int = 5  # measured pods for the oracle in the core comparison (it is slow by design)


@dataclass
class Measurement:
    workload: str
    unit: str  # e.g. "pods/s", "objects/s"
    value: float
    detail: str = ""  # what was measured: sizes, elapsed time
    allocator: str = ""  # the allocation core, for scheduler workloads
    # The figure's target on the full shape (issue 38), a floor or a ceiling; `bench --check` fails when one is missed
    at_least: float | None = None
    at_most: float | None = None

    def target(self) -> str:
        """The target as printed ("" without one)."""
        if self.at_least is not None:
            return f">= {self.at_least:,g} {self.unit}"
        return f"<= {self.at_most:,g} {self.unit}" if self.at_most is not None else ""

    def met(self) -> bool | None:
        """Whether the figure meets its target (None without one)."""
        if self.at_least is not None:
            return self.value >= self.at_least
        return self.value <= self.at_most if self.at_most is not None else None


@dataclass(frozen=True)
class Workload:
    name: str
    summary: str
    run: Callable[[BenchOptions], list[Measurement]]


WORKLOADS: dict[str, Workload] = {}
Runner = Callable[[BenchOptions], list[Measurement]]


def workload(name: str, summary: str) -> Callable[[Runner], Runner]:
    """Register a benchmark under `name`; names are unique across providers."""

    def register_it(run: Runner) -> Runner:
        if name in WORKLOADS:
            raise ValueError(f"benchmark workload {name!r} is registered twice")
        WORKLOADS[name] = Workload(name, summary, run)
        return run

    return register_it


def load_workloads() -> dict[str, Workload]:
    for module in PROVIDERS:
        importlib.import_module(module)
    return WORKLOADS


@contextmanager
def settled_heap() -> Iterator[None]:
    """For a timed phase: what set-up built (nodes, slices, the components' caches) is collected once and frozen,
    as in a scheduler process that has been running for a while, so Python's cyclic garbage collector does not
    walk it again and again while the measured pods are scheduled (it took about a sixth of a 500-node run).
    The youngest generation is collected after 10,000 new objects rather than 700: a pod's cycle makes thousands of
    short-lived ones, and each collection also walks the younger survivors again (about a third less collector
    time). The objects and the thresholds are handed back afterwards, so the next workload starts from a normal
    heap."""
    thresholds = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
