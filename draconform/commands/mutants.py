"""`draconform mutants`: measure the suite's two promises. Each variant of the reference implementation (named
functions and attributes overridden by their defects, tied to a rule) is run
against the feature folder of that rule's KEP and every other feature file citing the rule. A known-bad variant
breaks the rule: the suite must kill it (a scenario fails). A conforming variant makes another choice the KEP
allows: the suite must pass it (a failure is a false failure). Prints per KEP the known-bad variants killed and
the conforming ones passed (or JSON) and the MUST rules of KEP-5007, KEP-5963 and KEP-4381 that no variant
breaks, and writes REPORT_DIR/mutants.json; exits 0 when every KEP reaches --min-kill-rate, every conforming
variant passes and every such MUST rule has a variant, 1 when not or when a run broke, 2 when a variant's
override no longer fits the code or the suite fails without any variant (then no verdict would mean anything)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from draconform.catalogue import Catalogue, CatalogueError, load_catalogue
from draconform.commands.findings import EXIT_UNUSABLE, diagnostic
from draconform.mutation.catalogue import KEPS_WITH_VARIANTS, VARIANTS, must_rules, must_rules_without_variant
from draconform.mutation.conforming import CONFORMING
from draconform.mutation.variant import CONFORMING as CONFORMING_KIND
from draconform.mutation.variant import KNOWN_BAD, Variant
from draconform.paths import FEATURES_DIR

if TYPE_CHECKING:  # imported late at run time (see handle)
    from draconform.mutation.runner import Verdict

DEFAULT_MIN_KILL_RATE = 0.95


def _workers(value: str) -> int:
    if value == "auto":
        return os.cpu_count() or 1
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"expected a number of parallel runs (1 or more) or 'auto', got {value!r}")
    return count


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("mutants", help="measure suite power: known-bad variants killed, conforming "
                                   "variants passed",
                                   description=__doc__)
    parser.add_argument("--kep", action="append", metavar="KEP", help="only this KEP's variants, e.g. KEP-5007 "
                        "(repeatable)")
    parser.add_argument("--variant", action="append", metavar="NAME", help="only this variant (repeatable)")
    parser.add_argument("--kind", choices=(KNOWN_BAD, CONFORMING_KIND), help="only variants of this kind")
    parser.add_argument("-n", dest="workers", type=_workers, default=1, metavar="N",
                        help="variants run at once, each in its own process, or 'auto' (default: 1)")
    parser.add_argument("--report-dir", type=Path, help="where each variant's reports and mutants.json go "
                        "(default: a temporary directory)")
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    parser.add_argument("--min-kill-rate", type=float, default=DEFAULT_MIN_KILL_RATE, metavar="RATE",
                        help=f"the least kill rate per KEP that passes (default: {DEFAULT_MIN_KILL_RATE})")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="stop a variant's run after this long and count it as killed (hung); default: ten "
                        "times the fault-free run for each run at once (-n), at least 120 s")
    parser.add_argument("--every-failure", action="store_true",
                        help="run each variant's features to the end and list every scenario that kills it "
                        "(slower; by default a variant's run stops at its first failing scenario)")
    parser.add_argument("--list", action="store_true", help="list the variants of both kinds and their rules, "
                        "run nothing")
    parser.add_argument("--features-dir", type=Path, default=FEATURES_DIR, help=argparse.SUPPRESS)
    parser.set_defaults(handler=handle)


def _select(args: argparse.Namespace, keps: dict[str, str]) -> list[Variant] | str:
    """The chosen variants, or why the selection is wrong."""
    chosen = [*VARIANTS, *CONFORMING]
    if args.kind:
        chosen = [v for v in chosen if v.kind == args.kind]
    if args.variant:
        unknown = sorted(set(args.variant) - {v.name for v in (*VARIANTS, *CONFORMING)})
        if unknown:
            return f"unknown variant(s): {', '.join(unknown)} (see --list)"
        chosen = [v for v in chosen if v.name in args.variant]
    if args.kep:
        unknown = sorted(set(args.kep) - set(keps.values()))
        if unknown:
            known = ", ".join(sorted(set(keps.values())))
            return f"no variants for: {', '.join(unknown)} (KEPs with variants: {known})"
        chosen = [v for v in chosen if keps[v.rule] in args.kep]
    return chosen


def handle(args: argparse.Namespace) -> int:
    # Imported late, as in `draconform rules`: pytest-bdd must not be imported by the CLI's parser.
    from draconform.mutation.runner import BASELINE, SURVIVED, Plan, check_variant, run_one, run_variants
    from draconform.suite.selection import Selection
    from draconform.suite.tracing import take_inventory

    try:
        catalogue = load_catalogue(args.features_dir)
    except CatalogueError as exc:
        diagnostic("mutants", str(exc))
        return EXIT_UNUSABLE
    chosen = _chosen(args, catalogue)
    if isinstance(chosen, str):
        diagnostic("mutants", chosen)
        return EXIT_UNUSABLE
    if args.list:
        for variant in chosen:
            print(f"{variant.kind:<10} {variant.name:<44} {variant.rule:<48} {variant.what}")
        return 0
    stale = [problem for variant in chosen for problem in check_variant(variant)]
    if stale:
        diagnostic("mutants", "variants whose overrides no longer fit the code:\n  " + "\n  ".join(stale))
        return EXIT_UNUSABLE

    plan = Plan.create(chosen, catalogue, take_inventory(Selection.create(args.features_dir), catalogue),
                       args.features_dir)
    work_dir = args.report_dir or Path(tempfile.mkdtemp(prefix="draconform-mutants-"))
    work_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    status, killers, _, detail = run_one(BASELINE, plan.all_paths(), work_dir, args.features_dir, variant=False)
    # The fault-free run ran alone; N variant runs at once share the machine, and its load may rise meanwhile.
    # Only a variant that hangs waits this long, so the margin is wide: a slow run must never count as killed.
    timeout = args.timeout or max(120.0, 10 * max(1, args.workers) * (time.monotonic() - started))
    if status != SURVIVED:
        shown = "\n  ".join(killers) or detail
        diagnostic("mutants", f"the suite does not pass without any variant ({work_dir / 'baseline'}):\n  {shown}")
        return EXIT_UNUSABLE
    verdicts = run_variants(chosen, plan, catalogue, work_dir, args.workers, timeout, not args.every_failure,
                            _progress)
    return _report(args, verdicts, catalogue, work_dir)


def _chosen(args: argparse.Namespace, catalogue: Catalogue) -> list[Variant] | str:
    """The variants the arguments select, or what is wrong (a variant naming a rule the catalogue lacks, an
    unknown name or KEP)."""
    everything = (*VARIANTS, *CONFORMING)
    missing = sorted(v.rule for v in everything if v.rule not in catalogue)
    if missing:
        return f"variants name rules the catalogue lacks: {', '.join(missing)}"
    return _select(args, {v.rule: catalogue.rules[v.rule].kep for v in everything})


def _progress(verdict: Verdict) -> None:
    """One line on stderr per variant as it ends."""
    from draconform.mutation.runner import HUNG, KILLED, SURVIVED

    if verdict.variant.kind == CONFORMING_KIND:
        mark = {KILLED: "FALSE-FAIL", HUNG: "FALSE-FAIL", SURVIVED: "passed"}.get(verdict.status, "BROKEN")
    else:
        mark = {KILLED: "killed", HUNG: "hung", SURVIVED: "SURVIVED"}.get(verdict.status, "BROKEN")
    print(f"{mark:<10} {verdict.variant.name} ({verdict.variant.rule}, {len(verdict.killers)} scenario(s) "
          "failed)", file=sys.stderr)


def _report(args: argparse.Namespace, verdicts: list[Verdict], catalogue: Catalogue, work_dir: Path) -> int:
    """Write mutants.json, print the scores (or the JSON), and the exit status: 1 when a KEP falls short of
    --min-kill-rate, a run broke, a conforming variant failed or a MUST rule has no variant."""
    from draconform.mutation import summary

    uncovered = must_rules_without_variant(catalogue)
    result = {**summary.to_json(verdicts, args.every_failure),
              "must_rules": {"keps": list(KEPS_WITH_VARIANTS), "count": len(must_rules(catalogue)),
                             "without_variant": uncovered}}
    (work_dir / "mutants.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.output == "json":
        print(json.dumps(result, indent=2))
    else:
        print(summary.text_table(summary.scores(verdicts)))
        print(f"\nMUST rules of {', '.join(KEPS_WITH_VARIANTS)}: {len(must_rules(catalogue))}, without a variant: "
              f"{', '.join(uncovered) or 'none'}")
        print(f"per-variant results: {work_dir / 'mutants.json'}")
    kep_scores = summary.scores(verdicts)
    weak = [s for s in kep_scores if s.kill_rate < args.min_kill_rate or s.broken or not s.all_conforming_pass]
    return 1 if weak or uncovered else 0
