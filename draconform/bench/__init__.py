"""Benchmark workloads of `draconform bench`, registered in `registry.py`."""
