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
from draconform.commands.common import EXIT_UNUSABLE, diagnostic


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
    if args.output == "json":
        print(json.dumps({"machine": _machine(), "scale": args.scale,
                          "measurements": [asdict(m) for m in results]}, indent=2))
    return 0


def line(m: Measurement) -> str:
    core = f" [{m.allocator}]" if m.allocator else ""
    value = f"{m.value:,.1f}" if m.value >= 10 else f"{m.value:.3g}"  # small rates keep their digits
    return f"{m.workload}{core}: {value} {m.unit}" + (f"  ({m.detail})" if m.detail else "")


def _machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}
