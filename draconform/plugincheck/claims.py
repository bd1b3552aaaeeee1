"""Where the claims `draconform plugin-check` asks a plugin to prepare come from, and what the driver says it
supports.

Claims are allocated ResourceClaims as the cluster's API server stores them, because a real plugin reads the claim
it is asked about from the API server: from files, or derived from the driver's slices (both read by
`draconform.reference.claimfiles`, as the reference plugin reads them too), or with `--kubeconfig` created in the
cluster itself (`cluster.py`); a `ClaimSource` is either."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from draconform.reference.claimfiles import CheckInputError, TestClaim


class NeedsCluster(Exception):
    """A check needs claims that only a cluster can give (created, deleted, re-created by draconform)."""


# The extra claims a check may ask a ClaimSource for.
EXTRA_CLAIMS = ("unallocated", "other-node", "same-device", "other-driver-too", "to-recreate", "fresh")


class ClaimSource(Protocol):
    """Where the claims of a run come from: `claims` are allocated to devices of the driver on the node;
    `extra(kind)` makes one more claim of a kind of EXTRA_CLAIMS, and `recreate(claim)` deletes such a claim and
    creates it again under the same name with another device; both raise NeedsCluster without a cluster."""

    @property
    def claims(self) -> Sequence[TestClaim]: ...

    def extra(self, kind: str) -> TestClaim: ...

    def recreate(self, claim: TestClaim) -> TestClaim: ...

    def with_config(self, driver: str, parameters: Any) -> TestClaim:
        """A claim like the first, carrying opaque configuration `parameters` for `driver`."""
        ...

    def close(self) -> None: ...


@dataclass
class FileClaims:
    """Claims from files (--claims, --slices): nothing beyond them can be made."""

    claims: Sequence[TestClaim]

    def extra(self, kind: str) -> TestClaim:
        raise NeedsCluster(f"the check needs a claim that is {kind.replace('-', ' ')}, which only "
                           "--kubeconfig can create")

    def with_config(self, driver: str, parameters: Any) -> TestClaim:
        raise NeedsCluster("permanentErrors.config needs --kubeconfig; with --claims name the claims the driver must "
                           "refuse in permanentErrors.claims")

    def recreate(self, claim: TestClaim) -> TestClaim:
        raise NeedsCluster("the check deletes a claim and creates it again under the same name, which only "
                           "--kubeconfig can do")

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class Support:
    """What the driver declares: the DRAPlugin versions it serves (None: those its registration advertises),
    claims it must refuse permanently (KEP-5322; or opaque configuration it refuses, for which --kubeconfig
    makes a claim), pairs of claims it must not have prepared at once (KEP-5963 compatibility groups)."""

    versions: tuple[str, ...] | None = None
    permanent_error_claims: tuple[str, ...] = ()
    incompatible_claims: tuple[tuple[str, str], ...] = ()
    source: str = "defaults"
    permanent_error_config: Any = None  # opaque parameters it refuses permanently (--kubeconfig makes such a claim)


def write_claims(claims: Sequence[TestClaim], path: Path) -> None:
    path.write_text(yaml.safe_dump_all([c.obj for c in claims], sort_keys=False), encoding="utf-8")


def load_support(path: Path | None, claims: Sequence[TestClaim]) -> Support:
    """The driver's declaration (a small YAML; see docs/testing-a-driver.md), checked against the claims passed."""
    if path is None:
        return Support()
    from draconform.validation.inputs import InputError, read_input

    try:
        data = read_input(path, "plugin-support", "plugin-check support declaration", empty={})
    except InputError as err:
        raise CheckInputError(str(err)) from err
    names = {c.ref.name for c in claims}
    versions = tuple(data["versions"]) if data.get("versions") is not None else None
    permanent = tuple((data.get("permanentErrors") or {}).get("claims") or ())
    config = (data.get("permanentErrors") or {}).get("config")
    pairs = tuple(tuple(pair) for pair in (data.get("compatibilityGroups") or {}).get("incompatibleClaims") or ())
    for field_name, listed in (("permanentErrors.claims", permanent), ("compatibilityGroups.incompatibleClaims",
                                                                       [n for pair in pairs for n in pair])):
        missing = sorted(set(listed) - names)
        if missing:
            raise CheckInputError(f"{path}: {field_name}: claims {', '.join(missing)} are not among the claims passed")
    return Support(versions, permanent, tuple((a, b) for a, b in pairs), str(path), config)
