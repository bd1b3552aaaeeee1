"""Suite power as a measured property: variants of the reference implementation (named functions and constants
overridden by their defects), known-bad ones the suite must fail and
conforming ones it must pass, each tied to a rule, run against the relevant features."""
