"""Loads and stores of affine pointer tiles as block copies (``wi.block_load/store``).

When a ``tile.load``/``tile.store`` has a pointer tile with an
:class:`~kdsl.lowering.affine.Affine` form whose innermost stride is 1, a mask
with a :class:`~kdsl.lowering.affine.Bounds` form (or none) and a uniform
``other``, the whole access is one op: a base pointer, one stride per outer
dimension and one valid extent per dimension. Renderers copy full rows with
vector loads/stores and only a partial row element by element; the pointer
tile is never evaluated (nor stored) per element.

Used where it pays and the renderer has vectors (``Layout.vector_width > 1``,
one work-item per group, so the private array is the whole row-major tile):

* loads whose tile is a ``tile.dot`` operand -- it is stored in a private
  array anyway for the register-blocked ``wi.mma``; a load read only
  elementwise stays fused into its consumer's element loop instead;
* stores of a tile that is already stored (the dot's accumulator), or of an elementwise
  epilogue of one under a column mask (evaluated into a private array first: ``_epilogue``).
"""

from __future__ import annotations

from kdsl.ir.core import AttrValue, Operation, Value
from kdsl.ir.dialects import arith, wi
from kdsl.ir.types import ScalarType
from kdsl.lowering import affine
from kdsl.lowering.affine import Affine, Bounds
from kdsl.lowering.index import Index
from kdsl.lowering.lowerer import I32, Lowerer
from kdsl.lowering.reps import Lazy, Mat, Rep
from kdsl.lowering.stream_stores import may_stream

_ELEMS = ("f32", "f64", "i32", "u32", "i64", "u64")
# dot operands may also be 16-bit floats (Triton's tutorial 03 multiplies fp16): the renderers
# widen whole rows (OpenCL: vload_halfN into float arrays; both renderers widen into f32 arrays
# when every use is a dot accumulating in f32, see _widens); and 8/16-bit integers, the operands
# of integer dots (int8 x int8 -> int32 matmuls), copied as they are
_LOAD_ELEMS = (*_ELEMS, "f16", "bf16", "i8", "u8", "i16", "u16")


def _enabled(lw: Lowerer, shape: tuple[int, ...]) -> bool:
    lay = lw.layout
    return lay.vector_width > 1 and lay.num_threads == 1 and len(shape) in (1, 2)


def _pointer_form(rep: Rep, elems: tuple[str, ...] = _ELEMS) -> Affine | None:
    f = affine.form(rep)
    if not isinstance(f, Affine):
        return None
    e = affine.pointee(f)
    last = f.strides[-1]
    if e is None or e.name not in elems or not (isinstance(last, int) and last == 1):
        return None
    return f


def _mask_form(lw: Lowerer, mask: Value | None, rank: int) -> Bounds | None:
    if mask is None:
        return Bounds((None,) * rank)
    f = affine.form(lw.rep(mask))
    return f if isinstance(f, Bounds) else None


def _dims(lw: Lowerer, shape: tuple[int, ...], ptr: Affine, mask: Bounds) -> list[Value]:
    """Outer strides, extents, then (when the mask has lower bounds) starts, as wi scalars at the
    current region level."""
    strides = [affine.value(lw, s, I32) for s in ptr.strides[:-1]]
    extents = [lim if lim is not None else lw.iconst(n) for lim, n in zip(mask.limits, shape)]
    if mask.cond is not None:  # a uniform false condition empties the block
        zero = lw.const(0, extents[0].type)
        extents[0] = lw.top.create(arith.SelectOp, [mask.cond, extents[0], zero], [extents[0].type]).result
    starts = [] if mask.starts is None else [s if s is not None else lw.iconst(0) for s in mask.starts]
    return [*strides, *extents, *starts]


def _start_attrs(mask: Bounds) -> dict[str, AttrValue]:
    return {"starts": True} if mask.starts is not None else {}


def _feeds_dot(v: Value, depth: int = 0) -> bool:
    """Every use is a ``tile.dot`` operand, possibly through a transpose (Triton's attention
    tutorial multiplies by ``desc_k.load(...).T``) or a conversion (weight-only quantisation's
    ``b.to(f32)`` of int8 weights: the bytes are block-copied, then widened by a vector loop
    instead of a masked scalar load per element): the tile is stored in a private array anyway."""
    if not v.uses:
        return False
    for u, i in v.uses:
        if u.NAME == "tile.dot" and i in (0, 1):
            continue
        if u.NAME in ("tile.permute", "arith.cast") and depth == 0 and _feeds_dot(u.results[0], 1):
            continue
        return False
    return True


_WIDE = ScalarType("f32")


def _widens(v: Value, elem: ScalarType, depth: int = 0) -> bool:
    """An f16/bf16 tile used only as operands of dots accumulating in f32 (directly or through one
    transpose, as ``_feeds_dot``) is copied into an f32 array: the register-blocked ``wi.mma``
    re-reads each element ``block_m``/``block_n`` times, and widening once at the copy takes the
    conversions out of its inner loop."""
    if elem.name not in ("f16", "bf16"):
        return False
    for u, i in v.uses:
        if u.NAME == "tile.permute" and depth == 0 and _widens(u.results[0], elem, 1):
            continue
        if not (u.NAME == "tile.dot" and i in (0, 1) and u.results[0].type.scalar == _WIDE):
            return False
    return True


def _epilogue(value: Lazy, mask: Bounds) -> bool:
    """An elementwise tile computed from a stored one (``gelu(acc + bias)`` after a dot, attention's
    ``acc / l``) stored under a column mask: fused into the store's element loop, the mask varies
    along the vector and the loop stays scalar (a 256 x 256 fp32 matmul with a bias and gelu took
    2.3x the plain matmul's time on PoCL). Evaluated into a private array first, the math runs
    in vectors over whole rows (masked-off elements compute harmlessly from private data) and
    the store is a block copy."""
    return len(value.shape) == 2 and bool(value.leaves) and mask.limits[-1] is not None


def try_block_load(lw: Lowerer, op: Operation) -> bool:
    """Lower ``op`` (a tile.load) as one ``wi.block_load`` when it qualifies (module doc)."""
    res = op.result
    shape = res.type.shape
    if not _enabled(lw, shape) or not _feeds_dot(res) or op.attributes.get("volatile", False):
        return False
    ptr = _pointer_form(lw.rep(op.ptr), _LOAD_ELEMS)
    mask = _mask_form(lw, op.mask, len(shape))
    other = lw.rep(op.other) if op.other is not None else None
    if ptr is None or mask is None or not (other is None or (isinstance(other, Lazy) and other.cost == 0)):
        return False
    elem = res.type.scalar
    assert isinstance(elem, ScalarType)
    lw.close_nest()
    lw.order_memory("load")
    with lw.at(lw.top):
        fill = (
            lw.elem(other, Index(lw, shape, flat=lw.iconst(0)))
            if other is not None
            else lw.const(0.0 if elem.is_float else 0, elem)
        )
        dims = _dims(lw, shape, ptr, mask)
    m = lw.new_mat(shape, _WIDE if _widens(res, elem) else elem)
    lw.top.create(wi.BlockLoadOp, [m.priv, ptr.base, fill, *dims], [], {"shape": tuple(shape), **_start_attrs(mask)})
    lw.reps[res] = m
    return True


def store_hints(lw: Lowerer, op: Operation) -> dict[str, AttrValue]:
    """wi attributes for the hints of a ``tile.store``: ``nontemporal`` for Triton's
    ``eviction_policy="evict_first"`` or ``cache_modifier=".cs"`` (streaming: the
    data is written once and not read back soon); ``stream`` for a store without a hint
    to a large array the kernel only writes (:mod:`kdsl.lowering.stream_stores`); every
    other hint is dropped."""
    a = op.attributes
    if a.get("eviction") == "evict_first" or a.get("cache") == ".cs":
        return {"nontemporal": True}
    return {"stream": True} if may_stream(op, lw.streamed, lw.provenance) else {}


def try_block_store(lw: Lowerer, op: Operation) -> bool:
    """Lower ``op`` (a tile.store of a stored tile, or of an epilogue: :func:`_epilogue`) as one
    ``wi.block_store`` when it qualifies."""
    shape = op.ptr.type.shape
    value = lw.rep(op.value)
    if not _enabled(lw, shape) or not isinstance(value, (Mat, Lazy)):
        return False
    ptr = _pointer_form(lw.rep(op.ptr))
    mask = _mask_form(lw, op.mask, len(shape))
    if ptr is None or mask is None:
        return False
    if isinstance(value, Lazy):
        if not _epilogue(value, mask):
            return False
        value = lw.materialise(value)
    lw.close_nest()
    lw.order_memory("store")
    with lw.at(lw.top):
        dims = _dims(lw, shape, ptr, mask)
    attrs: dict[str, AttrValue] = {"shape": tuple(shape), **store_hints(lw, op), **_start_attrs(mask)}
    lw.top.create(wi.BlockStoreOp, [value.priv, ptr.base, *dims], [], attrs)
    return True
