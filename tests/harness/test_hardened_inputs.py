"""Every file a command is handed goes through the hardened loader (draconform.validation.loader): a YAML
alias bomb is refused with exit status 2 and a message naming the file and line, never expanded."""

from __future__ import annotations

from pathlib import Path

import pytest

from draconform.cli import main


def _bomb(path: Path) -> Path:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    path.write_text("\n".join(lines) + "\n")
    return path


COMMANDS = {
    "validate": lambda f: ["validate", str(f)],
    "allocate": lambda f: ["allocate", str(f)],
    "report verify": lambda f: ["report", "verify", str(f)],
    "run --options": lambda f: ["run", "--options", str(f), "--report-dir", str(f.parent / "out")],
    "plugin-check --claims": lambda f: ["plugin-check", "--endpoint", f"unix://{f.parent}/dra.sock", "--driver",
                                        "gpu.example.com", "--node", "worker-1", "--claims", str(f)],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_alias_bomb_is_refused_as_unusable_input(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    command: str) -> None:
    bomb = _bomb(tmp_path / "conformance-report.yaml")
    status = main(COMMANDS[command](bomb))
    out, err = capsys.readouterr()
    assert status == 2, out + err
    assert "Traceback" not in out + err
    assert f"{bomb}:" in out + err and "alias" in out + err
