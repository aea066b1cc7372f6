"""``TensorDescriptor``: a host-side tensor descriptor passed as a kernel argument.

Triton 3.3+ (``triton.tools.tensor_descriptor.TensorDescriptor``): the host
describes an array (base, shape, strides in elements, block_shape) and the
kernel receives it as a ``kl.tensor_descriptor`` whose ``load``/``store``
move ``block_shape`` tiles, bounds-checked in every dimension. The launcher
passes the base pointer and each shape/stride entry as separate runtime
arguments (entries equal to 1 are specialised to constants, like int
arguments); ``block_shape`` and ``padding`` are part of the specialisation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The order of the runtime fields, as ``kl.tensor_descriptor.aggregate_fields`` lists them.
FIELDS = ("base", "shape", "strides")


@dataclass(eq=False)
class TensorDescriptor:
    """``TensorDescriptor(base, shape, strides, block_shape, padding="zero")``.

    ``base``: a numpy array, ``kdsl`` device array or other array argument
    (its pointer is element 0); ``shape``/``strides`` in elements; any strides
    are accepted (Triton's last-stride-1 rule is a TMA hardware limit).
    """

    base: Any
    shape: list[int]
    strides: list[int]
    block_shape: list[int]
    padding: str = field(default="zero")

    def __post_init__(self) -> None:
        self.shape = [int(s) for s in self.shape]
        self.strides = [int(s) for s in self.strides]
        self.block_shape = [int(b) for b in self.block_shape]
        n = len(self.block_shape)
        if n == 0 or len(self.shape) != n or len(self.strides) != n:
            raise ValueError(f"TensorDescriptor: shape {self.shape}, strides {self.strides} and block_shape "
                             f"{self.block_shape} must have the same (non-zero) length")
        if any(b <= 0 or b & (b - 1) for b in self.block_shape):
            raise ValueError(f"TensorDescriptor: block_shape entries must be powers of 2, got {self.block_shape}")
        if self.padding not in ("zero", "nan"):
            raise ValueError(f"TensorDescriptor: padding must be 'zero' or 'nan', got {self.padding!r}")

    @staticmethod
    def from_tensor(tensor: Any, block_shape: list[int], padding: str = "zero") -> TensorDescriptor:
        """A descriptor of the whole of ``tensor`` (its shape and element strides)."""
        return TensorDescriptor(tensor, list(tensor.shape), _element_strides(tensor), list(block_shape), padding)

    def launch_key(self, argkey: Any) -> tuple[Any, ...]:
        """The launch fast path's key: each field's own key plus the static parts."""
        return ("TD", argkey(self.base), tuple(argkey(s) for s in self.shape),
                tuple(argkey(s) for s in self.strides), tuple(self.block_shape), self.padding)


def _element_strides(tensor: Any) -> list[int]:
    """Strides in elements: torch's ``stride()`` gives them directly (also for float8 tensors,
    which numpy cannot view); numpy-like arrays give bytes."""
    stride = getattr(tensor, "stride", None)
    if callable(stride):
        return [int(s) for s in stride()]
    strides = getattr(tensor, "strides", None)
    if strides is None:
        import numpy as np

        strides = np.asarray(tensor).strides
    return [int(s) // tensor.dtype.itemsize for s in strides]
