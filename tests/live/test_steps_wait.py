"""Every `Then` step that reads the cluster (it takes the `sut` fixture) waits through `observes`, so that on
a live cluster it looks again until what it expects holds; a step added without it would judge an eventually
consistent cluster on its first look."""

from __future__ import annotations

import ast
from pathlib import Path

import draconform.steps

STEPS_DIR = Path(draconform.steps.__file__).parent


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")


def test_every_then_step_that_reads_the_cluster_waits_through_observes() -> None:
    impatient = []
    for path in sorted(STEPS_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.FunctionDef):
                continue
            decorators = {_decorator_name(d) for d in node.decorator_list}
            if "then" in decorators and "sut" in {a.arg for a in node.args.args} and "observes" not in decorators:
                impatient.append(f"{path.name}:{node.lineno} {node.name}")
    assert not impatient, f"Then steps reading the cluster without observes: {impatient}"
