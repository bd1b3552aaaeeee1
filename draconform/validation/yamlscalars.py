"""How both YAML readers of the validation layer (the event builder of `loader` and the line reader of
`blockyaml`) turn a plain scalar into a value, and the error either raises on unreadable input: one set of
rules, so the two readers agree on every value (tests/validation/test_blockyaml.py compares them)."""

from __future__ import annotations

import functools
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

STR_TAG = "tag:yaml.org,2002:str"


class LoadError(Exception):
    """The input cannot be read or parsed: reported with exit status 2."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class Scalars(SafeConstructor):
    """PyYAML's safe scalar rules (YAML 1.1 ints, floats, bools), but timestamps and binary stay text,
    as they do when kubectl turns YAML into JSON."""

    def scalar(self, tag: str, value: str, line: int) -> Any:
        if tag == STR_TAG or tag in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary"):
            return value
        if tag == "tag:yaml.org,2002:null":
            return None
        node = yaml.ScalarNode(tag, value)
        if tag == "tag:yaml.org,2002:bool":
            return self.construct_yaml_bool(node)
        if tag == "tag:yaml.org,2002:int":
            return self.construct_yaml_int(node)
        if tag == "tag:yaml.org,2002:float":
            return self.construct_yaml_float(node)
        raise LoadError(f"unsupported YAML tag {tag!r}", line)


SCALARS = Scalars()
_RESOLVER = Resolver()


@functools.lru_cache(maxsize=4096)
def plain_tag(value: str, implicit: tuple[bool, bool]) -> str:
    """The tag of a plain scalar (PyYAML's implicit resolvers), remembered: a dump repeats the same values."""
    tag: str = _RESOLVER.resolve(yaml.ScalarNode, value, implicit)
    return tag
