"""Benchmark workloads registered with `draconform bench` (see draconform/commands/bench.py)."""
