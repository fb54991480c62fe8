"""Benchmark scripts: run one with ``python -m benchmarks.<name>``; each prints its figures."""
