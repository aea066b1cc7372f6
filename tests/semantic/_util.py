"""Helpers shared by the semantic tests: exact integer references and source lines.

The references here are deliberately independent of kdsl: they compute with
Python's unbounded integers and then wrap to the element type, which is how
two's complement C arithmetic (Triton's integer semantics) behaves.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

INT_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
FLOAT_DTYPES = (np.float16, np.float32, np.float64)


def int_bounds(dtype: type) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def wrap(value: int, dtype: type) -> int:
    """Reduce a Python int to ``dtype``'s two's complement range."""
    bits = np.dtype(dtype).itemsize * 8
    value &= (1 << bits) - 1
    if np.issubdtype(dtype, np.signedinteger) and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def wrap_array(values: Iterable[int], dtype: type) -> np.ndarray:
    return np.array([wrap(int(v), dtype) for v in values], dtype=dtype)


def c_div(a: int, b: int) -> int:
    """C integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def c_mod(a: int, b: int) -> int:
    """C remainder: ``a - b * c_div(a, b)`` (sign of the dividend)."""
    return a - b * c_div(a, b)


def line_of(path: str, marker: str) -> int:
    """1-based line number of the unique line of ``path`` whose comment is ``# marker``."""
    lines = Path(path).read_text().splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if f"# {marker}" in line]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times"
    return hits[0]


def source_line(path: str, line: int) -> str:
    return Path(path).read_text().splitlines()[line - 1].strip()


def extremes(dtype: type) -> list[int]:
    lo, hi = int_bounds(dtype)
    vals = {lo, lo + 1, hi, hi - 1, 0, 1, 2, 3, 7}
    if lo < 0:
        vals |= {-1, -2, -3, -7}
    return sorted(vals)
