"""Figures derived from parsed rows: accept length, the cycle breakdown, trace rules, variant labels, invariants."""
