"""`draconform validate PATH...`: check DRA manifests (files, directories, `-` for stdin; multi-document
YAML or JSON, `kind: List`) the way kube-apiserver would on create, through the same validation layer as
the reference API store.

Objects of kinds DRA does not define and draconform does not know (a Deployment, a driver's own CRD) are
listed as "not checked" and never make the input invalid; Pods and Namespaces get the checks draconform
knows (a Pod: its resourceClaims and its containers' resources.claims).

--api says which DRA API the cluster serves, as a cluster serves one or the other:
  structured  resource.k8s.io in every version the --kubernetes-version release serves (the default);
  classic     KEP-3063's classic API, cdi.k8s.io/v1alpha1 (ResourceClass, ResourceClaim), which no
              upstream release serves: a Pod is then judged by the classic API, its resourceClaims[]
              naming a resourceClaimName or embedding a template, and its containers' resources.claims
              listing plain names. resource.k8s.io objects are refused; --kubernetes-version and
              --feature-gates do not apply to the classic kinds.

Exit status: 0 all valid, 1 any object invalid, 2 any input unusable (unreadable, not YAML, too large,
empty) or a bad invocation."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Any

from draconform.commands.findings import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNUSABLE,
    Finding,
    UsageError,
    diagnostic,
    print_findings,
)
from draconform.commands.manifests import InputObject, add_input_options, parse_gate_overrides, read_inputs
from draconform.kube.featuregates import CURRENT_RELEASE
from draconform.validation import Problem, validate_classic_manifest, validate_gates, validate_manifest
from draconform.validation.versions import APIS, RELEASES, Checked, classify


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    objects: int = 0
    invalid_objects: int = 0
    unreadable: list[Finding] = field(default_factory=list)
    not_checked: list[InputObject] = field(default_factory=list)

    @property
    def status(self) -> int:
        return EXIT_UNUSABLE if self.unreadable else EXIT_FINDINGS if self.invalid_objects else EXIT_OK


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="validate DRA manifests as kube-apiserver would",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory (searched for *.yaml, *.yml, "
                                                                   "*.json) or - for standard input")
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text")
    parser.add_argument("--kubernetes-version", default=CURRENT_RELEASE, choices=RELEASES, metavar="X.Y",
                        help=f"release whose API versions, rules and gate defaults apply ({', '.join(RELEASES)}; "
                             f"default {CURRENT_RELEASE})")
    parser.add_argument("--api", choices=APIS, default="structured",
                        help="the DRA API the cluster serves: structured (resource.k8s.io, default) or classic "
                             "(KEP-3063's cdi.k8s.io/v1alpha1; Pods are then judged by the classic API)")
    parser.add_argument("--feature-gates", default="", metavar="NAME=BOOL,...",
                        help="override gates; by default every DRA gate the release has is on, so gated fields "
                             "are checked (a warning names gates that are off by default)")
    add_input_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        gates = validate_gates(parse_gate_overrides(args.feature_gates), args.kubernetes_version)
    except (UsageError, ValueError) as exc:
        diagnostic("validate", str(exc))
        return EXIT_UNUSABLE
    report = Report()
    for source in read_inputs(args.paths, args.max_input_size, args.allow_empty):
        for item in source.objects:
            check_object(item, gates, report, args.api)
        if source.error is not None:
            report.unreadable.append(source.error)
    if args.output == "json":
        json.dump(_as_json(report, args.kubernetes_version, args.api), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_findings(report.unreadable + report.findings)
        if report.not_checked:
            kinds = sorted({f"{item.kind or '?'} ({item.api_version or '?'})" for item in report.not_checked})
            print(f"{len(report.not_checked)} object{'s' if len(report.not_checked) != 1 else ''} not checked "
                  f"(kinds draconform does not validate): {', '.join(kinds)}", file=sys.stderr)
        print(f"{report.objects} object{'s' if report.objects != 1 else ''} checked, "
              f"{report.invalid_objects} invalid, {len(report.unreadable)} unusable input"
              f"{'s' if len(report.unreadable) != 1 else ''}", file=sys.stderr)
    return report.status


def check_object(item: InputObject, gates: Any, report: Report, api: str = "structured") -> None:
    """Validate one object of an input, as a cluster serving `api` would, adding its findings to `report`."""
    obj = item.data
    if not isinstance(obj, dict):
        report.objects += 1
        report.invalid_objects += 1
        report.findings.append(Finding(item.file, item.line, None, "", "", f"not an object but a {_type_name(obj)}; "
                                       "a manifest document must be a mapping with apiVersion and kind"))
        return
    base = item.base
    problems: list[Problem] = [Problem(p.path[len(base):], p.message, p.rule, p.severity)
                               for p in item.document.problems if p.path[: len(base)] == base]
    missing = [key for key in ("apiVersion", "kind") if not isinstance(obj.get(key), str) or not obj.get(key)]
    if missing:
        problems += [Problem((key,), "Required value: every manifest needs apiVersion and kind") for key in missing]
    else:
        verdict = classify(obj, gates.release, api)
        if verdict is Checked.NOT_CHECKED:
            report.not_checked.append(item)
            return
        if isinstance(verdict, Problem):
            problems.append(verdict)
        elif api == "classic":
            problems += validate_classic_manifest(obj, gates)
        else:
            problems += validate_manifest(obj, gates)[1]
    report.objects += 1
    if any(p.severity == "error" for p in problems):
        report.invalid_objects += 1
    findings = [item.finding(p.path, p.message, p.rule, p.severity) for p in problems]
    report.findings.extend(sorted(findings, key=lambda finding: finding.line))


def _type_name(value: Any) -> str:
    return {str: "string", int: "number", float: "number", bool: "boolean", list: "list"}.get(type(value), "value")


def _as_json(report: Report, release: str, api: str) -> dict[str, Any]:
    return {
        "kubernetesVersion": release,
        "api": api,
        "objects": report.objects,
        "invalid": report.invalid_objects,
        "unreadable": len(report.unreadable),
        "exitStatus": report.status,
        "findings": [f.as_json() for f in report.unreadable + report.findings],
        "notChecked": [{"file": item.file, "line": item.line, "apiVersion": item.api_version, "kind": item.kind,
                        "name": item.name} for item in report.not_checked],
    }
