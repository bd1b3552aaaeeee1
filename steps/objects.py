"""Steps that build and change cluster state through API objects: component configuration, nodes,
device classes, slices, claims, pods, and objects given verbatim as YAML docstrings."""

from __future__ import annotations

from pytest_bdd import given, parsers, when

from draconform.steps.common import (
    NAMESPACE,
    NAMESPACED,
    ScenarioContext,
    load_docstring,
    named,
    split_names,
)
from draconform.sut import COMPONENTS, ComponentConfig, Obj, SystemUnderTest


def _create(sut: SystemUnderTest, ctx: ScenarioContext, obj: Obj) -> Obj:
    created = sut.create(obj)
    if created["kind"] == "Pod":
        ctx.pod_uids[created["metadata"]["name"]] = created["metadata"]["uid"]
    return created


def _set_gates(sut: SystemUnderTest, components: tuple[str, ...], gates: str, value: bool) -> None:
    for component in components:
        sut.configure(component, ComponentConfig(feature_gates={gate: value for gate in split_names(gates)}))


# --- components ---------------------------------------------------------------------------------
@given(parsers.parse('a cluster with feature gates "{gates}" on'))
def cluster_with_gates_on(sut: SystemUnderTest, gates: str) -> None:
    _set_gates(sut, COMPONENTS, gates, True)


@given(parsers.parse('a cluster with feature gates "{gates}" off'))
def cluster_with_gates_off(sut: SystemUnderTest, gates: str) -> None:
    _set_gates(sut, COMPONENTS, gates, False)


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


@given(parsers.re(r"the (?P<kind>DeviceClass|ResourceSlice|ResourceClaim|ResourceClaimTemplate|Pod|Node):"))
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


# --- claims and pods ----------------------------------------------------------------------------
def _exact_request(device_class: str, count: int = 1) -> Obj:
    return {"devices": {"requests": [{"name": "device", "exactly": {"deviceClassName": device_class, "count": count}}]}}


@given(parsers.parse('a claim "{claim}" for one "{device_class}" device'))
def a_claim(sut: SystemUnderTest, ctx: ScenarioContext, claim: str, device_class: str) -> None:
    _create(sut, ctx, named("ResourceClaim", claim, spec=_exact_request(device_class)))


def _pod(name: str, claims: list[Obj]) -> Obj:
    return named(
        "Pod",
        name,
        spec={"containers": [{"name": "main", "image": "registry.example/app:1"}], "resourceClaims": claims},
    )


@given(parsers.parse('a pod "{pod}" with a claim for one "{device_class}" device'))
@when(parsers.parse('a pod "{pod}" with a claim for one "{device_class}" device is created'))
def pod_with_template_claim(sut: SystemUnderTest, ctx: ScenarioContext, pod: str, device_class: str) -> None:
    """The usual ephemeral case: a template per pod, from which the controller creates the claim."""
    template = f"{pod}-device"
    _create(sut, ctx, named("ResourceClaimTemplate", template, spec={"spec": _exact_request(device_class)}))
    _create(sut, ctx, _pod(pod, [{"name": "device", "resourceClaimTemplateName": template}]))


@given(parsers.parse('a pod "{pod}" using claim "{claims}"'))
@given(parsers.parse('a pod "{pod}" using claims "{claims}"'))
@when(parsers.parse('a pod "{pod}" using claim "{claims}" is created'))
def pod_with_claims(sut: SystemUnderTest, ctx: ScenarioContext, pod: str, claims: str) -> None:
    entries = [{"name": f"claim-{i}", "resourceClaimName": claim} for i, claim in enumerate(split_names(claims))]
    _create(sut, ctx, _pod(pod, entries))


# --- changes ------------------------------------------------------------------------------------
@when(parsers.re(r"the (?P<kind>DeviceClass|ResourceSlice|ResourceClaim|ResourceClaimTemplate|Pod|Node) is created:"))
def create_from_docstring(sut: SystemUnderTest, ctx: ScenarioContext, kind: str, docstring: str) -> None:
    object_from_docstring(sut, ctx, kind, docstring)


@when(parsers.parse('claim "{claim}" for one "{device_class}" device is created'))
def create_claim(sut: SystemUnderTest, ctx: ScenarioContext, claim: str, device_class: str) -> None:
    a_claim(sut, ctx, claim, device_class)


@when(parsers.re(r'(?P<kind>pod|claim|node|ResourceSlice|DeviceClass) "(?P<name>[^"]+)" is deleted'))
def delete_object(sut: SystemUnderTest, kind: str, name: str) -> None:
    kind = {"pod": "Pod", "claim": "ResourceClaim", "node": "Node"}.get(kind, kind)
    sut.delete(kind, name, NAMESPACE if kind in NAMESPACED else None)


@when(parsers.parse('pod "{pod}" finishes with phase "{phase}"'))
def pod_finishes(sut: SystemUnderTest, pod: str, phase: str) -> None:
    obj = sut.get("Pod", pod, NAMESPACE)
    assert obj is not None, f"pod {pod!r} does not exist"
    obj.setdefault("status", {})["phase"] = phase
    sut.update_status(obj)
