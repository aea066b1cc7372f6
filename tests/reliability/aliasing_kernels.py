"""Kernels whose pointer arguments may alias (one numpy array passed twice, overlapping views).

In a file of their own because the frontend reads kernel source. Used by
``tests/reliability/test_aliased_args.py`` (every backend against the
interpreter) and ``tests/vulkan/test_aliasing.py``.
"""

from __future__ import annotations

import kdsl
import kdsl.language as kl


@kdsl.kernel
def repeat_inc_kernel(src, dst, n, ITERS: kl.constexpr, BLOCK: kl.constexpr):
    """``dst = src + 1`` ITERS times: with ``src is dst`` each pass reads the last one's stores."""
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    for _ in kl.static_range(ITERS):
        kl.store(dst + offs, kl.load(src + offs, mask=m) + 1.0, mask=m)


@kdsl.kernel
def carried_ptr_kernel(src, dst, unused, n, steps, BLOCK: kl.constexpr):
    """``dst[i] = 2 * src[i]`` through a pointer carried by a runtime loop; ``unused`` is never touched."""
    offs = kl.arange(0, BLOCK)
    p = dst + offs
    q = src + offs
    for _ in range(steps):
        kl.store(p, kl.load(q, mask=offs < n) * 2.0, mask=offs < n)
        p += BLOCK
        q += BLOCK
        n -= BLOCK


@kdsl.kernel
def where_ptr_kernel(a, b, c, n, flag, BLOCK: kl.constexpr):
    """Stores ``c * 2 + 1`` through ``a`` or ``b`` chosen per element by a runtime flag."""
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    v = kl.load(c + offs, mask=m) * 2.0 + 1.0
    p = kl.where((offs % 2) == flag, a + offs, b + offs)
    kl.store(p, v, mask=m)


@kdsl.kernel
def shift_kernel(src, dst, n, BLOCK: kl.constexpr):
    """``dst = src + 1`` in one program (tile semantics: every load before any store)."""
    offs = kl.arange(0, BLOCK)
    m = offs < n
    kl.store(dst + offs, kl.load(src + offs, mask=m) + 1.0, mask=m)


@kdsl.kernel
def ragged_ptr_kernel(src, dst, unused, n, steps, BLOCK: kl.constexpr):
    """Like ``carried_ptr_kernel`` but each lane's pointer advances by a data-dependent amount,
    so the lowering keeps the carried pointer tile in a private array."""
    offs = kl.arange(0, BLOCK)
    p = dst + offs
    q = src + offs
    for _ in range(steps):
        x = kl.load(q)
        kl.store(p, x * 2.0)
        p = p + kl.where(x > 0, BLOCK, 2 * BLOCK)
        q = q + kl.where(x > 0, BLOCK, 2 * BLOCK)
