"""Steps that build and change cluster state through API objects: component configuration, nodes,
device classes, slices, claims, pods, and objects given verbatim as YAML docstrings."""

from __future__ import annotations

from pytest_bdd import given, parsers, when

from draconform.kube.featuregates import parse_gate_settings
from draconform.kube.kinds import NAMESPACED, with_pod_room
from draconform.steps.cluster import configure, rewrite, seam_method
from draconform.steps.manifests import NAMESPACE, load_docstring, manifest, manifest_variant, named
from draconform.steps.scenario import ScenarioContext
from draconform.steps.words import DURATION, split_names, to_seconds
from draconform.sut import COMPONENTS, Obj, SystemUnderTest


def _create(sut: SystemUnderTest, ctx: ScenarioContext, obj: Obj) -> Obj:
    if obj.get("kind") == "Node":  # registered as a kubelet registers it, so a scheduler has room for pods
        obj = with_pod_room(obj)
    created = sut.create(obj)
    if created["kind"] == "Pod":
        ctx.pod_uids[created["metadata"]["name"]] = created["metadata"]["uid"]
    return created


# --- components ---------------------------------------------------------------------------------
@given(parsers.parse('a cluster with feature gates "{gates}" on'))
def cluster_with_gates_on(sut: SystemUnderTest, ctx: ScenarioContext, gates: str) -> None:
    for component in COMPONENTS:
        configure(sut, ctx, component, gates=dict.fromkeys(split_names(gates), True))


@given(parsers.parse('a cluster with feature gates "{gates}" off'))
def cluster_with_gates_off(sut: SystemUnderTest, ctx: ScenarioContext, gates: str) -> None:
    for component in COMPONENTS:
        configure(sut, ctx, component, gates=dict.fromkeys(split_names(gates), False))


@given(parsers.re(
    r'(?P<component>kube-apiserver|kube-scheduler|kube-controller-manager|kubelet)'
    r'(?: version "(?P<version>[^"]+)")? with feature gates "(?P<gates>[^"]*)"'
))
def component_config(
    sut: SystemUnderTest, ctx: ScenarioContext, component: str, version: str | None, gates: str
) -> None:
    """One component's release ("current" for the harness's default) and gate settings."""
    release = None if version in (None, "current") else version
    configure(sut, ctx, component, gates=parse_gate_settings(gates), version=release)


@given(parsers.re(r"the scheduler's binding timeout is " + DURATION))
def binding_timeout(sut: SystemUnderTest, ctx: ScenarioContext, amount: str, unit: str) -> None:
    """KEP-5007: the DRA plugin argument `bindingTimeout`, in seconds."""
    configure(sut, ctx, "kube-scheduler", args={"bindingTimeout": to_seconds(amount, unit)})


# --- nodes, classes, slices ---------------------------------------------------------------------
@given(parsers.parse('a node "{name}"'))
def a_node(sut: SystemUnderTest, ctx: ScenarioContext, name: str) -> None:
    _create(sut, ctx, named("Node", name, metadata={"name": name, "labels": {"kubernetes.io/hostname": name}}))


@given(parsers.parse('nodes "{names}"'))
def some_nodes(sut: SystemUnderTest, ctx: ScenarioContext, names: str) -> None:
    for name in split_names(names):
        a_node(sut, ctx, name)


@given(parsers.parse('the device class "{name}" selecting driver "{driver}"'))
def device_class_for_driver(sut: SystemUnderTest, ctx: ScenarioContext, name: str, driver: str) -> None:
    spec = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
    _create(sut, ctx, named("DeviceClass", name, spec=spec))


@given(parsers.parse('node "{node}" has {count:d} devices "{prefix}" of driver "{driver}"'))
def node_local_devices(
    sut: SystemUnderTest, ctx: ScenarioContext, node: str, count: int, prefix: str, driver: str
) -> None:
    """A node-local pool named after the node with devices <prefix>-0 .. <prefix>-<count-1>."""
    spec = {
        "driver": driver,
        "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
        "nodeName": node,
        "devices": [{"name": f"{prefix}-{index}"} for index in range(count)],
    }
    _create(sut, ctx, named("ResourceSlice", f"{node}-{driver}", spec=spec))


@given(parsers.re(r"the (?P<kind>DeviceClass|ResourceSlice|ResourceClaim|ResourceClaimTemplate|DeviceTaintRule"
                  r"|Pod|Node):"))
def object_from_docstring(sut: SystemUnderTest, ctx: ScenarioContext, kind: str, docstring: str) -> None:
    """One object of the named kind; a missing metadata.name is generated from the kind."""
    for obj in load_docstring(docstring, kind):
        metadata = obj.setdefault("metadata", {})
        if not metadata.get("name"):
            ctx.slice_count += 1
            metadata["name"] = f"{kind.lower()}-{ctx.slice_count}"
        if kind in NAMESPACED:
            metadata.setdefault("namespace", NAMESPACE)
        _create(sut, ctx, obj)


@given("the objects:")
def objects_from_docstring(sut: SystemUnderTest, ctx: ScenarioContext, docstring: str) -> None:
    for obj in load_docstring(docstring):
        _create(sut, ctx, obj)


@given(parsers.re(r'the objects of manifests? "(?P<names>[^"]+)"'))
@when(parsers.re(r'the objects of manifests? "(?P<names>[^"]+)" are created'))
def objects_from_manifests(sut: SystemUnderTest, ctx: ScenarioContext, names: str) -> None:
    """Objects several scenarios share, written once in the feature folder's manifests/ (see common.py);
    `names` lists one or more files, comma-separated."""
    for name in split_names(names):
        for obj in manifest(ctx, name):
            _create(sut, ctx, obj)


@given(parsers.re(r"the (?P<kind>DeviceClass|ResourceSlice|ResourceClaim|ResourceClaimTemplate|DeviceTaintRule|Pod)"
                  r' "(?P<name>[^"]+)" from the manifests(?P<changes> with:)?'))
def object_from_manifests(sut: SystemUnderTest, ctx: ScenarioContext, kind: str, name: str, changes: str | None,
                          datatable: list[list[str]] | None = None) -> None:
    """One named object of the feature folder's manifests, changed first by the step's table of field paths and
    values (see `set_fields` in common.py)."""
    _create(sut, ctx, manifest_variant(ctx, kind, name, changes, datatable))


# --- claims and pods ----------------------------------------------------------------------------
def _exact_request(device_class: str, count: int = 1) -> Obj:
    return {"devices": {"requests": [{"name": "device", "exactly": {"deviceClassName": device_class, "count": count}}]}}


@given(parsers.parse('a claim "{claim}" for one "{device_class}" device'))
def a_claim(sut: SystemUnderTest, ctx: ScenarioContext, claim: str, device_class: str) -> None:
    _create(sut, ctx, named("ResourceClaim", claim, spec=_exact_request(device_class)))


# The image upstream's e2e tests give a pod that only has to exist and run: the pause image, which a node's
# container runtime already holds as its sandbox image
POD_IMAGE = "registry.k8s.io/pause:3.10"


def _pod(name: str, claims: list[Obj]) -> Obj:
    return named("Pod", name, spec={"containers": [{"name": "main", "image": POD_IMAGE}], "resourceClaims": claims})


@given(parsers.parse('a pod "{pod}" with a claim for one "{device_class}" device'))
@when(parsers.parse('a pod "{pod}" with a claim for one "{device_class}" device is created'))
def pod_with_template_claim(sut: SystemUnderTest, ctx: ScenarioContext, pod: str, device_class: str) -> None:
    """The usual ephemeral case: a template per pod, from which the controller creates the claim."""
    template = f"{pod}-device"
    _create(sut, ctx, named("ResourceClaimTemplate", template, spec={"spec": _exact_request(device_class)}))
    _create(sut, ctx, _pod(pod, [{"name": "device", "resourceClaimTemplateName": template}]))


@given(parsers.re(r'a pod "(?P<pod>[^"]+)" without resource claims \(resourceClaims (?P<form>absent|\[\]|null)\)'))
def pod_without_claims(sut: SystemUnderTest, ctx: ScenarioContext, pod: str, form: str) -> None:
    """A pod that uses no ResourceClaim, in each of the three ways a manifest can say so."""
    obj = _pod(pod, [])
    if form == "absent":
        del obj["spec"]["resourceClaims"]
    elif form == "null":
        obj["spec"]["resourceClaims"] = None
    _create(sut, ctx, obj)


@given(parsers.parse('a pod "{pod}" using claim "{claims}"'))
@given(parsers.parse('a pod "{pod}" using claims "{claims}"'))
@when(parsers.parse('a pod "{pod}" using claim "{claims}" is created'))
@when(parsers.parse('a pod "{pod}" using claims "{claims}" is created'))
def pod_with_claims(sut: SystemUnderTest, ctx: ScenarioContext, pod: str, claims: str) -> None:
    entries = [{"name": f"claim-{i}", "resourceClaimName": claim} for i, claim in enumerate(split_names(claims))]
    _create(sut, ctx, _pod(pod, entries))


# --- changes ------------------------------------------------------------------------------------
@when(parsers.re(r"the (?P<kind>DeviceClass|ResourceSlice|ResourceClaim|ResourceClaimTemplate|DeviceTaintRule|Pod|Node)"
                 r" is created:"))
def create_from_docstring(sut: SystemUnderTest, ctx: ScenarioContext, kind: str, docstring: str) -> None:
    object_from_docstring(sut, ctx, kind, docstring)


@when(parsers.re(r'the (?P<kind>ResourceSlice|DeviceClass|Node) "(?P<name>[^"]+)" is replaced with:'))
def replace_from_docstring(sut: SystemUnderTest, kind: str, name: str, docstring: str) -> None:
    """Update an existing object: the docstring's spec (and labels, if given) replace the stored ones."""
    (new,) = load_docstring(docstring, kind)

    def change(obj: Obj) -> None:
        obj["spec"] = new.get("spec", obj.get("spec"))
        if "labels" in (new.get("metadata") or {}):
            obj["metadata"]["labels"] = new["metadata"]["labels"]

    rewrite(sut, kind, name, change)


@when(parsers.re(r'the objects of manifests? "(?P<names>[^"]+)" are written again'))
def manifests_written_again(sut: SystemUnderTest, ctx: ScenarioContext, names: str) -> None:
    """Their owner (a driver republishing its slices) sends the same objects again: an unconditional update
    of each, carrying every field the manifest has, whatever the API server served in between."""
    for name in split_names(names):
        for obj in manifest(ctx, name):
            if obj.get("kind") in NAMESPACED:
                obj.setdefault("metadata", {}).setdefault("namespace", NAMESPACE)
            sut.update(obj)


@given(parsers.parse('the status of claim "{claim}" is:'))
def claim_status_from_docstring(sut: SystemUnderTest, ctx: ScenarioContext, claim: str, docstring: str) -> None:
    """Write a claim's status as another component (an older scheduler, a driver) left it; a
    reservedFor entry that names a pod of the scenario without a UID gets that pod's UID."""
    (status,) = load_docstring(docstring)
    for entry in status.get("reservedFor") or []:
        if entry.get("resource") == "pods" and "uid" not in entry and entry.get("name") in ctx.pod_uids:
            entry["uid"] = ctx.pod_uids[entry["name"]]
    rewrite(sut, "ResourceClaim", claim, lambda obj: obj.__setitem__("status", status), status=True)


@when(parsers.parse('claim "{claim}" for one "{device_class}" device is created'))
def create_claim(sut: SystemUnderTest, ctx: ScenarioContext, claim: str, device_class: str) -> None:
    a_claim(sut, ctx, claim, device_class)


@when(parsers.re(r'(?P<kind>pod|claim|node|ResourceSlice|DeviceClass|ResourceClass|DeviceTaintRule) "(?P<name>[^"]+)"'
                 r' is deleted'))
def delete_object(sut: SystemUnderTest, kind: str, name: str) -> None:
    """As `kubectl delete` does by default, wait for a pod to be gone: a pod bound to a node is deleted
    gracefully and stays until its kubelet has finished with it."""
    kind = {"pod": "Pod", "claim": "ResourceClaim", "node": "Node"}.get(kind, kind)
    sut.delete(kind, name, NAMESPACE if kind in NAMESPACED else None)
    if kind == "Pod":
        sut.settle()


@when(parsers.parse('pod "{pod}" finishes with phase "{phase}"'))
def pod_finishes(sut: SystemUnderTest, pod: str, phase: str) -> None:
    """The pod's containers end (the container runtime's report); its kubelet writes the phase, the field only a
    kubelet owns, so a scenario judging what follows never starts from a phase the harness wrote."""
    seam_method(sut, "finish_pod", "end a pod's containers")(pod, NAMESPACE, phase)


# The label kube-apiserver looks for on a namespace before it lets a claim or template there ask for admin access
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"


@given("the namespace allows admin access")
def namespace_allows_admin_access(sut: SystemUnderTest) -> None:
    """The scenario's namespace labelled as a cluster administrator labels one whose users may ask for admin
    access to devices (a monitoring team's)."""
    seam_method(sut, "label_namespace", "label a namespace")(NAMESPACE, {ADMIN_ACCESS_LABEL: "true"})


@given(parsers.parse('node "{node}" advertises {count:d} "{resource}" in its allocatable resources'))
def node_allocatable(sut: SystemUnderTest, node: str, count: int, resource: str) -> None:
    """What a device plugin makes the kubelet report in `status.allocatable` (KEP-5004 device-plugin path)."""
    rewrite(sut, "Node", node, lambda obj: obj.setdefault("status", {}).setdefault("allocatable", {}).__setitem__(
        resource, str(count)), status=True)
