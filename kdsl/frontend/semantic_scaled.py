"""``kl.dot_scaled``: matrix products of OCP microscaling (MX) operands.

Why a composition and not an op: no kdsl target has MX hardware, and Triton itself emulates
``dot_scaled`` on such targets by upcasting the operands first. Here every element is decoded
exactly to f32 with integer and bit operations (e2m1 / e4m3 / e5m2 have at most 3 mantissa bits
and exponents well inside f32's), multiplied by its group's e8m0 scale (a power of two, so exact
unless the product leaves f32's range), and the f32 tiles go through the ordinary ``kl.dot`` --
so the register-blocked micro-kernels and every backend apply unchanged.

Formats (OCP MX v1.0): ``e2m1`` (fp4, two per byte, first element in the low nibble, packed
along K unless ``*_k_pack=False``), ``e4m3`` (fp8 E4M3FN: no infinities, ``S.1111.111`` is NaN),
``e5m2`` (fp8, IEEE-like), ``bf16``/``fp16`` (ordinary tiles). fp16 operands are used exactly
(Triton's emulation rounds them to bf16 first; hardware MX units do not).

Scales (``lhs_scale``: ``[M, K // G]``; ``rhs_scale``: ``[N, K // G]``; ``None``: unscaled), as
Triton's ``DotScaledOp`` verifier rules: the group size ``G`` comes from the shapes alone, ``G =
K // scale.shape[-1]`` for each scale with more than one element, and must be 16 or 32, the same
for both operands (32 when neither decides). The scale's dtype says how to read it: an 8-bit
integer tile is e8m0 (``2**(s - 127)``, 255 is NaN: MX formats), a float tile is its value
(``float8e4nv`` for NVIDIA's nvfp4, one e4m3 scale per 16 fp4 elements; decoded exactly, a NaN
scale gives NaN). Triton's emulation converts a float scale to bf16 (fp16 when an operand is
fp16), which is exact for every fp8, bf16 or f16 scale; here it is multiplied in f32.
"""

from __future__ import annotations

import math
from typing import Any

from kdsl.frontend.semantic_base import unwrap
from kdsl.frontend.semantic_fp8 import Fp8Semantic
from kdsl.ir.types import FLOAT_FORMATS, FloatFormat, ScalarType, bf16, f32, u8
from kdsl.language.core import tensor

GROUPS = (16, 32)  # elements of K sharing one scale: nvfp4 uses 16, the MX formats 32
# the MX element formats (fp4 E2M1 has no infinities or NaN)
MINIFLOATS = {"e2m1": FloatFormat(2, 1, 1, "finite"), "e4m3": FLOAT_FORMATS["fp8e4nv"], "e5m2": FLOAT_FORMATS["fp8e5"]}
FORMATS = (*MINIFLOATS, "bf16", "fp16")


class ScaledDotSemantic(Fp8Semantic):
    """``dot_scaled`` on top of ``dot``."""

    def dot_scaled(self, lhs: Any, lhs_scale: Any, lhs_format: Any, rhs: Any, rhs_scale: Any, rhs_format: Any,
                   acc: Any = None, fast_math: Any = False, lhs_k_pack: Any = True, rhs_k_pack: Any = True,
                   out_dtype: Any = f32) -> tensor:  # fmt: skip
        """``(lhs * lhs_scale) @ (rhs * rhs_scale) + acc`` in f32 (see the module docstring)."""
        if self.const_dtype(out_dtype, "out_dtype") != f32:
            raise self.error("kl.dot_scaled: out_dtype must be float32")
        a = self._mx_operand(lhs, lhs_format, bool(unwrap(lhs_k_pack)), "lhs", k_axis=1)
        b = self._mx_operand(rhs, rhs_format, bool(unwrap(rhs_k_pack)), "rhs", k_axis=0)
        if len(a.shape) != 2 or len(b.shape) != 2 or a.shape[1] != b.shape[0]:
            raise self.error(f"kl.dot_scaled: operands decode to shapes {a.shape} and {b.shape}, which do not "
                             "form a matrix product (M, K) x (K, N)")  # fmt: skip
        group = self._mx_group(a.shape[1], [("lhs_scale", lhs_scale), ("rhs_scale", rhs_scale)])
        a = self._mx_scale(a, lhs_scale, "lhs_scale", k_axis=1, group=group)
        b = self._mx_scale(b, rhs_scale, "rhs_scale", k_axis=0, group=group)
        return self.dot(a, b, acc, input_precision="ieee", out_dtype=f32)

    # --- operands ---------------------------------------------------------------------
    def _mx_operand(self, x: Any, fmt: Any, k_pack: bool, what: str, k_axis: int) -> tensor:
        """The f32 values of an MX operand, unpacking fp4 pairs along K (or along the other axis)."""
        name = unwrap(fmt)
        if name not in FORMATS:
            raise self.error(f"kl.dot_scaled: unknown {what}_format {name!r}; expected one of {', '.join(FORMATS)}")
        t = self.to_tensor(x)
        if len(t.shape) != 2:
            raise self.error(f"kl.dot_scaled: {what} must be a 2-D tile, got shape {t.shape}")
        if name in ("bf16", "fp16"):
            want = bf16 if name == "bf16" else ScalarType("f16")
            if t.dtype != want:
                raise self.error(f"kl.dot_scaled: {what}_format {name!r} needs a {want} tile, got {t.dtype}")
            return self.cast(t, f32)
        bits = self._bytes(t, f"kl.dot_scaled: {what}_format {name!r} needs its bytes as a uint8 tile")
        if name != "e2m1":
            return self._decode(bits, MINIFLOATS[name])
        low = self._decode(self.binary("and_", bits, 15), MINIFLOATS[name])
        high = self._decode(self.binary("rshift", bits, 4), MINIFLOATS[name])
        axis = k_axis if k_pack else 1 - k_axis
        if axis == 1:
            return self.interleave(low, high)
        return self.trans(self.interleave(self.trans(low), self.trans(high)))

    def _bytes(self, t: tensor, message: str) -> tensor:
        """An 8-bit integer tile (int8 or uint8 holding raw bytes) as u32 values 0..255."""
        if isinstance(t.dtype, ScalarType) and t.dtype.is_fp8():  # Triton also takes fp8 tiles for e4m3/e5m2
            t = self.bitcast(t, u8)
        if not (isinstance(t.dtype, ScalarType) and t.dtype.is_integer and t.dtype.bitwidth == 8):
            raise self.error(f"{message}, got {t.dtype}")
        return self._byte_bits(t)

    # --- scales ---------------------------------------------------------------------
    def _mx_group(self, k: int, scales: list[tuple[str, Any]]) -> int:
        """The group size the scales' shapes imply (Triton's ``deduceScaleFactor``)."""
        found: dict[str, int] = {}
        for what, scale in scales:
            if unwrap(scale) is None:
                continue
            shape = self.to_tensor(scale).shape
            if len(shape) != 2:
                raise self.error(f"kl.dot_scaled: {what} must be a 2-D tile, got shape {shape}")
            if math.prod(shape) == 1:  # a single scale decides nothing
                continue
            group = k // shape[1] if shape[1] else 0
            if group not in GROUPS:
                raise self.error(f"kl.dot_scaled: {what} of shape {shape} gives K // {shape[1]} = {group} elements "
                                 f"per scale (K = {k}); the group size must be 16 or 32")  # fmt: skip
            found[what] = group
        if len(set(found.values())) > 1:
            raise self.error("kl.dot_scaled: both scales must use the same group size, got "
                             + " and ".join(f"{g} ({w})" for w, g in found.items()))  # fmt: skip
        return next(iter(found.values()), 32)

    def _mx_scale(self, x: tensor, scale: Any, what: str, k_axis: int, group: int) -> tensor:
        """``x`` times its scales, one per ``group`` elements along K."""
        if unwrap(scale) is None:
            return x
        s = self.to_tensor(scale)
        k = x.shape[k_axis]
        other = x.shape[1 - k_axis]
        if k % group or s.shape != (other, k // group):
            raise self.error(f"kl.dot_scaled: {what} must have shape {(other, k // group)} for an operand with "
                             f"K = {k} (one scale per {group} elements of K), got {s.shape}")  # fmt: skip
        factor = self._scale_values(s, what)
        groups = k // group
        if k_axis == 1:  # x (M, K), scales (M, K/G)
            x3 = self.reshape(x, (other, groups, group))
            scaled = self.binary("mul", x3, self.expand_dims(factor, 2))
            return self.reshape(scaled, (other, k))
        x3 = self.reshape(x, (groups, group, other))  # x (K, N), scales (N, K/G)
        scaled = self.binary("mul", x3, self.expand_dims(self.trans(factor), 1))
        return self.reshape(scaled, (k, other))

    def _scale_values(self, s: tensor, what: str) -> tensor:
        """The f32 factors of a scale tile: e8m0 bytes, or a float tile's exact values."""
        if isinstance(s.dtype, ScalarType) and s.dtype.is_float:
            return self.cast(s, f32)
        e = self._bytes(s, f"kl.dot_scaled: {what} must hold e8m0 scales as uint8, or float scales "
                           "(float8e4nv for nvfp4)")  # fmt: skip
        # 2**(e - 127): the exponent field of an f32, except e = 0 (2**-127, subnormal) and 255 (NaN)
        pow2 = self.bitcast(self.binary("lshift", e, 23), f32)
        pow2 = self.where(self.compare("eq", e, 0), 2.0**-127, pow2)
        return self.where(self.compare("eq", e, 255), float("nan"), pow2)


__all__ = ["FORMATS", "ScaledDotSemantic"]
