"""``tile``: the Triton-level dialect -- functions, program ids, whole-tile
shape ops, memory access, ``dot``, reductions, scans, atomics and debug ops.

One instance of a kernel (a *program*) runs the body of a ``tile.func``; the
launch grid runs many programs. Every value is a scalar or a whole tile; how
tiles map onto hardware lanes is decided by lower levels, never here.
"""

from __future__ import annotations

from kdsl.ir.core import (
    Block,
    Dialect,
    IsolatedFromAbove,
    Operation,
    Pure,
    Symbol,
    SymbolRef,
    Terminator,
)
from kdsl.ir.dialects.common import element, require_bool, require_int, same_shape
from kdsl.ir.types import PointerType, ScalarType, TileType, Type

ATOMIC_KINDS = ("add", "max", "min", "xchg", "and", "or", "xor")
MEM_SEMANTICS = ("relaxed", "acquire", "release", "acq_rel")
MEM_SCOPES = ("cta", "gpu", "sys")


class FuncOp(Operation):
    """``tile.func @name(%args) -> (results)`` -- a kernel or a callable helper.

    Attributes: ``sym_name``; ``result_types`` (tuple of types, empty for
    kernels); ``arg_names`` (the user's parameter names, for diagnostics and
    launch binding); ``divisibility`` (per argument: a known power-of-two
    divisor of the integer value / pointer address, 1 if unknown); ``large``
    (per argument, 1 for a pointer to an array the caches cannot keep --
    :mod:`kdsl.runtime.streaming` -- absent when no argument is);
    ``kernel`` (true for launchable entry points). The body is one block
    whose arguments are the parameters, ending in ``tile.return``.
    """

    NAME = "tile.func"
    RESULTS = ()
    REGIONS = 1
    ATTRS = {
        "sym_name": str,
        "result_types": tuple,
        "arg_names?": tuple,
        "divisibility?": tuple,
        "large?": tuple,
        "kernel?": bool,
    }
    TRAITS = (IsolatedFromAbove, Symbol)

    @property
    def body(self) -> Block:
        return self.regions[0].block

    @property
    def arg_types(self) -> list[Type]:
        return [a.type for a in self.body.args]

    def verify_(self) -> None:
        term = self.body.terminator
        if not isinstance(term, ReturnOp):
            raise self.error("body must end in tile.return")
        got = [v.type for v in term.operands]
        if got != list(self.attributes["result_types"]):
            raise self.error(f"returns ({', '.join(map(str, got))}) but is declared to return ({', '.join(map(str, self.attributes['result_types']))})")
        for key in ("arg_names", "divisibility", "large"):
            v = self.attributes.get(key)
            if v is not None and len(v) != len(self.body.args):
                raise self.error(f"'{key}' has {len(v)} entries for {len(self.body.args)} arguments")


class ReturnOp(Operation):
    """``tile.return %v...``: ends a function body."""

    NAME = "tile.return"
    OPERANDS = ("*values",)
    RESULTS = ()
    TRAITS = (Terminator,)
    IS_TERMINATOR = True


class CallOp(Operation):
    """``tile.call {callee = @f} %args...``: call another ``tile.func`` of the module
    (always inlined before lowering)."""

    NAME = "tile.call"
    OPERANDS = ("*args",)
    RESULTS = ("*results",)
    ATTRS = {"callee": SymbolRef}


class ProgramIdOp(Operation):
    """Index of the running program along grid ``axis`` (0, 1, 2); i32."""

    NAME = "tile.program_id"
    ATTRS = {"axis": int}
    TRAITS = (Pure,)

    def verify_(self) -> None:
        _check_axis3(self)


class NumProgramsOp(Operation):
    """Grid size along ``axis``; i32."""

    NAME = "tile.num_programs"
    ATTRS = {"axis": int}
    TRAITS = (Pure,)

    def verify_(self) -> None:
        _check_axis3(self)


def _check_axis3(op: Operation) -> None:
    if op.attributes["axis"] not in (0, 1, 2):
        raise op.error(f"axis must be 0, 1 or 2, got {op.attributes['axis']}")
    if op.result.type != ScalarType("i32"):
        raise op.error("result must be i32")


class ArangeOp(Operation):
    """``tile.arange {start, end}``: the i32 tile ``[start, start+1, ..., end-1]``."""

    NAME = "tile.arange"
    ATTRS = {"start": int, "end": int}
    TRAITS = (Pure,)

    def verify_(self) -> None:
        t = self.result.type
        n = self.attributes["end"] - self.attributes["start"]
        if not isinstance(t, TileType) or t.shape != (n,) or t.element != ScalarType("i32"):
            raise self.error(f"result must be tile<{n}xi32>, got {t}")


class SplatOp(Operation):
    """Fill a tile with a scalar (or pointer)."""

    NAME = "tile.splat"
    OPERANDS = ("operand",)
    TRAITS = (Pure,)

    def verify_(self) -> None:
        if self.operand.type.shape or not self.result.type.shape:
            raise self.error("splats a scalar into a tile")
        if self.result.type.scalar != self.operand.type:
            raise self.error("element types differ")


class BroadcastOp(Operation):
    """Broadcast a tile to a shape of equal rank, where each input dim is 1 or equal."""

    NAME = "tile.broadcast"
    OPERANDS = ("operand",)
    TRAITS = (Pure,)

    def verify_(self) -> None:
        src, dst = self.operand.type.shape, self.result.type.shape
        if len(src) != len(dst) or any(s not in (1, d) for s, d in zip(src, dst)):
            raise self.error(f"cannot broadcast {self.operand.type} to {self.result.type}")
        if self.operand.type.scalar != self.result.type.scalar:
            raise self.error("element types differ")


class ExpandDimsOp(Operation):
    """Insert a dimension of size 1 at ``axis`` (a scalar becomes a 1-element tile)."""

    NAME = "tile.expand_dims"
    OPERANDS = ("operand",)
    ATTRS = {"axis": int}
    TRAITS = (Pure,)

    def verify_(self) -> None:
        src = list(self.operand.type.shape)
        ax = self.attributes["axis"]
        if not 0 <= ax <= len(src):
            raise self.error(f"axis {ax} out of range for rank {len(src)}")
        want = tuple([*src[:ax], 1, *src[ax:]])
        if self.result.type != self.operand.type.with_shape(want):
            raise self.error(f"result must have shape {want}")


class ReshapeOp(Operation):
    """Reshape in row-major order to a shape with the same number of elements
    (a 1-element tile may reshape to a scalar and back)."""

    NAME = "tile.reshape"
    OPERANDS = ("operand",)
    TRAITS = (Pure,)

    def verify_(self) -> None:
        if _numel(self.operand.type) != _numel(self.result.type):
            raise self.error(f"cannot reshape {self.operand.type} to {self.result.type}")
        if self.operand.type.scalar != self.result.type.scalar:
            raise self.error("element types differ")


class PermuteOp(Operation):
    """Permute dimensions: result dim i is operand dim ``order[i]`` (``trans`` is (1, 0))."""

    NAME = "tile.permute"
    OPERANDS = ("operand",)
    ATTRS = {"order": tuple}
    TRAITS = (Pure,)

    def verify_(self) -> None:
        order = tuple(self.attributes["order"])
        src = self.operand.type.shape
        if sorted(order) != list(range(len(src))):
            raise self.error(f"order {order} is not a permutation of rank {len(src)}")
        if self.result.type != self.operand.type.with_shape(tuple(src[i] for i in order)):
            raise self.error("result shape does not match the permutation")


class JoinOp(Operation):
    """Stack two same-typed tiles along a new last dimension of size 2."""

    NAME = "tile.join"
    OPERANDS = ("lhs", "rhs")
    TRAITS = (Pure,)

    def verify_(self) -> None:
        if self.lhs.type != self.rhs.type:
            raise self.error("operands must have the same type")
        if self.result.type != self.lhs.type.with_shape((*self.lhs.type.shape, 2)):
            raise self.error("result must append a dimension of 2")


class SplitOp(Operation):
    """Split a tile whose last dimension is 2 into its two halves."""

    NAME = "tile.split"
    OPERANDS = ("operand",)
    RESULTS = ("lhs", "rhs")
    TRAITS = (Pure,)

    def verify_(self) -> None:
        shape = self.operand.type.shape
        if not shape or shape[-1] != 2:
            raise self.error(f"last dimension must be 2, got {self.operand.type}")
        want = self.operand.type.with_shape(shape[:-1])
        if any(r.type != want for r in self.results):
            raise self.error(f"results must be {want}")


class GatherOp(Operation):
    """``gather %src, %index {axis}``: pick elements of ``src`` along ``axis``.

    ``out[i] = src[i with coordinate axis replaced by index[i]]``. ``src`` and
    ``index`` (any integer type) have one rank and equal sizes on every
    dimension but ``axis``; the result has ``index``'s shape and ``src``'s
    element type. Values move bit for bit. An index outside
    ``[0, src.shape[axis])`` (by its value in its own type) gives 0 -- all
    bits zero -- on every backend (Triton leaves it undefined).
    """

    NAME = "tile.gather"
    OPERANDS = ("src", "index")
    ATTRS = {"axis": int}
    TRAITS = (Pure,)

    def verify_(self) -> None:
        src, ind = self.src.type, self.index.type
        if not src.shape or len(src.shape) != len(ind.shape):
            raise self.error(f"src and index must be tiles of one rank, got {src} and {ind}")
        require_int(self, ind)
        if isinstance(src.scalar, PointerType):
            raise self.error("cannot gather pointers")
        axis = self.attributes["axis"]
        if not 0 <= axis < len(src.shape):
            raise self.error(f"axis {axis} out of range for rank {len(src.shape)}")
        if any(s != i for d, (s, i) in enumerate(zip(src.shape, ind.shape)) if d != axis):
            raise self.error(f"index shape {ind.shape} must equal src shape {src.shape} except on axis {axis}")
        if self.result.type != src.with_shape(ind.shape):
            raise self.error(f"result must be {src.with_shape(ind.shape)}")


class AddPtrOp(Operation):
    """``addptr %ptr, %offset``: advance pointers by ``offset`` *elements*
    (offset is any integer type, sign-extended by its signedness)."""

    NAME = "tile.addptr"
    OPERANDS = ("ptr", "offset")
    TRAITS = (Pure,)

    def verify_(self) -> None:
        if not isinstance(self.ptr.type.scalar, PointerType):
            raise self.error(f"expects pointers, got {self.ptr.type}")
        require_int(self, self.offset.type)
        same_shape(self, [*self.operands, *self.results])
        if self.result.type != self.ptr.type:
            raise self.error("result type must equal the pointer type")


class LoadOp(Operation):
    """``load %ptr [, %mask [, %other]]``: read through each pointer.

    Lanes whose mask is false do not touch memory and yield ``other`` (or an
    undefined value if no ``other``; the interpreter yields 0). mask/other have
    the pointer's shape; other has the pointee type. Attribute ``volatile``
    and the cache/eviction hints do not change results.
    """

    NAME = "tile.load"
    OPERANDS = ("ptr", "mask?", "other?")
    ATTRS = {"volatile?": bool, "cache?": str, "eviction?": str}

    def verify_(self) -> None:
        pt = self.ptr.type.scalar
        if not isinstance(pt, PointerType):
            raise self.error(f"expects pointers, got {self.ptr.type}")
        if self.result.type != self.ptr.type.with_element(pt.pointee):
            raise self.error(f"result must be {self.ptr.type.with_element(pt.pointee)}")
        _check_mask(self, self.mask)
        if self.other is not None and self.other.type != self.result.type:
            raise self.error(f"'other' must be {self.result.type}, got {self.other.type}")


class StoreOp(Operation):
    """``store %ptr, %value [, %mask]``: write each value through its pointer where mask holds."""

    NAME = "tile.store"
    OPERANDS = ("ptr", "value", "mask?")
    RESULTS = ()
    ATTRS = {"cache?": str, "eviction?": str}

    def verify_(self) -> None:
        pt = self.ptr.type.scalar
        if not isinstance(pt, PointerType):
            raise self.error(f"expects pointers, got {self.ptr.type}")
        if self.value.type != self.ptr.type.with_element(pt.pointee):
            raise self.error(f"value must be {self.ptr.type.with_element(pt.pointee)}, got {self.value.type}")
        _check_mask(self, self.mask)


def _check_mask(op: Operation, mask: object) -> None:
    if mask is None:
        return
    assert hasattr(mask, "type")
    require_bool(op, mask.type)
    if mask.type.shape != op.operands[0].type.shape:
        raise op.error(f"mask shape {mask.type.shape} differs from pointer shape {op.operands[0].type.shape}")


class DotOp(Operation):
    """``dot %a, %b, %acc``: ``acc + a @ b`` for (M,K)x(K,N) or batched (B,M,K)x(B,K,N).

    a and b share an element type: f16 or f32 with an f32 accumulator (f64
    with f64), or i8/u8 with an i32 accumulator. Products and the sum are
    computed in the accumulator type; summation order is unspecified.
    """

    NAME = "tile.dot"
    OPERANDS = ("a", "b", "acc")
    ATTRS = {"input_precision?": str}
    TRAITS = (Pure,)

    def verify_(self) -> None:
        a, b, c = (v.type for v in self.operands)
        if len(a.shape) not in (2, 3) or len(a.shape) != len(b.shape) or len(a.shape) != len(c.shape):
            raise self.error(f"operands must all be 2-D or all 3-D, got {a}, {b}, {c}")
        *ba, m, k = a.shape
        *bb, k2, n = b.shape
        if k != k2 or ba != bb or tuple(c.shape) != (*ba, m, n):
            raise self.error(f"incompatible dot shapes {a.shape} x {b.shape} -> {c.shape}")
        if self.result.type != c:
            raise self.error("result type must equal the accumulator type")
        ea, eb, ec = element(self, a), element(self, b), element(self, c)
        if ea != eb:
            raise self.error(f"a and b element types differ: {ea} vs {eb}")
        ok = {("f16", "f32"), ("bf16", "f32"), ("f32", "f32"), ("f64", "f64"), ("i8", "i32"), ("u8", "i32"), ("f16", "f16")}
        if (ea.name, ec.name) not in ok:
            raise self.error(f"unsupported dot input/accumulator types {ea}/{ec}")


class ReduceOp(Operation):
    """``reduce %x... {axis}`` combining along ``axis`` with the body.

    The body block takes ``2k`` scalar arguments (the k accumulated values,
    then the k new values -- the new ones always come from higher indices)
    and yields k scalars. Results drop ``axis`` (scalars when the input is
    1-D). The combine order is a balanced tree over the index range.
    """

    NAME = "tile.reduce"
    OPERANDS = ("*inputs",)
    RESULTS = ("*results",)
    ATTRS = {"axis": int}
    REGIONS = 1

    def verify_(self) -> None:
        _check_combiner(self, reduced=True)


class ScanOp(Operation):
    """``scan %x... {axis, reverse}``: inclusive prefix combine along ``axis``
    (from the end when ``reverse``). Body as :class:`ReduceOp`; results keep shapes."""

    NAME = "tile.scan"
    OPERANDS = ("*inputs",)
    RESULTS = ("*results",)
    ATTRS = {"axis": int, "reverse": bool}
    REGIONS = 1

    def verify_(self) -> None:
        _check_combiner(self, reduced=False)


def _check_combiner(op: Operation, reduced: bool) -> None:
    inputs = op.operands
    if not inputs:
        raise op.error("needs at least one input")
    shape = inputs[0].type.shape
    if not shape:
        raise op.error("inputs must be tiles")
    if any(v.type.shape != shape for v in inputs):
        raise op.error("inputs must have the same shape")
    axis = op.attributes["axis"]
    if not 0 <= axis < len(shape):
        raise op.error(f"axis {axis} out of range for rank {len(shape)}")
    out_shape = shape[:axis] + shape[axis + 1 :] if reduced else shape
    for v, r in zip(inputs, op.results):
        if r.type != v.type.with_shape(out_shape):
            raise op.error(f"result must be {v.type.with_shape(out_shape)}, got {r.type}")
    if len(op.results) != len(inputs):
        raise op.error("needs one result per input")
    body = op.regions[0].block
    elems = [v.type.scalar for v in inputs]
    if [a.type for a in body.args] != elems + elems:
        raise op.error("combiner must take (acc..., new...) scalars of the input element types")
    term = body.terminator
    if term is None or term.NAME != "scf.yield" or [v.type for v in term.operands] != elems:
        raise op.error("combiner must yield one scalar per input")


class AtomicRMWOp(Operation):
    """``atomic_rmw {kind} %ptr, %val [, %mask]``: per lane, atomically
    ``*ptr = kind(*ptr, val)`` and return the old value (masked lanes: undefined).

    ``kind`` is add, max, min, xchg, and, or, xor; ``sem``/``scope`` give the
    memory ordering (default acq_rel, gpu). Float add/max/min are allowed; float
    max/min are IEEE 754-2019 ``maximum``/``minimum`` (a NaN operand gives NaN,
    -0.0 is below +0.0). Several lanes may share an address: each applies once.
    """

    NAME = "tile.atomic_rmw"
    OPERANDS = ("ptr", "val", "mask?")
    ATTRS = {"kind": str, "sem?": str, "scope?": str}

    def verify_(self) -> None:
        pt = self.ptr.type.scalar
        if not isinstance(pt, PointerType):
            raise self.error(f"expects pointers, got {self.ptr.type}")
        if self.val.type != self.ptr.type.with_element(pt.pointee) or self.result.type != self.val.type:
            raise self.error("value and result must have the pointer shape and the pointee type")
        kind = self.attributes["kind"]
        if kind not in ATOMIC_KINDS:
            raise self.error(f"unknown atomic kind {kind!r}")
        if not isinstance(pt.pointee, ScalarType):
            raise self.error("atomics need scalar pointees, not pointers")
        if kind in ("and", "or", "xor") and not pt.pointee.is_integer:
            raise self.error(f"atomic {kind} needs integers")
        _check_sem(self)
        _check_mask(self, self.mask)


class AtomicCASOp(Operation):
    """``atomic_cas %ptr, %cmp, %val``: per lane, atomically ``old = *ptr; if
    old == cmp: *ptr = val``; returns old. Integer or float (bitwise compare)."""

    NAME = "tile.atomic_cas"
    OPERANDS = ("ptr", "cmp", "val")
    ATTRS = {"sem?": str, "scope?": str}

    def verify_(self) -> None:
        pt = self.ptr.type.scalar
        if not isinstance(pt, PointerType):
            raise self.error(f"expects pointers, got {self.ptr.type}")
        want = self.ptr.type.with_element(pt.pointee)
        if any(v.type != want for v in (self.cmp, self.val, self.result)):
            raise self.error(f"cmp, val and result must be {want}")
        _check_sem(self)


def _check_sem(op: Operation) -> None:
    sem = op.attributes.get("sem", "acq_rel")
    scope = op.attributes.get("scope", "gpu")
    if sem not in MEM_SEMANTICS:
        raise op.error(f"unknown memory semantic {sem!r}")
    if scope not in MEM_SCOPES:
        raise op.error(f"unknown memory scope {scope!r}")


class PrintOp(Operation):
    """``print {prefix, hex} %v...``: print from the device (each program prints its values)."""

    NAME = "tile.print"
    OPERANDS = ("*args",)
    RESULTS = ()
    ATTRS = {"prefix": str, "hex?": bool}


class AssertOp(Operation):
    """``assert %cond {message}``: fail the launch if any element of ``cond`` is false."""

    NAME = "tile.assert"
    OPERANDS = ("cond",)
    RESULTS = ()
    ATTRS = {"message": str}

    def verify_(self) -> None:
        require_bool(self, self.cond.type)


class HintOp(Operation):
    """Identity carrying facts for the optimiser: ``multiple_of`` / ``max_contiguous``
    (per dimension) about an integer or pointer value. Results equal the operand."""

    NAME = "tile.hint"
    OPERANDS = ("operand",)
    ATTRS = {"multiple_of?": tuple, "max_contiguous?": tuple}
    TRAITS = (Pure,)

    def verify_(self) -> None:
        if self.result.type != self.operand.type:
            raise self.error("result type must equal the operand type")


def _numel(t: Type) -> int:
    n = 1
    for d in t.shape:
        n *= d
    return n


TILE = Dialect(
    "tile",
    [
        FuncOp,
        ReturnOp,
        CallOp,
        ProgramIdOp,
        NumProgramsOp,
        ArangeOp,
        SplatOp,
        BroadcastOp,
        ExpandDimsOp,
        ReshapeOp,
        PermuteOp,
        JoinOp,
        SplitOp,
        GatherOp,
        AddPtrOp,
        LoadOp,
        StoreOp,
        DotOp,
        ReduceOp,
        ScanOp,
        AtomicRMWOp,
        AtomicCASOp,
        PrintOp,
        AssertOp,
        HintOp,
    ],
)
