"""`draconform run`: run the conformance suite against a system under test and write the reports
(report.json, junit.xml, cucumber.json, report.md, report.html, conformance-report.yaml) into REPORT_DIR/NAME.

Claims. A run may claim profiles (--profile core,driver) and name the extended features, i.e. the feature gates
beyond DynamicResourceAllocation, that the system under test supports (--feature DRAPartitionableDevices,...).
Rules outside the claims are skipped before their scenarios run, with the reason. Each claimed profile is judged
on its core MUST rules (those needing no feature gate) and those of the claimed features: success, failure,
partial, or incomplete for an interrupted run; the reports say which set the verdict is about.

Metadata and claims can come from an options file kept beside a driver (--options FILE); flags override it:

  apiVersion: draconform.dev/v1alpha1
  kind: DRAConformanceOptions
  implementation: {organization: example, project: gpu-driver, version: v0.4.0, url: https://example.com}
  kubernetesVersion: "1.37"
  profiles: [core, driver]
  features: [DRAPartitionableDevices, DRADeviceTaints]

Exit status: 0 nothing failed or errored and something passed; 1 a scenario failed or errored, or none passed
(--allow-nothing-passed accepts that); 2 unusable invocation (a bad path, options file or --sut, reported before
any scenario runs); 130 or 143 when Ctrl-C or SIGTERM stopped the run: the scenarios finished so far are in
the reports, which are marked interrupted and which `draconform report verify` refuses as a submission."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from draconform.catalogue import CatalogueError, load_catalogue
from draconform.claims import REFERENCE_IMPLEMENTATION, Claims, OptionsError, check_features, merge, options_from
from draconform.commands.findings import EXIT_UNUSABLE, diagnostic
from draconform.harness.runner import DEFAULT_PLUGINS, LIVE_SUT, RunOptions, run
from draconform.live.config import ConfigError, LiveOptions
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
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths", nargs="*", type=Path, metavar="PATH",
        help="feature files or directories to run, or a KEP folder of the installed features by name, e.g. kep-5004 "
             "(default: all; `draconform rules` lists them)"
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
    parser.add_argument("--sut", metavar="MODULE:FACTORY",
                        help=f"the system under test: a zero-argument callable returning a draconform.sut."
                             f"SystemUnderTest, checked once before any scenario (default: {DEFAULT_SUT}); "
                             "`draconform init-sut FILE` writes a skeleton to start from")
    claims = parser.add_argument_group("claims and implementation metadata (override --options)")
    claims.add_argument("--options", type=Path, metavar="FILE", help="a DRAConformanceOptions YAML file")
    claims.add_argument(
        "--profile", dest="profiles", action="append", metavar="NAME",
        help="claim this profile (e.g. core, driver); repeat or comma-separate (default: all)",
    )  # fmt: skip
    claims.add_argument(
        "--feature", dest="features", action="append", metavar="GATE",
        help="an extended feature (feature gate) the SUT supports, judged beside the core rules; repeat or "
             "comma-separate (default: all); rules of the others are skipped and judge nothing",
    )  # fmt: skip
    claims.add_argument("--organization", help="who ships the implementation")
    claims.add_argument("--project", help="the implementation's project name")
    claims.add_argument("--implementation-version", dest="version", metavar="VERSION", help="its version")
    claims.add_argument("--url", help="where to find it")
    claims.add_argument("--contact", action="append", help="who to ask about it (repeatable)")
    claims.add_argument("--kubernetes-version", metavar="X.Y", help="the Kubernetes release it ran against")
    claims.add_argument("--mode", help="its mode of operation (default: default)")
    claims.add_argument(
        "--submit", action="store_true",
        help="also write the submission folder REPORT_DIR/<kubernetes-version>/<org>-<project>/ "
        "(the report YAML and a README.md in it saying how to reproduce the run)",
    )  # fmt: skip
    live = parser.add_argument_group(
        "a live cluster", "run the scenarios against the cluster a kubeconfig names, each in its own namespace and "
        "names (with -n, side by side, except those that could see one another: they run alone); what the cluster "
        "cannot do is skipped with the reason")
    live.add_argument("--kubeconfig", type=Path, help="the cluster's kubeconfig (selects the live system under test)")
    live.add_argument("--context", help="the kubeconfig context (default: its current context)")
    live.add_argument("--namespace-prefix", default="draconform",
                      help="each scenario's namespace is PREFIX-<scenario id> (default: draconform)")
    live.add_argument("--timeout-config", type=Path, metavar="FILE",
                      help="per-observation timeouts, settle detection and the real-time clock budget (YAML)")
    live.add_argument("--cluster-config", type=Path, metavar="FILE",
                      help="the release, feature gates and scheduler arguments the cluster runs (YAML; "
                           "`draconform serve` writes one)")
    live.add_argument("--also-cluster", type=Path, action="append", default=[], metavar="FILE",
                      help="another cluster (a cluster config naming its kubeconfig; `draconform serve` writes one) "
                           "for scenarios that need other feature gates, release or scheduler arguments than the "
                           "first; each scenario runs on the first cluster that runs what it needs (repeatable)")
    live.add_argument("--metrics-url", help="kube-scheduler's /metrics address (without it the metric scenarios "
                                            "are skipped)")
    parser.add_argument(
        "--events", type=Path, metavar="FILE",
        help="write an NDJSON event stream (run started, each scenario finished, run finished) for a dashboard",
    )  # fmt: skip
    # For the harness's own tests: a throwaway features directory and step plugins in place of ours.
    parser.add_argument("--features-dir", type=Path, default=FEATURES_DIR,
                        help="the features folder whose rules.yaml catalogues the run accounts for (default: the "
                             "installed one; paths given outside it are run from their own features folder)")
    parser.add_argument("--allow-nothing-passed", action="store_true",
                        help="exit 0 even when no scenario passed (every one skipped); by default that exits 1")
    parser.add_argument("--plugin", dest="plugins", action="append", help=argparse.SUPPRESS)
    parser.set_defaults(handler=handle)


def _split(values: list[str] | None) -> tuple[str, ...] | None:
    if values is None:
        return None
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _is_reference(sut: str | None) -> bool:
    return sut is None or sut == DEFAULT_SUT or sut.startswith("draconform.reference.")


def load_options(path: Path) -> Claims:
    """Read a DRAConformanceOptions file through the one reader of input (hardened loader, JSON Schema);
    OptionsError names the file, line and field."""
    from draconform.validation.inputs import InputError, read_input

    try:
        data = read_input(path, "conformance-options", "DRAConformanceOptions")
    except InputError as exc:
        raise OptionsError(str(exc)) from exc
    return options_from(data, path)


def claims_of(args: argparse.Namespace) -> Claims:
    """The options file (or, for the reference implementation, its own metadata) under the flags."""
    if args.options is not None:
        base = load_options(args.options)
    else:
        base = (Claims(implementation=REFERENCE_IMPLEMENTATION) if _is_reference(args.sut) and args.kubeconfig is None
                else Claims())  # a live cluster is not the reference, even with no --sut
    features = _split(args.features)
    check_features(features, "--feature")
    return merge(
        base,
        profiles=_split(args.profiles),
        features=features,
        organization=args.organization,
        project=args.project,
        version=args.version,
        url=args.url,
        contact=tuple(args.contact or ()),
        kubernetes_version=args.kubernetes_version,
        mode=args.mode,
        command=shlex.join(["draconform", *getattr(args, "argv", ["run"])]),
    )


def _live(args: argparse.Namespace) -> LiveOptions | None:
    if args.kubeconfig is None:
        return None
    if args.sut is not None:
        raise ConfigError("--kubeconfig and --sut both name a system under test; give one")
    options = LiveOptions(
        kubeconfig=str(args.kubeconfig), context=args.context, namespace_prefix=args.namespace_prefix,
        timeout_config=str(args.timeout_config) if args.timeout_config else None,
        cluster_config=str(args.cluster_config) if args.cluster_config else None, metrics_url=args.metrics_url,
        also_clusters=tuple(str(path) for path in args.also_cluster))
    options.check()
    return options


def _check_profiles(claims: Claims, features_dir: Path) -> None:
    """A claimed profile must exist in the catalogue, so that a typo does not skip every rule."""
    try:
        known = sorted({rule.profile for rule in load_catalogue(features_dir).rules.values()})
    except CatalogueError:
        return  # the run reports a broken catalogue itself
    unknown = [profile for profile in claims.profiles or () if profile not in known]
    if unknown:
        raise OptionsError(f"profiles: unknown profile {', '.join(unknown)}; the catalogue has {', '.join(known)}")


def resolve_paths(paths: list[Path], features_dir: Path) -> tuple[Path, ...]:
    """A path that does not exist but names a folder or file of the features folder (`kep-5004`,
    `kep-5004/extended-resources.feature`) is that one: a KEP can be run by name outside a checkout."""
    return tuple(features_dir / path if not path.exists() and (features_dir / path).exists() else path
                 for path in paths)


def check_sut(spec: str) -> str | None:
    """Why `--sut spec` cannot give a system under test (it does not import, names no callable, or the factory
    raises), found once before any scenario runs; None when it can."""
    from draconform.harness.wording import describe
    from draconform.sut import load_factory

    hint = "; is its folder on PYTHONPATH? (draconform does not search the current directory)"
    try:
        factory = load_factory(spec)
    except ModuleNotFoundError as exc:
        return f"--sut {spec}: cannot import module {exc.name!r}{hint}"
    except AttributeError as exc:
        return f"--sut {spec}: the module has no {exc.name or spec.partition(':')[2]!r}"
    except (ValueError, ImportError) as exc:
        return f"--sut {spec}: {describe(exc)}"
    except Exception as exc:  # the module itself raised while importing
        return f"--sut {spec}: importing the module raised {describe(exc)}"
    try:
        system = factory()
    except Exception as exc:
        return f"--sut {spec}: the factory raised {describe(exc)}"
    close = getattr(system, "close", None)
    if callable(close):
        close()
    return None


def wants_progress() -> bool:
    """A live display only for a person at a terminal; logs and pipes keep pytest's plain output."""
    return sys.stderr.isatty()


def handle(args: argparse.Namespace) -> int:
    try:
        live = _live(args)
    except ConfigError as exc:
        diagnostic("run", str(exc))
        return EXIT_UNUSABLE
    try:
        claims = claims_of(args)
        _check_profiles(claims, args.features_dir)
        if args.submit and claims.implementation.slug is None:
            raise OptionsError("--submit needs the implementation's organization and project (flags or --options)")
    except OptionsError as exc:
        diagnostic("run", str(exc))
        return EXIT_UNUSABLE
    if args.sut is not None and live is None:
        problem = check_sut(args.sut)
        if problem is not None:
            diagnostic("run", problem + "; no scenario ran")
            return EXIT_UNUSABLE
    options = RunOptions(
        paths=resolve_paths(args.paths, args.features_dir),
        workers=args.workers,
        report_dir=args.report_dir,
        name=args.name,
        sut=LIVE_SUT if live else args.sut,
        live=live,
        features_dir=args.features_dir,
        plugins=tuple(args.plugins or DEFAULT_PLUGINS),
        claims=claims,
        submit=args.submit,
        allow_nothing_passed=args.allow_nothing_passed,
        progress=wants_progress(),
        events=args.events,
    )
    try:
        return run(options)
    except SelectionError as exc:
        diagnostic("run", str(exc))
        return EXIT_UNUSABLE
