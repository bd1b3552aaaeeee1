"""Suite power as a measured property: variants of the reference implementation (named functions overridden by
their defects, or text patches applied to a copy of the code), known-bad ones the suite must fail and
conforming ones it must pass, each tied to a rule, run against the relevant features."""
