"""Semantic test suite: kdsl kernels must have exactly Triton's semantics."""
