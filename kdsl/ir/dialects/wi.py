"""``wi``: the work-item dialect -- what ONE work-item of a work-group does.

Below the tile IR every tile has been distributed: a ``wi.func`` body only
computes scalars (``arith``/``math`` ops on scalar types), runs ``scf`` loops
and branches, and touches memory through the ops here. Tiles that must live
across ops sit in ``wi.alloc`` arrays: ``private`` (one per work-item) or
``local`` (one per work-group, shared). Renderers for OpenCL C, SPIR-V and
LLVM IR are therefore thin printers; every mapping decision (layouts, which
tiles are materialised, where barriers go) was made by ``kdsl.lowering``.

Semantics that the renderers must keep:

* ``scf`` control flow in a ``wi.func`` is uniform across the work-group
  wherever a ``wi.barrier`` can be reached (the lowering guarantees it);
* integer/float ops have exactly the ``arith``/``math`` meaning (wrapping,
  C division with the interpreter's zero/overflow rules, shift rules);
* ``i1`` is stored in memory as one byte (0 or 1).
"""

from __future__ import annotations

from kdsl.ir.core import Block, Dialect, IsolatedFromAbove, Operation, Pure, Symbol, Terminator, Value
from kdsl.ir.dialects.common import require_bool, require_int
from kdsl.ir.dialects.tile import ATOMIC_KINDS, MEM_SCOPES, MEM_SEMANTICS
from kdsl.ir.dialects.wi_vector import VECTOR_OPS
from kdsl.ir.types import MemRefType, PointerType, ScalarType

I32 = ScalarType("i32")
SCRATCH_ALIGN = 16  # byte alignment of every scratch array in its work-group slice


class FuncOp(Operation):
    """``wi.func @name(%args)``: one OpenCL-style kernel.

    Attributes: ``sym_name``; ``arg_names`` (user parameter names);
    ``num_threads`` (work-group size, the lowering's layout parameter);
    ``divisibility`` (per argument, copied from the tile function);
    ``asserts`` (tuple of (message, file, line, col) per assert id, so the
    runtime can name a failed ``wi.assert``); ``local_bytes`` (total
    ``__local`` memory, true work-group memory); ``scratch_bytes`` (bytes of
    each work-group's slice of the scratch buffer holding its ``scratch``
    arrays, see ``AllocOp``; absent: none); ``noalias`` (the lowering assumed that no two
    pointer parameters overlap where one is written, so loads and stores
    were fused freely; the runtime must not launch it on aliased memory).
    The body ends in ``wi.return``.
    """

    NAME = "wi.func"
    RESULTS = ()
    REGIONS = 1
    ATTRS = {
        "sym_name": str,
        "arg_names": tuple,
        "num_threads": int,
        "divisibility?": tuple,
        "asserts?": tuple,
        "local_bytes?": int,
        "scratch_bytes?": int,
        "noalias?": bool,
    }
    TRAITS = (IsolatedFromAbove, Symbol)

    @property
    def body(self) -> Block:
        return self.regions[0].block

    def verify_(self) -> None:
        if not isinstance(self.body.terminator, ReturnOp):
            raise self.error("body must end in wi.return")
        if self.attributes["num_threads"] < 1:
            raise self.error("num_threads must be >= 1")
        limit = self.attributes.get("scratch_bytes", 0)
        for op in self.walk():
            offset = op.attributes.get("offset") if isinstance(op, AllocOp) else None
            if offset is not None and offset >= limit:
                raise op.error(f"scratch offset {offset} outside the function's scratch_bytes ({limit})")


class ReturnOp(Operation):
    """``wi.return``: ends a ``wi.func``."""

    NAME = "wi.return"
    RESULTS = ()
    TRAITS = (Terminator,)
    IS_TERMINATOR = True


class _Index(Operation):
    TRAITS = (Pure,)

    def verify_(self) -> None:
        if self.result.type != I32:
            raise self.error("result must be i32")


class ProgramIdOp(_Index):
    """Work-group id along ``axis`` (= the tile program id); i32."""

    NAME = "wi.program_id"
    ATTRS = {"axis": int}


class NumProgramsOp(_Index):
    """Number of work-groups along ``axis`` (= the launch grid); i32."""

    NAME = "wi.num_programs"
    ATTRS = {"axis": int}


class LocalIdOp(_Index):
    """This work-item's index inside its (1-D) work-group; i32."""

    NAME = "wi.local_id"


class AllocOp(Operation):
    """``wi.alloc : memref<NxT, space>``: a private array or a ``__local`` buffer.

    Allocations are hoisted to the top of the function (OpenCL requires
    ``__local`` variables at kernel scope); contents start undefined.

    A ``scratch`` array (a ``__local`` buffer moved out of work-group memory by
    ``kdsl/lowering/scratch.py``) carries ``offset``: its byte offset in the
    work-group's slice of the scratch buffer (``wi.func``'s ``scratch_bytes``).
    Work-items of one group see it exactly as a ``__local`` buffer (the same
    contents, ordered by ``wi.barrier``); no other group ever sees it.
    """

    NAME = "wi.alloc"
    TRAITS = ()
    ATTRS = {"offset?": int}

    def verify_(self) -> None:
        t = self.result.type
        if not isinstance(t, MemRefType):
            raise self.error(f"result must be a memref, got {t}")
        offset = self.attributes.get("offset")
        if (t.space == "scratch") != (offset is not None):
            raise self.error("a scratch memref needs an 'offset' (and only a scratch memref has one)")
        if offset is not None and (offset < 0 or offset % SCRATCH_ALIGN):
            raise self.error(f"offset must be a non-negative multiple of {SCRATCH_ALIGN}, got {offset}")


class LoadOp(Operation):
    """``wi.load %mem, %index``: read element ``index`` (i32) of a memref."""

    NAME = "wi.load"
    OPERANDS = ("mem", "index")

    def verify_(self) -> None:
        t = self.mem.type
        if not isinstance(t, MemRefType) or self.result.type != t.element:
            raise self.error("loads a memref element")
        require_int(self, self.index.type)


class StoreOp(Operation):
    """``wi.store %value, %mem, %index``: write element ``index`` of a memref."""

    NAME = "wi.store"
    OPERANDS = ("value", "mem", "index")
    RESULTS = ()

    def verify_(self) -> None:
        t = self.mem.type
        if not isinstance(t, MemRefType) or self.value.type != t.element:
            raise self.error("stores a memref element")
        require_int(self, self.index.type)


class AddPtrOp(Operation):
    """``wi.addptr %ptr, %offset``: advance a global pointer by ``offset`` elements."""

    NAME = "wi.addptr"
    OPERANDS = ("ptr", "offset")
    TRAITS = (Pure,)

    def verify_(self) -> None:
        if not isinstance(self.ptr.type, PointerType) or self.result.type != self.ptr.type:
            raise self.error("expects and returns a scalar pointer")
        require_int(self, self.offset.type)


class AlignGapOp(Operation):
    """``wi.align_gap %ptr {bytes = B} : i32``: the number of elements from ``ptr`` to the next
    address that is a multiple of ``B`` bytes (a power of two), 0 when ``ptr`` is one:
    ``((-address) mod B) / sizeof(element)``, rounded down.

    Why: streaming (non-temporal) vector stores are only whole-vector stores at an aligned
    address; a vector loop over an unaligned row starts with that many elements in a lane-count
    iteration so that its vectors are aligned (``kdsl/lowering/align_stores.py``).
    """

    NAME = "wi.align_gap"
    OPERANDS = ("ptr",)
    ATTRS = {"bytes": int}
    TRAITS = (Pure,)

    def verify_(self) -> None:
        if not isinstance(self.ptr.type, PointerType):
            raise self.error("takes a scalar pointer")
        require_int(self, self.result.type)
        b = self.attributes["bytes"]
        if b < 1 or b & (b - 1):
            raise self.error(f"bytes must be a power of two, got {b}")


class GLoadOp(Operation):
    """``wi.gload %ptr [, %mask [, %other]]``: read global memory.

    When ``mask`` (i1) is false the memory is not touched and the result is
    ``other`` (0 when absent): a guarded access, never a speculative one.
    """

    NAME = "wi.gload"
    OPERANDS = ("ptr", "mask?", "other?")

    def verify_(self) -> None:
        pt = self.ptr.type
        if not isinstance(pt, PointerType) or self.result.type != pt.pointee:
            raise self.error("loads the pointee of a scalar pointer")
        if self.mask is not None:
            require_bool(self, self.mask.type)
        if self.other is not None and self.other.type != pt.pointee:
            raise self.error("'other' must have the pointee type")


class GStoreOp(Operation):
    """``wi.gstore %ptr, %value [, %mask]``: write global memory where mask holds.

    Optional ``nontemporal``: a hint that the value is not read back soon
    (Triton's ``evict_first`` / ``.cs``); renderers may use a streaming store
    that skips the read-for-ownership. It never changes results. Optional
    ``stream``: the store may be streamed (no hint, to a large array the kernel
    only writes); :mod:`kdsl.lowering.stream_stores` turns it into ``nontemporal``
    on stores of whole lines and removes it before rendering.
    """

    NAME = "wi.gstore"
    OPERANDS = ("ptr", "value", "mask?")
    RESULTS = ()
    ATTRS = {"nontemporal?": bool, "stream?": bool}

    def verify_(self) -> None:
        pt = self.ptr.type
        if not isinstance(pt, PointerType) or self.value.type != pt.pointee:
            raise self.error("stores the pointee of a scalar pointer")
        if self.mask is not None:
            require_bool(self, self.mask.type)


class PrefetchOp(Operation):
    """``wi.prefetch %ptr``: a hint that the cache line holding ``ptr`` will be read soon.

    It reads nothing the program can observe and never faults: ``ptr`` need not point into an
    array (the software prefetch of the next row computes its address before knowing whether
    that row exists). Renderers for targets without such an instruction print nothing.
    """

    NAME = "wi.prefetch"
    OPERANDS = ("ptr",)
    RESULTS = ()

    def verify_(self) -> None:
        if not isinstance(self.ptr.type, PointerType):
            raise self.error("prefetches through a scalar pointer")


class BarrierOp(Operation):
    """``wi.barrier``: work-group barrier with a local-memory fence."""

    NAME = "wi.barrier"
    RESULTS = ()


class AtomicRMWOp(Operation):
    """``wi.atomic_rmw {kind, sem, scope} %ptr, %val [, %mask]``: the tile op's
    meaning for one lane; returns the old value (``val`` when masked off)."""

    NAME = "wi.atomic_rmw"
    OPERANDS = ("ptr", "val", "mask?")
    ATTRS = {"kind": str, "sem?": str, "scope?": str}

    def verify_(self) -> None:
        pt = self.ptr.type
        if not isinstance(pt, PointerType) or self.val.type != pt.pointee or self.result.type != pt.pointee:
            raise self.error("value and result must have the pointee type")
        if self.attributes["kind"] not in ATOMIC_KINDS:
            raise self.error(f"unknown atomic kind {self.attributes['kind']!r}")
        _check_sem(self)


class AtomicCASOp(Operation):
    """``wi.atomic_cas %ptr, %cmp, %val``: one lane of ``tile.atomic_cas``."""

    NAME = "wi.atomic_cas"
    OPERANDS = ("ptr", "cmp", "val")
    ATTRS = {"sem?": str, "scope?": str}

    def verify_(self) -> None:
        pt = self.ptr.type
        if not isinstance(pt, PointerType) or any(v.type != pt.pointee for v in (self.cmp, self.val, self.result)):
            raise self.error("cmp, val and result must have the pointee type")
        _check_sem(self)


def _check_sem(op: Operation) -> None:
    if op.attributes.get("sem", "acq_rel") not in MEM_SEMANTICS:
        raise op.error("unknown memory semantic")
    if op.attributes.get("scope", "gpu") not in MEM_SCOPES:
        raise op.error("unknown memory scope")


class PrintOp(Operation):
    """``wi.print {format} %args...``: printf with a C format string whose
    conversions match the argument types (the lowering builds it)."""

    NAME = "wi.print"
    OPERANDS = ("*args",)
    RESULTS = ()
    ATTRS = {"format": str}


class AssertOp(Operation):
    """``wi.assert %cond {id}``: if ``cond`` is false, record assert ``id``
    (1-based index into the function's ``asserts``) in the status buffer;
    the runtime raises ``DeviceAssertionError`` after the launch."""

    NAME = "wi.assert"
    OPERANDS = ("cond",)
    RESULTS = ()
    ATTRS = {"id": int}

    def verify_(self) -> None:
        require_bool(self, self.cond.type)


class MmaOp(Operation):
    """``wi.mma %a, %b, %c [, %init] {m, n, k, block_m, block_n, vector_width}``: ``c += a @ b``,
    or ``c = init + a @ b``.

    A register-blocked matrix multiply-accumulate of one work-item on private
    arrays, all row-major: ``a`` is ``m x k``, ``b`` is ``k x n``, ``c`` is
    ``m x n`` (accumulator type). Element ``c[i, j]`` becomes
    ``s[i, j] + sum_k widen(a[i, k]) * widen(b[k, j])`` with products fused
    (``fma``) and summed in increasing ``k``, where ``s`` is ``init`` when given
    (an ``m x n`` array of ``c``'s type, only read; ``c`` is then only written)
    and ``c`` itself otherwise (updated in place). ``init`` exists because a
    dot whose accumulator tile stays alive after it (attention's score dot
    starts from the carried row offsets) would otherwise first copy that tile
    into ``c``: the micro-kernel loads its registers from ``init`` instead.
    Row blocks are read before they are written, so ``init`` may even be ``c``.
    Why an op and not scalar loops: the blocking (``block_m`` rows x ``block_n`` columns of ``c`` held
    in ``vector_width``-wide registers across the whole ``k`` loop, i-k-j
    order so the inner step is a vector FMA over contiguous columns of ``b``)
    is a register-allocation decision a renderer must be free to express with
    its own vector types. ``block_m`` divides ``m``; ``vector_width`` divides
    ``block_n``, which divides ``n``. The lowering emits it only for renderers
    that declare support (``Layout.vector_width > 1``, float accumulators).
    """

    NAME = "wi.mma"
    OPERANDS = ("a", "b", "c", "init?")
    RESULTS = ()
    ATTRS = {"m": int, "n": int, "k": int, "block_m": int, "block_n": int, "vector_width": int}

    @property
    def source(self) -> Value:
        """The array the accumulators start from: ``init`` when given, else ``c``."""
        init: Value | None = self.init
        c: Value = self.c
        return c if init is None else init

    def verify_(self) -> None:
        if self.init is not None and self.init.type != self.c.type:
            raise self.error("init must have c's type")
        ts = [self.a.type, self.b.type, self.c.type]
        if not all(isinstance(t, MemRefType) and t.space == "private" for t in ts):
            raise self.error("operands must be private memrefs")
        at, bt, ct = ts
        assert isinstance(at, MemRefType) and isinstance(bt, MemRefType) and isinstance(ct, MemRefType)
        m, n, k = (self.attributes[x] for x in ("m", "n", "k"))
        bm, bn, vw = (self.attributes[x] for x in ("block_m", "block_n", "vector_width"))
        if at.size < m * k or bt.size < k * n or ct.size < m * n:
            raise self.error("memrefs smaller than the matrices")
        if min(m, n, k, bm, bn, vw) < 1 or m % bm or n % bn or bn % vw:
            raise self.error(f"bad blocking m={m} n={n} block_m={bm} block_n={bn} vector_width={vw}")
        if not (isinstance(ct.element, ScalarType) and ct.element.is_float):
            raise self.error("accumulator must be a float type")


class BlockLoadOp(Operation):
    """``wi.block_load %dst, %base, %other, %strides..., %extents... {shape}``: copy a
    block of global memory into a private array.

    ``shape`` is ``(C,)`` or ``(R, C)``; ``dst`` (a private memref of at least
    ``R * C`` elements) receives it row-major. Element ``(r, c)`` is read from
    ``base + r * stride + c`` (one ``stride`` operand per dimension but the
    innermost, which is contiguous) when ``r < extent_0`` and ``c < extent_1``
    -- one ``extent`` operand per dimension, any integer type; an extent
    ``<= 0`` means no valid element, ``>=`` the size the whole dimension --
    and is ``other`` (the pointee type) otherwise, without touching memory.
    An f16/bf16 block may land in an f32 array (widened on the way: a dot accumulating in
    f32 then multiplies f32 arrays, converting each element once instead of at every use).
    With ``starts`` (tensor descriptors check both ends) one ``start`` operand per
    dimension follows the extents: the valid range is ``start_d <= idx_d < extent_d``.
    Why an op: a renderer copies whole valid rows with vector loads
    (``vloadN``) and only a partial row element by element, where the
    per-element ``wi.gload`` form would be one scalar, guarded access each.
    The lowering emits it for affine pointer tiles with a per-dimension
    bound mask (``kdsl/lowering/affine.py``) on targets with vectors.
    """

    NAME = "wi.block_load"
    OPERANDS = ("dst", "base", "other", "*dims")
    RESULTS = ()
    ATTRS = {"shape": tuple, "starts?": bool}

    def verify_(self) -> None:
        pt = self.base.type
        if not isinstance(pt, PointerType) or self.other.type != pt.pointee:
            raise self.error("base must be a scalar pointer and other its pointee type")
        dst = getattr(self.dst.type, "element", None)
        widening = isinstance(pt.pointee, ScalarType) and pt.pointee.name in ("f16", "bf16") and dst == ScalarType("f32")
        _check_block(self, self.dst, dst if widening else pt.pointee)


class BlockStoreOp(Operation):
    """``wi.block_store %src, %base, %strides..., %extents... {shape}``: the converse of
    ``wi.block_load``: element ``(r, c)`` of the row-major private array ``src``
    is written to ``base + r * stride + c`` when ``r < extent_0`` and
    ``c < extent_1`` (and, with ``starts``, ``r >= start_0``, ``c >= start_1``); other
    elements leave memory untouched. Optional ``nontemporal`` and ``stream``: the
    streaming-store hints of ``wi.gstore``."""

    NAME = "wi.block_store"
    OPERANDS = ("src", "base", "*dims")
    RESULTS = ()
    ATTRS = {"shape": tuple, "nontemporal?": bool, "starts?": bool, "stream?": bool}

    def verify_(self) -> None:
        pt = self.base.type
        if not isinstance(pt, PointerType):
            raise self.error("base must be a scalar pointer")
        _check_block(self, self.src, pt.pointee)


def _check_block(op: Operation, mem: object, elem: object) -> None:
    shape = tuple(op.attributes["shape"])
    t = getattr(mem, "type", None)
    if not isinstance(t, MemRefType) or t.space != "private" or t.element != elem:
        raise op.error("the array must be a private memref of the pointee type")
    if len(shape) not in (1, 2) or min(shape) < 1:
        raise op.error(f"shape must have 1 or 2 positive sizes, got {shape}")
    n = 1
    for d in shape:
        n *= int(d)
    if t.size < n:
        raise op.error("memref smaller than the block")
    dims = list(op.operands)[3 if op.NAME == "wi.block_load" else 2:]
    starts = len(shape) if op.attributes.get("starts", False) else 0
    if len(dims) != 2 * len(shape) - 1 + starts:
        more = f" and {starts} start(s)" if starts else ""
        raise op.error(f"expects {len(shape) - 1} stride(s), {len(shape)} extent(s){more}")
    for v in dims:
        require_int(op, v.type)


# the memref operand of the ops that only write it (by op name; wi.mma: see write_only_operand)
_WRITE_ONLY = {"wi.store": 1, "wi.vstore": 1, "wi.block_load": 0}


def write_only_operand(op: Operation) -> int | None:
    """Index of the memref operand ``op`` writes without reading it, if any; every other memref
    operand of a work-item op is read (and maybe written). Liveness (the lowering's storage
    sharing) and its in-place rewrites ask this: an array whose next use only writes it is dead
    until then. ``wi.mma`` only writes ``c`` when it starts from a separate ``init``."""
    if isinstance(op, MmaOp):
        return 2 if op.init is not None else None
    return _WRITE_ONLY.get(op.NAME)


WI = Dialect(
    "wi",
    [
        FuncOp,
        ReturnOp,
        ProgramIdOp,
        NumProgramsOp,
        LocalIdOp,
        AllocOp,
        LoadOp,
        StoreOp,
        AddPtrOp,
        AlignGapOp,
        GLoadOp,
        GStoreOp,
        PrefetchOp,
        BarrierOp,
        AtomicRMWOp,
        AtomicCASOp,
        PrintOp,
        AssertOp,
        MmaOp,
        BlockLoadOp,
        BlockStoreOp,
        *VECTOR_OPS,
    ],
)
