"""`draconform run`: run the conformance suite against a system under test and write the reports
(report.json, junit.xml, cucumber.json, report.md) into REPORT_DIR/NAME."""

from __future__ import annotations

import argparse
from pathlib import Path

from draconform.commands.common import EXIT_UNUSABLE, diagnostic
from draconform.harness.runner import DEFAULT_PLUGINS, RunOptions, run
from draconform.paths import FEATURES_DIR
from draconform.suite.selection import SelectionError
from draconform.sut import DEFAULT_SUT


def _workers(value: str) -> int | str:
    if value == "auto":
        return value
    try:
        count = int(value)
    except ValueError:
        count = -1
    if count < 0:
        raise argparse.ArgumentTypeError(f"expected a number of workers or 'auto', got {value!r}")
    return count


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run the conformance suite and write the reports",
        description=__doc__,
    )
    parser.add_argument(
        "paths", nargs="*", type=Path, metavar="PATH", help="feature files or directories to run (default: all)"
    )
    parser.add_argument(
        "-n", dest="workers", type=_workers, default=0, metavar="N",
        help="parallel workers (pytest-xdist); 0 runs serially, 'auto' uses one per CPU (default: 0)",
    )  # fmt: skip
    parser.add_argument(
        "--report-dir", type=Path, default=Path("reports"), help="where run folders go (default: reports)"
    )
    parser.add_argument(
        "--name", help="the run's name and folder (default: 'reference' for the reference implementation)"
    )
    parser.add_argument("--sut", metavar="MODULE:FACTORY", help=f"the system under test (default: {DEFAULT_SUT})")
    # For the harness's own tests: a throwaway features directory and step plugins in place of ours.
    parser.add_argument("--features-dir", type=Path, default=FEATURES_DIR, help=argparse.SUPPRESS)
    parser.add_argument("--plugin", dest="plugins", action="append", help=argparse.SUPPRESS)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    options = RunOptions(
        paths=tuple(args.paths),
        workers=args.workers,
        report_dir=args.report_dir,
        name=args.name,
        sut=args.sut,
        features_dir=args.features_dir,
        plugins=tuple(args.plugins or DEFAULT_PLUGINS),
    )
    try:
        return run(options)
    except SelectionError as exc:
        diagnostic("run", str(exc))
        return EXIT_UNUSABLE
