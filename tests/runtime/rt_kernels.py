"""Kernels shared by the runtime tests (a module, so subprocesses can import them)."""

from __future__ import annotations

import kdsl
import kdsl.language as kl

SCALE = kl.constexpr(2)


@kdsl.kernel
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=mask) + kl.load(y_ptr + offs, mask=mask), mask=mask)


@kdsl.kernel
def scale_of(x):
    return x * SCALE


@kdsl.kernel
def scaled_copy(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    kl.store(out_ptr + offs, scale_of(kl.load(x_ptr + offs, mask=mask)), mask=mask)


@kdsl.kernel
def trivial(x_ptr):
    kl.store(x_ptr + kl.arange(0, 16), kl.arange(0, 16).to(kl.float32))


@kdsl.kernel
def scale_bias(x_ptr, bias_ptr, out_ptr, n, HAS_BIAS: kl.constexpr, BLOCK: kl.constexpr):
    """``2x (+ bias)``: with ``HAS_BIAS`` false, ``bias_ptr`` is a pointer the kernel never reads
    (the aliasing tests of every backend pass the output for it)."""
    offs = kl.arange(0, BLOCK)
    m = offs < n
    y = kl.load(x_ptr + offs, mask=m) * 2.0
    if HAS_BIAS:
        y += kl.load(bias_ptr + offs, mask=m)
    kl.store(out_ptr + offs, y, mask=m)
