"""What a variant of the reference implementation is: a named set of overrides of the project's own code
(draconform.mutation.overrides: a named function or method replaced, wrapped or edited, or a named attribute
set), installed by the mutation runner in the processes that run the variant, never present in the code a
normal run executes.

Two kinds. A *known-bad* variant breaks one catalogued rule; the suite must fail it (kill it). A
*conforming* variant makes another choice the KEP or upstream Kubernetes allows (a MAY, a SHOULD, "any
of", a timing within the KEP's bounds); the suite must pass it. Both are tied to the rule they touch, and
a conforming one also names the sentence or upstream behaviour that allows its choice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from draconform.mutation.overrides import Override

KNOWN_BAD: Literal["known-bad"] = "known-bad"
CONFORMING: Literal["conforming"] = "conforming"
Kind = Literal["known-bad", "conforming"]


@dataclass(frozen=True)
class Variant:
    name: str  # unique across both kinds, kebab-case
    rule: str  # the catalogued rule it breaks (known-bad) or exercises a freedom of (conforming)
    what: str  # the behaviour, in a few words
    overrides: tuple[Override, ...]  # the named functions and attributes its defect or choice changes
    kind: Kind = KNOWN_BAD
    allows: str = ""  # conforming only: the KEP section and sentence, or the upstream behaviour, allowing it
