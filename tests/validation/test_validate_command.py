"""`draconform validate` end to end, in process: the bad-input corpus never crashes it, every problem is
reported as FILE:LINE: KIND/NAME: field: message (RULE), and the exit status says valid (0), invalid (1)
or unreadable (2)."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from draconform.cli import main
from draconform.validation.loader import MAX_BYTES

CORPUS = Path(__file__).parent / "corpus"
FINDING = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+): (?:warning: )?(?:(?P<object>[^ :]+/[^ :]+): )?(?P<rest>.+)$")


def validate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    status = main(["validate", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out.splitlines(), err


@pytest.mark.parametrize(
    ("name", "status", "expected"),
    [
        ("not-yaml.yaml", 2, "not-yaml.yaml:4: not valid YAML: while parsing a flow mapping"),
        ("binary-garbage.yaml", 2, "binary-garbage.yaml:1: not valid YAML: unacceptable character"),
        ("bad-utf8.yaml", 2, "not valid YAML: unacceptable character"),
        ("alias-bomb.yaml", 2, "refusing to expand YAML aliases"),
        ("undefined-alias.yaml", 2, "alias *m refers to no (or an unfinished) anchor"),
        ("unsafe-tag.yaml", 2, "unsupported YAML tag 'tag:yaml.org,2002:python/object:os.system'"),
        ("not-mappings.yaml", 1, "not-mappings.yaml:2: not an object but a list"),
        ("missing-apiversion-kind.yaml", 1, "missing-apiversion-kind.yaml:4: ?/gpu: kind: Required value"),
        ("unknown-kinds.yaml", 1, "unknown-kinds.yaml:4: ResourceSlice/old: spec.driver: Required value"),
        ("duplicate-keys.yaml", 1, "duplicate-keys.yaml:5: DeviceClass/gpu2.example.com: metadata.name: duplicate key"),
        ("list-kind.json", 1, "list-kind.json:7: DeviceClass/Bad_Name: metadata.name: Invalid value"),
        ("merge-keys.yaml", 0, ""),
    ],
)
def test_bad_input_is_reported_never_crashes(capsys: pytest.CaptureFixture[str], name: str, status: int,
                                             expected: str) -> None:
    got, lines, _ = validate(capsys, str(CORPUS / name))
    assert got == status
    assert any(expected in line for line in lines) or not expected, lines


def test_deep_nesting_is_refused_before_the_parser_suffers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    flow = tmp_path / "flow.yaml"
    flow.write_text("a: " + "[" * 200_000 + "]" * 200_000)
    block = tmp_path / "block.yaml"
    block.write_text("- " * 200_000 + "x\n")
    status, lines, _ = validate(capsys, str(flow), str(block))
    assert status == 2
    assert [line.split(": ", 1)[1] for line in lines] == [
        "flow collections nested deeper than 64 levels",
        "collections nested deeper than 64 levels",
    ]


def test_a_file_over_the_size_limit_is_refused_and_the_limit_is_a_flag(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    large = tmp_path / "large.yaml"
    large.write_bytes(b"# padding\n" * (MAX_BYTES // 10 + 1))
    status, lines, _ = validate(capsys, str(large))
    assert (status, lines) == (2, [f"{large}:1: input is larger than 64 MiB (raise the limit with --max-input-size)"])
    small = tmp_path / "small.yaml"
    small.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: gpu-test}\n" + "# padding\n" * 200)
    status, lines, _ = validate(capsys, "--max-input-size", "1Ki", str(small))
    assert (status, lines) == (2, [f"{small}:1: input is larger than 1 KiB (raise the limit with --max-input-size)"])
    assert validate(capsys, "--max-input-size", "4Ki", str(small))[0] == 0
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", "--max-input-size", "lots", str(small)])
    assert exit_info.value.code == 2


def test_empty_input_is_unusable_unless_allowed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing here\n---\n")
    status, lines, _ = validate(capsys, str(empty))
    assert (status, lines) == (2, [f"{empty}:1: no objects in this input (--allow-empty accepts that)"])
    assert validate(capsys, "--allow-empty", str(empty))[:2] == (0, [])


def test_other_kinds_are_listed_as_not_checked_and_never_invalidate(capsys: pytest.CaptureFixture[str]) -> None:
    status, lines, err = validate(capsys, str(CORPUS / "unknown-kinds.yaml"))
    assert status == 1 and not any("Widget" in line for line in lines)
    assert "1 object not checked (kinds draconform does not validate): Widget (example.com/v1)" in err
    status, lines, _ = validate(capsys, "-o", "json", str(CORPUS / "unknown-kinds.yaml"))
    report = json.loads("\n".join(lines))
    assert report["notChecked"] == [{"file": str(CORPUS / "unknown-kinds.yaml"), "line": 6,
                                     "apiVersion": "example.com/v1", "kind": "Widget", "name": "web"}]
    assert report["objects"] == 1


def test_every_problem_of_an_object_is_reported_with_its_line_and_rule(capsys: pytest.CaptureFixture[str]) -> None:
    status, lines, err = validate(capsys, str(CORPUS / "many-problems.yaml"))
    assert status == 1
    parsed = [FINDING.match(line) for line in lines]
    assert all(parsed), lines
    assert [(m["line"], m["object"], m["rest"].split(":")[0]) for m in parsed if m] == [
        ("5", "ResourceSlice/node-1-gpus", "spec"),
        ("13", "ResourceSlice/node-1-gpus", "spec.devices[0].attributes[driverVersion].version"),
        ("14", "ResourceSlice/node-1-gpus", "spec.devices[1]"),
        ("14", "ResourceSlice/node-1-gpus", "spec.devices[1].bindingFailureConditions"),
    ]
    assert all(re.search(r" \(DRA-API/[A-Z0-9-]+\)$", line) for line in lines)
    assert err.strip() == "1 object checked, 1 invalid, 0 unusable inputs"


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    status, lines, _ = validate(capsys, "-o", "json", str(CORPUS / "many-problems.yaml"))
    report = json.loads("\n".join(lines))
    assert (status, report["exitStatus"], report["objects"], report["invalid"]) == (1, 1, 1, 1)
    assert report["findings"][2] == {
        "file": str(CORPUS / "many-problems.yaml"), "line": 14, "kind": "ResourceSlice", "name": "node-1-gpus",
        "field": "spec.devices[1]", "message": 'Duplicate value: "gpu-0"',
        "rule": "DRA-API/SLICE-DEVICE-NAMES-UNIQUE", "severity": "error",
    }


MIXED_SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1}
spec:
  driver: gpu.example.com
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  nodeName: node-1
  sharedCounters:
  - name: gpu-0
    counters: {memory: {value: 80Gi}}
  devices:
  - name: gpu-0
    consumesCounters:
    - counterSet: gpu-0
      compatibilityGroups: [whole]
      counters: {memory: {value: 80Gi}}
    taints: [{key: a.example.com/t, effect: NoSchedule}, {key: b.example.com/t, effect: NoSchedule},
             {key: c.example.com/t, effect: NoSchedule}, {key: d.example.com/t, effect: NoSchedule},
             {key: e.example.com/t, effect: NoSchedule}]
"""


DEVICES_ONLY = MIXED_SLICE.replace("  sharedCounters:\n  - name: gpu-0\n    counters: {memory: {value: 80Gi}}\n", "")


@pytest.mark.parametrize(
    ("release", "status", "rules"),
    [
        ("1.34", 1, ["DRA-API/DEVICE-MAX-TAINTS"]),  # 1.34: devices and counters together are fine, 5 taints not
        ("1.35", 1, ["DRA-API/SLICE-DEVICES-OR-COUNTERS"]),
        ("1.37", 1, ["DRA-API/SLICE-DEVICES-OR-COUNTERS"]),
    ],
)
def test_rules_follow_the_kubernetes_version(capsys: pytest.CaptureFixture[str], tmp_path: Path, release: str,
                                             status: int, rules: list[str]) -> None:
    path = tmp_path / "slice.yaml"
    path.write_text(MIXED_SLICE)
    got, lines, _ = validate(capsys, "-o", "json", "--kubernetes-version", release, str(path))
    findings = json.loads("\n".join(lines))["findings"]
    assert got == status
    assert [f["rule"] for f in findings if f["severity"] == "error"] == rules


def test_fields_needing_a_gate_off_by_default_get_a_warning(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "slice.yaml"
    path.write_text(DEVICES_ONLY)
    status, lines, _ = validate(capsys, "--kubernetes-version", "1.34", str(path))
    warnings = [line for line in lines if ": warning: " in line]
    assert status == 1  # five taints in 1.34
    assert any("consumesCounters: needs feature gate DRAPartitionableDevices, off by default in Kubernetes 1.34"
               in line for line in warnings), lines
    assert any("taints: needs feature gate DRADeviceTaints, off by default in Kubernetes 1.34" in line
               for line in warnings), lines
    assert any("compatibilityGroups: dropped: Kubernetes 1.34 does not have feature gate "
               "DRADeviceCompatibilityGroups (from 1.37)" in line for line in warnings), lines


def test_a_gate_turned_off_drops_its_fields_with_a_warning(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "slice.yaml"
    path.write_text(DEVICES_ONLY)
    status, lines, _ = validate(capsys, "--feature-gates", "DRADeviceCompatibilityGroups=false,DRADeviceTaints=false",
                                str(path))
    assert status == 0
    assert [line.split(": ", 4)[3:] for line in lines] == [
        ["spec.devices[0].consumesCounters[0].compatibilityGroups",
         "dropped: feature gate DRADeviceCompatibilityGroups is off (DRA-API/DISABLED-FIELDS-DROPPED)"],
        ["spec.devices[0].taints", "dropped: feature gate DRADeviceTaints is off (DRA-API/DISABLED-FIELDS-DROPPED)"],
    ]


ALPHA_OFF = "DRAListTypeAttributes=false,DRANodeAllocatableResources=false,DRAPartitionableDevicesType=false," \
            "DRAOptionalNodeOperations=false"


@pytest.mark.parametrize(
    ("args", "errors", "dropped"),
    [
        # every gate on: each mistake of the 1.36/1.37 alpha fields is reported with its rule
        ([], [("spec.skipNodeOperations", "DRA-API/SKIP-NODE-OPERATIONS-PREPARE-WITH-UNPREPARE"),
              ("spec.devices[0].attributes[numaNodes].ints", "DRA-API/DEVICE-ATTRIBUTE-LIST-NON-EMPTY"),
              ("spec.devices[0].nodeAllocatableResources[cpu].mapping.capacityMultiplier",
               "DRA-API/NODE-ALLOCATABLE-MAPPING-ONE-OF"),
              ("spec.devices[1].attributes[cpu.example.com/kind]", "DRA-API/PARTITION-TYPE-ATTRIBUTE-ON-DEVICES")], []),
        # 1.36 has the list and node-allocatable gates, not the 1.37 ones, nor 1.37's nodeAllocatableResources
        # (its alpha field of that gate was nodeAllocatableResourceMappings, of another shape)
        (["--kubernetes-version", "1.36"],
         [("spec.devices[0].attributes[numaNodes].ints", "DRA-API/DEVICE-ATTRIBUTE-LIST-NON-EMPTY")],
         ["spec.partitionTypeAttribute", "spec.skipNodeOperations", "spec.devices[0].nodeAllocatableResources"]),
        # gates off: the fields are dropped, and an attribute that only had a list is left without a value
        (["--feature-gates", ALPHA_OFF],
         [("spec.devices[0].attributes[numaNodes]", "DRA-API/DEVICE-ATTRIBUTE-ONE-VALUE"),
          ("spec.devices[0].attributes[pcieRoots]", "DRA-API/DEVICE-ATTRIBUTE-ONE-VALUE")],
         ["spec.partitionTypeAttribute", "spec.skipNodeOperations", "spec.devices[0].attributes[numaNodes].ints",
          "spec.devices[0].attributes[pcieRoots].strings", "spec.devices[0].nodeAllocatableResources"]),
    ],
)
def test_alpha_fields_of_1_36_and_1_37_follow_version_and_gates(
        capsys: pytest.CaptureFixture[str], args: list[str], errors: list[tuple[str, str]], dropped: list[str]) -> None:
    status, lines, _ = validate(capsys, "-o", "json", *args, str(CORPUS / "alpha-fields.yaml"))
    findings = json.loads("\n".join(lines))["findings"]
    assert status == 1
    assert [(f["field"], f["rule"]) for f in findings if f["severity"] == "error"] == errors
    assert [f["field"] for f in findings if f["message"].startswith("dropped: ")] == dropped


@pytest.mark.parametrize("gates", ["NoSuchGate=true", "DRADeviceTaints=maybe", "DRADeviceTaints"])
def test_bad_feature_gate_settings_are_usage_errors(capsys: pytest.CaptureFixture[str], gates: str) -> None:
    status, _, err = validate(capsys, "--feature-gates", gates, str(CORPUS / "merge-keys.yaml"))
    assert status == 2
    assert "--feature-gates" in err or "unknown feature gate" in err


def test_standard_input(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = (CORPUS / "many-problems.yaml").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    status, lines, _ = validate(capsys, "-")
    assert status == 1
    assert lines[0].startswith("<stdin>:5: ResourceSlice/node-1-gpus: spec: ")


def test_a_missing_file_and_an_empty_directory_are_unreadable(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    status, lines, _ = validate(capsys, str(tmp_path / "nope.yaml"), str(tmp_path))
    assert status == 2
    assert lines == [f"{tmp_path / 'nope.yaml'}:1: cannot read: No such file or directory",
                     f"{tmp_path}:1: no .yaml, .yml, .json files under this directory"]


def test_help_says_how_a_pod_is_judged_by_the_classic_api(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["validate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--api {structured,classic}" in text
    assert "a Pod is then judged by the classic API" in text
