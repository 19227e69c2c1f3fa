"""Benchmark outputs: bench_serving, bench_one_batch, team scripts' tables and JSON, sweeps."""
