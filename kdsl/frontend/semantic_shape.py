"""Shape rules: creation of tiles, splat/broadcast (numpy rules), reshapes,
permutations, join/split and ``x[:, None]`` subscripts."""

from __future__ import annotations

from typing import Any

from kdsl.frontend.semantic_base import unwrap
from kdsl.frontend.semantic_cast import CastSemantic
from kdsl.ir.dialects import arith, tile
from kdsl.ir.types import ScalarType, TileType, i32
from kdsl.language.core import tensor


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


class ShapeSemantic(CastSemantic):
    """Tile creation and shape manipulation."""

    # --- creation --------------------------------------------------------------
    def arange(self, start: Any, end: Any) -> tensor:
        """i32 tile ``[start, end)``; bounds are constexpr, the length a power of two."""
        lo = self.const_int(start, "arange start")
        hi = self.const_int(end, "arange end")
        if not (-(2**31) <= lo < 2**31 and -(2**31) <= hi < 2**31):
            raise self.error("arange bounds must fit in int32")
        if hi <= lo:
            raise self.error(f"arange's end ({hi}) must be greater than its start ({lo})")
        n = hi - lo
        if n & (n - 1):
            raise self.error(f"arange's range must be a power of 2, got {n}")
        return self.emit1(tile.ArangeOp, [], TileType((n,), i32), start=lo, end=hi)

    def full(self, shape: Any, value: Any, dtype: Any) -> tensor:
        """A tile of ``shape`` (``()`` gives a scalar) filled with ``value`` as ``dtype``."""
        dims = self.const_shape(shape) if unwrap(shape) not in ((), []) else ()
        dt = self.const_dtype(dtype)
        if not isinstance(dt, ScalarType):
            raise self.error("kl.full needs a scalar dtype")
        ty = dt if not dims else TileType(dims, dt)
        if isinstance(value, tensor):
            if value.shape:
                raise self.error(f"kl.full needs a scalar value, got a tensor of shape {value.shape}")
            return self.splat(self.cast(value, dt), dims)
        v = unwrap(value)
        if not isinstance(v, (bool, int, float)):
            raise self.error(f"kl.full value must be a number or scalar tensor, got {v!r}")
        return self.constant(v, ty)

    # --- splat / broadcast -----------------------------------------------------------
    def splat(self, x: tensor, shape: tuple[int, ...]) -> tensor:
        """Scalar -> tile of ``shape`` (a constant becomes a tile constant)."""
        if not shape:
            return x
        if x.shape:
            raise self.error(f"cannot splat a tensor of shape {x.shape}")
        ty = TileType(tuple(shape), x.dtype)
        owner = x.handle.owner_op
        if isinstance(owner, arith.ConstantOp):
            return self.emit1(arith.ConstantOp, [], ty, value=owner.attributes["value"])
        return self.emit1(tile.SplatOp, [x.handle], ty)

    def broadcast_to(self, value: Any, shape: Any) -> tensor:
        """Broadcast ``x`` to exactly ``shape`` (numpy rules; scalars splat)."""
        x = self.to_tensor(value)
        dims = self.const_shape(shape)
        src = x.shape
        if not src:
            return self.splat(x, dims)
        if len(src) > len(dims):
            raise self.error(f"cannot broadcast shape {src} to {dims}: rank mismatch")
        while len(src) < len(dims):
            x = self.emit1(tile.ExpandDimsOp, [x.handle], x.type.with_shape((1, *src)), axis=0)
            src = x.shape
        if src == dims:
            return x
        for i, (s, d) in enumerate(zip(src, dims)):
            if s not in (1, d):
                raise self.error(
                    f"cannot broadcast shape {src} to {dims}: dimension {i} has size {s}, expected 1 or {d}")
        return self.emit1(tile.BroadcastOp, [x.handle], x.type.with_shape(dims))

    def broadcast_shapes(self, *shapes: tuple[int, ...]) -> tuple[int, ...]:
        """numpy's result shape, or a CompilationError naming the conflicting sizes."""
        rank = max((len(s) for s in shapes), default=0)
        out = [1] * rank
        for s in shapes:
            padded = (1,) * (rank - len(s)) + tuple(s)
            for i, d in enumerate(padded):
                if d == 1:
                    continue
                if out[i] not in (1, d):
                    shown = " and ".join(str(tuple(x)) for x in shapes)
                    raise self.error(f"incompatible shapes for broadcasting: {shown} (dimension {i}: {out[i]} vs {d})")
                out[i] = d
        return tuple(out)

    def broadcast_values(self, *xs: tensor) -> list[tensor]:
        """Broadcast several tensors to their common shape (scalars stay scalars
        only if all are scalars)."""
        shape = self.broadcast_shapes(*(x.shape for x in xs))
        if not shape:
            return list(xs)
        return [self.broadcast_to(x, shape) for x in xs]

    def broadcast_pair(self, a: Any, b: Any) -> tuple[tensor, tensor]:
        """``kl.broadcast(a, b)``: both broadcast to their common shape."""
        x, y = self.broadcast_values(self.to_tensor(a), self.to_tensor(b))
        return x, y

    # --- reshaping -----------------------------------------------------------------
    def expand_dims(self, value: Any, axis: Any) -> tensor:
        """Insert size-1 dimensions at ``axis`` (an int or a sequence of ints)."""
        x = self.to_tensor(value)
        axes_raw = unwrap(axis)
        axes_list = list(axes_raw) if isinstance(axes_raw, (tuple, list)) else [axes_raw]
        new_rank = len(x.shape) + len(axes_list)
        normalized = [self.norm_axis(a, new_rank) for a in axes_list]
        axes = sorted(normalized)
        if len(set(axes)) != len(axes):
            raise self.error(f"expand_dims got repeated axes {[unwrap(a) for a in axes_list]} "
                             f"(duplicate axes, normalized axes = {normalized})")
        for a in axes:
            shape = list(x.shape)
            shape.insert(a, 1)
            x = self.emit1(tile.ExpandDimsOp, [x.handle], x.type.with_shape(tuple(shape)), axis=a)
        return x

    def reshape(self, value: Any, shape: Any) -> tensor:
        """Row-major reshape to ``shape`` with the same number of elements."""
        x = self.to_tensor(value)
        dims = self.const_shape(shape) if unwrap(shape) not in ((), []) else ()
        if _numel(dims) != _numel(x.shape):
            raise self.error(f"cannot reshape a tensor of shape {x.shape} to {dims}: element counts differ")
        if dims == x.shape:
            return x
        return self.emit1(tile.ReshapeOp, [x.handle], x.type.with_shape(dims))

    def permute(self, value: Any, dims: Any) -> tensor:
        """Result dimension ``i`` is input dimension ``dims[i]``."""
        x = self.to_tensor(value)
        order = tuple(self.const_int(d, "permute dimension") for d in unwrap(dims))
        rank = len(x.shape)
        if len(order) != rank:
            raise self.error(f"permute needs {rank} dimensions for a tensor of shape {x.shape}, got {order}")
        order = tuple(d + rank if d < 0 else d for d in order)
        if sorted(order) != list(range(rank)):
            raise self.error(f"permute dims must be a permutation of 0..{rank - 1}, got {order}")
        if order == tuple(range(rank)):
            return x
        return self.emit1(tile.PermuteOp, [x.handle], x.type.with_shape(tuple(x.shape[i] for i in order)),
                          order=order)

    def trans(self, value: Any, dims: Any = ()) -> tensor:
        """``kl.trans(x)`` swaps the last two dims (a batched 2-D transpose, as Triton's);
        with dims, permutes."""
        x = self.to_tensor(value)
        dims = tuple(unwrap(dims))
        if not dims:
            rank = len(x.shape)
            if rank < 2:
                raise self.error(f"trans without dims needs a tensor of rank 2 or more, got shape {x.shape}")
            dims = (*range(rank - 2), rank - 1, rank - 2)
        return self.permute(x, dims)

    def join(self, a: Any, b: Any) -> tensor:
        """Stack ``a`` and ``b`` along a new minor dimension of size 2."""
        x, y = self.broadcast_pair(a, b)
        if x.dtype != y.dtype:
            raise self.error(f"join needs operands of one type, got {x.dtype} and {y.dtype}")
        if not x.shape:
            x = self.emit1(tile.ExpandDimsOp, [x.handle], x.type.with_shape((1,)), axis=0)
            y = self.emit1(tile.ExpandDimsOp, [y.handle], y.type.with_shape((1,)), axis=0)
            joined = self.emit1(tile.JoinOp, [x.handle, y.handle], x.type.with_shape((1, 2)))
            return self.reshape(joined, (2,))
        return self.emit1(tile.JoinOp, [x.handle, y.handle], x.type.with_shape((*x.shape, 2)))

    def split(self, value: Any) -> tuple[tensor, tensor]:
        """Inverse of join: split a tile whose last dimension is 2."""
        x = self.to_tensor(value)
        if not x.shape or x.shape[-1] != 2:
            raise self.error(f"split needs a tensor whose last dimension is 2, got shape {x.shape}")
        ty = x.type.with_shape(x.shape[:-1])
        op = self.emit(tile.SplitOp, [x.handle], [ty, ty])
        return self.wrap(op.results[0]), self.wrap(op.results[1])

    def interleave(self, a: Any, b: Any) -> tensor:
        """Interleave the last dimension: ``[a0, b0, a1, b1, ...]``."""
        j = self.join(a, b)
        shape = j.shape
        return self.reshape(j, (*shape[:-2], shape[-2] * 2)) if len(shape) >= 2 else j

    # --- subscripts -------------------------------------------------------------
    def getitem(self, x: tensor, index: Any) -> tensor:
        """``x[None, :]`` etc.: only ``None`` (new axis at that position) and full slices ``:``.

        As in Triton, a full slice keeps the tensor as it is, also past its last dimension
        (Triton's own tests index a scalar pointer as ``Z[None, None, :]`` to get shape (1, 1))."""
        index = unwrap(index)
        items = list(index) if isinstance(index, tuple) else [index]
        out = x
        for dim, item in enumerate(items):
            item = unwrap(item)
            if item is None:
                out = self.expand_dims(out, dim)
            elif isinstance(item, slice) and all(unwrap(p) is None for p in (item.start, item.stop, item.step)):
                pass
            else:
                raise self.error(
                    f"unsupported tensor index {item!r}: only None (new axis) and full slices ':' are allowed")
        return out
