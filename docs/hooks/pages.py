"""mkdocs hook: the user guide's generated pages. The catalogue is rendered by `draconform rules -o markdown`
from features/**/rules.yaml and the feature files citing them, so it cannot go stale; ARCHITECTURE.md and
CONTRIBUTING.md stay at the top of the repository, where contributors look, and become pages as they are,
their links made relative to docs/."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
# A link from a top-level file into docs/ (`](docs/decisions.md)`) or to another top-level page.
TOP_LINKS = {"docs/": "", "ARCHITECTURE.md": "architecture.md", "CONTRIBUTING.md": "contributing.md",
             "README.md": "index.md"}


def _catalogue() -> str:
    from draconform.commands import rules

    out = io.StringIO()
    args = SimpleNamespace(features_dir=ROOT / "features", untested=False, output="markdown")
    with contextlib.redirect_stdout(out):
        status = rules.handle(args)  # type: ignore[arg-type]
    if status != 0:
        raise RuntimeError(f"draconform rules -o markdown exited {status}:\n{out.getvalue()}")
    return "# The rule catalogue\n\n" + out.getvalue()


def _top_level(name: str) -> str:
    text = (ROOT / name).read_text(encoding="utf-8")
    pattern = "|".join(re.escape(target) for target in TOP_LINKS)
    return re.sub(rf"\]\(({pattern})", lambda m: "](" + TOP_LINKS[m[1]], text)


def on_files(files: Files, config: Any) -> Files:
    pages = {"catalogue.md": _catalogue(), "architecture.md": _top_level("ARCHITECTURE.md"),
             "contributing.md": _top_level("CONTRIBUTING.md")}
    for uri, content in pages.items():
        files.append(File.generated(config, uri, content=content))
    return files
