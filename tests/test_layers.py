"""The import contracts of pyproject.toml (`[tool.importlinter]`) hold: layers point one way.

setup.py installs the top-level folders (reference/, steps/, ...) under the one package `draconform`;
import-linter reads a package from one directory, so the test lays the Python files out as they are
installed (a copy under a temporary directory) and runs `lint-imports` on that copy."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _roots() -> dict[str, str]:
    """setup.py's ROOTS: import name -> folder, read without running setup()."""
    tree = ast.parse((REPO / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "ROOTS" for t in node.targets):
            roots: dict[str, str] = ast.literal_eval(node.value)
            return roots
    raise AssertionError("setup.py has no ROOTS")


def test_import_contracts_hold(tmp_path: Path) -> None:
    for name, folder in _roots().items():
        shutil.copytree(REPO / folder, tmp_path / name.replace(".", "/"), dirs_exist_ok=True,
                        ignore=lambda _dir, names: [n for n in names if not n.endswith(".py") and "." in n])
    lint_imports = Path(sys.executable).parent / "lint-imports"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = subprocess.run([str(lint_imports), "--config", str(REPO / "pyproject.toml"), "--no-cache"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def _in_contracts() -> set[str]:
    """Every module a contract of pyproject.toml places: the layers' entries and the forbidden contracts' sources."""
    import tomllib

    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    named: set[str] = set()
    for contract in contracts:
        for layer in contract.get("layers", []):
            named |= {part.strip() for part in layer.replace(":", "|").split("|")}
        named |= set(contract.get("source_modules", []))
    return named


def test_every_package_and_top_level_module_is_in_a_contract() -> None:
    """A package in no contract may import anything; a new one must be given its place."""
    modules = {name for name in _roots() if name != "draconform"}
    package = REPO / "draconform"
    modules |= {f"draconform.{path.name}" for path in package.iterdir() if (path / "__init__.py").exists()}
    modules |= {f"draconform.{path.stem}" for path in package.glob("*.py") if path.name != "__init__.py"}
    assert sorted(modules - _in_contracts()) == []
