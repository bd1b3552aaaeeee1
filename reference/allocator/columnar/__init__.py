"""The columnar allocation core on polars: the production path of the reference scheduler's DRA plugin
(KEP-4381 structured parameters, with the same rules as `oracle.py`).

Slices, devices, counter sets, counter consumption and devices in use are typed frames kept up to date
from store watch events (one block of rows per slice or claim, concatenated when something changed).
Pool generation, completeness and validity, gate filters, selector verdicts, what is in use, which nodes
can hold how many candidates, and how much of each counter is left are joins, filters and group-bys over
those frames, computed once per scheduling attempt for every node at once. What is left per node is a
short, ordered candidate list per request; only the final choice among them is a small exact search."""

from draconform.reference.allocator.columnar.allocator import NODES_ONE_BY_ONE, ColumnarAllocator

__all__ = ["NODES_ONE_BY_ONE", "ColumnarAllocator"]
