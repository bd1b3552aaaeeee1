"""Reading CDI spec files as a container runtime does: which device IDs a node's spec files define, and why a
file defines nothing."""

from __future__ import annotations

from pathlib import Path

from draconform.kube.cdi import SpecDirectory, parse_specs, read_dirs, spec_text

YAML_SPEC = """\
cdiVersion: 0.6.0
kind: example.com/gpu
devices:
- name: gpu-0
  containerEdits: {env: [GPU=0]}
- name: "1"
"""


def test_a_yaml_and_a_json_spec_define_their_devices() -> None:
    specs = parse_specs({"/etc/cdi/a.yaml": YAML_SPEC,
                         "/var/run/cdi/b.json": spec_text("k8s.nic.example.com/device", {"nic-0": {"NIC": "0"}})})
    assert specs.defined == {"example.com/gpu=gpu-0", "example.com/gpu=1", "k8s.nic.example.com/device=nic-0"}
    assert specs.problems == ()
    assert specs.undefined(["example.com/gpu=gpu-0", "example.com/gpu=gpu-1"]) == ["example.com/gpu=gpu-1"]


def test_a_spec_a_runtime_would_refuse_defines_nothing_and_says_why() -> None:
    specs = parse_specs({
        "no-version.yaml": "kind: example.com/gpu\ndevices: [{name: gpu-0}]\n",
        "bad-name.yaml": "cdiVersion: 0.6.0\nkind: example.com/gpu\ndevices: [{name: gpu-1}, {name: 'gpu 2'}]\n",
        "bad-kind.json": '{"cdiVersion": "0.6.0", "kind": "gpu", "devices": [{"name": "gpu-3"}]}',
        "broken.json": '{"cdiVersion": ',
        "list.yaml": "- a\n",
    })
    assert specs.defined == frozenset()
    assert any(p.startswith("no-version.yaml: cdiVersion") for p in specs.problems)
    assert "bad-name.yaml: devices[1].name: 'gpu 2' is not a CDI device name" in specs.problems
    assert any(p.startswith("bad-kind.json: kind: expected vendor/class") for p in specs.problems)
    assert any(p.startswith("broken.json: not valid JSON") for p in specs.problems)
    assert "list.yaml: the document is not an object" in specs.problems


def test_a_spec_directory_on_disk_writes_lists_and_removes_files(tmp_path: Path) -> None:
    directory = SpecDirectory(tmp_path / "cdi")
    assert list(directory) == []  # not created until the first spec
    directory["k8s.gpu.example.com-uid-1.json"] = spec_text("k8s.gpu.example.com/device", {"gpu-0": {}})
    (tmp_path / "cdi" / "notes.txt").write_text("not a spec")
    assert list(directory) == ["k8s.gpu.example.com-uid-1.json"]
    files = read_dirs([tmp_path / "cdi", tmp_path / "missing"])
    assert parse_specs(files).defined == {"k8s.gpu.example.com/device=gpu-0"}
    del directory["k8s.gpu.example.com-uid-1.json"]
    assert list(directory) == [] and not (tmp_path / "cdi" / ".k8s.gpu.example.com-uid-1.json.tmp").exists()
