"""The `draconform` command. Each subcommand lives in its own module under `draconform.commands` and
exposes `register(subparsers)`, which adds its parser and sets `handler` to a function returning the
exit status."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

SUBCOMMANDS = (
    "run", "serve", "rules", "steps", "allocate", "validate", "bench", "report", "mutants", "plugincheck", "initsut",
)


def version() -> str:
    """The installed distribution's version ("unknown" for a checkout on sys.path without an install)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("draconform")
    except PackageNotFoundError:
        return "unknown"


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of `only` one: a command's module (and what it imports, such as
    pytest for `run`) is loaded only when that command runs, so `draconform validate FILE` starts fast."""
    parser = argparse.ArgumentParser(
        prog="draconform",
        description="Conformance harness for Kubernetes Dynamic Resource Allocation (DRA): run the conformance "
        "suite against the reference implementation or your own system under test, check a live kubelet plugin, "
        "validate manifests, allocate offline, and verify, diff and tabulate reports. `draconform COMMAND --help` "
        "describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"draconform {version()}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS if only not in SUBCOMMANDS else (only,):
        importlib.import_module(f"draconform.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(given[0] if given else None).parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # as typed, for reports' reproduce command
    status: int = args.handler(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
