"""`validate` gives kube-apiserver's verdict where it used to be looser or stricter (issue 30): selectors typed in
the DRA CEL environment of the release and gates, the claims inside every workload kind's pod template, a mistyped
API group, a slice's pool generation, a status written on create, and every unknown field at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from draconform.cli import main
from draconform.kube.cel import CelError, CelFeatures, CelUnsupported, SelectorEngine, check, device_input
from draconform.kube.featuregates import FeatureGates
from draconform.reference.apiserver.admission import install
from draconform.reference.apiserver.store import Store
from draconform.reference.clock import FakeClock
from draconform.validation import validate_gates, validate_manifest
from draconform.validation.celcost import checked_cost, estimate_cost

GPU = 'device.capacity["gpu.example.com"]'


def device_class(expression: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def problems(obj: dict[str, Any], release: str = "1.37", **gates: bool) -> list[tuple[str, str, str]]:
    found = validate_manifest(obj, validate_gates(gates, release))[1]
    return [(p.field, p.severity, p.message) for p in found]


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *objects: dict[str, Any],
        args: tuple[str, ...] = ()) -> tuple[int, str]:
    path = tmp_path / "manifest.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    status = main(["validate", *args, str(path)])
    out, _ = capsys.readouterr()
    return status, out


# --- typed CEL -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("expression", "reason"), [
    ("device.driver", "must evaluate to bool or the unknown type, not string"),
    (f'{GPU}.memory == "80Gi"', "found no matching overload for '_==_' applied to '(kubernetes.Quantity, string)'"),
    (f"{GPU}.memory > 10", "found no matching overload for '_>_' applied to '(kubernetes.Quantity, int)'"),
    ('quantity("1Gi").isGreaterThan(semver("1.0.0"))', "applied to '(kubernetes.Quantity, kubernetes.Semver)'"),
    ("device.drivr == 'x'", "undefined field 'drivr'"),
    ("gpu.memory > 1", "undeclared reference to 'gpu'"),
])
def test_a_selector_upstream_refuses_is_refused_with_its_reason(expression: str, reason: str) -> None:
    (field, severity, message), = problems(device_class(expression))
    assert (field, severity) == ("spec.selectors[0].cel.expression", "error")
    assert message.startswith(f"Invalid value: {json.dumps(expression)}: compilation failed: ") or \
        message.endswith(reason)
    assert reason in message


@pytest.mark.parametrize("expression", [
    f'{GPU}.memory.isGreaterThan(quantity("40Gi"))',
    f'{GPU}.memory.compareTo(quantity("40Gi")) >= 0 && device.driver == "gpu.example.com"',
    'device.attributes["gpu.example.com"].model == "a100"',  # attribute values are dyn, as upstream declares them
    'device.attributes["gpu.example.com"].cores > 8',
    'device.attributes["gpu.example.com"].firmware.isGreaterThan(semver("1.2.0"))',
    'device.attributes["gpu.example.com"].model',  # dyn: upstream accepts the unknown type
    'has(device.driver) && cel.bind(a, device.attributes["gpu.example.com"], a.model.startsWith("a"))',
    "device.allowMultipleAllocations",
    'device.attributes["gpu.example.com"].numaNodes.includes(1)',
])
def test_what_upstream_accepts_is_accepted(expression: str) -> None:
    assert problems(device_class(expression)) == []


def test_the_environment_follows_the_gates() -> None:
    multiple = device_class("device.allowMultipleAllocations")
    assert problems(multiple, DRAConsumableCapacity=False)[0][2].endswith("undefined field 'allowMultipleAllocations'")
    includes = device_class('device.attributes["gpu.example.com"].model.includes("a100")')
    # 1.37's environment has includes() whatever the list gate says; 1.36's declares it only with
    # DRAListTypeAttributes on (dynamic-resource-allocation/cel compile.go, the 1.36 option's FeatureEnabled), and
    # 1.35 has no such gate
    assert problems(includes, "1.37", DRAListTypeAttributes=False) == []
    assert problems(includes, "1.36", DRAListTypeAttributes=True) == []
    for refused in (problems(includes, "1.36", DRAListTypeAttributes=False), problems(includes, "1.35")):
        assert refused[0][2].endswith("undeclared reference to 'includes'")


def test_requests_subrequests_and_templates_are_compiled_at_their_paths() -> None:
    wrong = {"cel": {"expression": "device.driver"}}
    spec = {"devices": {"requests": [
        {"name": "a", "exactly": {"deviceClassName": "gpu", "selectors": [wrong]}},
        {"name": "b", "firstAvailable": [{"name": "x", "deviceClassName": "gpu", "selectors": [wrong]}]}]}}
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"}, "spec": spec}
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
                "spec": {"spec": spec}}
    assert [field for field, *_ in problems(claim)] == [
        "spec.devices.requests[0].exactly.selectors[0].cel.expression",
        "spec.devices.requests[1].firstAvailable[0].selectors[0].cel.expression"]
    assert [field for field, *_ in problems(template)] == [
        "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression",
        "spec.spec.devices.requests[1].firstAvailable[0].selectors[0].cel.expression"]
    old = {**claim, "apiVersion": "resource.k8s.io/v1beta1", "spec": {"devices": {"requests": [
        {"name": "a", "deviceClassName": "gpu", "selectors": [wrong]}]}}}
    assert [field for field, severity, _ in problems(old) if severity == "error"] == [
        "spec.devices.requests[0].selectors[0].cel.expression"]


def test_a_derived_attributes_expression_compiles_to_a_value_of_any_type() -> None:
    def claim(expression: str) -> dict[str, Any]:
        request = {"deviceClassName": "gpu", "derivedAttributes": [{"name": "numa", "expression": expression}]}
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
                "spec": {"devices": {"requests": [{"name": "r", "exactly": request}]}}}

    assert [p for p in problems(claim('device.attributes["gpu.example.com"].numa')) if p[1] == "error"] == []
    assert [p for p in problems(claim("device.driver + '-numa'")) if p[1] == "error"] == []  # a string is fine
    (field, _, message), = [p for p in problems(claim("device.numa")) if p[1] == "error"]
    assert field == "spec.devices.requests[0].exactly.derivedAttributes[0].expression"
    assert message.endswith("undefined field 'numa'")


@pytest.mark.parametrize("expression", [
    "1 < 2.5",  # cross-type numeric ordering: upstream enables it, cel-cpp's checker does not
    "[1, 2].sum() == 3",  # upstream's lists library
    'device.attributes["gpu.example.com"].all(k, v, v != "")',  # two-variable comprehensions
    "[1, 2].indexOf(2) == 1",  # a list's indexOf, beside the strings extension's
    "sets.contains([1, 2], [1])",
    'isIP("10.0.0.1")',
])
def test_what_only_the_library_lacks_is_a_warning_not_a_refusal(expression: str) -> None:
    (_, severity, message), = problems(device_class(expression))
    assert severity == "warning" and message.startswith("not checked: ") and "kube-apiserver accepts it" in message
    with pytest.raises(CelUnsupported):
        check(expression)


def test_what_upstream_does_not_load_either_is_refused() -> None:
    """cel-go's lists extension (slice, flatten, ...) and its math extension are not in upstream's environment."""
    for expression in ("[1, 2].slice(0, 1) == [1]", "math.greatest(1, 2) == 2"):
        (_, severity, _), = problems(device_class(expression))
        assert severity == "error", expression


def test_a_real_error_beside_what_the_library_lacks_is_still_refused() -> None:
    (_, severity, message), = problems(device_class(f'[1, 2].sum() == 3 && {GPU}.memory == "80Gi"'))
    assert severity == "error" and "(kubernetes.Quantity, string)" in message


def test_the_allocator_runs_the_program_the_checker_typed() -> None:
    engine = SelectorEngine()
    with pytest.raises(CelError, match=r"kubernetes\.Quantity, string"):
        engine.compile(f'{GPU}.memory == "80Gi"')
    from fractions import Fraction
    device = lambda: device_input("gpu.example.com", {"model": ("string", "a100")},  # noqa: E731
                                  {"memory": Fraction(80 * 2**30)})
    assert engine.matches(f'{GPU}.memory.isGreaterThan(quantity("40Gi")) && has(device.driver)', "d", device)
    assert not engine.matches(f'{GPU}.memory.isLessThan(quantity("40Gi"))', "d", device)
    # has(device.driver) is rewritten for cel-cpp only where it is code, never inside a string literal
    named = lambda: device_input("has(device.driver)", {}, {})  # noqa: E731
    assert engine.matches('device.driver == "has(device.driver)" && has(device.driver)', "n", named)
    assert problems(device_class('"x.all(a, b, true)" != ""')) == []  # not a two-variable comprehension
    limited = SelectorEngine(CelFeatures(consumable_capacity=False))
    with pytest.raises(CelError):
        limited.compile("device.allowMultipleAllocations")


def test_the_cost_is_estimated_on_the_checked_expression() -> None:
    expression = 'device.attributes.all(d, device.attributes[d].all(n, n.startsWith("x")))'
    assert checked_cost(check(expression).checked) == estimate_cost(expression)
    # a map is iterated by its keys: the domains (32) and, inside, the names (32)
    assert 32 * 32 < estimate_cost(expression) < 32 * 32 * 20


# --- workloads ---------------------------------------------------------------------------------------------
TEMPLATE = {"spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateNme": "gpu"}],
                     "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}]}}
WORKLOADS = [
    ("apps/v1", "Deployment", {"spec": {"selector": {}, "template": TEMPLATE}}, "spec.template"),
    ("apps/v1", "StatefulSet", {"spec": {"serviceName": "s", "template": TEMPLATE}}, "spec.template"),
    ("apps/v1", "DaemonSet", {"spec": {"template": TEMPLATE}}, "spec.template"),
    ("apps/v1", "ReplicaSet", {"spec": {"template": TEMPLATE}}, "spec.template"),
    ("batch/v1", "Job", {"spec": {"template": TEMPLATE}}, "spec.template"),
    ("batch/v1", "CronJob", {"spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": TEMPLATE}}}},
     "spec.jobTemplate.spec.template"),
    ("v1", "PodTemplate", {"template": TEMPLATE}, "template"),
    ("v1", "ReplicationController", {"spec": {"template": TEMPLATE}}, "spec.template"),
]


@pytest.mark.parametrize(("api_version", "kind", "body", "where"), WORKLOADS, ids=[w[1] for w in WORKLOADS])
def test_a_workloads_pod_template_is_checked_as_a_pod(api_version: str, kind: str, body: dict[str, Any],
                                                      where: str) -> None:
    workload = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "w"}, **body}
    assert (f"{where}.spec.resourceClaims[0].resourceClaimTemplateNme", "error", "unknown field") in problems(workload)
    fixed = json.loads(json.dumps(workload).replace("TemplateNme", "TemplateName"))
    assert problems(fixed) == []
    dangling = json.loads(json.dumps(fixed).replace('"claims": [{"name": "gpu"}]', '"claims": [{"name": "gpus"}]'))
    assert [(f, s) for f, s, _ in problems(dangling)] == [(f"{where}.spec.containers[0].resources.claims[0]", "error")]


def test_the_way_to_the_template_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(tmp_path, capsys, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"},
                                         "spec": {"template": "oops"}})
    assert status == 1 and "Deployment/w: spec.template: Invalid value: \"oops\": must be of type object" in out


# --- API groups, pools, status, unknown fields ----------------------------------------------------------------
@pytest.mark.parametrize("api_version", ["resources.k8s.io/v1", "resource.k8s.io/v2", "resource.k8s.i/v1", "v1"])
def test_a_mistyped_api_version_names_the_served_ones(api_version: str) -> None:
    (field, severity, message), = problems({**device_class("true"), "apiVersion": api_version})
    assert (field, severity) == ("apiVersion", "error")
    assert "serves DeviceClass as resource.k8s.io/v1, resource.k8s.io/v1beta2, resource.k8s.io/v1beta1" in message


def test_another_groups_kinds_stay_not_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _ = run(tmp_path, capsys, {**device_class("true"), "apiVersion": "gpu.nvidia.com/v1beta1"})
    assert status == 0


@pytest.mark.parametrize(("pool", "refused"), [({"name": "p", "resourceSliceCount": 1}, False),
                                               ({"name": "p", "generation": 0, "resourceSliceCount": 1}, False),
                                               ({"name": "p", "generation": -1, "resourceSliceCount": 1}, True)])
def test_a_pool_without_a_generation_is_at_generation_zero(pool: dict[str, Any], refused: bool) -> None:
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
              "spec": {"driver": "gpu.example.com", "pool": pool, "nodeName": "node-1"}}
    assert [field for field, *_ in problems(slice_)] == (["spec.pool.generation"] if refused else [])


LIVE_CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "c", "namespace": "default"},
              "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
              "status": {"reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]}}  # invalid: no allocation


def test_a_status_written_on_create_is_dropped_with_a_warning(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert problems(LIVE_CLAIM) == [
        ("status", "warning", "dropped: kube-apiserver clears status on create and validates only metadata and spec; "
                              "status is written through the status subresource"),
        ("status.reservedFor", "warning", "Forbidden: may not be set when `allocation` is not set (the status "
                                          "subresource would refuse this)")]
    status, out = run(tmp_path, capsys, LIVE_CLAIM)
    assert status == 0 and "(DRA-API/STATUS-ON-CREATE)" in out


def test_the_reference_store_drops_a_status_on_create_and_validates_it_on_the_subresource() -> None:
    api = Store(FakeClock(), FeatureGates())
    install(api)
    created = api.create(json.loads(json.dumps(LIVE_CLAIM)))
    assert created["status"] == {}  # dropped: read back as kube-apiserver encodes the empty struct
    from draconform.sut import ApiError
    with pytest.raises(ApiError):
        api.update_status({**created, "status": LIVE_CLAIM["status"]})


def test_every_unknown_field_is_reported_at_once() -> None:
    obj = {**device_class("true"), "metadata": {"name": "x", "lables": {}, "anotations": {}}}
    obj["spec"] = {**obj["spec"], "selector": [], "confg": []}
    assert sorted(field for field, *_ in problems(obj)) == ["metadata.anotations", "metadata.lables",
                                                            "spec.confg", "spec.selector"]


# --- the manifests of README's comparison with kubernetes-validate ------------------------------------------
VERDICTS_DIR = Path(__file__).parent / "corpus" / "apiserver-verdicts"
REFUSED = {"01-driver-not-bool", "02-quantity-vs-string", "03-quantity-vs-int", "04-deployment-typo",
           "05-cronjob-dangling-claim", "06-group-typo", "09-two-unknown-fields"}


@pytest.mark.parametrize("path", sorted(VERDICTS_DIR.glob("*.yaml")), ids=lambda path: path.stem)
def test_each_comparison_manifest_gets_kube_apiservers_verdict(path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["validate", str(path)])
    capsys.readouterr()
    assert status == (1 if path.stem in REFUSED else 0)
