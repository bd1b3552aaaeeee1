"""A vendor's starting point: `draconform init-sut` writes a skeleton whose every seam method raises Unsupported
with a docstring; `--sut` problems are reported once, before any scenario, with exit 2; a SUT lacking a seam method
is "unsupported", not a harness error; a KEP folder runs by name; `--version`; `serve --port` checked."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

from draconform.cli import main
from draconform.commands.run import check_sut, resolve_paths
from draconform.harness.recorder import classify
from draconform.paths import FEATURES_DIR
from draconform.sut import SEAM_METHODS, BaseSystem, Unsupported, missing_method


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("draconform ")


def test_serve_refuses_a_port_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["serve", "--port", "99999"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "expected a port from 1 to 65535" in err and "Traceback" not in err


def test_init_sut_writes_a_skeleton_with_every_seam_method(tmp_path: Path) -> None:
    path = tmp_path / "vendor_sut.py"
    assert main(["init-sut", str(path)]) == 0
    tree = ast.parse(path.read_text())
    [cls] = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    methods = {node.name: node for node in cls.body if isinstance(node, ast.FunctionDef)}
    assert set(methods) == set(SEAM_METHODS) - {"patience"}  # patience is inherited: look once
    assert all(ast.get_docstring(node) for node in methods.values())
    spec = importlib.util.spec_from_file_location("vendor_sut", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    system = module.factory()
    for name in methods:
        method = getattr(system, name)
        arguments = [None] * (method.__code__.co_argcount - 1 - len(method.__defaults__ or ()))
        with pytest.raises(Unsupported, match=f"{name}\\(\\) is not implemented yet"):
            method(*arguments)
    assert main(["init-sut", str(path)]) == 2  # never overwrites without --force


def test_the_base_class_supports_nothing_and_names_each_method() -> None:
    with pytest.raises(Unsupported, match=r"BaseSystem does not implement settle\(\)"):
        BaseSystem().settle()  # type: ignore[attr-defined]
    assert BaseSystem().patience("claim").timeout == 0


def test_a_sut_lacking_a_seam_method_is_unsupported_not_an_error() -> None:
    class Bare:
        pass

    with pytest.raises(AttributeError) as raised:
        Bare().settle()  # type: ignore[attr-defined]
    assert missing_method(raised.value) == "Bare does not implement settle()"
    assert classify(raised.value) == "skipped"
    assert classify(AttributeError("'dict' object has no attribute 'settle'")) == "error"  # not the SUT's


def test_sut_problems_are_found_once_before_any_scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_sut.py").write_text("def factory():\n    raise RuntimeError('no cluster configured')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "cannot import module 'nosuch'" in (check_sut("nosuch:factory") or "")
    assert "the module has no 'missing'" in (check_sut("broken_sut:missing") or "")
    assert check_sut("broken_sut:factory") == (
        "--sut broken_sut:factory: the factory raised RuntimeError: no cluster configured")
    assert check_sut("draconform.sut:BaseSystem") is None
    sys.modules.pop("broken_sut", None)


def test_a_bad_sut_stops_the_run_with_exit_2_and_writes_no_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["run", "--sut", "nosuch:factory", "--report-dir", str(tmp_path), "kep-5004"])
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("cannot import module 'nosuch'") == 1 and "no scenario ran" in err
    assert not any(tmp_path.iterdir())


def test_a_kep_folder_runs_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # outside a checkout
    assert resolve_paths([Path("kep-5004")], FEATURES_DIR) == (FEATURES_DIR / "kep-5004",)
    (tmp_path / "mine.feature").write_text("")
    assert resolve_paths([Path("mine.feature")], FEATURES_DIR) == (Path("mine.feature"),)  # an existing path wins


def test_help_texts_stand_without_the_readme() -> None:
    """The installed package ships no README: no command's help may send the reader there."""
    import argparse

    from draconform.cli import build_parser

    parser = build_parser()
    [commands] = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    texts = [parser.format_help(), *(sub.format_help() for sub in commands.choices.values())]
    assert all("see readme" not in text.lower() for text in texts)
    assert "init-sut" in texts[0] and "--version" in texts[0]
