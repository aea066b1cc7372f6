"""``ptr-offsets`` against the untransformed kernel, on every present backend.

The kernels walk memory with loop-carried pointer tiles (``p += step``, with
a constant step, a runtime step, and a pointer used after the loop); the
reference is the cleanup-only pipeline, the candidate the same IR after
``ptr-offsets``. Results must be identical (pure data movement and integer
sums), and the pass must have removed the pointer tiles from the loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.ir.parser import parse_module
from kdsl.ir.printer import print_op
from kdsl.transforms import default_pipeline, parse_pipeline
from tests.transforms.test_tile_passes_numeric import _backends, _run


@kdsl.kernel
def walk_rows(x, out, n_blocks, stride, R: kl.constexpr, C: kl.constexpr):
    """Sum ``n_blocks`` column blocks of an (R, C*n_blocks) slab; then copy the block after them."""
    rows = kl.arange(0, R)
    cols = kl.arange(0, C)
    p = x + rows[:, None] * stride + cols[None, :]
    q = x + rows[:, None] * stride + cols[None, :]
    acc = kl.zeros((R, C), kl.int32)
    for _ in range(n_blocks):
        acc += kl.load(p, mask=rows[:, None] < R - 1, other=0)
        p += C
        q += C
    o = out + rows[:, None] * C + cols[None, :]
    kl.store(o, acc)
    kl.store(o + R * C, kl.load(q))


def _raw(args: list[Any], meta: dict[str, Any]) -> str:
    mod = kdsl.compile_to_ir(walk_rows, *args, **meta)
    default_pipeline(optimize=False).run(mod)
    return print_op(mod)


@pytest.mark.parametrize("n_blocks", [0, 2, 3])  # (1 would be specialised to a constant)
def test_ptr_offsets_matches_untransformed(n_blocks: int) -> None:
    r, c = 4, 8
    stride = c * (n_blocks + 1)
    x = np.arange(r * stride, dtype=np.int32)
    out = np.zeros(2 * r * c, np.int32)
    args: list[Any] = [x, out, n_blocks, stride]
    text = _raw(args, {"R": r, "C": c})
    opt = parse_module(text)
    parse_pipeline("ptr-offsets,canonicalize,cse,dce").run(opt)
    loop = print_op(opt).split("scf.for")[1].split("\n")[0]
    assert "ptr<" not in loop and "i64" in loop, loop  # the loop carries offsets, not pointer tiles
    for be in _backends():
        ref = _run(be, parse_module(text), (1,), args)
        got = _run(be, opt, (1,), args)
        np.testing.assert_array_equal(got[1], ref[1], err_msg=be)
    expect = (
        sum(x.reshape(r, stride)[:, k * c : (k + 1) * c] for k in range(n_blocks)) if n_blocks else np.zeros((r, c))
    )
    expect = np.where(np.arange(r)[:, None] < r - 1, expect, 0)
    np.testing.assert_array_equal(got[1][: r * c].reshape(r, c), expect)
    np.testing.assert_array_equal(
        got[1][r * c :].reshape(r, c), x.reshape(r, stride)[:, n_blocks * c : (n_blocks + 1) * c]
    )
