"""Reductions, scans and ``dot``.

``axis=None`` reduces over all elements. ``sum``/``cumsum`` of types narrower
than 32 bits accumulate in (u)int32 or float32; ``max``/``min`` widen types
narrower than 32 bits (floats to f32, ints to i32), as Triton does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdsl.language.core import NO_SEMANTIC, builtin, tensor, unwrap_constexpr

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic

_u = unwrap_constexpr


@builtin
def sum(
    input: Any, axis: Any = None, keep_dims: Any = False, dtype: Any = None, _semantic: Semantic = NO_SEMANTIC
) -> tensor:
    """Sum along ``axis`` (all elements if None), accumulating in ``dtype`` if given."""
    return _semantic.reduce_sum(input, _u(axis), bool(_u(keep_dims)), _u(dtype))


@builtin
def max(
    input: Any,
    axis: Any = None,
    return_indices: Any = False,
    return_indices_tie_break_left: Any = True,
    keep_dims: Any = False,
    _semantic: Semantic = NO_SEMANTIC,
) -> Any:
    """Maximum along ``axis``; with ``return_indices`` also the (first) index of it.

    Without indices NaNs are ignored (``fmax``: NaN only if every element is
    NaN), as Triton's ``PropagateNan.NONE``; with ``return_indices`` the pair is
    ``argmax``'s, so a NaN wins (value NaN, index of the first NaN).
    """
    return _semantic.reduce_minmax(input, "max", _u(axis), bool(_u(return_indices)), bool(_u(keep_dims)))


@builtin
def min(
    input: Any,
    axis: Any = None,
    return_indices: Any = False,
    return_indices_tie_break_left: Any = True,
    keep_dims: Any = False,
    _semantic: Semantic = NO_SEMANTIC,
) -> Any:
    """Minimum along ``axis``; with ``return_indices`` also the (first) index of it.

    NaN handling as :func:`max` (ignored without indices; with indices the
    first NaN wins, as in ``argmin``).
    """
    return _semantic.reduce_minmax(input, "min", _u(axis), bool(_u(return_indices)), bool(_u(keep_dims)))


@builtin
def argmax(
    input: Any, axis: Any, tie_break_left: Any = True, keep_dims: Any = False, _semantic: Semantic = NO_SEMANTIC
) -> tensor:
    """Index (int32) of the maximum along ``axis``; ties give the lowest index.

    kdsl's definition, identical on every backend and for any reduction order:
    a NaN counts as larger than every number, so a slice holding NaN gives the
    index of its *first* NaN (numpy's and torch's ``argmax``); equal values,
    ``-0.0``/``+0.0`` and several NaNs go to the lowest index. ``tie_break_left=False``
    (Triton: any index among ties, for speed) is accepted and also gives the
    lowest. Triton's own combine leaves NaN order-dependent.
    """
    return _semantic.reduce_arg(input, "max", _u(axis), bool(_u(keep_dims)))


@builtin
def argmin(
    input: Any, axis: Any, tie_break_left: Any = True, keep_dims: Any = False, _semantic: Semantic = NO_SEMANTIC
) -> tensor:
    """Index (int32) of the minimum along ``axis``; ties give the lowest index.

    As :func:`argmax` with NaN counting as *smaller* than every number: a
    slice holding NaN gives the index of its first NaN (numpy's and torch's
    ``argmin``).
    """
    return _semantic.reduce_arg(input, "min", _u(axis), bool(_u(keep_dims)))


@builtin
def xor_sum(input: Any, axis: Any = None, keep_dims: Any = False, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Bitwise xor of the integer elements along ``axis``."""
    return _semantic.reduce_xor(input, _u(axis), bool(_u(keep_dims)))


@builtin
def reduce_or(input: Any, axis: Any, keep_dims: Any = False, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Bitwise or of the integer elements along ``axis`` (all elements if None).

    ``axis`` has no default, as in Triton. The result keeps the input's type
    (``int1`` gives "any element true")."""
    return _semantic.reduce_or(input, _u(axis), bool(_u(keep_dims)))


@builtin
def reduce(input: Any, axis: Any, combine_fn: Any, keep_dims: Any = False, _semantic: Semantic = NO_SEMANTIC) -> Any:
    """Reduce ``input`` (a tensor or tuple of same-shaped tensors) along ``axis`` with
    the ``@kdsl.kernel`` function ``combine_fn(acc..., new...) -> acc...``."""
    return _semantic.reduce(input, _u(axis), _u(combine_fn), bool(_u(keep_dims)))


@builtin
def cumsum(
    input: Any, axis: Any = 0, reverse: Any = False, dtype: Any = None, _semantic: Semantic = NO_SEMANTIC
) -> tensor:
    """Inclusive prefix sum along ``axis``."""
    return _semantic.scan_builtin(input, "sum", _u(axis), bool(_u(reverse)), _u(dtype))


@builtin
def cumprod(input: Any, axis: Any = 0, reverse: Any = False, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """Inclusive prefix product along ``axis``."""
    return _semantic.scan_builtin(input, "prod", _u(axis), bool(_u(reverse)))


@builtin
def associative_scan(
    input: Any, axis: Any, combine_fn: Any, reverse: Any = False, _semantic: Semantic = NO_SEMANTIC
) -> Any:
    """Inclusive scan of ``input`` (tensor or tuple) along ``axis`` with the
    associative ``@kdsl.kernel`` function ``combine_fn``."""
    return _semantic.associative_scan(input, _u(axis), _u(combine_fn), bool(_u(reverse)))


@builtin
def dot(
    input: Any,
    other: Any,
    acc: Any = None,
    input_precision: Any = None,
    allow_tf32: Any = None,
    max_num_imprecise_acc: Any = None,
    out_dtype: Any = None,
    _semantic: Semantic = NO_SEMANTIC,
) -> tensor:
    """Matrix product of 2-D (M,K)x(K,N) or batched 3-D tiles, plus ``acc``.

    Inputs share a dtype: f16/bf16/f32 accumulate in f32 (f16 may use
    ``out_dtype=kl.float16``), f64 in f64, int8 in int32. Triton requires
    every dimension >= 16; kdsl accepts any size (power-of-two tiles are
    what ``arange`` produces, so that is the usual case).
    """
    from kdsl.ir.types import f32

    od = f32 if _u(out_dtype) is None else out_dtype
    return _semantic.dot(input, other, acc, input_precision, allow_tf32, max_num_imprecise_acc, od)


@builtin
def dot_scaled(
    lhs: Any,
    lhs_scale: Any,
    lhs_format: Any,
    rhs: Any,
    rhs_scale: Any,
    rhs_format: Any,
    acc: Any = None,
    fast_math: Any = False,
    lhs_k_pack: Any = True,
    rhs_k_pack: Any = True,
    out_dtype: Any = None,
    _semantic: Semantic = NO_SEMANTIC,
) -> tensor:
    """Matrix product of two tiles in OCP microscaling formats, in f32 (+ ``acc``).

    ``*_format``: ``"e2m1"`` (fp4, two per uint8, first element in the low nibble, packed along
    K unless ``*_k_pack=False``), ``"e4m3"``/``"e5m2"`` (fp8 as uint8), ``"bf16"``, ``"fp16"``.
    ``lhs_scale`` (M, K/G) and ``rhs_scale`` (N, K/G), or ``None``: one scale per G elements of
    K, G = 16 or 32 as the scales' shapes say (Triton's rule: ``K // scale.shape[-1]``, the same
    for both). uint8 scales are e8m0 exponents (``2**(s-127)``, the MX formats); float scales are
    their values (nvfp4: ``float8e4nv``, G = 16). Decoding and scaling are exact; the product is
    ``kl.dot``'s.
    """
    from kdsl.ir.types import f32

    od = f32 if _u(out_dtype) is None else out_dtype
    return _semantic.dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc, fast_math,
                                lhs_k_pack, rhs_k_pack, od)
