"""The catalogue of known-bad variants of the reference implementation, one place listing them all: each a
`Variant` (draconform.mutation.variant: overrides of named functions and constants) that turns the correct
code back into one bug, tied to the catalogued rule it breaks. They live per KEP in
draconform.mutation.known_bad (the kubelet plugin's in known_bad/plugin.py); the code a normal run
executes carries none of them. Every MUST / MUST NOT rule of KEP-5007, KEP-5963 and the structured allocator
(KEP-4381) has at least one; `tests/harness/test_mutation.py` keeps it so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from draconform.mutation.known_bad import (
    gates,
    gates_off_api,
    kep3063_classic,
    kep4381,
    kep5007,
    kep5963,
    other,
    plugin,
    shapes,
    statements,
)
from draconform.mutation.variant import Variant

if TYPE_CHECKING:
    from draconform.catalogue import Catalogue

# The catalogues whose MUST rules must each have a variant.
KEPS_WITH_VARIANTS = ("KEP-5007", "KEP-5963", "KEP-4381")

VARIANTS: tuple[Variant, ...] = (
    *kep5007.VARIANTS, *kep5963.VARIANTS, *kep4381.VARIANTS, *kep3063_classic.VARIANTS, *other.VARIANTS,
    *statements.VARIANTS, *plugin.VARIANTS, *gates.VARIANTS,
    *shapes.VARIANTS, *gates_off_api.VARIANTS,
)


def variant_named(name: str) -> Variant:
    """The variant of either kind called `name` (a child process learns its variant by name)."""
    from draconform.mutation.conforming import CONFORMING

    for variant in (*VARIANTS, *CONFORMING):
        if variant.name == name:
            return variant
    raise KeyError(f"no variant named {name!r}")


def must_rules_without_variant(catalogue: Catalogue, variants: tuple[Variant, ...] = VARIANTS) -> list[str]:
    """The MUST / MUST NOT rules of KEPS_WITH_VARIANTS that no variant breaks: the mutation check's claim
    that every one has a variant holds when this is empty (`draconform mutants` reports it)."""
    broken = {variant.rule for variant in variants}
    return sorted(rule.id for rule in catalogue.rules.values()
                  if rule.kep in KEPS_WITH_VARIANTS and rule.level in ("MUST", "MUST NOT") and rule.id not in broken)


def must_rules(catalogue: Catalogue) -> list[str]:
    """The MUST / MUST NOT rules of KEPS_WITH_VARIANTS."""
    return sorted(rule.id for rule in catalogue.rules.values()
                  if rule.kep in KEPS_WITH_VARIANTS and rule.level in ("MUST", "MUST NOT"))
