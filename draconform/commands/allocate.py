"""`draconform allocate FILE...`: run the reference allocator once over manifests, the way kube-scheduler's DRA
plugin would in one scheduling attempt, and print the claims with `status.allocation` filled in.

Claims that already carry an allocation hold their devices (and counters); the others are allocated together,
in document order, on `--node`, or else on the first node (by name) that fits all of them. The nodes are
filtered as one kube-scheduler cycle does: in name order until percentageOfNodesToScore's share of feasible
nodes is found, and an allocation error on any node visited fails the whole attempt, even when another node
fits. Pods that name a
ResourceClaimTemplate get a claim generated from it, called `<pod>-<entry>`; pods asking for an extended resource
that a DeviceClass stands for (KEP-5004) get the claim kube-scheduler builds for them on a node that does not
advertise the resource, called `<pod>-extended-resources`; any other extended resource a pod asks for must be
advertised in `status.allocatable` in at least the amount asked, or the pod fits on no node (kube-scheduler's
NodeResourcesFit; cpu, memory and the pod count are not judged). Input is read as `draconform validate` reads it:
every served resource.k8s.io version (converted to v1), and objects of other kinds (Namespaces, Deployments, a
driver's CRDs) ignored with one line on stderr.

Exit status: 0 allocated (the claims on stdout); 1 the claims cannot be allocated: first the attempt's
verdict, as kube-scheduler's cycle ends it ("attempt: does-not-fit: ..." when no node visited fits all claims
together, the pod staying unschedulable; "attempt: error: ..." when an allocation error on a node visited ended
the cycle), then one finding per claim on stdout giving what stopped that claim (with -o json a JSON object
with `allocated`, `attempt` ("does-not-fit" or "error"), `attemptMessage`, `exitStatus` and `findings`):
missing-class (a request names a DeviceClass the input lacks), error (the attempt ended in an error and so
does the claim on its own: CEL error, All over an incomplete pool, ...), own-error (the attempt did not fit,
ending before it could meet this claim's error; on its own the claim would end an attempt with that error),
shortage (on its own it fits on no node), together (it fits on its own, not beside the other claims) or
attempt-error (it fits on its own, but the attempt for all claims stopped at another claim's error). Only an
attempt that ended in an error is ever called an "allocation error"; 2 unusable input or invocation (file,
line, object and field)."""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import yaml

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
from draconform.kube.kinds import KINDS, NAMESPACED, with_pod_room
from draconform.sut import Obj, copy_object
from draconform.validation.problems import Path as FieldPath
from draconform.validation.problems import Problem
from draconform.validation.versions import RELEASES

if TYPE_CHECKING:  # the reference is imported when the command runs, so that `draconform --help` stays fast
    from draconform.kube.featuregates import FeatureGates
    from draconform.reference.allocator.interface import Allocator
    from draconform.reference.scheduler.oneshot import Cycle

EXIT_ALLOCATED, EXIT_UNALLOCATABLE, EXIT_INVALID_INPUT = EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE


class InputError(Exception):
    """Unusable input: reported with exit status 2, as a finding naming file, line, object and field."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.text())
        self.finding = finding


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "allocate", help="allocate devices to ResourceClaims with the reference allocator",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="multi-document YAML or JSON manifests or "
                                                                 "directories ('-': stdin)")
    parser.add_argument("--node", help="allocate for this node only (default: the first node that fits)")
    parser.add_argument("--kubernetes-version", default=CURRENT_RELEASE, choices=RELEASES, metavar="X.Y",
                        help=f"release whose API versions and gate defaults apply (default {CURRENT_RELEASE})")
    parser.add_argument("--feature-gates", default="", metavar="NAME=BOOL,...",
                        help="kube-scheduler feature gates (default: the release's defaults)")
    parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml", help="output format")
    parser.add_argument("--allocator", choices=("columnar", "oracle"), default="columnar",
                        help="allocation core (default: the polars one; the oracle is the readable reference)")
    add_input_options(parser)
    parser.add_argument("--timings", action="store_true",
                        help="also print on stderr how long reading and answering took, and peak memory")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    # The allocation core's modules (polars, the CEL runtime) are imported before reading, so the timings keep
    # starting the program apart from reading the input and from answering. Imported here so that
    # `draconform --help` stays fast.
    from draconform.reference.scheduler.oneshot import allocator_class

    allocator_class(args.allocator)
    imported = time.perf_counter()
    loaded: list[float] = []
    work: Counter[str] = Counter()
    status = run(args, work, loaded)
    if args.timings:
        answered = time.perf_counter()
        read = (loaded or [answered])[0]
        peak = _peak_memory_mib()
        counted = ", ".join(f"{what} {count}" for what, count in sorted(work.items()))
        diagnostic("allocate", f"timings: modules imported in {imported - started:.3f} s, read {read - imported:.3f} "
                               f"s, answered {answered - read:.3f} s after reading, peak memory {peak:.0f} MiB; "
                               f"work: {counted or 'none counted'}")
    return status


def _peak_memory_mib() -> float:
    """The process's peak resident memory: VmHWM where Linux has it (getrusage's maxrss survives exec, so it
    would report a larger parent's peak), else maxrss (KiB on Linux, bytes on macOS)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss / 2**20 if sys.platform == "darwin" else maxrss / 1024


def run(args: argparse.Namespace, work: Counter[str], loaded: list[float] | None = None) -> int:
    """The command on parsed arguments; `work` gains what the allocation core and its store counted (the cost
    check reads it), `loaded` the moment the input was read."""
    # Imported here so that `draconform --help` stays fast.
    from draconform.kube.featuregates import FeatureGates

    try:
        gates = FeatureGates(parse_gate_overrides(args.feature_gates), release=args.kubernetes_version)
    except (UsageError, ValueError) as error:
        diagnostic("allocate", str(error))
        return EXIT_INVALID_INPUT
    items: list[InputObject] = []
    unusable: list[Finding] = []
    for source in read_inputs(args.files, args.max_input_size, args.allow_empty):
        items.extend(source.objects)
        if source.error is not None:
            unusable.append(source.error)
    try:
        cluster = Inputs(items, args.kubernetes_version)
    except InputError as error:
        unusable.append(error.finding)
    if unusable:
        print_findings(unusable)
        return EXIT_INVALID_INPUT
    if cluster.not_checked:
        kinds = sorted({f"{item.kind or '?'} ({item.api_version or '?'})" for item in cluster.not_checked})
        count = len(cluster.not_checked)
        diagnostic("allocate", f"{count} object{'s' if count != 1 else ''} ignored (kinds allocation does not "
                               f"read): {', '.join(kinds)}")
    if loaded is not None:
        loaded.append(time.perf_counter())
    # What was read lives to the end of the command: the garbage collector need not walk it again and again
    # while the allocator's state is built (with a dump of thousands of slices, that walking took longer than
    # building).
    gc.freeze()
    try:
        return _answer(args, cluster, gates, work)
    finally:
        gc.unfreeze()


def _answer(args: argparse.Namespace, cluster: Inputs, gates: FeatureGates, work: Counter[str]) -> int:
    from draconform.reference.scheduler.oneshot import make_allocator

    if not cluster.pending and not cluster.extended_pods():
        diagnostic("allocate", "no ResourceClaim without status.allocation to allocate")
        return EXIT_INVALID_INPUT
    allocator = make_allocator(args.allocator, cluster.stored, gates)
    try:
        return _answer_with(args, cluster, gates, allocator)
    finally:
        work.update(getattr(allocator, "work", {}))
        work.update(getattr(getattr(allocator, "store", None), "work", {}))


def _answer_with(args: argparse.Namespace, cluster: Inputs, gates: FeatureGates, allocator: Allocator) -> int:
    from draconform.reference.scheduler.oneshot import attempt_message, walk

    nodes = cluster.nodes(args.node)
    if not nodes:
        diagnostic("allocate", "no node is known (give --node, Node objects or node-local ResourceSlices)")
        return EXIT_UNALLOCATABLE
    # One node (--node) is judged on its own: the core's pass over every node would judge the whole input.
    batch = len(nodes) > 1 and not cluster.extended_pods()
    found = walk(allocator, nodes, lambda node: cluster.claims_for(node, gates), batch)
    if found.chosen is not None and found.error is None:
        node, claims, allocations = found.chosen
        if not claims:  # every extended resource is served by the node's device plugin (KEP-5004)
            diagnostic("allocate", f"node {node['metadata']['name']}: nothing to allocate, the device plugin "
                                   "serves the pods' extended resources")
        elif allocations is None:  # the core said it fits without allocating: allocate now
            allocations = allocator.allocate(node, claims).allocations
        write(args.output, [_with_allocation(claim, allocation)
                            for claim, allocation in zip(claims, allocations or [], strict=True)])
        return EXIT_ALLOCATED
    findings = _failures(allocator, nodes, cluster, gates, found)
    attempt = attempt_message(found, len(nodes))
    if args.output == "json":
        sys.stdout.write(json.dumps({"allocated": False, "attempt": found.verdict, "attemptMessage": attempt,
                                     "exitStatus": EXIT_UNALLOCATABLE,
                                     "findings": [{**finding.as_json(), "namespace": namespace, "reason": reason}
                                                  for finding, namespace, reason in findings]}, indent=2) + "\n")
    else:
        print(f"attempt: {found.verdict}: {attempt}")
        print_findings([finding for finding, _, _ in findings])
    return EXIT_UNALLOCATABLE


def _failures(allocator: Allocator, nodes: list[Obj], cluster: Inputs, gates: FeatureGates,
              together: Cycle) -> list[tuple[Finding, str, str]]:
    """One finding per claim that cannot be allocated, with its own reason (and the reason's short name), as
    `oneshot.explain` tells them apart."""
    from draconform.reference.scheduler.oneshot import explain

    classes = {obj["metadata"]["name"] for obj in cluster.classes}
    pods = [pod for pod, _ in cluster.extended_pods()]
    return [(cluster.finding(kind, shown, f"cannot be allocated ({reason}): {message}"), shown.rpartition("/")[0],
             reason) for kind, shown, reason, message in explain(allocator, nodes, cluster.pending, classes, pods,
                                                                  together)]


class Inputs:
    """The objects read, checked, converted to v1, and sorted into what the store holds and what is to be
    allocated; objects of other kinds are kept aside as not read."""

    def __init__(self, items: Sequence[InputObject], release: str) -> None:
        self.stored: list[Obj] = []
        self.pending: list[Obj] = []
        self.node_objects: dict[str, Obj] = {}
        self.not_checked: list[InputObject] = []
        self._origin: dict[str, InputObject] = {}  # namespace/name of a pending claim -> where it was written
        self._pod_items: dict[tuple[str, str], InputObject] = {}
        seen: set[tuple[str, str | None, str]] = set()
        templates: dict[tuple[str, str], Obj] = {}
        pods: list[tuple[InputObject, Obj]] = []
        for item in items:
            obj = check(item, release)
            if obj is None:
                self.not_checked.append(item)
                continue
            meta = obj.setdefault("metadata", {})
            if obj["kind"] in NAMESPACED:
                meta.setdefault("namespace", "default")
            key = (obj["kind"], meta.get("namespace"), meta["name"])
            if key in seen:
                raise InputError(item.finding(("metadata", "name"), f"Duplicate value: {obj['kind']} "
                                                                    f"{_display(obj)} appears twice"))
            seen.add(key)
            kind = obj["kind"]
            if kind == "ResourceClaimTemplate":
                templates[(meta["namespace"], meta["name"])] = obj
            elif kind == "Pod":
                pods.append((item, obj))
            elif kind == "Node":
                self.node_objects[meta["name"]] = obj
            if kind == "ResourceClaim" and not (obj.get("status") or {}).get("allocation"):
                self.pending.append(obj)
                self._origin[_display(obj)] = item
            self.stored.append(obj)
        for item, pod in pods:
            self._claims_from_templates(item, pod, templates, seen)
            self._pod_items[(pod["metadata"]["namespace"], pod["metadata"]["name"])] = item
        self.pods = [pod for _, pod in pods]
        self.classes = [obj for obj in self.stored if obj["kind"] == "DeviceClass"]

    def extended_pods(self) -> list[tuple[Obj, dict[str, int]]]:
        """Pods asking for extended resources, each with what it asks of them. kube-scheduler's NodeResourcesFit
        judges every one of them on every node, DRA or not: a node advertises enough of it, or (KEP-5004, gate
        DRAExtendedResource) a DeviceClass stands for it and the node advertises none, or the pod does not fit
        there. So a pod asking for a resource nobody provides stays unschedulable."""
        from draconform.reference.scheduler.extendedresources import pod_requests

        found = [(pod, pod_requests(pod)) for pod in self.pods]
        return [(pod, requests) for pod, requests in found if requests]

    def claims_for(self, node: Obj, gates: FeatureGates) -> tuple[list[Obj], list[tuple[str, str]]]:
        """The claims to allocate on `node`: the pending ones, then a special claim per pod whose extended
        resources this node serves through DRA; and (pod, resource) for resources the node cannot serve."""
        from draconform.reference.scheduler.extendedresources import build_requests, special_claim, via_dra_on

        # with the gate off no class stands for an extended resource: the node's device plugin must serve it
        classes = self.classes if gates.enabled("DRAExtendedResource") else []
        claims = list(self.pending)
        unserved: list[tuple[str, str]] = []
        for pod, requests in self.extended_pods():
            through_dra, missing = via_dra_on(node, requests, classes)
            if missing is not None:
                unserved.append((_display(pod), missing))
            elif through_dra:
                device_requests, _ = build_requests(pod, through_dra, classes)
                claim = special_claim(pod, device_requests, f"{pod['metadata']['name']}-extended-resources")
                if not pod["metadata"].get("uid"):
                    del claim["metadata"]["uid"]
                    del claim["metadata"]["ownerReferences"][0]["uid"]
                claims.append(claim)
        return claims, unserved

    def finding(self, kind: str, shown: str, message: str) -> Finding:
        """A finding about a claim (or a pod) shown as namespace/name, at the object that asked for it: the
        claim, or the pod whose template or extended resources made it."""
        namespace, _, name = shown.rpartition("/")
        origin = self._origin.get(shown) if kind == "ResourceClaim" else None
        if origin is None:  # a pod's extended-resource claim, or the pod itself
            pod_name = name.removesuffix("-extended-resources") if kind == "ResourceClaim" else name
            origin = self._pod_items.get((namespace, pod_name))
        if origin is None:
            return Finding("-", 0, kind, name, "", message)
        if origin.kind == "Pod" and kind == "ResourceClaim":
            return Finding(origin.file, origin.line_of(("spec",)), kind, name, "",
                           f"{message} (generated for Pod {_display(origin.data)})")
        return Finding(origin.file, origin.line, kind, name, "", message)

    def _claims_from_templates(self, item: InputObject, pod: Obj, templates: dict[tuple[str, str], Obj],
                               seen: set[tuple[str, str | None, str]]) -> None:
        """The claims the resourceclaim controller would generate for the pod's template entries, each made
        as the controller makes it."""
        from draconform.reference.podclaims import claim_from_template

        namespace = pod["metadata"]["namespace"]
        for index, entry in enumerate((pod.get("spec") or {}).get("resourceClaims") or []):
            template_name = entry.get("resourceClaimTemplateName") if isinstance(entry, dict) else None
            if not template_name:
                continue
            template = templates.get((namespace, template_name))
            if template is None:
                raise InputError(item.finding(("spec", "resourceClaims", index, "resourceClaimTemplateName"),
                                              f"template {template_name!r} is not in the input"))
            claim = claim_from_template(pod, str(entry.get("name", index)), template)
            # upstream's API server completes generateName with five random characters; allocate names the claim
            # without them, so the same input always gives the same output
            name = claim["metadata"].pop("generateName").removesuffix("-")
            if ("ResourceClaim", namespace, name) in seen:
                continue
            claim["metadata"] = {"name": name, **claim["metadata"]}
            if not claim["metadata"]["labels"]:
                del claim["metadata"]["labels"]
            seen.add(("ResourceClaim", namespace, name))
            self.stored.append(claim)
            self.pending.append(claim)
            self._origin[_display(claim)] = item

    def nodes(self, wanted: str | None) -> list[Obj]:
        """The node asked for (a bare Node when the input has none of that name), or every node known from
        Node objects and node-local slices, in name order."""
        if wanted:
            return [self.node_objects.get(wanted) or _bare_node(wanted)]
        names = set(self.node_objects)
        for obj in self.stored:
            if obj["kind"] == "ResourceSlice":
                spec = obj.get("spec") or {}
                if spec.get("nodeName"):
                    names.add(spec["nodeName"])
                for device in spec.get("devices") or []:
                    if isinstance(device, dict) and device.get("nodeName"):
                        names.add(device["nodeName"])
        return [self.node_objects.get(name) or _bare_node(name) for name in sorted(names)]


def _bare_node(name: str) -> Obj:
    return with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}}})


def _display(obj: Obj) -> str:
    from draconform.reference.scheduler.oneshot import display

    return display(obj)


# ----- checks -----------------------------------------------------------------------------------------------

def check(item: InputObject, release: str) -> Obj | None:
    """The object as the allocator reads it (converted to resource.k8s.io/v1), or None for a kind allocation
    does not read (a Namespace, a Deployment, a driver's CRD). Refuses what the allocator cannot read: an
    API version the release does not serve, anything the kind's JSON Schema refuses (the validation layer's
    schema, as `draconform validate` uses it) and a request of no kind or of two. The API's validation rules
    (limits, formats) are `draconform validate`'s job:
    objects are taken as the API server stored them."""
    from draconform.validation.versions import classify, path_in, to_v1, version_of

    obj = item.data
    if not isinstance(obj, dict):
        raise InputError(Finding(item.file, item.line, None, "", "", "expected an object, got "
                                                                     f"{type(obj).__name__}"))
    kind = obj.get("kind")
    if not isinstance(kind, str) or not isinstance(obj.get("apiVersion"), str):
        raise InputError(item.finding(("kind",) if not isinstance(kind, str) else ("apiVersion",),
                                      "Required value: every manifest needs apiVersion and kind"))
    verdict = classify(obj, release)
    if isinstance(verdict, Problem):
        raise InputError(item.finding(verdict.path, verdict.message, verdict.rule))
    if kind not in KINDS:
        return None  # a Namespace, a Deployment, a driver's CRD: nothing the allocator reads
    version = version_of(obj)
    converted, problems = to_v1(obj)
    if problems:
        raise InputError(item.finding(problems[0].path, problems[0].message, problems[0].rule))
    if converted is obj and kind in NAMESPACED:  # defaulting the namespace must not change the input as written
        converted = copy_object(converted)
    name = (converted.get("metadata") or {}).get("name") if isinstance(converted.get("metadata"), dict) else None
    if converted.get("apiVersion") != KINDS[kind].api_version:
        raise InputError(item.finding(("apiVersion",), f"{kind} is read as {KINDS[kind].api_version}, not "
                                                       f"{converted.get('apiVersion')}"))
    if not isinstance(name, str) or not name:
        raise InputError(item.finding(("metadata", "name"), "Required value"))
    schema_problem = _schema_problem(converted)
    if schema_problem is not None:
        path, message = schema_problem
        raise InputError(item.finding(path_in(version, kind, path), message))
    return converted


def _schema_problem(obj: Obj) -> tuple[FieldPath, str] | None:
    """The first problem the resource.k8s.io/v1 (or core/v1) JSON Schema finds, or else the first request that
    is neither `exactly` nor `firstAvailable` (or both), which the allocator could not read."""
    from draconform.validation.rules import request_kind
    from draconform.validation.schema import kind_schema, schema_problems

    schema = kind_schema(str(obj.get("apiVersion", KINDS[obj["kind"]].api_version)), str(obj["kind"]))
    if schema is None:
        return None
    found = [p for p in schema_problems(schema, obj) if p.severity == "error"]
    if not found and obj["kind"] in ("ResourceClaim", "ResourceClaimTemplate"):
        spec_path: FieldPath = ("spec",) if obj["kind"] == "ResourceClaim" else ("spec", "spec")
        spec = obj.get("spec") or {} if obj["kind"] == "ResourceClaim" else (obj.get("spec") or {}).get("spec") or {}
        found = [problem for index, request in enumerate((spec.get("devices") or {}).get("requests") or [])
                 for problem in request_kind(request, (*spec_path, "devices", "requests", index))]
    if not found:
        return None
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return found[0].path, f"{found[0].message}{more}"


# ----- output -----------------------------------------------------------------------------------------------

def _with_allocation(claim: Obj, allocation: Obj) -> Obj:
    out = json.loads(json.dumps(claim))
    out.setdefault("status", {})["allocation"] = allocation
    return out


def write(output: str, claims: list[Obj]) -> None:
    if output == "json":
        body = claims[0] if len(claims) == 1 else {"apiVersion": "v1", "kind": "List", "items": claims}
        sys.stdout.write(json.dumps(body, indent=2) + "\n")
    else:
        sys.stdout.write(yaml.dump_all(claims, Dumper=yaml.CSafeDumper, sort_keys=False, explicit_start=True))
