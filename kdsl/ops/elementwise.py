"""Elementwise kernels: vector add (Triton tutorial 01) and the activation epilogues.

The activations are small ``@kdsl.kernel`` functions called from other kernels
(the frontend inlines them), so a matmul or a norm can apply one to its tile
before storing it: that is what "fused epilogue" means. :func:`activate`
chooses one by a compile-time string, so an unused branch costs nothing.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.ops._common import Array, empty, launch

ACTIVATIONS = ("", "relu", "leaky_relu", "gelu", "gelu_tanh", "silu")

# --- device functions (inlined into the kernels that call them) ---------------


@kdsl.kernel
def gelu_tanh(x):  # type: ignore[no-untyped-def]
    # GPT-2's GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + kl.tanh(inner))


@kdsl.kernel
def gelu_erf(x):  # type: ignore[no-untyped-def]
    # The exact GELU: x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2)))
    return 0.5 * x * (1.0 + kl.erf(x * 0.7071067811865476))


@kdsl.kernel
def silu(x):  # type: ignore[no-untyped-def]
    return x * kl.sigmoid(x)


@kdsl.kernel
def leaky_relu(x):  # type: ignore[no-untyped-def]
    return kl.where(x >= 0, x, 0.01 * x)


@kdsl.kernel
def activate(x, ACTIVATION: kl.constexpr):  # type: ignore[no-untyped-def]
    """``x`` through the activation named by ``ACTIVATION`` ("" = identity)."""
    if ACTIVATION == "relu":
        x = kl.maximum(x, 0.0)
    if ACTIVATION == "leaky_relu":
        x = leaky_relu(x)
    if ACTIVATION == "gelu":
        x = gelu_erf(x)
    if ACTIVATION == "gelu_tanh":
        x = gelu_tanh(x)
    if ACTIVATION == "silu":
        x = silu(x)
    return x


# --- kernels --------------------------------------------------------------------


@kdsl.kernel
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: kl.constexpr):  # type: ignore[no-untyped-def]
    pid = kl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements  # the last block may run past the end
    x = kl.load(x_ptr + offsets, mask=mask)
    y = kl.load(y_ptr + offsets, mask=mask)
    kl.store(output_ptr + offsets, x + y, mask=mask)


@kdsl.kernel
def activation_kernel(x_ptr, out_ptr, n_elements, ACTIVATION: kl.constexpr, BLOCK_SIZE: kl.constexpr):  # type: ignore[no-untyped-def]
    offsets = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask, other=0.0).to(kl.float32)
    y = activate(x, ACTIVATION)
    kl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


# --- wrappers -------------------------------------------------------------------


def add(x: Array, y: Array, block: int = 1024) -> Array:
    """``x + y`` elementwise (same shape and dtype)."""
    if x.shape != y.shape:
        raise ValueError(f"add: shapes {x.shape} and {y.shape} differ")
    out = empty(tuple(x.shape), x.dtype, x)
    n = out.size
    launch(add_kernel, (kdsl.cdiv(n, block),), x, y, out, n, BLOCK_SIZE=block)
    return out


def activation(x: Array, kind: str, block: int = 1024) -> Array:
    """An activation from :data:`ACTIVATIONS` applied elementwise (computed in fp32)."""
    if kind not in ACTIVATIONS:
        raise ValueError(f"unknown activation {kind!r}; choose from {ACTIVATIONS}")
    out = empty(tuple(x.shape), x.dtype, x)
    n = out.size
    launch(activation_kernel, (kdsl.cdiv(n, block),), x, out, n, ACTIVATION=kind, BLOCK_SIZE=block)
    return out


def gelu(x: Array, approximate: str = "none") -> Array:
    """GELU, exact (erf) or ``approximate="tanh"`` (GPT-2's)."""
    return activation(x, "gelu_tanh" if approximate == "tanh" else "gelu")


# --- numpy references -----------------------------------------------------------


def _erf(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return np.vectorize(math.erf, otypes=[np.float64])(x)  # type: ignore[no-any-return]


def activation_ref(x: np.ndarray[Any, Any], kind: str) -> np.ndarray[Any, Any]:
    """The activation in float64 (callers cast back)."""
    x = np.asarray(x, dtype=np.float64)
    if kind == "relu":
        return np.asarray(np.maximum(x, 0.0))
    if kind == "leaky_relu":
        return np.asarray(np.where(x >= 0, x, 0.01 * x))
    if kind == "gelu":
        return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))
    if kind == "gelu_tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    if kind == "silu":
        return np.asarray(x / (1.0 + np.exp(-x)))
    return x
