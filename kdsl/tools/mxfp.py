"""Host-side microscaling data: ``MXFP4Tensor`` (fp4 e2m1 codes) and ``MXScaleTensor`` (e8m0 scales).

Mirrors ``triton.tools.mxfp``, which Triton's block-scaled matmul tutorial (10) uses to make
``kl.dot_scaled`` operands and their float32 references: random e2m1 codes, their values,
packing two codes per byte (first element in the low nibble, as ``dot_scaled`` reads them), and
e8m0 scales from float32 values. Both classes hold torch tensors of uint8 codes in ``.data``.

Why torch: the tutorial's host code is torch code, and Triton's classes take and return torch
tensors. torch stays optional for kdsl: it is imported when a class is used, and a missing torch
is a ``RuntimeError`` saying so.

Conversions follow the OCP MX v1.0 definitions. e2m1 (bias 1, no infinities or NaN): codes
``S EE M``, values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives. From float32: round to
nearest, ties to the even code (Triton adds a small bias to the distance instead, which can
differ within 1e-6 of a midpoint); magnitudes beyond 6, infinities and NaN saturate to +-6 with
the value's sign bit. e8m0: ``2**(e - 127)``, 255 is NaN; from float32: ``floor(log2(x)) + 127``
taken exactly from the binary exponent (Triton rounds ``log2`` in float32 first), clamped to
0..254; values <= 0, infinities and NaN become 255.
"""

from __future__ import annotations

import itertools
import math
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

# e2m1 magnitudes by 3-bit code (exponent, mantissa), and the midpoints between neighbours
E2M1_MAGNITUDES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
_MIDPOINTS = tuple((lo + hi) / 2 for lo, hi in itertools.pairwise(E2M1_MAGNITUDES))
E8M0_BIAS = 127
E8M0_NAN = 255


def _require_torch() -> None:
    """Fail clearly when torch is missing (it is optional for kdsl); the classes' constructors
    call this, so their methods import torch plainly."""
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        raise RuntimeError("kdsl.tools.mxfp works on torch tensors; install torch (pip install torch)") from exc


def _shape(size: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in size) if isinstance(size, tuple | list) else (int(size),)


def _need_float32(dtype: Any, what: str) -> None:
    import torch

    if dtype != torch.float32:
        raise ValueError(f"{what}.to: only torch.float32 is supported, got {dtype}")


class _Codes(ABC):
    """What both classes share: ``data`` (a torch tensor of uint8 codes), ``size`` and ``device``;
    built from float32 values (``_from_float``) or empty for ``random`` to fill."""

    data: torch.Tensor

    def __init__(self, data: torch.Tensor | None = None, size: Any = None, device: Any = None) -> None:
        _require_torch()
        import torch

        name = type(self).__name__
        self.device = device
        if data is not None:
            if not isinstance(data, torch.Tensor):
                raise TypeError(f"{name}: data must be a torch tensor, got {type(data).__name__}")
            self.device = data.device
            self.data = self._from_float(data)
            self.size = tuple(data.shape)
        elif size is not None:
            self.size = _shape(size)
        else:
            raise ValueError(f"{name}: give either data or size")

    @abstractmethod
    def _from_float(self, values: torch.Tensor) -> torch.Tensor:
        """The codes of float32 ``values`` (each subclass's encoding)."""


class MXFP4Tensor(_Codes):
    """fp4 e2m1 values as one uint8 code per element (``.data``), like Triton's ``MXFP4Tensor``.

    ``MXFP4Tensor(data)`` rounds a float32 torch tensor to e2m1; ``MXFP4Tensor(size=..., device=...)``
    makes an empty one for :meth:`random` to fill.
    """

    def random(self) -> MXFP4Tensor:
        """Fill ``.data`` with uniformly random codes; returns self. The sign, exponent and mantissa
        fields are drawn in that order, as Triton's class draws them, so a seeded torch generator
        gives the same tensor as Triton's ``random()``."""
        import torch

        sign, exponent, mantissa = (torch.randint(0, n, self.size, dtype=torch.uint8, device=self.device)
                                    for n in (2, 4, 2))  # fmt: skip
        self.data = sign << 3 | exponent << 1 | mantissa
        return self

    def to(self, dtype: Any) -> torch.Tensor:
        """The values as a float32 tensor (-0.0 for the code ``1000``)."""
        import torch

        _need_float32(dtype, "MXFP4Tensor")
        table = torch.tensor(E2M1_MAGNITUDES + tuple(-v for v in E2M1_MAGNITUDES), dtype=torch.float32)
        return table.to(self.data.device)[self.data.long()]

    def _from_float(self, values: torch.Tensor) -> torch.Tensor:
        """e2m1 codes of float32 ``values``: nearest magnitude, ties to the even code, saturating."""
        import torch

        sign = torch.signbit(values).to(torch.uint8)
        magnitude = values.abs().to(torch.float32)
        magnitude = torch.where(torch.isfinite(magnitude), magnitude, E2M1_MAGNITUDES[-1])
        mids = torch.tensor(_MIDPOINTS, dtype=torch.float32, device=magnitude.device)
        below = (magnitude[..., None] > mids).sum(-1)  # code when rounding a midpoint down
        at_or_below = (magnitude[..., None] >= mids).sum(-1)  # ... and up
        tie_to_even = (below != at_or_below) & (below % 2 == 1)
        code = torch.where(tie_to_even, at_or_below, below).to(torch.uint8)
        return sign << 3 | code

    def to_packed_tensor(self, dim: int) -> torch.Tensor:
        """Two codes per uint8 along ``dim`` (element ``2i`` in the low nibble); an odd length is
        padded with a zero code."""
        import torch

        data = self.data
        if not 0 <= dim < data.ndim:
            raise ValueError(f"MXFP4Tensor.to_packed_tensor: dim {dim} is outside 0..{data.ndim - 1}")
        if data.shape[dim] % 2:
            pad = torch.zeros_like(data.narrow(dim, 0, 1))
            data = torch.cat([data, pad], dim)
        pairs = data.reshape(*data.shape[:dim], data.shape[dim] // 2, 2, *data.shape[dim + 1 :])
        return pairs.select(dim + 1, 0) | pairs.select(dim + 1, 1) << 4

    def unpack_packed_tensor(self, packed_tensor: torch.Tensor, dim: int, original_shape: Any) -> torch.Tensor:
        """The codes of a packed tensor (the inverse of :meth:`to_packed_tensor`), trimmed to
        ``original_shape[dim]`` along ``dim``."""
        import torch

        pairs = torch.stack((packed_tensor & 0xF, packed_tensor >> 4 & 0xF), dim=dim + 1)
        codes = pairs.flatten(dim, dim + 1)
        return codes.narrow(dim, 0, int(original_shape[dim])).to(torch.uint8)


class MXScaleTensor(_Codes):
    """e8m0 scales as one uint8 code per element (``.data``), like Triton's ``MXScaleTensor``.

    ``MXScaleTensor(data)`` converts a float32 torch tensor (``floor(log2(x))``);
    ``MXScaleTensor(size=..., device=...)`` makes an empty one for :meth:`random` to fill.
    """

    def random(self, low: float | None = None, high: float | None = None) -> MXScaleTensor:
        """Fill ``.data`` with random codes (never the NaN code), for scales in about [low, high]:
        the exponents ``int(log2(low))`` .. ``int(log2(high))``, within 2**-127 .. 2**127."""
        import torch

        lo = 0 if low is None else max(0, int(math.log2(low)) + E8M0_BIAS)
        hi = E8M0_NAN - 1 if high is None else min(E8M0_NAN - 1, max(0, int(math.log2(high)) + E8M0_BIAS))
        if lo > hi:
            raise ValueError(f"MXScaleTensor.random: low ({low}) must not exceed high ({high})")
        self.data = torch.randint(lo, hi + 1, self.size, dtype=torch.uint8, device=self.device)
        return self

    def to(self, dtype: Any) -> torch.Tensor:
        """The scales as a float32 tensor: ``2**(code - 127)``, NaN for code 255."""
        import torch

        _need_float32(dtype, "MXScaleTensor")
        exponent = self.data.to(torch.int32) - E8M0_BIAS
        value = torch.ldexp(torch.ones_like(exponent, dtype=torch.float64), exponent).to(torch.float32)
        return torch.where(self.data == E8M0_NAN, math.nan, value)

    def _from_float(self, values: torch.Tensor) -> torch.Tensor:
        """e8m0 codes of float32 ``values``: ``floor(log2(x)) + 127`` (exactly, from the binary
        exponent) clamped to 0..254; 255 for values that are not positive and finite."""
        import torch

        values = values.to(torch.float32)
        valid = torch.isfinite(values) & (values > 0)
        _, exponent = torch.frexp(torch.where(valid, values, 1.0))  # x = m * 2**e, 0.5 <= m < 1
        code = (exponent - 1 + E8M0_BIAS).clamp(0, E8M0_NAN - 1).to(torch.uint8)
        return torch.where(valid, code, E8M0_NAN).to(torch.uint8)


__all__ = ["E2M1_MAGNITUDES", "MXFP4Tensor", "MXScaleTensor"]
