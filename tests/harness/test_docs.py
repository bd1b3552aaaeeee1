"""The user guide (docs/) and the top-level Markdown files hold together: every relative link resolves, to a file
and, for a Markdown file, to a heading; the catalogue table counts each folder's rules; the README's test command
is the one CI runs; the catalogue page renders. `tox -e docs` builds the guide itself (mkdocs --strict)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from draconform.catalogue import load_catalogue
from draconform.cli import main
from draconform.paths import FEATURES_DIR

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
ROW = re.compile(r"^\| `(?P<folder>[a-z0-9-]+)`[^|]*\| (?P<count>\d+) \|", re.M)
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
# The pages mkdocs makes at build time (docs/hooks/pages.py), with the file each stands for.
GENERATED = {"catalogue.md": None, "architecture.md": ROOT / "ARCHITECTURE.md",
             "contributing.md": ROOT / "CONTRIBUTING.md"}

pytestmark = pytest.mark.skipif(not (DOCS / "index.md").is_file(), reason="the guide is not part of a wheel")


def _markdown_files() -> list[Path]:
    top = [ROOT / name for name in ("README.md", "ARCHITECTURE.md", "CONTRIBUTING.md")]
    return top + sorted(p for p in DOCS.rglob("*.md") if not p.name.startswith("NOTES-"))


def _slug(heading: str) -> str:
    """A heading's anchor as mkdocs' toc and GitHub make it: lower case, words joined by hyphens."""
    text = re.sub(r"[`*_]|\[([^]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[\s]+", "-", text)


def _anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_slug(m[1]) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def _target(source: Path, target: str) -> Path:
    path = (source.parent / target).resolve()
    if not path.exists() and path.parent == DOCS and path.name in GENERATED:
        return GENERATED[path.name] or path  # a generated page: its source, or itself (no file to check)
    return path


def test_every_relative_link_resolves() -> None:
    broken = []
    for source in _markdown_files():
        text = FENCE.sub("", source.read_text(encoding="utf-8"))
        for match in LINK.finditer(text):
            target = match["target"]
            if re.match(r"[a-z]+:", target):  # https:, mailto:: not checked (CI has no internet)
                continue
            file_part, _, anchor = target.partition("#")
            path = _target(source, file_part) if file_part else source
            if path.name == "catalogue.md" and not path.exists():
                continue
            if not path.exists():
                broken.append(f"{source.relative_to(ROOT)}: {target}: no such file")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{source.relative_to(ROOT)}: {target}: no heading #{anchor}")
    assert not broken, "\n".join(broken)


def test_the_catalogue_table_counts_the_rules_of_each_folder() -> None:
    per_folder = {path.parent.name: len(load_catalogue(path.parent).rules)
                  for path in sorted(FEATURES_DIR.glob("*/rules.yaml"))}
    listed = {m["folder"]: int(m["count"]) for m in ROW.finditer((DOCS / "index.md").read_text())}
    assert listed, "docs/index.md lists no catalogue"
    assert listed == dict(per_folder)


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^```sh\n(python3 -m pip install .*)\n```", readme, re.M)
    assert len(commands) == 2, "the README's set-up is two commands"
    main_job, tests = commands
    ci = (ROOT / ".ci" / "run").read_text().replace("python -m", "python3 -m").replace("--quiet ", "")
    assert tests in ci, f".ci/run no longer runs the README's test command {tests!r}"
    conformance = re.search(r"^\[testenv:conformance\][^[]*?^commands = ([^\n]*?)( \{posargs\})?$",
                            (ROOT / "tox.ini").read_text(), re.M)
    assert conformance and main_job.endswith(conformance[1]), "tox's conformance env runs another main job"


def test_the_catalogue_page_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "-o", "markdown"]) == 0
    page = capsys.readouterr().out
    for rule_id in load_catalogue().rules:
        assert f"| `{rule_id}`" in page
