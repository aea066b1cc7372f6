"""Panel-major storage of the ``b`` operand of ``wi.mma`` (a renderer-private layout).

``wi.block_load`` and ``wi.mma`` describe their private arrays as row-major,
but nothing else can observe the layout of a private array that is written
only by block loads and read only as the ``b`` operand of ``wi.mma``: the
renderers may then store it *panel-major* instead, as a BLAS packs ``B``:

    element (k, c) of a K x N array  ->  (c // P) * K * P + k * P + c % P

with ``P`` the ``block_n`` of the mma. The micro-kernel walks one ``K x P``
column panel for every row block; row-major, consecutive ``k`` rows of a
panel are ``N`` elements apart, so a 256 x 32 panel of a 128-wide tile
touches only 16 of the 64 sets of a 48 KiB L1 (two lines per 512-byte row,
32 lines per set for 12 ways) and misses on every reuse; panel-major it is
32 KiB of consecutive lines that stay in L1. Both renderers (OpenCL C and
LLVM) ask :func:`b_panel` for the same answer, so the writer and the reader
always agree.
"""

from __future__ import annotations

from kdsl.ir.core import Value
from kdsl.ir.types import ScalarType

_WIDE = (ScalarType("f32"), ScalarType("f64"))


def b_panel(mem: Value) -> int:
    """``P`` when private array ``mem`` may be stored panel-major (module doc), else 0.

    Conditions: every use of ``mem`` is either the destination of a 2-D
    ``wi.block_load`` or the ``b`` operand of a ``wi.mma``, there is at least
    one of each, every load has the shape ``(k, n)`` of every mma and every
    mma has the same ``block_n`` ``P < n`` (``P == n`` is row-major already), and every mma
    accumulates in f32/f64 (the narrow-accumulator path reads ``b`` row-major).
    """
    loads, mmas = [], []
    for user, index in mem.uses:
        if user.NAME == "wi.block_load" and index == 0:
            loads.append(user)
        elif user.NAME == "wi.mma" and index == 1:
            mmas.append(user)
        else:
            return 0
    if not loads or not mmas:
        return 0
    if any(getattr(m.operands[2].type, "element", None) not in _WIDE for m in mmas):
        return 0
    kn = {(int(m.attributes["k"]), int(m.attributes["n"])) for m in mmas}
    panels = {int(m.attributes["block_n"]) for m in mmas}
    if len(kn) != 1 or len(panels) != 1:
        return 0
    shape = next(iter(kn))
    if any(tuple(int(d) for d in ld.attributes["shape"]) != shape for ld in loads):
        return 0
    p = next(iter(panels))
    return p if 0 < p < shape[1] and shape[1] % p == 0 else 0
