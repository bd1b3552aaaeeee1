"""The words steps name things with, as pieces of their patterns: the two ways to name a claim (`CLAIM`), a span of
cluster time (`DURATION`, read by `to_seconds`) and lists of quoted names (`split_names`)."""

from __future__ import annotations

# The two ways a step names a claim; steps use it inside parsers.re patterns.
CLAIM = r'(?:claim "(?P<claim>[^"]+)"|the claim of pod "(?P<pod>[^"]+)")'


# A span of cluster time in a step, e.g. "10 minutes"; `to_seconds` reads its two groups.
DURATION = r"(?P<amount>\d+(?:\.\d+)?) (?P<unit>seconds?|minutes?|hours?)"
UNIT_SECONDS = {"second": 1, "seconds": 1, "minute": 60, "minutes": 60, "hour": 3600, "hours": 3600}


def to_seconds(amount: str, unit: str) -> float:
    return float(amount) * UNIT_SECONDS[unit]


def split_names(text: str) -> list[str]:
    return [part.strip().strip('"') for part in text.split(",") if part.strip()]
