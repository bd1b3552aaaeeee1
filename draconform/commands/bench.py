"""`draconform bench`: throughput benchmarks of the reference implementation, run in-process.

The workloads are registered in `draconform.bench.registry` by the provider modules it lists. A
`Measurement` is `Measurement(workload, unit, value, detail)`, plus the allocation core it ran with where
that matters. Figures are this machine's wall clock: tests run workloads only at tiny
scale and never assert on speed.

Providers: `draconform.bench.dra` (the scheduler_perf-shaped DRA scheduling workloads and the polars core
against the oracle), `draconform.bench.bindingconditions` (KEP-5007: pods waiting in PreBind),
`draconform.bench.compatibility` (KEP-5963: partitionable GPUs with compatibility groups, measured with and
without groups), `draconform.bench.validation` (objects/s through the validation layer),
`draconform.bench.allocator` (issue 13: single attempts side by side with upstream's Go figures, a
2,000-partition node, `allocate` over a 5,000-node dump, the cost curve as nodes double)."""

from __future__ import annotations

import argparse
import json
import os
import platform
from dataclasses import asdict
from typing import Any

from draconform.bench.registry import BenchOptions, Measurement, load_workloads
from draconform.commands.findings import EXIT_FINDINGS, EXIT_UNUSABLE, diagnostic


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("bench", help="run throughput benchmarks of the reference implementation",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="*", metavar="WORKLOAD", help="workloads to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply node, pod and object counts (default 1: the full shapes)")
    parser.add_argument("--allocator", choices=("columnar", "oracle", "both"), default="columnar",
                        help="allocation core for the scheduler workloads (default: columnar)")
    parser.add_argument("--oracle-pods", type=int, default=5,
                        help="pods the oracle is measured on when compared with the polars core (default 5)")
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a figure misses its target (the targets are the full shapes': --scale 1)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    workloads = load_workloads()
    if args.list:
        for item in workloads.values():
            print(f"{item.name}\n    {item.summary}")
        return 0
    unknown = [name for name in args.workloads if name not in workloads]
    if unknown:
        diagnostic("bench", f"unknown workload(s) {', '.join(unknown)}; see --list")
        return EXIT_UNUSABLE
    if args.scale <= 0 or args.oracle_pods <= 0:
        diagnostic("bench", "--scale and --oracle-pods must be positive")
        return EXIT_UNUSABLE
    if args.check and args.scale != 1:
        diagnostic("bench", "--check compares with the full shapes' targets: run it at --scale 1")
        return EXIT_UNUSABLE
    allocators = ("columnar", "oracle") if args.allocator == "both" else (args.allocator,)
    options = BenchOptions(scale=args.scale, allocators=allocators, oracle_pods=args.oracle_pods)
    results: list[Measurement] = []
    if args.output == "text":
        print(f"# draconform bench on {_machine()['cpus']} CPU(s), Python {_machine()['python']}, scale {args.scale:g}")
    for name in args.workloads or list(workloads):
        for measurement in workloads[name].run(options):
            results.append(measurement)
            if args.output == "text":
                print(line(measurement), flush=True)
    missed = [m for m in results if m.met() is False]
    if args.output == "json":
        print(json.dumps({"machine": _machine(), "scale": args.scale,
                          "measurements": [{**asdict(m), "met": m.met()} for m in results]}, indent=2))
    elif any(m.met() is not None for m in results):
        print(f"# targets: {sum(m.met() is True for m in results)} met, {len(missed)} missed; load average "
              f"{_load()}", flush=True)
    if args.check and missed:
        for m in missed:
            diagnostic("bench", f"{m.workload}{f' [{m.allocator}]' if m.allocator else ''}: {_value(m)} {m.unit}, "
                                f"target {m.target()}")
        return EXIT_FINDINGS
    return 0


def line(m: Measurement) -> str:
    core = f" [{m.allocator}]" if m.allocator else ""
    target = f"  [target {m.target()}: {'met' if m.met() else 'MISSED'}]" if m.target() else ""
    return f"{m.workload}{core}: {_value(m)} {m.unit}{target}" + (f"  ({m.detail})" if m.detail else "")


def _value(m: Measurement) -> str:
    return f"{m.value:,.1f}" if m.value >= 10 else f"{m.value:.3g}"  # small rates keep their digits


def _load() -> str:
    """The 1, 5 and 15 minute load averages, so a figure read later says how busy the machine was."""
    try:
        return ", ".join(f"{load:.2f}" for load in os.getloadavg())
    except OSError:
        return "unknown"


def _machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}
