"""`draconform report`: work with reports a run wrote.

  verify PATH         check a submission report (a conformance-report.yaml, or a folder holding one):
                      its schema, that its counts agree with the rules and scenarios it lists, and that
                      it is unedited since draconform wrote it. Exit 0 valid, 1 invalid, 2 unreadable.
  diff OLD NEW        what changed between two runs (report.json files or run folders): regressions,
                      fixes, new and removed rules and scenarios, changed profile verdicts. Exit 1 when
                      anything got worse, so CI can gate on it; 0 otherwise; 2 unreadable.
  matrix REPORT...    rules x implementations as Markdown (and HTML with --html FILE)."""

from __future__ import annotations

import argparse
from pathlib import Path

from draconform.commands.findings import EXIT_FINDINGS, EXIT_OK, EXIT_UNUSABLE, diagnostic


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "report",
        help="verify a submission report, diff two runs, or tabulate implementations",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    verify = actions.add_parser("verify", help="check a submission report", description=_verify.__doc__)
    verify.add_argument("path", type=Path, metavar="PATH", help="the report YAML, or its submission or run folder")
    verify.set_defaults(handler=_verify)
    diff = actions.add_parser("diff", help="what changed between two runs", description=_diff.__doc__)
    diff.add_argument("old", type=Path, metavar="OLD", help="the earlier report.json or run folder")
    diff.add_argument("new", type=Path, metavar="NEW", help="the later report.json or run folder")
    diff.add_argument("-o", "--output", choices=("markdown", "json"), default="markdown", help="output format")
    diff.set_defaults(handler=_diff)
    matrix = actions.add_parser("matrix", help="rules x implementations", description=_matrix.__doc__)
    matrix.add_argument("reports", nargs="+", type=Path, metavar="REPORT", help="report.json files or run folders")
    matrix.add_argument("--html", type=Path, metavar="FILE", help="also write the matrix as a self-contained page")
    matrix.set_defaults(handler=_matrix)


def _verify(args: argparse.Namespace) -> int:
    """Check a DRAConformanceReport: schema, consistent counts, unedited since draconform wrote it."""
    from draconform.reporting.submission import UnreadableSubmission, verify

    try:
        result = verify(args.path)
    except UnreadableSubmission as exc:
        diagnostic("report verify", str(exc))
        return EXIT_UNUSABLE
    if result.ok:
        print(f"{result.path}: valid DRAConformanceReport, unedited since draconform wrote it")
        return EXIT_OK
    for problem in result.problems:
        print(f"{result.path}: {problem}")
    return EXIT_FINDINGS


def _diff(args: argparse.Namespace) -> int:
    """Compare two runs; exit 1 when a rule or scenario now fails or errors, or a verdict got worse."""
    import json

    from draconform.reporting.compare import ReportError, diff, diff_data, load_report, render_diff

    try:
        result = diff(load_report(args.old), load_report(args.new))
    except ReportError as exc:
        diagnostic("report diff", str(exc))
        return EXIT_UNUSABLE
    if args.output == "json":
        print(json.dumps(diff_data(result), indent=2, ensure_ascii=False))
    else:
        print(render_diff(result), end="")
    return EXIT_FINDINGS if result.regressed else EXIT_OK


def _matrix(args: argparse.Namespace) -> int:
    """Tabulate rule statuses across implementations (one column per report)."""
    from draconform.reporting.compare import ReportError, load_report, render_matrix_html, render_matrix_markdown

    try:
        reports = [load_report(path) for path in args.reports]
    except ReportError as exc:
        diagnostic("report matrix", str(exc))
        return EXIT_UNUSABLE
    print(render_matrix_markdown(reports), end="")
    if args.html is not None:
        args.html.write_text(render_matrix_html(reports), encoding="utf-8")
        diagnostic("report matrix", f"wrote {args.html}")
    return EXIT_OK
