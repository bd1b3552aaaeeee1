"""`draconform plugin-check`: check a DRA driver's kubelet plugin that is already running (a vendor's binary on
a test node), the way csi-sanity checks a CSI driver: the DRA-PLUGIN catalogue and the driver-side rules of
KEP-5322 and KEP-5963 it can judge from the plugin's sockets. The claims it prepares are allocated
ResourceClaims as the cluster stores them (--claims), or are derived from the driver's ResourceSlices
(--slices; --write-claims writes them so you can create them in the cluster). What the driver supports
(DRAPlugin versions, claims it must refuse permanently, incompatible claims) comes from --supports; a check
whose needs the driver does not declare is skipped with the reason. Every check unprepares what it prepared.
A plugin that hangs or crashes fails the check in progress, naming endpoint, method and gRPC status, and
the run goes on. Reports go to REPORT_DIR/NAME in the formats of `draconform run`. Exit status: 0 every
check passed or was skipped, 1 a check failed, 2 bad invocation or input."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path

from draconform.commands.common import EXIT_FINDINGS, EXIT_OK, EXIT_UNUSABLE, diagnostic

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE = EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "plugin-check", help="check a running DRA kubelet plugin over its unix sockets",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--endpoint", required=True, metavar="unix:///PATH", help="the plugin's DRAPlugin socket")
    parser.add_argument("--registration", metavar="unix:///PATH", help="the plugin's registration socket")
    parser.add_argument("--driver", required=True, help="the driver's name")
    parser.add_argument("--node", required=True, help="the node the plugin runs on")
    parser.add_argument("--claims", type=Path, action="append", metavar="FILE",
                        help="allocated ResourceClaims, with metadata.uid, as the cluster stores them (repeatable)")
    parser.add_argument("--slices", type=Path, metavar="FILE", help="derive claims from the driver's ResourceSlices")
    parser.add_argument("--write-claims", type=Path, metavar="FILE",
                        help="with --slices: write the derived claims to FILE and exit without checking")
    parser.add_argument("--supports", type=Path, metavar="FILE",
                        help="what the driver declares, YAML: `versions:` (the DRAPlugin versions it serves), "
                             "`permanentErrors: {claims: [NS/NAME]}` (claims it must refuse permanently, KEP-5322), "
                             "`compatibilityGroups: {incompatibleClaims: [[A, B]]}` (claims it must not prepare at "
                             "once, KEP-5963); the checks needing a declaration are skipped without it")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                        help="deadline of each gRPC call (default: 10)")
    parser.add_argument("--cdi-dir", type=Path, action="append", metavar="DIR",
                        help="a directory where the node's container runtime reads CDI spec files, e.g. /etc/cdi "
                             "and /var/run/cdi (repeatable); without it the CDI spec file check is skipped")
    parser.add_argument("--driver-version", help="the driver's version, for the report")
    parser.add_argument("--report-dir", type=Path, default=Path("reports"), help="where run folders go")
    parser.add_argument("--name", help="the run's name and folder (default: plugin-check-<driver>)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from draconform.kubeletplugin._wire import socket_path
    from draconform.plugincheck.checks import Target
    from draconform.plugincheck.claims import CheckInputError, derive_claims, load_claims, load_support, write_claims
    from draconform.plugincheck.runner import check_plugin

    try:
        for value in (args.endpoint, args.registration):
            if value is not None:
                socket_path(value)
        if bool(args.claims) == bool(args.slices):
            raise CheckInputError("pass either --claims FILE... or --slices FILE")
        if args.write_claims and not args.slices:
            raise CheckInputError("--write-claims needs --slices")
        if args.timeout <= 0:
            raise CheckInputError("--timeout must be positive")
        claims = (load_claims(args.claims, args.driver) if args.claims
                  else derive_claims(args.slices, args.driver, args.node))
        if args.write_claims:
            write_claims(claims, args.write_claims)
            print(f"wrote {len(claims)} claims to {args.write_claims}")
            return EXIT_PASSED
        support = load_support(args.supports, claims)
    except (CheckInputError, ValueError) as err:
        diagnostic("plugin-check", str(err))
        return EXIT_USAGE
    target = Target(args.endpoint, args.registration, args.driver, args.node, args.timeout,
                    tuple(args.cdi_dir or ()))
    name = args.name or f"plugin-check-{args.driver}"
    outcome = check_plugin(target, claims, support, args.report_dir, name, args.driver_version)
    for record in outcome.run.scenarios:
        reason = record.message or record.skip_reason or ""
        print(f"{record.status.upper():8} {record.rules[0]}: {record.name}" + (f" ({reason})" if reason else ""))
    print(outcome.results.summary_line())
    print(f"reports: {', '.join(str(path) for path in outcome.written)}")
    stop = outcome.run.info.interruption
    if stop is not None:  # the reports say so too; exit as a shell reports a process a signal ended
        print(f"INTERRUPTED by {stop.signal}: {stop.not_run} of {stop.selected} checks not run; the reports are "
              "marked interrupted and are not a verdict")
        return 128 + signal.Signals[stop.signal].value
    failed = any(record.status in ("failed", "error") for record in outcome.run.scenarios)
    return EXIT_FAILED if failed else EXIT_PASSED
