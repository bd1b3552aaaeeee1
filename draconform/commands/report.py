"""`draconform report`: work with reports a run wrote.

  verify PATH   check a submission report (a conformance-report.yaml, or a folder holding one): its
                schema, that its counts agree with the rules and scenarios it lists, and that it is
                unedited since draconform wrote it. Exit 0 valid, 1 invalid, 2 unreadable."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "report",
        help="verify a submission report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    verify = actions.add_parser("verify", help="check a submission report", description=_verify.__doc__)
    verify.add_argument("path", type=Path, metavar="PATH", help="the report YAML, or its submission or run folder")
    verify.set_defaults(handler=_verify)


def _verify(args: argparse.Namespace) -> int:
    """Check a DRAConformanceReport: schema, consistent counts, unedited since draconform wrote it."""
    from draconform.reporting.submission import UnreadableSubmission, verify

    try:
        result = verify(args.path)
    except UnreadableSubmission as exc:
        print(f"draconform report verify: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if result.ok:
        print(f"{result.path}: valid DRAConformanceReport, unedited since draconform wrote it")
        return EXIT_OK
    for problem in result.problems:
        print(f"{result.path}: {problem}")
    return EXIT_FINDINGS
