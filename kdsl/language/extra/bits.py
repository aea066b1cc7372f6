"""libdevice's integer bit functions and bit reinterpretations (re-exported by
:mod:`kdsl.language.extra.libdevice`): population count, leading zeros, first set bit, bit
reversal with the classic shift-and-mask steps on 32/64-bit integers, the signed high product
from ``umulhi``, and float <-> int bit casts."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kdsl.ir.types import ScalarType, f32, f64, i32, i64, u32, u64
from kdsl.language.core import NO_SEMANTIC, builtin

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic


# --- integer bit functions ----------------------------------------------------------------------
def _int_fn(body: Callable[..., Any]) -> Any:
    def fn(x: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
        s = _semantic
        t = s.to_tensor(x)
        if not (isinstance(t.dtype, ScalarType) and t.dtype.is_integer and t.dtype.bitwidth in (32, 64)):
            raise s.error(f"libdevice.{body.__name__} expects 32- or 64-bit integers, got {t.dtype}")
        unsigned = u32 if t.dtype.bitwidth == 32 else u64
        return body(s, s.bitcast(t, unsigned), t.dtype.bitwidth)

    fn.__name__ = fn.__qualname__ = body.__name__
    fn.__doc__ = body.__doc__
    return builtin(fn)


@_int_fn
def popc(s: Semantic, u: Any, w: int) -> Any:
    """Number of set bits (int32)."""
    b = s.binary
    m1, m2, m4 = (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F)
    if w == 32:
        m1, m2, m4 = m1 & 0xFFFFFFFF, m2 & 0xFFFFFFFF, m4 & 0xFFFFFFFF
    u = b("sub", u, b("and_", b("rshift", u, 1), m1))
    u = b("add", b("and_", u, m2), b("and_", b("rshift", u, 2), m2))
    u = b("and_", b("add", u, b("rshift", u, 4)), m4)
    for sh in (8, 16, 32)[: 2 if w == 32 else 3]:
        u = b("add", u, b("rshift", u, sh))
    return s.cast(b("and_", u, 0x7F), i32)


@_int_fn
def clz(s: Semantic, u: Any, w: int) -> Any:
    """Number of leading zero bits (``w`` for 0; int32)."""
    b = s.binary
    n = s.full((), 0, i32)
    for sh in (32, 16, 8, 4, 2, 1)[(0 if w == 64 else 1) :]:
        empty = s.compare("eq", b("rshift", u, w - sh), 0)
        n = s.where(empty, b("add", n, sh), n)
        u = s.where(empty, b("lshift", u, sh), u)
    return s.where(s.compare("eq", b("rshift", u, w - 1), 0), b("add", n, 1), n)


@_int_fn
def ffs(s: Semantic, u: Any, w: int) -> Any:
    """1 + index of the lowest set bit (0 for 0; int32)."""
    low = s.binary("and_", u, s.binary("sub", s.full((), 0, s.to_tensor(u).dtype), u))  # u & -u
    return s.where(s.compare("eq", u, 0), 0, s.binary("sub", w, clz(low, _semantic=s)))


@_int_fn
def brev(s: Semantic, u: Any, w: int) -> Any:
    """The bits in reverse order."""
    b = s.binary
    masks = [(1, 0x5555555555555555), (2, 0x3333333333333333), (4, 0x0F0F0F0F0F0F0F0F), (8, 0x00FF00FF00FF00FF),
             (16, 0x0000FFFF0000FFFF), (32, 0x00000000FFFFFFFF)]  # fmt: skip
    for sh, mk in masks[: 5 if w == 32 else 6]:
        mk &= (1 << w) - 1
        u = b("or_", b("and_", b("rshift", u, sh), mk), b("lshift", b("and_", u, mk), sh))
    return u


@builtin
def mulhi(x: Any, y: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
    """High half of the signed 2N-bit product (``umulhi`` for unsigned operands)."""
    s = _semantic
    a, b = s.check_operands(x, y, "mul")
    if not (isinstance(a.dtype, ScalarType) and a.dtype.is_integer and a.dtype.bitwidth in (32, 64)):
        raise s.error(f"libdevice.mulhi expects 32- or 64-bit integers, got {a.dtype}")
    hi = s.umulhi(a, b)  # for signed operands this is the unsigned high product, reinterpreted
    if a.dtype.is_unsigned:
        return hi
    hi = s.binary("sub", hi, s.where(s.compare("lt", a, 0), b, 0))
    return s.binary("sub", hi, s.where(s.compare("lt", b, 0), a, 0))


umulhi = mulhi


# --- bit reinterpretation ---------------------------------------------------------------------
def _bits_as(name: str, dtype: ScalarType, doc: str) -> Any:
    def fn(x: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
        return _semantic.bitcast(x, dtype)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return builtin(fn)


float_as_int = _bits_as("float_as_int", i32, "The bits of an f32 as int32.")
int_as_float = _bits_as("int_as_float", f32, "An int32's bits as f32.")
double_as_longlong = _bits_as("double_as_longlong", i64, "The bits of an f64 as int64.")
longlong_as_double = _bits_as("longlong_as_double", f64, "An int64's bits as f64.")
