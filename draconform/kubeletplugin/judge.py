"""Judgements of a kubelet plugin's answers, shared by `draconform plugin-check`'s checks and the Then steps of
the kubelet-plugin features, so a DRA-PLUGIN rule both ask is judged by this one piece of code. Each takes what
was asked and what came back and returns what is wrong (empty when the rule holds); the caller words the
failure for its report."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from draconform.kubeletplugin.types import ClaimRef


def missing_entries(asked: Sequence[ClaimRef], answered: Collection[str]) -> list[ClaimRef]:
    """DRA-PLUGIN/ANSWER-EVERY-CLAIM: the claims asked about that have no entry under their UID."""
    return [ref for ref in asked if ref.uid not in answered]


def unasked_entries(asked: Sequence[ClaimRef], answered: Collection[str]) -> list[str]:
    """DRA-PLUGIN/ANSWER-ONLY-ASKED: the UIDs the answer has entries under that the request did not carry."""
    return sorted(set(answered) - {ref.uid for ref in asked})
