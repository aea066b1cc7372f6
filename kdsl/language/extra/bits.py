"""libdevice's integer functions and bit reinterpretations (re-exported by
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
uint_as_float = _bits_as("uint_as_float", f32, "A uint32's bits as f32.")
float_as_uint = _bits_as("float_as_uint", i32, "The bits of an f32 (int32, as Triton declares it).")


def _ints(s: Semantic, name: str, want: tuple[ScalarType, ...], *xs: Any) -> list[Any]:
    """The operands as tensors of one of the dtypes ``want`` (all the same), else a compile error."""
    ts = list(s.broadcast_values(*[s.to_tensor(x) for x in xs]))
    if ts[0].dtype not in want or any(t.dtype != ts[0].dtype for t in ts):
        names = " or ".join(str(w) for w in want)
        raise s.error(f"libdevice.{name} expects {names} operands, got {', '.join(str(t.dtype) for t in ts)}")
    return ts


@builtin
def byte_perm(x: Any, y: Any, sel: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
    """Byte ``n`` of the result is byte ``(sel >> 4n) & 7`` of the 8-byte value ``y:x`` (``x`` the
    low four bytes), for n = 0..3 (int32)."""
    s = _semantic
    a, b, c = (s.bitcast(t, u32) for t in _ints(s, "byte_perm", (i32,), x, y, sel))
    wide = s.binary("or_", s.cast(a, u64), s.binary("lshift", s.cast(b, u64), 32))
    r = s.full((), 0, u32)
    for n in range(4):
        k = s.binary("and_", s.binary("rshift", c, 4 * n), 7)
        byte = s.cast(s.binary("and_", s.binary("rshift", wide, s.binary("mul", s.cast(k, u64), 8)), 0xFF), u32)
        r = s.binary("or_", r, s.binary("lshift", byte, 8 * n))
    return s.bitcast(r, i32)


@builtin
def sad(x: Any, y: Any, z: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
    """``|x - y| + z`` (int32 x, y and uint32 z give int32; uint32 operands give uint32 -- ``usad``),
    wrapping modulo 2**32."""
    s = _semantic
    a, b = _ints(s, "sad", (i32, u32), x, y)
    (c,) = _ints(s, "sad", (u32,), z)
    diff = s.where(s.compare("gt", a, b), s.binary("sub", a, b), s.binary("sub", b, a))
    r = s.binary("add", s.bitcast(diff, u32), c)
    return s.bitcast(r, a.dtype)


usad = sad


@builtin
def mul24(x: Any, y: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
    """The low 32 bits of the product of the low 24 bits of ``x`` and ``y`` (signed 24-bit values
    for int32, unsigned for uint32 -- ``umul24``)."""
    s = _semantic
    a, b = _ints(s, "mul24", (i32, u32), x, y)
    if a.dtype == i32:
        a, b = (s.binary("rshift", s.binary("lshift", t, 8), 8) for t in (a, b))  # sign-extend bit 23
    else:
        a, b = (s.binary("and_", t, 0xFFFFFF) for t in (a, b))
    return s.binary("mul", a, b)


umul24 = mul24


def _halving(name: str, rounded: bool) -> Any:
    def fn(x: Any, y: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
        s = _semantic
        a, b = _ints(s, name, (i32, u32), x, y)
        wide = i64 if a.dtype == i32 else u64
        total = s.binary("add", s.cast(a, wide), s.cast(b, wide))
        if rounded:
            total = s.binary("add", total, 1)
        return s.cast(s.binary("rshift", total, 1), a.dtype)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``(x + y{' + 1' if rounded else ''}) >> 1`` without overflow (int32 or uint32)."
    return builtin(fn)


hadd = uhadd = _halving("hadd", False)
rhadd = urhadd = _halving("rhadd", True)


@builtin
def abs(x: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:  # libdevice's name (shadows the builtin here)
    """``|x|`` of int32/int64 (``abs(INT_MIN)`` wraps to INT_MIN) or f32/f64."""
    s = _semantic
    t = s.to_tensor(x)
    if not (isinstance(t.dtype, ScalarType) and (t.dtype in (i32, i64) or t.dtype.is_float)):
        raise s.error(f"libdevice.abs expects int32, int64 or floating-point tensors, got {t.dtype}")
    return s.abs(t)


llabs = abs


@builtin
def hiloint2double(hi: Any, lo: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
    """The f64 whose high and low 32 bits are the int32s ``hi`` and ``lo``."""
    s = _semantic
    h, low = (s.cast(s.bitcast(t, u32), u64) for t in _ints(s, "hiloint2double", (i32,), hi, lo))
    return s.bitcast(s.binary("or_", s.binary("lshift", h, 32), low), f64)


def _half_of(name: str, high: bool) -> Any:
    def fn(x: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
        s = _semantic
        t = s.to_tensor(x)
        if t.dtype != f64:
            raise s.error(f"libdevice.{name} expects float64, got {t.dtype}")
        b = s.bitcast(t, u64)
        return s.bitcast(s.cast(s.binary("rshift", b, 32) if high else b, u32), i32)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The {'high' if high else 'low'} 32 bits of an f64 (int32)."
    return builtin(fn)


double2hiint = _half_of("double2hiint", True)
double2loint = _half_of("double2loint", False)

__all__ = ["abs", "brev", "byte_perm", "clz", "double2hiint", "double2loint", "double_as_longlong", "ffs",
           "float_as_int", "float_as_uint", "hadd", "hiloint2double", "int_as_float", "llabs",
           "longlong_as_double", "mul24", "mulhi", "popc", "rhadd", "sad", "uhadd", "uint_as_float", "umul24",
           "umulhi", "urhadd", "usad"]  # fmt: skip
