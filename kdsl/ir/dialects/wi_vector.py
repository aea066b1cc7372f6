"""The vector ops of the ``wi`` dialect (listed in :data:`kdsl.ir.dialects.wi.WI`).

They exist only after :mod:`kdsl.lowering.vectorize` rewrote an element loop
to run ``N`` consecutive slots per iteration: values of type
``vector<NxT>`` hold those ``N`` lanes, ``arith``/``math`` ops act on them
lane by lane, and the ops here move lanes between memory and registers,
splat a scalar and fold lanes back into a scalar. Why explicit ops rather
than trusting the target compiler: PoCL never vectorises a loop inside a
work-item (``PLATFORM.md``), so a renderer must be told, op by op, what is a
vector. An access is whole (the vectoriser proved every lane in bounds), or
limited by one scalar operand to the *active* lanes:

* an ``i1`` guard of ``wi.gvload``/``wi.gvstore`` -- all lanes or none (a row of a
  2-D tile that lies wholly inside or outside an image, say);
* an ``i32`` *lane count* ``k`` (``wi.gvload``/``wi.gvstore``'s ``mask`` position,
  ``wi.vload``/``wi.vstore``'s trailing ``count``) -- lanes ``0 .. k-1`` (none when
  ``k <= 0``, all when ``k >= N``): the last, partial iteration of a vector loop
  (the *lane-count iteration*, docs/LOWERING.md). Inactive lanes touch no memory: a
  load gives ``other`` (0 when absent) there, a store leaves memory as it was.
"""

from __future__ import annotations

from kdsl.ir.core import Operation, Pure, Value
from kdsl.ir.dialects.common import require_int
from kdsl.ir.types import MemRefType, PointerType, ScalarType, Type, VectorType

REDUCE_KINDS = ("add", "mul", "max", "min", "and", "or", "xor")


def _vector(op: Operation, t: Type, elem: object) -> VectorType:
    if not isinstance(t, VectorType) or t.element != elem:
        raise op.error(f"expects a vector of {elem}, got {t}")
    return t


def _lanes_operand(op: Operation, v: Value | None, guard: bool) -> None:
    """A lane count is an ``i32``; with ``guard`` (the global accesses' ``mask``) an ``i1`` too."""
    if v is None or v.type == ScalarType("i32") or (guard and v.type == ScalarType("i1")):
        return
    want = "an i1 guard or an i32 lane count" if guard else "an i32 lane count"
    raise op.error(f"expects {want}, got {v.type}")


class VLoadOp(Operation):
    """``wi.vload %mem, %index [, %count] [{stride = k}] : vector<NxT>``: elements
    ``index .. index+N-1`` of a memref, or with ``stride`` the elements ``index + i * k`` (a column
    of a row-major private tile: the read side of a transpose, gathered lane by lane from L1); with
    the ``i32`` lane ``count``, only lanes ``i < count`` read, the others are 0 and read nothing
    (they may lie past the array)."""

    NAME = "wi.vload"
    OPERANDS = ("mem", "index", "count?")
    ATTRS = {"stride?": int}

    def verify_(self) -> None:
        t = self.mem.type
        if not isinstance(t, MemRefType):
            raise self.error("loads from a memref")
        _vector(self, self.result.type, t.element)
        require_int(self, self.index.type)
        _lanes_operand(self, self.count, guard=False)
        if self.attributes.get("stride", 1) < 1:
            raise self.error("stride must be positive")


class VStoreOp(Operation):
    """``wi.vstore %value, %mem, %index [, %count]``: write the lanes of ``value`` to
    ``index .. index+N-1``; with the ``i32`` lane ``count``, only lanes ``i < count``."""

    NAME = "wi.vstore"
    OPERANDS = ("value", "mem", "index", "count?")
    RESULTS = ()

    def verify_(self) -> None:
        t = self.mem.type
        if not isinstance(t, MemRefType):
            raise self.error("stores to a memref")
        _vector(self, self.value.type, t.element)
        require_int(self, self.index.type)
        _lanes_operand(self, self.count, guard=False)


class GVLoadOp(Operation):
    """``wi.gvload %ptr [, %mask [, %other]] : vector<NxT>``: the ``N`` consecutive elements at
    ``ptr .. ptr+N-1``; with ``mask`` only the active lanes (an ``i1``: all or none, an ``i32``
    lane count ``k``: lanes ``i < k``) read, the others are ``other`` (0 when absent).

    Only element alignment is assumed (``ptr`` need not be aligned to the
    vector size). ``mask`` is one scalar ``i1`` for all lanes: when false no
    memory is touched and every lane is ``other`` (a scalar; 0 when absent) --
    the guarded access of ``wi.gload``, decided once per vector. Why a scalar:
    the vectoriser only proves a mask uniform over a chunk (the pixel row of an
    ``(pixels, channels)`` tile), never lane-varying; lane-varying masks keep
    the scalar loop. ``mask`` may instead be an ``i32`` lane count ``k``: lanes
    ``i < k`` read ``ptr + i``, the others are ``other`` and touch no memory
    (the lane-count iteration ending a vector loop).
    """

    NAME = "wi.gvload"
    OPERANDS = ("ptr", "mask?", "other?")

    def verify_(self) -> None:
        pt = self.ptr.type
        if not isinstance(pt, PointerType):
            raise self.error("loads through a scalar pointer")
        _vector(self, self.result.type, pt.pointee)
        _lanes_operand(self, self.mask, guard=True)
        if self.other is not None and self.other.type != pt.pointee:
            raise self.error("'other' must be a scalar of the pointee type")


class GVStoreOp(Operation):
    """``wi.gvstore %ptr, %value [, %mask]``: write the lanes of ``value`` to ``ptr .. ptr+N-1``;
    nothing when the scalar ``mask`` (one ``i1`` for all lanes, as in ``wi.gvload``) is false,
    only lanes ``i < k`` when ``mask`` is an ``i32`` lane count ``k``.

    Optional ``nontemporal`` and ``stream``: the streaming-store hints of ``wi.gstore``."""

    NAME = "wi.gvstore"
    OPERANDS = ("ptr", "value", "mask?")
    RESULTS = ()
    ATTRS = {"nontemporal?": bool, "stream?": bool}

    def verify_(self) -> None:
        pt = self.ptr.type
        if not isinstance(pt, PointerType):
            raise self.error("stores through a scalar pointer")
        _vector(self, self.value.type, pt.pointee)
        _lanes_operand(self, self.mask, guard=True)


class BroadcastOp(Operation):
    """``wi.broadcast %x : vector<NxT>``: every lane equals the scalar ``x``."""

    NAME = "wi.broadcast"
    OPERANDS = ("operand",)
    TRAITS = (Pure,)

    def verify_(self) -> None:
        _vector(self, self.result.type, self.operand.type)


class LaneIdsOp(Operation):
    """``wi.lane_ids : vector<Nxi32>``: lane ``i`` holds ``i``. An index that counts up by one per
    lane becomes data as ``broadcast(lane 0) + lane_ids`` (a causal mask compares such indices)."""

    NAME = "wi.lane_ids"
    TRAITS = (Pure,)

    def verify_(self) -> None:
        _vector(self, self.result.type, ScalarType("i32"))


class VReduceOp(Operation):
    """``wi.vreduce {kind} %v : T``: combine the lanes of ``v`` into one scalar.

    ``kind`` is one of add mul max min and or xor, with the ``arith`` op's
    meaning (``propagate_nan`` as ``arith.max``/``arith.min``). The lanes are
    combined as a balanced tree (halves, then quarters, ...): float ``add``
    and ``mul`` are therefore reassociated, which Triton allows (a
    reduction's order is unspecified); the other kinds are exact in any order.
    """

    NAME = "wi.vreduce"
    OPERANDS = ("operand",)
    ATTRS = {"kind": str, "propagate_nan?": bool}
    TRAITS = (Pure,)

    def verify_(self) -> None:
        e = self.result.type
        if not isinstance(e, ScalarType):
            raise self.error(f"result must be a scalar, got {e}")
        vt = _vector(self, self.operand.type, e)
        if vt.lanes & (vt.lanes - 1):
            raise self.error(f"lane count must be a power of two, got {vt.lanes}")
        kind = self.attributes["kind"]
        if kind not in REDUCE_KINDS:
            raise self.error(f"unknown reduction kind {kind!r}")
        if kind in ("and", "or", "xor") and not e.is_integer:
            raise self.error(f"'{kind}' needs an integer type, got {e}")


VECTOR_OPS: tuple[type[Operation], ...] = (VLoadOp, VStoreOp, GVLoadOp, GVStoreOp, BroadcastOp, LaneIdsOp, VReduceOp)
