"""Typed values of the resource.k8s.io API as the allocator compares them: Kubernetes quantities (exact, as
fractions), semantic versions 2.0.0 and typed device attributes (int, bool, string, version, and the list
forms ints, bools, strings, versions of DRAListTypeAttributes)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

QUANTITY_TAG = "__quantity__"
SEMVER_TAG = "__semver__"

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 10**3), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}
_QUANTITY = re.compile(r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


def parse_quantity(value: Any) -> Fraction:
    """A Kubernetes resource.Quantity ("40Gi", "1.5", "100m", "1e3") as an exact number."""
    if isinstance(value, str):
        return _parse_text(value)
    return _parse_quantity(value)


@functools.lru_cache(maxsize=4096)
def _parse_text(value: str) -> Fraction:
    """Quantities repeat across devices ("1Gi" a thousand times): parse each text once."""
    return _parse_quantity(value)


def _parse_quantity(value: Any) -> Fraction:
    if isinstance(value, bool):
        raise ValueError(f"quantities must be numbers or strings, not {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return _nano_ceiling(Fraction(str(value)))
    if not isinstance(value, str):
        raise ValueError(f"quantities must be numbers or strings, not {value!r}")
    match = _QUANTITY.match(value.strip())
    if not match:
        raise ValueError(f"quantities must match the regular expression of a Kubernetes quantity: {value!r}")
    sign, number, suffix = match.group(1), match.group(2), match.group(3) or ""
    amount = Fraction(number)
    if suffix in _BINARY:
        amount *= _BINARY[suffix]
    elif suffix in _DECIMAL:
        amount *= _DECIMAL[suffix]
    else:
        amount *= Fraction(10) ** int(suffix[1:])
    return -_nano_ceiling(amount) if sign == "-" else _nano_ceiling(amount)


def _nano_ceiling(amount: Fraction) -> Fraction:
    """Kubernetes keeps quantities to nano precision, rounding up what is finer."""
    nanos = -((-amount * 10**9) // 1)
    return Fraction(nanos, 10**9)


def format_quantity(amount: Fraction) -> str:
    """A canonical text for an exact amount (equal amounts give equal texts)."""
    return str(amount)


_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
_LOOSE = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$")


@dataclass(frozen=True)
class SemVer:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()
    build: str = ""

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(self.pre)
        if self.build:
            text += "+" + self.build
        return text

    def compare(self, other: SemVer) -> int:
        """Semver 2.0.0 precedence; build metadata does not count."""
        mine, theirs = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if mine != theirs:
            return -1 if mine < theirs else 1
        if self.pre == other.pre:
            return 0
        if not self.pre or not other.pre:
            return 1 if not self.pre else -1
        for a, b in zip(self.pre, other.pre, strict=False):
            if a == b:
                continue
            a_num, b_num = a.isdigit(), b.isdigit()
            if a_num and b_num:
                return -1 if int(a) < int(b) else 1
            if a_num != b_num:
                return -1 if a_num else 1
            return -1 if a < b else 1
        return -1 if len(self.pre) < len(other.pre) else 1


def parse_semver(text: str, normalize: bool = False) -> SemVer:
    """Strict semver 2.0.0; with `normalize`, also "v1", "1.2" and leading zeros, as Kubernetes' semver(s, true)."""
    match = _SEMVER.match(text)
    if match:
        pre = tuple(match.group(4).split(".")) if match.group(4) else ()
        return SemVer(int(match.group(1)), int(match.group(2)), int(match.group(3)), pre, match.group(5) or "")
    if normalize:
        loose = _LOOSE.match(text)
        if loose:
            pre = tuple(loose.group(4).split(".")) if loose.group(4) else ()
            return SemVer(int(loose.group(1)), int(loose.group(2) or 0), int(loose.group(3) or 0), pre,
                          loose.group(5) or "")
    raise ValueError(f"not a semantic version: {text!r}")


# ("int" | "bool" | "string" | "version", value), versions as SemVer; or a list form ("ints" | "bools" |
# "strings" | "versions", tuple of such values)
AttributeValue = tuple[str, Any]
SCALAR_KINDS = ("int", "bool", "string", "version")
LIST_KINDS = ("ints", "bools", "strings", "versions")


def parse_attribute(raw: Any) -> AttributeValue | None:
    """A DeviceAttribute (exactly one of int/bool/string/version or, with DRAListTypeAttributes, one of the
    non-empty lists ints/bools/strings/versions) as a typed pair; None when malformed."""
    if not isinstance(raw, dict):
        return None
    for kind in SCALAR_KINDS:
        if kind in raw:
            value = raw[kind]
            if kind == "version":
                try:
                    return kind, parse_semver(str(value))
                except ValueError:
                    return None
            return kind, value
    for kind in LIST_KINDS:
        if kind in raw:
            items = raw[kind]
            if not isinstance(items, list) or not items:
                return None
            if kind == "versions":
                try:
                    return kind, tuple(parse_semver(str(item)) for item in items)
                except ValueError:
                    return None
            return kind, tuple(items)
    return None


def attribute_equal(left: AttributeValue, right: AttributeValue) -> bool:
    """Same type and same value (versions by semver precedence)."""
    if left[0] != right[0]:
        return False
    if left[0] == "version":
        return bool(left[1].compare(right[1]) == 0)
    return bool(left[1] == right[1])


def lookup_attribute(attributes: dict[str, AttributeValue], driver: str, full_name: str) -> AttributeValue | None:
    """`domain/name` as a constraint names it: stored under the full name, or under the bare name when the
    domain is the device's driver."""
    value = attributes.get(full_name)
    if value is None:
        domain, _, ident = full_name.rpartition("/")
        value = attributes.get(ident) if domain == driver else None
    return value


def attribute_set(value: AttributeValue) -> frozenset[tuple[str, Any]]:
    """An attribute as the set of typed values constraints compare: a scalar is a set of one, a list-type
    attribute the set of its items (versions by precedence, so build metadata does not count)."""
    kind, raw = value
    base = kind[:-1] if kind in LIST_KINDS else kind
    items = raw if kind in LIST_KINDS else (raw,)
    if base == "version":
        return frozenset((base, (v.major, v.minor, v.patch, v.pre)) for v in items)
    return frozenset((base, v) for v in items)


def constraint_admits(kind: str, value: AttributeValue, chosen: list[AttributeValue]) -> bool:
    """Whether a device with `value` may join the devices already under a constraint (upstream's set
    semantics, which scalars satisfy as sets of one): matchAttribute needs one value common to all of them,
    distinctAttribute needs every device's values disjoint from every other's."""
    mine = attribute_set(value)
    if kind == "match":
        common = mine
        for other in chosen:
            common = common & attribute_set(other)
        return bool(common)
    return all(not (mine & attribute_set(other)) for other in chosen)
