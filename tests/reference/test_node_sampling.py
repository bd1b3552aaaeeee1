"""kube-scheduler stops filtering a large cluster after enough feasible nodes (percentageOfNodesToScore)."""

from __future__ import annotations

import pytest

from draconform.reference.scheduler.scheduler import feasible_nodes_to_find


@pytest.mark.parametrize(
    ("nodes", "wanted"),
    [(0, 0), (3, 3), (100, 100), (101, 100), (500, 230), (1000, 420), (5000, 500), (20000, 1000)],
)
def test_adaptive_share_of_nodes_to_find(nodes: int, wanted: int) -> None:
    assert feasible_nodes_to_find(nodes) == wanted
