"""CDI specification files as a container runtime reads them from a node's CDI directories (by default
/etc/cdi and /var/run/cdi): which fully qualified device IDs (vendor/class=name) they define. A kubelet plugin
answers NodePrepareResources with CDI device IDs; the runtime can only apply an ID that some spec file on the
node defines, so a plugin must have written the file before it answers (DRA-PLUGIN/CDI-SPEC-FILES).

A spec is a JSON or YAML document with `cdiVersion`, `kind` ("vendor/class") and `devices` (each with a `name`
and its `containerEdits`); each device defines the ID kind=name. A file a runtime would refuse defines nothing;
it is reported by name with what is wrong, and the other files still count."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

# A fully qualified CDI device name, vendor/class=name, with the characters the CDI specification allows
# in each part: vendor and class start with a letter, the name with a letter or digit, and all three end
# with a letter or digit.
_CDI_KIND_PART = r"[A-Za-z](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?"
CDI_DEVICE_ID = re.compile(_CDI_KIND_PART + "/" + _CDI_KIND_PART + r"=[A-Za-z0-9](?:[A-Za-z0-9_.:-]*[A-Za-z0-9])?")

# The extensions a runtime reads in a CDI directory.
SPEC_SUFFIXES = (".json", ".yaml", ".yml")
# The directories container runtimes read by default.
DEFAULT_DIRS = (Path("/etc/cdi"), Path("/var/run/cdi"))
# The spec version the reference driver writes: the oldest that has everything it uses.
SPEC_VERSION = "0.5.0"


@dataclass(frozen=True)
class CdiSpecs:
    """What a node's CDI spec files define, and the files (or entries) a runtime would reject."""

    defined: frozenset[str]
    problems: tuple[str, ...]

    def undefined(self, ids: Iterable[str]) -> list[str]:
        """The IDs of `ids` that no spec defines, in their order."""
        return [device_id for device_id in ids if device_id not in self.defined]


def read_dirs(dirs: Sequence[Path]) -> dict[str, str]:
    """The text of every spec file in `dirs`, keyed by its path; a directory that does not exist holds none
    (runtimes treat it so). A file that cannot be read is reported as its key with no text."""
    files: dict[str, str] = {}
    for directory in dirs:
        if not directory.is_dir():
            continue
        for path in sorted(directory.iterdir()):
            if path.suffix in SPEC_SUFFIXES and path.is_file():
                try:
                    files[str(path)] = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as err:
                    files[str(path)] = f"\0unreadable: {err}"
    return files


def parse_specs(files: Mapping[str, str]) -> CdiSpecs:
    """The device IDs the spec files define; problems name the file and the field."""
    defined: set[str] = set()
    problems: list[str] = []
    for name, text in files.items():
        if text.startswith("\0unreadable: "):
            problems.append(f"{name}: {text[1:]}")
            continue
        try:
            spec = json.loads(text) if name.endswith(".json") else yaml.load(text, Loader=yaml.CSafeLoader)
        except (ValueError, yaml.YAMLError) as err:
            problems.append(f"{name}: not valid {'JSON' if name.endswith('.json') else 'YAML'}: {err}")
            continue
        ids, found = _spec_ids(spec)
        defined |= ids
        problems += [f"{name}: {problem}" for problem in found]
    return CdiSpecs(frozenset(defined), tuple(problems))


def _spec_ids(spec: Any) -> tuple[set[str], list[str]]:
    if not isinstance(spec, dict):
        return set(), ["the document is not an object"]
    problems = []
    if not isinstance(spec.get("cdiVersion"), str):
        problems.append("cdiVersion: missing (a runtime refuses a spec without its version)")
    kind = spec.get("kind")
    if not isinstance(kind, str) or not CDI_DEVICE_ID.fullmatch(f"{kind}=x"):
        return set(), [*problems, f"kind: expected vendor/class, got {kind!r}"]
    devices = spec.get("devices")
    if not isinstance(devices, list) or not devices:
        return set(), [*problems, "devices: a spec must define at least one device"]
    ids = set()
    for index, device in enumerate(devices):
        name = device.get("name") if isinstance(device, dict) else None
        device_id = f"{kind}={name}"
        if not isinstance(name, str) or not CDI_DEVICE_ID.fullmatch(device_id):
            problems.append(f"devices[{index}].name: {name!r} is not a CDI device name")
            continue
        ids.add(device_id)
    return (set() if problems else ids), problems  # a runtime refuses a spec with any fault as a whole


def spec_text(kind: str, devices: Mapping[str, Mapping[str, str]]) -> str:
    """A spec (JSON) defining `devices` of `kind`: device name -> environment variables its containers get."""
    spec = {"cdiVersion": SPEC_VERSION, "kind": kind,
            "devices": [{"name": name, "containerEdits": {"env": [f"{key}={value}" for key, value in env.items()]}}
                        for name, env in devices.items()]}
    return json.dumps(spec, indent=2, sort_keys=True) + "\n"


class SpecDirectory(MutableMapping[str, str]):
    """A CDI directory on disk as a mapping of file name to text, for a plugin that writes its specs there.
    A file is written under a temporary name and renamed, so a runtime never reads half a spec."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __getitem__(self, name: str) -> str:
        try:
            return (self.path / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise KeyError(name) from None

    def __setitem__(self, name: str, text: str) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        partial = self.path / f".{name}.tmp"
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, self.path / name)

    def __delitem__(self, name: str) -> None:
        try:
            (self.path / name).unlink()
        except FileNotFoundError:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        if not self.path.is_dir():
            return iter(())
        return iter(sorted(p.name for p in self.path.iterdir() if p.suffix in SPEC_SUFFIXES and p.is_file()))

    def __len__(self) -> int:
        return sum(1 for _ in self)
