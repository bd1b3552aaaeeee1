"""The `draconform` command. Each subcommand lives in its own module under `draconform.commands` and
exposes `register(subparsers)`, which adds its parser and sets `handler` to a function returning the
exit status."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

SUBCOMMANDS = ("run", "serve", "rules", "steps", "allocate", "validate", "bench", "report", "mutants", "plugincheck")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draconform",
        description="Conformance harness for Kubernetes Dynamic Resource Allocation (DRA).",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(f"draconform.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # as typed, for reports' reproduce command
    status: int = args.handler(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
