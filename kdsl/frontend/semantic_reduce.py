"""Reductions, scans and ``dot``.

``tile.reduce``/``tile.scan`` carry their combiner as a region. Builtin
reductions (sum, max, argmax, ...) fill it with ops emitted by this
semantic; ``kl.reduce``/``kl.associative_scan`` fill it by asking the visitor
to emit the user's ``@kdsl.kernel`` combine function inside it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kdsl.frontend.semantic_base import unwrap
from kdsl.frontend.semantic_memory import MemorySemantic
from kdsl.ir.core import Block, Region
from kdsl.ir.dialects import scf, tile
from kdsl.ir.types import PointerType, ScalarType, TileType, Type, bf16, f32, f64, i8, i32, u32
from kdsl.language.core import PropagateNan, tensor

Combiner = Callable[[list[tensor]], Sequence[Any]]


class ReduceSemantic(MemorySemantic):
    """Reductions, scans and matrix multiplication."""

    # --- generic region-carrying ops ---------------------------------------------------
    def _inputs(self, x: Any, what: str) -> list[tensor]:
        xs = list(x) if isinstance(x, (tuple, list)) else [x]
        out = [self.to_tensor(v) for v in xs]
        if not out:
            raise self.error(f"{what} needs at least one input")
        for t in out:
            if not t.shape:
                raise self.error(f"{what} needs tile inputs, got a scalar of type {t.type}")
            if isinstance(t.dtype, PointerType):
                raise self.error(f"{what} does not support pointer inputs")
        shape = out[0].shape
        if any(t.shape != shape for t in out):
            raise self.error(f"{what} inputs must have one shape, got {[t.shape for t in out]}")
        return out

    def _combine_region(self, elems: list[ScalarType], body: Combiner, what: str) -> Region:
        """Build the combiner block ``(acc..., new...) -> yield`` with ``body``."""
        block = Block([*elems, *elems])
        saved = (self.builder.block, self.builder.index, self.builder.loc)
        self.builder.set_insertion_point_to_end(block)
        try:
            results = list(body([self.wrap(a) for a in block.args]))
            if len(results) != len(elems):
                raise self.error(f"{what} combine function returned {len(results)} values, expected {len(elems)}")
            outs = []
            for r, e in zip(results, elems):
                rt = self.to_tensor(r)
                if rt.shape:
                    raise self.error(f"{what} combine function must return scalars, got shape {rt.shape}")
                outs.append(self.cast(rt, e).handle)
            self.emit(scf.YieldOp, outs, [])
        finally:
            self.builder.block, self.builder.index, self.builder.loc = saved
        return Region([block])

    def _user_combiner(self, fn: Any, what: str) -> Combiner:
        if self.call_function is None:
            raise self.error(f"{what} with a user combine function needs the kernel frontend")
        call = self.call_function

        def body(args: list[tensor]) -> Sequence[Any]:
            res = call(fn, list(args))
            if res is None:
                raise self.error(f"{what} combine function must return values")
            return list(res) if isinstance(res, (tuple, list)) else [res]

        return body

    def reduce_with(
        self, inputs: list[tensor], axis: Any, body: Combiner, keep_dims: bool, what: str = "reduce"
    ) -> list[tensor]:
        """Emit ``tile.reduce`` over ``axis`` (None: all elements)."""
        full_rank = len(inputs[0].shape)
        if unwrap(axis) is None:
            n = inputs[0].numel
            inputs = [self.reshape(t, (n,)) for t in inputs]
            ax = 0
        else:
            ax = self.norm_axis(axis, full_rank, f"{what} axis")
        shape = inputs[0].shape
        out_shape = shape[:ax] + shape[ax + 1 :]
        elems = [_scalar(t) for t in inputs]
        region = self._combine_region(elems, body, what)
        rtypes: list[Type] = [t.type.with_shape(out_shape) for t in inputs]
        op = self.emit(tile.ReduceOp, [t.handle for t in inputs], rtypes, axis=ax)
        op.regions.append(region)
        region.parent = op
        results = [self.wrap(r) for r in op.results]
        if keep_dims:
            if unwrap(axis) is None:
                results = [self.reshape(r, (1,) * full_rank) for r in results]
            else:
                results = [self.expand_dims(r, ax) for r in results]
        return results

    def scan_with(
        self, inputs: list[tensor], axis: Any, body: Combiner, reverse: bool, what: str = "scan"
    ) -> list[tensor]:
        """Emit an inclusive ``tile.scan`` along ``axis``."""
        ax = self.norm_axis(axis, len(inputs[0].shape), f"{what} axis")
        region = self._combine_region([_scalar(t) for t in inputs], body, what)
        op = self.emit(
            tile.ScanOp, [t.handle for t in inputs], [t.type for t in inputs], axis=ax, reverse=bool(reverse)
        )
        op.regions.append(region)
        region.parent = op
        return [self.wrap(r) for r in op.results]

    # --- user-facing entry points ----------------------------------------------------
    def reduce(self, x: Any, axis: Any, combine_fn: Any, keep_dims: bool = False) -> Any:
        """``kl.reduce``: tuple inputs give tuple results."""
        inputs = self._inputs(x, "kl.reduce")
        res = self.reduce_with(inputs, axis, self._user_combiner(combine_fn, "kl.reduce"), keep_dims, "kl.reduce")
        return tuple(res) if isinstance(x, (tuple, list)) else res[0]

    def associative_scan(self, x: Any, axis: Any, combine_fn: Any, reverse: bool = False) -> Any:
        inputs = self._inputs(x, "kl.associative_scan")
        body = self._user_combiner(combine_fn, "kl.associative_scan")
        res = self.scan_with(inputs, axis, body, reverse, "kl.associative_scan")
        return tuple(res) if isinstance(x, (tuple, list)) else res[0]

    def reduce_sum(self, x: Any, axis: Any = None, keep_dims: bool = False, dtype: Any = None) -> tensor:
        """``kl.sum``: integers narrower than 32 bits accumulate in (u)int32, f16/bf16 in f32."""
        (t,) = self._inputs(x, "kl.sum")
        out = _sum_dtype(_scalar(t), None if unwrap(dtype) is None else self.const_dtype(dtype))
        if out is not None:
            t = self.cast(t, out)
        return self.reduce_with([t], axis, lambda a: [self.add(a[0], a[1])], keep_dims, "kl.sum")[0]

    def reduce_xor(self, x: Any, axis: Any = None, keep_dims: bool = False) -> tensor:
        (t,) = self._inputs(x, "kl.xor_sum")
        if not _scalar(t).is_integer:
            raise self.error(f"kl.xor_sum is only supported for integers, got {t.dtype}")
        return self.reduce_with([t], axis, lambda a: [self.xor(a[0], a[1])], keep_dims, "kl.xor_sum")[0]

    def reduce_or(self, x: Any, axis: Any = None, keep_dims: bool = False) -> tensor:
        """``kl.reduce_or``: bitwise or of integer (or boolean) elements, in their own type."""
        (t,) = self._inputs(x, "kl.reduce_or")
        if not _scalar(t).is_integer:
            raise self.error(f"kl.reduce_or is only supported for integers, got {t.dtype}")
        return self.reduce_with([t], axis, lambda a: [self.or_(a[0], a[1])], keep_dims, "kl.reduce_or")[0]

    def reduce_minmax(
        self, x: Any, kind: str, axis: Any = None, return_indices: bool = False, keep_dims: bool = False
    ) -> Any:
        """``kl.max``/``kl.min``: values narrower than 32 bits are widened
        (floats to f32, ints to i32) like Triton; NaNs are ignored (fmax)."""
        (t,) = self._inputs(x, f"kl.{kind}")
        if t.dtype == bf16:
            t = self.cast(t, f32)
        if return_indices:
            return self._arg_reduce(t, kind, axis, keep_dims)
        e = _scalar(t)
        if e.bitwidth < 32:
            t = self.cast(t, f32 if e.is_float else i32)
        return self.reduce_with(
            [t], axis, lambda a: [self.minmax(kind, a[0], a[1], PropagateNan.NONE)], keep_dims, f"kl.{kind}"
        )[0]

    def reduce_arg(self, x: Any, kind: str, axis: Any, keep_dims: bool = False) -> tensor:
        """``kl.argmax``/``kl.argmin``: index (i32) of the first extreme element;
        a NaN counts as the extreme, so a row holding NaN gives its first NaN."""
        (t,) = self._inputs(x, f"kl.arg{kind}")
        if t.dtype == bf16:
            t = self.cast(t, f32)
        return self._arg_reduce(t, kind, axis, keep_dims)[1]

    def _arg_reduce(self, t: tensor, kind: str, axis: Any, keep_dims: bool) -> tuple[tensor, tensor]:
        if unwrap(axis) is None:
            t = self.reshape(t, (t.numel,))
            ax = 0
        else:
            ax = self.norm_axis(axis, len(t.shape))
        shape = t.shape
        idx = self.emit1(tile.ArangeOp, [], TileType((shape[ax],), i32), start=0, end=shape[ax])
        view = [1] * len(shape)
        view[ax] = shape[ax]
        idx = self.broadcast_to(self.reshape(idx, tuple(view)), shape)
        better = "gt" if kind == "max" else "lt"
        is_float = _scalar(t).is_float

        def body(a: list[tensor]) -> list[tensor]:
            # A strict total order on (value, index) pairs, so the combine is
            # associative and commutative and every reduction order (the
            # interpreter's tree, a device's per-work-item loops and
            # cross-lane steps) picks the same element. Triton's combine
            # (``v1 > v2 or v1 == v2 and i1 < i2``) is not: with a NaN both
            # comparisons are false and the right operand wins, whatever it is.
            # kdsl's definition (numpy's and torch's): NaN ranks above every
            # number for argmax and below every number for argmin, so both
            # return the index of the first NaN; equal values (also -0.0 and
            # +0.0, or two NaNs) go to the lower index.
            v1, i1_, v2, i2_ = a[0], a[1], a[2], a[3]
            left = self.compare("lt", i1_, i2_)
            tie = self.logical_and(self.compare("eq", v1, v2), left)
            take1 = self.logical_or(self.compare(better, v1, v2), tie)  # Triton's combine
            if is_float:
                # Triton's combine is false whenever v1 or v2 is NaN; add "v1 is NaN and v2 is
                # not, or both are and v1 comes first": NaN outranks every number.
                nan1 = self.compare("ne", v1, v1)  # unordered: true only for NaN
                num2_or_left = self.logical_or(self.compare("eq", v2, v2), left)
                take1 = self.logical_or(take1, self.logical_and(nan1, num2_or_left))
            return [self.where(take1, v1, v2), self.where(take1, i1_, i2_)]

        vals, inds = self.reduce_with([t, idx], ax, body, keep_dims and unwrap(axis) is not None, f"kl.arg{kind}")
        if keep_dims and unwrap(axis) is None:
            rank = len(t.shape)
            vals, inds = self.reshape(vals, (1,) * rank), self.reshape(inds, (1,) * rank)
        return vals, inds

    def scan_builtin(self, x: Any, kind: str, axis: Any = 0, reverse: bool = False, dtype: Any = None) -> tensor:
        """``kl.cumsum``/``kl.cumprod`` (cumsum widens small ints like ``kl.sum``)."""
        (t,) = self._inputs(x, f"kl.cum{kind}")
        if t.dtype == bf16:
            t = self.cast(t, f32)
        if kind == "sum":
            # Triton's cumsum: "small integer types (< 32 bits) are upcasted", bf16 goes to f32
            # (above); f16 stays f16 (unlike kl.sum, documented to upcast floats to f32)
            out = _sum_dtype(_scalar(t), None if unwrap(dtype) is None else self.const_dtype(dtype), floats=False)
            if out is not None:
                t = self.cast(t, out)
            body: Combiner = lambda a: [self.add(a[0], a[1])]  # noqa: E731
        else:
            body = lambda a: [self.mul(a[0], a[1])]  # noqa: E731
        return self.scan_with([t], axis, body, reverse, f"kl.cum{kind}")[0]

    # --- dot ----------------------------------------------------------------------
    def dot(
        self,
        a: Any,
        b: Any,
        acc: Any = None,
        input_precision: Any = None,
        allow_tf32: Any = None,
        max_num_imprecise_acc: Any = None,
        out_dtype: Any = f32,
    ) -> tensor:
        """Matrix product (2-D or batched 3-D) accumulated in f32 (f64 for f64,
        i32 for int8; f16 inputs may accumulate in f16 with ``out_dtype``)."""
        x, y = self.to_tensor(a), self.to_tensor(b)
        ok = ("i8", "u8", "f16", "bf16", "f32", "f64")
        for v, name in ((x, "first"), (y, "second")):
            if not isinstance(v.dtype, ScalarType) or v.dtype.name not in ok:
                raise self.error(f"kl.dot: unsupported {name} operand type {v.type}")
        if x.dtype != y.dtype:
            raise self.error(f"kl.dot: both operands must have the same dtype, got {x.dtype} and {y.dtype}")
        rx, ry = len(x.shape), len(y.shape)
        if not (rx == ry == 2 or rx == ry == 3):
            raise self.error(f"kl.dot: both inputs must be 2-D or both 3-D, got shapes {x.shape} and {y.shape}")
        if x.shape[-1] != y.shape[-2]:
            raise self.error(
                f"kl.dot: incompatible shapes {x.shape} and {y.shape} (inner dimensions "
                f"{x.shape[-1]} and {y.shape[-2]} differ)"
            )
        if rx == 3 and x.shape[0] != y.shape[0]:
            raise self.error(f"kl.dot: batch dimensions differ: {x.shape[0]} and {y.shape[0]}")
        ret = self._dot_result_type(_scalar(x), self.const_dtype(out_dtype, "out_dtype"))
        shape = (*x.shape[:-1], y.shape[-1])
        rty = TileType(shape, ret)
        if unwrap(acc) is None:
            c = self.constant(0, rty)
        else:
            c = self.broadcast_to(self.cast(self.to_tensor(acc), ret), shape)
        prec = unwrap(input_precision)
        if prec is None and unwrap(allow_tf32) is not None:
            prec = "tf32" if unwrap(allow_tf32) else "ieee"
        if prec is not None and prec not in ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6"):
            raise self.error(f"kl.dot: unknown input_precision {prec!r}")
        return self.emit1(tile.DotOp, [x.handle, y.handle, c.handle], rty, input_precision=prec)

    def _dot_result_type(self, e: ScalarType, out: Any) -> ScalarType:
        if e.is_integer:
            if e != i8:
                raise self.error(f"kl.dot: only int8 integer inputs are supported, got {e}")
            return i32
        if out == bf16:
            raise self.error("kl.dot: out_dtype=bfloat16 is unsupported; use float32 and cast")
        if e in (f32, bf16):
            return f32
        if e == f64:
            return f64
        return ScalarType("f16") if out == ScalarType("f16") else f32


def _scalar(t: tensor) -> ScalarType:
    e = t.dtype
    assert isinstance(e, ScalarType)
    return e


def _sum_dtype(e: ScalarType, requested: Any, floats: bool = True) -> Any:
    if requested is not None:
        return requested
    if e.is_integer and e.bitwidth < 32:
        return u32 if e.is_unsigned else i32
    if floats and e.is_float and e.bitwidth < 32:  # documented: "float dtypes are upcasted to at least float32"
        return f32
    return None
