"""Deterministic, seeded sample data shaped like a CarMax prime auto-loan pool and its tapes.

There is no public loan-level tape for CarMax Auto Owner Trust 2015-4, so the project ships this
generator. Money is integer cents throughout (numpy int64), so every figure is exact.
"""
