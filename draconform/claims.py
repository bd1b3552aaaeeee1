"""What a run claims and who it is about: the profiles the system under test claims conformance to,
the feature gates it supports, and the implementation's metadata. They come from `draconform run`'s
flags or from an options file a vendor keeps beside their driver (`schemas/harness/
conformance-options.schema.json`); flags win. A rule outside the claims is skipped before any of its
scenarios runs, with the reason (`Claims.exclusion`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from draconform.catalogue import Rule
from draconform.kube.featuregates import CURRENT_RELEASE, GATE_HISTORY

OPTIONS_KIND = "DRAConformanceOptions"
# DRA itself: every implementation has it, so a list of supported features need not name it.
IMPLIED_GATES = frozenset({"DynamicResourceAllocation"})


class OptionsError(ValueError):
    """An options file or flag is unreadable or invalid; the message names the file and field."""


@dataclass(frozen=True)
class Implementation:
    """Who the report is about, as a Gateway API conformance report names it."""

    organization: str | None = None
    project: str | None = None
    version: str | None = None
    url: str | None = None
    contact: tuple[str, ...] = ()
    kubernetes_version: str = CURRENT_RELEASE
    mode: str = "default"

    @property
    def slug(self) -> str | None:
        """`<org>-<project>`, the submission folder's name; None while either is unknown."""
        if not self.organization or not self.project:
            return None
        return f"{self.organization}-{self.project}"


REFERENCE_IMPLEMENTATION = Implementation(
    organization="draconform",
    project="reference",
    version="0.1.0",
    url="https://draconform.dev",
    contact=("draconform maintainers",),
)


@dataclass(frozen=True)
class Claims:
    """`profiles` / `features` of None claim everything: a run without claims judges every rule."""

    profiles: tuple[str, ...] | None = None
    features: tuple[str, ...] | None = None
    implementation: Implementation = field(default_factory=Implementation)
    command: str | None = None  # how to reproduce the run, as typed

    def claims_profile(self, profile: str) -> bool:
        return self.profiles is None or profile in self.profiles

    def exclusion(self, rule: Rule) -> str | None:
        """Why the run does not judge `rule`, or None when the rule is within the claims."""
        if not self.claims_profile(rule.profile):
            claimed = ", ".join(self.profiles or ()) or "none"
            return f"{rule.id} belongs to profile {rule.profile!r}, which the run does not claim (claimed: {claimed})"
        if self.features is not None:
            missing = [gate for gate in rule.gates if gate not in self.features and gate not in IMPLIED_GATES]
            if missing:
                return f"{rule.id} needs feature {', '.join(missing)}, which the system under test does not support"
        return None

    def scenario_exclusion(self, rules: Iterable[Rule]) -> str | None:
        """A scenario runs when any rule it cites is claimed; otherwise the reasons, joined."""
        reasons = [self.exclusion(rule) for rule in rules]
        if not reasons or any(reason is None for reason in reasons):
            return None
        return "not claimed: " + "; ".join(reason for reason in reasons if reason)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | None) -> Claims:
        if not text:
            return cls()
        data = json.loads(text)
        implementation = data.pop("implementation")
        implementation["contact"] = tuple(implementation["contact"])
        return cls(
            profiles=tuple(data["profiles"]) if data["profiles"] is not None else None,
            features=tuple(data["features"]) if data["features"] is not None else None,
            implementation=Implementation(**implementation),
            command=data["command"],
        )


def options_from(data: Any, path: Path) -> Claims:
    """The claims of an options file's content, already valid against `schemas/harness/conformance-options.
    schema.json` (`draconform run --options` reads it through the validation layer's one reader of input);
    a feature gate the harness does not know raises `OptionsError` naming the file and the field."""
    impl: Mapping[str, Any] = data.get("implementation", {})
    implementation = Implementation(
        organization=impl.get("organization"),
        project=impl.get("project"),
        version=impl.get("version"),
        url=impl.get("url"),
        contact=tuple(impl.get("contact", ())),
        kubernetes_version=str(data.get("kubernetesVersion", CURRENT_RELEASE)),
        mode=data.get("mode", "default"),
    )
    claims = Claims(
        profiles=tuple(data["profiles"]) if "profiles" in data else None,
        features=tuple(data["features"]) if "features" in data else None,
        implementation=implementation,
    )
    check_features(claims.features, str(path))
    return claims


def check_features(features: Iterable[str] | None, where: str) -> None:
    """A supported feature must be a gate the harness knows, so that a typo does not skip rules."""
    unknown = sorted(set(features or ()) - set(GATE_HISTORY))
    if unknown:
        known = ", ".join(GATE_HISTORY)
        raise OptionsError(f"{where}: features: unknown feature gate {', '.join(unknown)}; known: {known}")


def merge(base: Claims, **flags: Any) -> Claims:
    """`base` (an options file, or the defaults) with every flag that was given laid over it."""
    implementation_fields = {f for f in Implementation.__dataclass_fields__}
    impl_flags = {k: v for k, v in flags.items() if k in implementation_fields and v not in (None, ())}
    claim_flags = {k: v for k, v in flags.items() if k not in implementation_fields and v not in (None, ())}
    return replace(base, implementation=replace(base.implementation, **impl_flags), **claim_flags)
