"""llama.cpp: llama-server logs, completion ``timings``, ``llama-speculative`` summaries, SPEED-Bench tables.

docs/llamacpp.md shows each shape, where it comes from and what lands where.
"""
