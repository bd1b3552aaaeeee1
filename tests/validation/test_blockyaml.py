"""The loader's line-by-line reader (`blockyaml`) against its event-by-event builder: for every input the
reader accepts, the same documents, starting lines, field lines and duplicate-key problems; everything
outside its subset is left to the builder; and a mistake deep in a large dump is still reported at its line."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from draconform.bench.allocator import _claim, _class, _device, _slice
from draconform.bench.validation import corpus
from draconform.cli import main
from draconform.validation.blockyaml import read_block_yaml
from draconform.validation.loader import MAX_DEPTH, LoadError, build_documents, load_documents

REPO = Path(__file__).resolve().parents[2]


def built(text: str) -> list[tuple[Any, ...]] | str:
    try:
        return [(d.data, d.line, d.lines, d.problems) for d in build_documents(text, True)]
    except LoadError:
        return "error"


def read(text: str) -> list[tuple[Any, ...]] | None:
    found = read_block_yaml(text, True, MAX_DEPTH)
    return None if found is None else [tuple(document) for document in found]


def dump(nodes: int) -> str:
    """A `kubectl get resourceslices -o yaml` dump of the bench's shape."""
    items = [_slice(f"node-{n}-slice", f"node-{n}", 1, f"node-{n}", [_device(i) for i in range(10)])
             for n in range(nodes)]
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})


def dumped_texts() -> list[str]:
    """Block YAML as dumpers write it: the validation bench's corpus and the repository's manifests, dumped
    again in block style (plain, quoted and escaped scalars, nulls, empty collections, several documents), on
    lines as long as needed (a quoted scalar folded over lines is left to the builder)."""
    wide = 1 << 20  # no folded (multi-line) scalars: those are left to the builder
    texts = [yaml.dump_all(corpus(20), Dumper=yaml.CSafeDumper, width=wide), dump(3)]
    for path in sorted([*REPO.glob("examples/**/*.yaml"), *REPO.glob("tests/corpus/*.yaml")]):
        try:
            documents = list(yaml.safe_load_all(path.read_text()))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue
        texts.append(yaml.dump_all(documents, Dumper=yaml.CSafeDumper, default_flow_style=False, sort_keys=False,
                                   width=wide))
        texts.append(yaml.dump_all(documents, Dumper=yaml.SafeDumper, default_flow_style=False, sort_keys=False,
                                   indent=4, allow_unicode=True, width=wide))
    return texts


READ_ALIKE = {
    "duplicate keys": "a: 1\na: 2\nb:\n  c: 1\n  c: {}\n",
    "sequences at their key's indentation": "items:\n- a: 1\n  b: []\n- c\n-\n- - x\n  - y\nkind: List\n",
    "a `-` alone": "-\n  a: 1\n- # c\n  b: 2\n-\n",
    "comments": "# head\na: 1 # one\n# x\nb: # c\n  c: x#y\n    # deeper\nd: 'q' # after\n",
    "quoted": "'k''s': 'v''s'\n\"a b\": \"c\\\"d\\n\\\\\"\nc: ''\n",
    "keys of other types": "1: a\ntrue: b\nnull: c\n~: d\n0x10: e\n1.5: f\n2026-01-01: g\n",
    "empty values": "a:\nb: \nc: []\nd: {}\ne: ~\n",
    "documents": "# only a comment\n---\na: 1\n---\n# none\n---\n- 1\n- yes\n- 0o7\n---   \nx: -1\n",
    "nested sequences": "- - - a\n    - b\n  - c\n- d\n",
    "indented document": "  a: 1\n  b:\n  - 2\n",
    "spaces before a colon": "a  : 1\nb : 2\n",
    "scalars of YAML 1.1": "t: 2026-01-01T00:00:00Z\nb: yes\nn: ~\nf: 1.5e3\no: 0o7\nh: 0x1F\nu: 1_000\ns: 1:20\n"
                           "i: .inf\n",
    "colons and hashes inside scalars": "a: b:c\nu: http://x:80/y#z\nc: 'd: e'\n",
    "unicode": "name: \u00e9t\u00e9\nk\u00fcche: \U0001f600\n",
    "folded plain scalars": "a: one\n  two\n\n\n  three\nb:\n- x\n  - y\n- - p\n    q\n  - r\nc: 1\n 2\n"
                            "d:\n  e: f >= 0\n      > 1\ng:\n- k: v\n    w\n  l: m\n",
}

LEFT_TO_THE_BUILDER = {
    "anchor and alias": "a: &x 1\nb: *x\n",
    "merge key": "a: {b: 1}\nc:\n  <<: {b: 2}\n",
    "tag": "a: !!str 1\n",
    "block scalar": "a: |\n  text\n",
    "folded scalar": "a: >-\n  text\n",
    "flow collection": "a: [1, 2]\n",
    "flow mapping": "a: {b: 1}\n",
    "a scalar's next line at its key's indentation": "a: one\ntwo\n",
    "a comment inside a folded scalar": "a: one\n  two # x\n",
    "a key inside a folded scalar": "a: one\n  two: x\n",
    "multi-line quoted scalar": "a: 'one\n  two'\n",
    "other escapes": 'a: "\\x41"\n',
    "complex key": "? a\n: b\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "document end": "a: 1\n...\n",
    "tab": "a:\tb\n",
    "carriage return": "a: 1\r\nb: 2\r\n",
    "byte order mark": "\ufeffa: 1\n",
    "scalar document": "just text\n",
    "value tag of `=`": "a: =\n",
    "mapping where a scalar ended": "a: 1\n  b: 2\n",
    "a folded scalar after a comment": "a: one # c\n  two\n",
    "a sequence under a closed compact mapping": "p:\n-     s:\n    - x\n",
    "sequence after a scalar": "a: 1\n- b\n",
    "key inside a value": "a: b: c\n",
    "deeper than the loader allows": "".join("  " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 2)),
    "key longer than the reader takes": "k" * 300 + ": v\n",
    "not UTF-8": b"a: \xff\n",
}


@pytest.mark.parametrize("name", sorted(READ_ALIKE))
def test_the_reader_reads_the_subset_as_the_builder_does(name: str) -> None:
    text = READ_ALIKE[name]
    assert read(text) is not None, name
    assert read(text) == built(text)


@pytest.mark.parametrize("name", sorted(LEFT_TO_THE_BUILDER))
def test_anything_else_is_left_to_the_builder(name: str) -> None:
    text: Any = LEFT_TO_THE_BUILDER[name]
    assert read_block_yaml(text, True, MAX_DEPTH) is None


def test_dumped_manifests_read_alike_and_mutants_of_them_too() -> None:
    """Every dumped text is read by the reader, identically; then lines of them are cut, indented, doubled and
    given stray YAML syntax: whatever the reader still accepts, the builder must read identically (not fail)."""
    texts = dumped_texts()
    for text in texts:
        assert read(text) is not None
        assert read(text) == built(text)
    # Dumped at the usual 80 columns, long plain scalars are folded over lines: those texts read alike too.
    folded = [yaml.dump_all(corpus(20), Dumper=yaml.CSafeDumper), *[
        yaml.dump_all(list(yaml.safe_load_all(path.read_text())), Dumper=yaml.CSafeDumper, default_flow_style=False)
        for path in sorted(REPO.glob("examples/**/*.yaml"))]]
    assert read(folded[0]) is not None and '("40Gi"))\n        >= 0' in folded[0]  # a CEL selector, folded
    for text in folded:
        found = read(text)
        if found is not None:
            assert found == built(text)
            texts.append(text)
    pieces = [": ", ":", "- ", "-", " ", "  ", "#", " #", "'", '"', "\\", "[]", "{}", "\n", "\n  ", "\n- ", "---\n",
              "~", "null", "yes", "0x1F", "1_0", "<<: ", "&a ", "*a", "? ", "|", '"a\\"b"', "'it''s'", "0o7", "1e3"]
    rng = random.Random(13)
    accepted = 0
    for _ in range(2000):
        lines = rng.choice(texts).split("\n")
        start = rng.randrange(max(1, len(lines) - 40))
        lines = lines[start:start + 40]
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(lines))
            line, choice = lines[at], rng.random()
            if choice < 0.3:
                cut = rng.randrange(len(line) + 1)
                lines[at] = line[:cut] + rng.choice(pieces) + line[cut:]
            elif choice < 0.5 and line:
                cut = rng.randrange(len(line))
                lines[at] = line[:cut] + line[cut + 1:]
            elif choice < 0.7:
                lines[at] = " " * rng.randint(1, 3) + line
            elif choice < 0.85:
                lines[at] = line[rng.randint(1, 2):] if line.startswith(" ") else line
            else:
                lines.insert(at, rng.choice(lines))
        text = "\n".join(lines)
        found = read(text)
        if found is not None:
            accepted += 1
            assert found == built(text), text
    assert accepted > 300  # the mutants exercise the reader, not only its refusals


def test_lines_are_found_when_first_asked_for() -> None:
    text = dump(4)
    (document,) = load_documents(text)
    assert document._lines is None  # not built while reading
    ((_, line, lines, problems),) = built(text)  # type: ignore[misc]
    assert (document.line, document.lines, document.problems) == (line, lines, problems)
    assert document.line_of(("items", 3, "spec", "devices", 9, "name")) == lines[
        ("items", 3, "spec", "devices", 9, "name")]
    (untracked,) = load_documents(text, track_lines=False)
    assert untracked.lines == {} and untracked.data == document.data


def test_a_mistake_deep_in_a_large_dump_names_its_file_line_object_and_field(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = dump(300)
    lines = text.split("\n")
    # node-217's seventh device gets a number for a name
    at = next(i for i, line in enumerate(lines) if line.strip() == "name: node-217-slice")
    at = next(i for i in range(at, len(lines)) if lines[i].strip() == "name: instance-6")
    lines[at] = lines[at].replace("instance-6", "6")
    path = tmp_path / "slices.yaml"
    path.write_text("\n".join(lines))
    extra = tmp_path / "claim.yaml"
    extra.write_text(yaml.safe_dump_all([_class(), _claim("wanted")]))
    assert read_block_yaml(path.read_text(), False, MAX_DEPTH) is not None  # the reader took this dump
    status = main(["allocate", str(path), str(extra), "-o", "json"])
    out = capsys.readouterr().out
    assert status == 2
    assert (f"{path}:{at + 1}: ResourceSlice/node-217-slice: spec.devices[6].name: Invalid value: 6: must be of "
            "type string") in out, out
