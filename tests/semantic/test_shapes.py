"""Shape manipulation: broadcasting, indexing with None, broadcast_to, expand_dims,
reshape, trans, permute, join, split.

Triton facts (triton-lang.org/main/python-api/):
- triton-semantics.html "Broadcasting": shapes are left-padded with 1s; dims
  are compatible when equal or one of them is 1.
- generated/triton.language.{broadcast_to,expand_dims,reshape,trans,permute,join,split}.html:
  ``trans()`` with no dims swaps the last two axes; ``permute(x, dims)`` result
  dim i is input dim ``dims[i]``; ``join(a, b)`` stacks along a new minor dim of
  size 2 and ``split`` is its inverse. Reshape is row-major (can_reorder=False).
Everything is compared exactly (pure data movement).
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError


@kdsl.kernel
def outer_kernel(a_ptr, b_ptr, out_ptr, M: kl.constexpr, N: kl.constexpr):
    rm = kl.arange(0, M)
    rn = kl.arange(0, N)
    a = kl.load(a_ptr + rm)
    b = kl.load(b_ptr + rn)
    c = a[:, None] * 100 + b[None, :]
    kl.store(out_ptr + rm[:, None] * N + rn[None, :], c)


def test_none_indexing_outer_broadcast(backend: str) -> None:
    a = np.arange(8, dtype=np.int32)
    b = np.arange(16, dtype=np.int32) * 3
    out = np.zeros((8, 16), np.int32)
    outer_kernel[(1,)](a, b, out, M=8, N=16)
    np.testing.assert_array_equal(out, a[:, None] * 100 + b[None, :])


@kdsl.kernel
def left_pad_broadcast_kernel(x_ptr, row_ptr, out_ptr, M: kl.constexpr, N: kl.constexpr):
    rm = kl.arange(0, M)
    rn = kl.arange(0, N)
    offs = rm[:, None] * N + rn[None, :]
    x = kl.load(x_ptr + offs)
    row = kl.load(row_ptr + rn)  # shape (N,) broadcasts against (M, N)
    kl.store(out_ptr + offs, x - row)


def test_rank_padding_broadcast(backend: str) -> None:
    x = np.arange(4 * 16, dtype=np.float32).reshape(4, 16)
    row = np.linspace(-1, 1, 16, dtype=np.float32)
    out = np.zeros_like(x)
    left_pad_broadcast_kernel[(1,)](x, row, out, M=4, N=16)
    np.testing.assert_array_equal(out, x - row[None, :])


@kdsl.kernel
def incompatible_shapes_kernel(out_ptr):
    a = kl.arange(0, 16)
    b = kl.arange(0, 32)
    c = a + b
    kl.store(out_ptr + b, c)


def test_incompatible_broadcast_is_compile_error(backend: str) -> None:
    out = np.zeros(32, np.int32)
    with pytest.raises(CompilationError):
        incompatible_shapes_kernel[(1,)](out)


@kdsl.kernel
def broadcast_expand_kernel(x_ptr, bt_ptr, e0_ptr, e1_ptr, e02_ptr):
    rn = kl.arange(0, 16)
    rm = kl.arange(0, 4)
    x = kl.load(x_ptr + rn)
    bt = kl.broadcast_to(x[None, :], (4, 16))
    kl.store(bt_ptr + rm[:, None] * 16 + rn[None, :], bt)
    e0 = kl.expand_dims(x, 0)
    kl.store(e0_ptr + rn[None, :], e0)
    e1 = kl.expand_dims(x, 1)
    kl.store(e1_ptr + rn[:, None], e1 * 2)
    e02 = kl.expand_dims(x, (0, 2))
    kl.store(e02_ptr + rn[None, :, None], e02 * 3)
    bt2 = kl.broadcast_to(e1, 16, 4)
    kl.store(bt_ptr + 64 + rn[:, None] * 4 + rm[None, :], bt2)


def test_broadcast_to_and_expand_dims(backend: str) -> None:
    x = np.arange(16, dtype=np.int32) + 1
    bt = np.zeros(128, np.int32)
    e0 = np.zeros(16, np.int32)
    e1 = np.zeros(16, np.int32)
    e02 = np.zeros(16, np.int32)
    broadcast_expand_kernel[(1,)](x, bt, e0, e1, e02)
    np.testing.assert_array_equal(bt[:64].reshape(4, 16), np.broadcast_to(x, (4, 16)))
    np.testing.assert_array_equal(bt[64:].reshape(16, 4), np.broadcast_to(x[:, None], (16, 4)))
    np.testing.assert_array_equal(e0, x)
    np.testing.assert_array_equal(e1, x * 2)
    np.testing.assert_array_equal(e02, x * 3)


@kdsl.kernel
def reshape_trans_kernel(x_ptr, r_ptr, t_ptr, tm_ptr):
    offs = kl.arange(0, 32)
    x = kl.load(x_ptr + offs)
    r = kl.reshape(x, (4, 8))
    r2 = x.reshape(4, 8)
    ri = kl.arange(0, 4)[:, None] * 8 + kl.arange(0, 8)[None, :]
    kl.store(r_ptr + ri, r + r2 * 0)
    t = kl.trans(r)
    ti = kl.arange(0, 8)[:, None] * 4 + kl.arange(0, 4)[None, :]
    kl.store(t_ptr + ti, t)
    kl.store(tm_ptr + ti, r.trans() * 10)


def test_reshape_and_trans(backend: str) -> None:
    x = np.arange(32, dtype=np.float32)
    r = np.zeros(32, np.float32)
    t = np.zeros(32, np.float32)
    tm = np.zeros(32, np.float32)
    reshape_trans_kernel[(1,)](x, r, t, tm)
    np.testing.assert_array_equal(r, x)
    np.testing.assert_array_equal(t.reshape(8, 4), x.reshape(4, 8).T)
    np.testing.assert_array_equal(tm.reshape(8, 4), x.reshape(4, 8).T * 10)


@kdsl.kernel
def permute_kernel(x_ptr, p_ptr, q_ptr, A: kl.constexpr, B: kl.constexpr, C: kl.constexpr):
    ia = kl.arange(0, A)[:, None, None]
    ib = kl.arange(0, B)[None, :, None]
    ic = kl.arange(0, C)[None, None, :]
    x = kl.load(x_ptr + ia * (B * C) + ib * C + ic)
    p = kl.permute(x, (2, 0, 1))  # shape (C, A, B)
    jc = kl.arange(0, C)[:, None, None]
    ja = kl.arange(0, A)[None, :, None]
    jb = kl.arange(0, B)[None, None, :]
    kl.store(p_ptr + jc * (A * B) + ja * B + jb, p)
    q = x.permute(1, 2, 0)  # shape (B, C, A)
    kb = kl.arange(0, B)[:, None, None]
    kc = kl.arange(0, C)[None, :, None]
    ka = kl.arange(0, A)[None, None, :]
    kl.store(q_ptr + kb * (C * A) + kc * A + ka, q)


def test_permute_3d(backend: str) -> None:
    a, b, c = 2, 4, 8
    x = np.arange(a * b * c, dtype=np.int32).reshape(a, b, c)
    p = np.zeros(x.size, np.int32)
    q = np.zeros(x.size, np.int32)
    permute_kernel[(1,)](x, p, q, A=a, B=b, C=c)
    np.testing.assert_array_equal(p.reshape(c, a, b), np.transpose(x, (2, 0, 1)))
    np.testing.assert_array_equal(q.reshape(b, c, a), np.transpose(x, (1, 2, 0)))


@kdsl.kernel
def join_split_kernel(a_ptr, b_ptr, j_ptr, s0_ptr, s1_ptr, N: kl.constexpr):
    offs = kl.arange(0, N)
    a = kl.load(a_ptr + offs)
    b = kl.load(b_ptr + offs)
    j = kl.join(a, b)  # (N, 2)
    kl.store(j_ptr + offs[:, None] * 2 + kl.arange(0, 2)[None, :], j)
    # split a (N, 2) tile loaded from memory: columns 0 and 1
    pairs = kl.load(j_ptr + offs[:, None] * 2 + kl.arange(0, 2)[None, :])
    lo, hi = kl.split(pairs * 0 + kl.join(b, a))
    kl.store(s0_ptr + offs, lo)
    kl.store(s1_ptr + offs, hi)


def test_join_and_split(backend: str) -> None:
    n = 16
    a = np.arange(n, dtype=np.float32)
    b = -np.arange(n, dtype=np.float32) - 100
    j = np.zeros(2 * n, np.float32)
    s0 = np.zeros(n, np.float32)
    s1 = np.zeros(n, np.float32)
    join_split_kernel[(1,)](a, b, j, s0, s1, N=n)
    np.testing.assert_array_equal(j.reshape(n, 2), np.stack([a, b], axis=-1))
    np.testing.assert_array_equal(s0, b)
    np.testing.assert_array_equal(s1, a)


@kdsl.kernel
def join_2d_split_kernel(x_ptr, out_ptr):
    r = kl.arange(0, 4)[:, None] * 8 + kl.arange(0, 8)[None, :]
    x = kl.load(x_ptr + r)  # (4, 8)
    j = kl.join(x, x + 1000)  # (4, 8, 2)
    flat = kl.reshape(j, (64,))
    kl.store(out_ptr + kl.arange(0, 64), flat)


def test_join_2d_is_minor_interleave(backend: str) -> None:
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    out = np.zeros(64, np.int32)
    join_2d_split_kernel[(1,)](x, out)
    np.testing.assert_array_equal(out, np.stack([x, x + 1000], axis=-1).reshape(-1))
