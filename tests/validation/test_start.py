"""`draconform validate FILE` starts fast enough for a pre-commit hook: it loads only its own command and, for
valid objects, neither pytest, jsonschema (python-jsonschema runs only to word the errors of an invalid object),
polars nor rich; the `ValidateStart/small-file` bench workload times it in a child process (tests never assert
on speed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from draconform.bench.registry import BenchOptions
from draconform.bench.validation import SMALL_FILE, start_times, validate_start
from draconform.cli import build_parser

HEAVY = {"pytest", "jsonschema", "referencing", "polars", "rich", "jinja2", "grpc", "lightkube"}


def loaded_by_validate(path: Path) -> set[str]:
    code = ("import sys; from draconform.cli import main; status = main(['validate', sys.argv[1]]); "
            "print(status, sorted({m.split('.')[0] for m in sys.modules}))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True).stdout
    status, modules = out.strip().splitlines()[-1].split(" ", 1)
    assert status == "0", out
    return set(json.loads(modules.replace("'", '"')))


def test_validate_loads_no_heavy_library_for_valid_objects(tmp_path: Path) -> None:
    path = tmp_path / "dra.yaml"
    path.write_text(SMALL_FILE, encoding="utf-8")
    assert loaded_by_validate(path) & HEAVY == set()


def test_only_the_command_that_runs_is_loaded() -> None:
    parser = build_parser("validate")
    choices = next(a for a in parser._actions if a.dest == "command").choices
    assert list(choices) == ["validate"]
    assert "run" in next(a for a in build_parser()._actions if a.dest == "command").choices


def test_the_start_benchmark_times_the_command_in_a_child_process(tmp_path: Path) -> None:
    path = tmp_path / "dra.yaml"
    path.write_text(SMALL_FILE, encoding="utf-8")
    seconds, cpu, status = start_times([sys.executable, "-m", "draconform.cli", "validate"], str(path), runs=1)
    assert status == 0 and seconds > 0 and cpu > 0
    found = validate_start(BenchOptions(scale=0.01))
    assert found[0].unit == "s" and "draconform validate" in found[0].detail and "exit 0" in found[0].detail
