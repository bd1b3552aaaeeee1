"""`draconform steps`: the shared step vocabulary a feature file may use, each step with its keyword,
its pattern and the file and line that define it, so a contributor writing a scenario finds the words
that exist before adding new ones."""

from __future__ import annotations

import argparse
import json
import re

from draconform.commands.findings import EXIT_FINDINGS, EXIT_OK
from draconform.suite.vocabulary import step_definitions


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "steps", help="list the step vocabulary and where each step is defined", description=__doc__
    )
    parser.add_argument("pattern", nargs="?", default="",
                        help="show only steps whose text contains this (a regular expression, case-insensitive)")
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text",
                        help="output format (default: text)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    wanted = re.compile(args.pattern, re.IGNORECASE)
    steps = [step for step in step_definitions() if wanted.search(step.pattern)]
    if args.output == "json":
        print(json.dumps([{"keyword": step.keyword, "pattern": step.pattern, "function": step.function,
                           "module": step.module, "file": step.file.name, "line": step.line} for step in steps],
                         indent=2))
    else:
        module = None
        for step in steps:
            if step.module != module:
                module = step.module
                print(f"\n{module.rsplit('.', 1)[-1]}.py")
            print(f"  {step.keyword.capitalize():5} {step.pattern}  (line {step.line})")
    return EXIT_OK if steps else EXIT_FINDINGS
