"""The allocation-config step reads a config whose `requests` reach every request of the claim as one without
`requests` (empty means all): upstream 1.36 lists them, 1.37 leaves them out (docs/decisions.md D-4381-6)."""

from __future__ import annotations

from typing import Any

import pytest

from draconform.steps.allocation import _reaches_all, _without_all_requests

CLAIM = {"spec": {"devices": {"requests": [{"name": "main"}, {"name": "spare"}]}}}
ALLOCATION = {"devices": {"results": [{"request": "main"}, {"request": "spare/big"}]}}


@pytest.mark.parametrize(("requests", "reads_as_all"), [
    (["main", "spare"], True),
    (["main", "spare/big"], True),  # the alternative chosen for spare
    (["spare", "main"], True),
    (["main"], False),  # one of two requests
    (["main", "spare/small"], False),  # an alternative not chosen reaches nothing
    (["spare/big", "spare/small"], False),
])
def test_a_config_reaching_every_request_reads_as_one_without_requests(requests: list[str],
                                                                      reads_as_all: bool) -> None:
    entry: dict[str, Any] = {"source": "FromClaim", "requests": requests, "opaque": {"driver": "d"}}
    read = _without_all_requests(entry, _reaches_all(CLAIM, ALLOCATION))
    assert read == ({"source": "FromClaim", "opaque": {"driver": "d"}} if reads_as_all else entry)


def test_a_claim_without_requests_reaches_nothing() -> None:
    entry = {"source": "FromClass", "requests": []}
    assert _without_all_requests(entry, _reaches_all({"spec": {}}, {"devices": {}})) == entry
