"""`draconform plugin-check`: check a DRA driver's kubelet plugin that is already running (a vendor's binary on
a test node), the way csi-sanity checks a CSI driver: the DRA-PLUGIN catalogue and the driver-side rules of
KEP-5322 and KEP-5963 it can judge from the plugin's sockets. With --kubeconfig draconform creates the claims
it prepares in the cluster itself, from the ResourceSlices the driver publishes for the node (allocated
through the status subresource, reserved for a placeholder pod that never runs, labelled, and deleted when
the run ends); otherwise they are allocated ResourceClaims as the cluster stores them (--claims), or derived
from the driver's ResourceSlices (--slices). The DRAPlugin versions checked are those the registration
advertises; --supports may declare them, and the claims the driver must refuse permanently or must not
have prepared at once; a check whose needs are not met is skipped with the reason. Every check unprepares
what it prepared. A plugin that hangs or crashes fails the check in progress, naming endpoint, method and
gRPC status, and the run goes on. Reports go to REPORT_DIR/NAME in the formats of `draconform run`. Exit
status: 0 every check passed or was skipped, 1 a check failed, 2 bad invocation or input."""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from draconform.commands.findings import EXIT_FINDINGS, EXIT_OK, EXIT_UNUSABLE, diagnostic

if TYPE_CHECKING:  # not imported at run time, so that `draconform --help` does not load gRPC
    from draconform.plugincheck.claims import ClaimSource, Support
    from draconform.plugincheck.runner import CheckRun

# The kubelet's deadline for each call to a DRA plugin (draconform.plugincheck.checks.KUBELET_CALL_TIMEOUT; not
# imported here, so that `draconform --help` does not load gRPC).
KUBELET_CALL_TIMEOUT = 45.0

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
    parser.add_argument("--kubeconfig", type=Path, metavar="PATH",
                        help="create the claims in this cluster from the driver's ResourceSlices on the node")
    parser.add_argument("--namespace", default="default", help="with --kubeconfig: where the claims go")
    parser.add_argument("--claims", type=Path, action="append", metavar="FILE",
                        help="allocated ResourceClaims, with metadata.uid, as the cluster stores them (repeatable)")
    parser.add_argument("--slices", type=Path, metavar="FILE", help="derive claims from the driver's ResourceSlices")
    parser.add_argument("--write-claims", type=Path, metavar="FILE",
                        help="with --slices: write the derived claims to FILE and exit without checking")
    parser.add_argument("--supports", type=Path, metavar="FILE",
                        help="what the driver declares, YAML: `versions:` (the DRAPlugin versions it serves; default: "
                             "those its registration's GetInfo lists), `permanentErrors: {claims: [NS/NAME], config: "
                             "...}` (claims, or opaque settings, it must refuse permanently, KEP-5322), "
                             "`compatibilityGroups: {incompatibleClaims: [[A, B]]}` (claims it must not prepare at "
                             "once, KEP-5963); the checks needing a declaration are skipped without it")
    parser.add_argument("--timeout", type=float, default=KUBELET_CALL_TIMEOUT, metavar="SECONDS",
                        help=f"deadline of each gRPC call (default: {KUBELET_CALL_TIMEOUT:g}, as the kubelet's)")
    parser.add_argument("--restart-command", metavar="CMD",
                        help="a shell command that restarts the plugin; without it the restart check is skipped")
    parser.add_argument("--cdi-dir", type=Path, action="append", metavar="DIR",
                        help="a directory where the node's container runtime reads CDI spec files, e.g. /etc/cdi "
                             "and /var/run/cdi (repeatable); without it the CDI spec file check is skipped")
    parser.add_argument("--driver-version", help="the driver's version, for the report")
    parser.add_argument("--report-dir", type=Path, default=Path("reports"), help="where run folders go")
    parser.add_argument("--name", help="the run's name and folder (default: plugin-check-<driver>)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from draconform.plugincheck.checks import Target
    from draconform.plugincheck.claims import NeedsCluster
    from draconform.plugincheck.runner import check_plugin
    from draconform.reference.claimfiles import CheckInputError

    source: ClaimSource | None = None
    try:
        _check_arguments(args)
        source = _claim_source(args)
        if source is None:
            return EXIT_PASSED  # --write-claims: the claims are written, nothing is checked
        support = _support(args, source)
    except (CheckInputError, ValueError, NeedsCluster) as err:
        if source is not None:
            source.close()
        diagnostic("plugin-check", str(err))
        return EXIT_USAGE
    target = Target(args.endpoint, args.registration, args.driver, args.node, args.timeout,
                    tuple(args.cdi_dir or ()), args.restart_command)
    name = args.name or f"plugin-check-{args.driver}"
    command = shlex.join(["draconform", *getattr(args, "argv", sys.argv[1:])])
    # A run stopped with SIGTERM still deletes what it created in the cluster (SystemExit runs the finally).
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm) if main_thread else None
    try:
        outcome = check_plugin(target, source, support, args.report_dir, name, args.driver_version, command)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
        source.close()
    return _print_outcome(outcome)


def _check_arguments(args: argparse.Namespace) -> None:
    """Refuse (CheckInputError, ValueError) what no check could run with: a bad socket path, not exactly one
    source of claims, --write-claims without --slices, a timeout that is not positive."""
    from draconform.kubeletplugin._wire import socket_path
    from draconform.reference.claimfiles import CheckInputError

    for value in (args.endpoint, args.registration):
        if value is not None:
            socket_path(value)
    if sum(map(bool, (args.claims, args.slices, args.kubeconfig))) != 1:
        raise CheckInputError("pass one of --kubeconfig PATH, --claims FILE... or --slices FILE")
    if args.write_claims and not args.slices:
        raise CheckInputError("--write-claims needs --slices")
    if args.timeout <= 0:
        raise CheckInputError("--timeout must be positive")


def _claim_source(args: argparse.Namespace) -> ClaimSource | None:
    """Where the claims come from: the cluster, claim files, or claims derived from slices; None when the derived
    claims were only to be written (--write-claims)."""
    from draconform.plugincheck.claims import FileClaims, write_claims
    from draconform.reference.claimfiles import derive_claims, load_claims

    if args.kubeconfig:
        from draconform.plugincheck.cluster import ClusterClaims

        return ClusterClaims.connect(args.kubeconfig, args.driver, args.node, args.namespace, args.timeout)
    claims = (load_claims(args.claims, args.driver) if args.claims
              else derive_claims(args.slices, args.driver, args.node))
    if args.write_claims:
        write_claims(claims, args.write_claims)
        print(f"wrote {len(claims)} claims to {args.write_claims}")
        return None
    return FileClaims(claims)


def _support(args: argparse.Namespace, source: ClaimSource) -> Support:
    """What the driver declares (--supports), with the claim it must refuse made from its refused config."""
    from draconform.plugincheck.claims import load_support

    support = load_support(args.supports, source.claims)
    if support.permanent_error_config is not None:
        refused = source.with_config(args.driver, support.permanent_error_config)
        support = replace(support, permanent_error_claims=(*support.permanent_error_claims, refused.ref.name))
    return support


def _print_outcome(outcome: CheckRun) -> int:
    """One line per check, the summary and the reports written; the exit status."""
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


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(EXIT_FAILED)
