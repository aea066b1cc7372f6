"""Block pointers and tensor descriptors, lowered to ordinary pointer tiles.

An access through a block pointer (or a tensor descriptor at given offsets)
reads/writes element ``(i_0, ..., i_{n-1})`` of the block at
``base + sum_d (offsets[d] + i_d) * strides[d]``; in the checked dimensions
elements with ``offsets[d] + i_d`` outside ``[0, shape[d])`` are masked off.
This file builds exactly that from existing tile ops -- no new IR -- so the
optimiser's mask elimination and the lowering's contiguous block accesses
apply as for hand-written ``ptr + offs * stride`` code.

Index arithmetic: the block's origin ``base + sum_d offsets[d] * strides[d]``
is computed on scalars in 64 bits (Triton's shapes/strides are i64), so large
tensors do not overflow; within the block ``i_d * strides[d]`` is computed in
the stride's own type (i32 for an ``int`` argument that fits, as in
hand-written pointer arithmetic), which keeps the pointer tile affine for the
lowering. A compile-time stride whose in-block products could leave i32 is
widened to i64.
"""

from __future__ import annotations

from typing import Any

from kdsl.frontend.semantic_base import _describe, unwrap
from kdsl.frontend.semantic_reduce import ReduceSemantic
from kdsl.ir.types import PointerType, ScalarType, i32, i64
from kdsl.language.blockptr import Index, block_pointer, tensor_descriptor
from kdsl.language.core import tensor

_I32_MAX = 2**31 - 1
PADDING = ("", "zero", "nan")


class BlockPtrSemantic(ReduceSemantic):
    """``make_block_ptr``/``advance``/``make_tensor_descriptor`` and the accesses through them."""

    # --- construction ---------------------------------------------------------------
    def make_block_ptr(self, base: Any, shape: Any, strides: Any, offsets: Any, block_shape: Any,
                       order: Any) -> block_pointer:
        what = "kl.make_block_ptr"
        b = self._base_pointer(base, what)
        dims = self._block_shape(block_shape, what)
        n = len(dims)
        sh = self._index_list(shape, n, "shape", what)
        st = self._index_list(strides, n, "strides", what)
        offs = self._offsets(offsets, n, what)
        o = tuple(self.const_int(x, f"{what} order entry") for x in self._seq(order, "order", what))
        if sorted(o) != list(range(n)):
            raise self.error(f"{what}: order must be a permutation of {tuple(range(n))}, got {o}")
        return block_pointer(b, sh, st, offs, dims, o)

    def advance(self, base: Any, offsets: Any) -> block_pointer:
        bp = unwrap(base)
        if not isinstance(bp, block_pointer):
            raise self.error(f"kl.advance expects a block pointer (from kl.make_block_ptr), got {_describe(bp)}")
        delta = self._offsets(offsets, len(bp.block_shape), "kl.advance")
        offs = tuple(self.add(a, d) for a, d in zip(bp.offsets, delta))
        return block_pointer(bp.base, bp.shape, bp.strides, offs, bp.block_shape, bp.order)

    def make_tensor_descriptor(self, base: Any, shape: Any, strides: Any, block_shape: Any,
                               padding_option: Any = "zero") -> tensor_descriptor:
        what = "kl.make_tensor_descriptor"
        b = self._base_pointer(base, what)
        dims = self._block_shape(block_shape, what)
        n = len(dims)
        sh = self._index_list(shape, n, "shape", what)
        st = self._index_list(strides, n, "strides", what)
        pad = unwrap(padding_option)
        if pad not in ("zero", "nan"):
            raise self.error(f"{what}: padding_option must be 'zero' or 'nan', got {pad!r}")
        self._check_padding(pad, b.dtype, what)
        return tensor_descriptor(b, sh, st, dims, pad)

    # --- load / store ------------------------------------------------------------------
    def load(self, pointer: Any, mask: Any = None, other: Any = None, boundary_check: Any = (),
             padding_option: Any = "", cache_modifier: Any = "", eviction_policy: Any = "",
             volatile: Any = False) -> tensor:
        bp = unwrap(pointer)
        if not isinstance(bp, block_pointer):
            return super().load(pointer, mask, other, boundary_check, padding_option, cache_modifier,
                                eviction_policy, volatile)
        if unwrap(mask) is not None or unwrap(other) is not None:
            raise self.error("kl.load: `mask` and `other` cannot be used with a block pointer; "
                             "use boundary_check and padding_option")
        pad = unwrap(padding_option)
        pad = "" if pad is None else pad
        if pad not in PADDING:
            raise self.error(f"kl.load: padding_option must be '', 'zero' or 'nan', got {pad!r}")
        self._check_padding(pad, bp.base.dtype, "kl.load")
        checked = self._boundary_check(boundary_check, len(bp.block_shape), "kl.load")
        return self._access_load(bp.base, bp.shape, bp.strides, bp.offsets, bp.block_shape, checked, pad,
                                 cache_modifier, eviction_policy, volatile)

    def store(self, pointer: Any, value: Any, mask: Any = None, boundary_check: Any = (),
              cache_modifier: Any = "", eviction_policy: Any = "") -> None:
        bp = unwrap(pointer)
        if not isinstance(bp, block_pointer):
            super().store(pointer, value, mask, boundary_check, cache_modifier, eviction_policy)
            return
        if unwrap(mask) is not None:
            raise self.error("kl.store: `mask` cannot be used with a block pointer; use boundary_check")
        checked = self._boundary_check(boundary_check, len(bp.block_shape), "kl.store")
        self._access_store(bp.base, bp.shape, bp.strides, bp.offsets, bp.block_shape, checked, value,
                           cache_modifier, eviction_policy)

    def descriptor_load(self, desc: Any, offsets: Any) -> tensor:
        d = self._descriptor(desc, "load")
        offs = self._offsets(offsets, len(d.block_shape), "tensor_descriptor.load")
        every = tuple(range(len(d.block_shape)))
        return self._access_load(d.base, d.shape, d.strides, offs, d.block_shape, every, d.padding, "", "", False)

    def descriptor_store(self, desc: Any, offsets: Any, value: Any) -> None:
        d = self._descriptor(desc, "store")
        offs = self._offsets(offsets, len(d.block_shape), "tensor_descriptor.store")
        every = tuple(range(len(d.block_shape)))
        self._access_store(d.base, d.shape, d.strides, offs, d.block_shape, every, value, "", "")

    def descriptor_atomic(self, kind: str, desc: Any, offsets: Any, value: Any) -> None:
        """``desc.atomic_<kind>(offsets, value)``: ``atomic_<kind>`` on the block's pointer tile,
        masked to the tensor's bounds; ``value`` must have the block's shape (Triton's
        ``validate_store_like``)."""
        what = f"tensor_descriptor.atomic_{kind}"
        d = self._descriptor(desc, f"atomic_{kind}")
        offs = self._offsets(offsets, len(d.block_shape), what)
        v = self.to_tensor(value)
        if v.shape != d.block_shape:
            raise self.error(f"{what}: value shape {v.shape} must equal the block shape {d.block_shape}")
        every = tuple(range(len(d.block_shape)))
        ptr = self._pointer_tile(d.base, d.strides, offs, d.block_shape)
        self.atomic_rmw(kind, ptr, v, self._bounds_mask(d.shape, offs, d.block_shape, every))

    def _access_load(self, base: tensor, shape: tuple[Index, ...], strides: tuple[Index, ...],
                     offsets: tuple[tensor, ...], dims: tuple[int, ...], checked: tuple[int, ...], pad: str,
                     cache_modifier: Any, eviction_policy: Any, volatile: Any) -> tensor:
        ptr = self._pointer_tile(base, strides, offsets, dims)
        mask = self._bounds_mask(shape, offsets, dims, checked)
        other = None if mask is None else (float("nan") if pad == "nan" else 0)
        return super().load(ptr, mask, other, (), "", cache_modifier, eviction_policy, volatile)

    def _access_store(self, base: tensor, shape: tuple[Index, ...], strides: tuple[Index, ...],
                      offsets: tuple[tensor, ...], dims: tuple[int, ...], checked: tuple[int, ...], value: Any,
                      cache_modifier: Any, eviction_policy: Any) -> None:
        ptr = self._pointer_tile(base, strides, offsets, dims)
        mask = self._bounds_mask(shape, offsets, dims, checked)
        super().store(ptr, value, mask, (), cache_modifier, eviction_policy)

    # --- the pointer tile and its mask --------------------------------------------------
    def _pointer_tile(self, base: tensor, strides: tuple[Index, ...], offsets: tuple[tensor, ...],
                      dims: tuple[int, ...]) -> tensor:
        """``base + sum_d (offsets[d] + i_d) * strides[d]`` over the block."""
        origin = base
        for off, st in zip(offsets, strides):
            origin = self.add(origin, self.mul(self.cast(off, i64), self._wide(st)))
        ptr = origin
        for d, (size, st) in enumerate(zip(dims, strides)):
            if size == 1:
                continue
            term = self.mul(self.arange(0, size), self._in_block_stride(st, size))
            ptr = self.add(ptr, self._along(term, d, len(dims)))
        return self.broadcast_to(ptr, dims)

    def _bounds_mask(self, shape: tuple[Index, ...], offsets: tuple[tensor, ...], dims: tuple[int, ...],
                     checked: tuple[int, ...]) -> tensor | None:
        """``0 <= offsets[d] + i_d < shape[d]`` for each checked dimension ``d``."""
        mask: tensor | None = None
        for d in checked:
            idx = self.add(offsets[d], self.arange(0, dims[d])) if dims[d] > 1 else offsets[d]
            ok = self.and_(self.compare("ge", idx, 0), self.compare("lt", idx, self._bound(shape[d])))
            if dims[d] > 1:
                ok = self._along(ok, d, len(dims))
            mask = ok if mask is None else self.and_(mask, ok)
        return None if mask is None else self.broadcast_to(mask, dims)

    def _along(self, x: tensor, d: int, rank: int) -> tensor:
        """A 1-D tile as dimension ``d`` of a rank-``rank`` tile (size 1 elsewhere)."""
        others = [a for a in range(rank) if a != d]
        return self.expand_dims(x, others) if others else x

    def _bound(self, n: Index) -> Index:
        """A shape entry to compare i32 indices with (a constant beyond i32 becomes i64)."""
        if isinstance(n, tensor) or n <= _I32_MAX:
            return n
        return self.constant(n, i64)

    def _wide(self, st: Index) -> tensor:
        """A stride as an i64 scalar (for the block origin)."""
        if isinstance(st, tensor):
            return st if st.dtype == i64 else self.cast(st, i64)
        return self.constant(st, i64)

    def _in_block_stride(self, st: Index, size: int) -> Index:
        """The stride in-block products use: its own type, or i64 if a constant's products leave i32."""
        if isinstance(st, tensor) or (size - 1) * abs(st) <= _I32_MAX:
            return st
        return self.constant(st, i64)

    # --- argument checking -----------------------------------------------------------------
    def _seq(self, x: Any, name: str, what: str) -> tuple[Any, ...]:
        v = unwrap(x)
        if isinstance(v, (tuple, list)):
            return tuple(v)
        if isinstance(v, (int, tensor)) and not isinstance(v, bool):
            return (v,)
        raise self.error(f"{what}: {name} must be a tuple, got {_describe(v)}")

    def _base_pointer(self, base: Any, what: str) -> tensor:
        if not isinstance(base, tensor) or not isinstance(base.dtype, PointerType) or base.shape:
            raise self.error(f"{what}: base must be a scalar pointer, got {_describe(unwrap(base))}")
        return base

    def _block_shape(self, block_shape: Any, what: str) -> tuple[int, ...]:
        dims = tuple(self.const_int(d, f"{what} block_shape entry") for d in self._seq(block_shape, "block_shape", what))
        if not dims:
            raise self.error(f"{what}: block_shape must have at least one dimension")
        for d in dims:
            if d <= 0 or d & (d - 1):
                raise self.error(f"{what}: block_shape entries must be powers of 2, got {dims}")
        return dims

    def _index_list(self, xs: Any, n: int, name: str, what: str) -> tuple[Index, ...]:
        """``shape``/``strides``: compile-time ints stay ints, runtime integers stay in their type
        (unsigned ones widen to i64 so ``0 <= idx`` comparisons stay signed)."""
        items = self._seq(xs, name, what)
        if len(items) != n:
            raise self.error(f"{what}: {name} has {len(items)} entries but block_shape has {n} dimensions")
        out: list[Index] = []
        for x in items:
            v = unwrap(x)
            if isinstance(v, tensor):
                dt = self._int_scalar_type(v, f"{what}: {name} entries")
                out.append(self.cast(v, i64) if dt.is_unsigned else v)
            elif isinstance(v, int) and not isinstance(v, bool):
                out.append(v)
            else:
                raise self.error(f"{what}: {name} entries must be integers, got {_describe(v)}")
        return tuple(out)

    def _offsets(self, xs: Any, n: int, what: str) -> tuple[tensor, ...]:
        """Offsets are i32 scalars (Triton's rule), compile-time ones included, so a
        block pointer keeps one type however it is advanced."""
        items = self._seq(xs, "offsets", what)
        if len(items) != n:
            raise self.error(f"{what}: offsets has {len(items)} entries but the block has {n} dimensions")
        out: list[tensor] = []
        for x in items:
            v = unwrap(x)
            if isinstance(v, tensor):
                dt = self._int_scalar_type(v, f"{what}: offsets")
                out.append(v if dt == i32 else self.cast(v, i32))
            elif isinstance(v, int) and not isinstance(v, bool):
                out.append(self.constant(v, i32))
            else:
                raise self.error(f"{what}: offsets must be integers, got {_describe(v)}")
        return tuple(out)

    def _int_scalar_type(self, v: tensor, what: str) -> ScalarType:
        """The type of ``v``, which must be a non-boolean integer scalar (``what`` names it in the error)."""
        dt = v.dtype
        if v.shape or not isinstance(dt, ScalarType) or not dt.is_integer or dt.is_boolean:
            raise self.error(f"{what} must be integer scalars, got {v.type}")
        return dt

    def _boundary_check(self, boundary_check: Any, n: int, what: str) -> tuple[int, ...]:
        raw = unwrap(boundary_check)
        if raw is None:
            return ()
        items = self._seq(raw, "boundary_check", what)
        dims = tuple(self.const_int(d, f"{what} boundary_check entry") for d in items)
        for d in dims:
            if not 0 <= d < n:
                raise self.error(f"{what}: boundary_check dimension {d} is out of range for a block of rank {n}")
        return tuple(sorted(set(dims)))

    def _check_padding(self, pad: str, ptr_ty: Any, what: str) -> None:
        elem = ptr_ty.pointee if isinstance(ptr_ty, PointerType) else ptr_ty
        if pad == "nan" and not (isinstance(elem, ScalarType) and elem.is_float):
            raise self.error(f"{what}: padding_option 'nan' needs a floating-point pointee, got {elem}")

    def _descriptor(self, desc: Any, op: str) -> tensor_descriptor:
        d = unwrap(desc)
        if not isinstance(d, tensor_descriptor):
            raise self.error(f"{op}_tensor_descriptor expects a tensor descriptor, got {_describe(d)}")
        return d

