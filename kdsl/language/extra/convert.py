"""libdevice's conversions with a chosen rounding (re-exported by
:mod:`kdsl.language.extra.libdevice`): float <-> integer and f64 -> f32, in the four modes ``_rn``
(to nearest even), ``_rz`` (toward zero), ``_rd`` (toward -inf), ``_ru`` (toward +inf).

Types follow Triton's declarations exactly, quirks included: ``float2uint_*``/``double2uint_*``
return int32 and ``float2ull_*``/``double2ull_*`` return int64 (the unsigned result's bits).

Float -> integer rounds to an integral float first (``rint``/``trunc``/``floor``/``ceil``, exact),
then converts. CUDA leaves out-of-range results undefined; kdsl saturates to the destination's
range and maps NaN to 0, as PTX's ``cvt`` does, the same on every backend. Integer -> float and
f64 -> f32 in a directed mode take the round-to-nearest result and the sign of its exact error
(``rounding.pair_to_f32``; a 64-bit integer is split into two exactly representable halves whose
sum's error TwoSum gives).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kdsl.ir.types import ScalarType, f32, f64, i32, i64, u32, u64
from kdsl.language.core import NO_SEMANTIC, builtin
from kdsl.language.extra.common import Ops, rint_, trunc_
from kdsl.language.extra.rounding import finish, pair_to_f32, two_sum_err

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic

def _floor(o: Ops, x: Any) -> Any:
    return o.f("floor", x)


def _ceil(o: Ops, x: Any) -> Any:
    return o.f("ceil", x)


_ROUND: dict[str, Callable[[Ops, Any], Any]] = {"rn": rint_, "rz": trunc_, "rd": _floor, "ru": _ceil}
_DIRECTION = {"rn": "to nearest even", "rz": "toward zero", "rd": "toward -inf", "ru": "toward +inf"}
_NAMES = {f32: "float32", f64: "float64", i32: "int32", u32: "uint32", i64: "int64", u64: "uint64"}


def _operand(s: Semantic, x: Any, name: str, want: ScalarType) -> Any:
    t = s.to_tensor(x)
    if t.dtype != want:
        raise s.error(f"libdevice.{name} expects {_NAMES[want]}, got {t.dtype}")
    return t


def _to_int(name: str, src: ScalarType, dst: ScalarType, mode: str) -> Any:
    """``name``: float ``src`` -> integer ``dst`` (saturating; NaN -> 0), returned as the signed
    type of ``dst``'s width as Triton declares it."""
    signed = i32 if dst.bitwidth == 32 else i64

    def fn(x: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
        s = _semantic
        o = Ops(s, src)
        v = _ROUND[mode](o, _operand(s, x, name, src))
        w = dst.bitwidth
        lo, hi = (-(2.0 ** (w - 1)), 2.0 ** (w - 1)) if dst.is_signed else (0.0, 2.0**w)
        ok = o.and_(o.ge(v, lo), o.lt(v, hi))
        c = s.cast(o.where(ok, v, 0.0), dst)
        top, bottom = (2 ** (w - 1) - 1, -(2 ** (w - 1))) if dst.is_signed else (2**w - 1, 0)
        c = s.where(o.ge(v, hi), s.full((), top, dst), s.where(o.lt(v, lo), s.full((), bottom, dst), c))
        return s.bitcast(c, signed)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``x`` rounded {_DIRECTION[mode]} to {_NAMES[dst]} (saturating, NaN -> 0)."
    return builtin(fn)


def _to_float(name: str, src: ScalarType, dst: ScalarType, mode: str) -> Any:
    """``name``: ``src`` (an integer type or f64) -> float ``dst`` rounded in direction ``mode``."""

    def fn(x: Any, _semantic: Semantic = NO_SEMANTIC) -> Any:
        s = _semantic
        t = _operand(s, x, name, src)
        if mode == "rn":
            return s.cast(t, dst)
        w = Ops(s, f64)
        if src.bitwidth == 64 and src.is_integer:  # two halves, each exact in f64
            h = w.mul(s.cast(s.binary("rshift", t, 32), f64), 2.0**32)
            low = s.cast(s.binary("and_", t, 0xFFFFFFFF), f64)
            hi = w.add(h, low)
            lo = two_sum_err(w, h, low, hi)
        else:
            hi, lo = s.cast(t, f64), 0.0
        if dst == f32:
            return pair_to_f32(w, hi, lo, mode)
        return finish(w, hi, w.lt(lo, 0.0), w.gt(lo, 0.0), mode)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``x`` ({_NAMES[src]}) as {_NAMES[dst]}, rounded {_DIRECTION[mode]}."
    return builtin(fn)


float2int_rn, float2int_rz, float2int_rd, float2int_ru = (_to_int(f"float2int_{m}", f32, i32, m) for m in _ROUND)
float2uint_rn, float2uint_rz, float2uint_rd, float2uint_ru = (_to_int(f"float2uint_{m}", f32, u32, m) for m in _ROUND)
double2int_rn, double2int_rz, double2int_rd, double2int_ru = (_to_int(f"double2int_{m}", f64, i32, m) for m in _ROUND)
double2uint_rn, double2uint_rz, double2uint_rd, double2uint_ru = (
    _to_int(f"double2uint_{m}", f64, u32, m) for m in _ROUND)  # fmt: skip
float2ll_rn, float2ll_rz, float2ll_rd, float2ll_ru = (_to_int(f"float2ll_{m}", f32, i64, m) for m in _ROUND)
float2ull_rn, float2ull_rz, float2ull_rd, float2ull_ru = (_to_int(f"float2ull_{m}", f32, u64, m) for m in _ROUND)
double2ll_rn, double2ll_rz, double2ll_rd, double2ll_ru = (_to_int(f"double2ll_{m}", f64, i64, m) for m in _ROUND)
double2ull_rn, double2ull_rz, double2ull_rd, double2ull_ru = (
    _to_int(f"double2ull_{m}", f64, u64, m) for m in _ROUND)  # fmt: skip

double2float_rn, double2float_rz, double2float_rd, double2float_ru = (
    _to_float(f"double2float_{m}", f64, f32, m) for m in _ROUND)  # fmt: skip
int2float_rn, int2float_rz, int2float_rd, int2float_ru = (_to_float(f"int2float_{m}", i32, f32, m) for m in _ROUND)
uint2float_rn, uint2float_rz, uint2float_rd, uint2float_ru = (
    _to_float(f"uint2float_{m}", u32, f32, m) for m in _ROUND)  # fmt: skip
ll2float_rn, ll2float_rz, ll2float_rd, ll2float_ru = (_to_float(f"ll2float_{m}", i64, f32, m) for m in _ROUND)
ull2float_rn, ull2float_rz, ull2float_rd, ull2float_ru = (_to_float(f"ull2float_{m}", u64, f32, m) for m in _ROUND)
ll2double_rn, ll2double_rz, ll2double_rd, ll2double_ru = (_to_float(f"ll2double_{m}", i64, f64, m) for m in _ROUND)
ull2double_rn, ull2double_rz, ull2double_rd, ull2double_ru = (
    _to_float(f"ull2double_{m}", u64, f64, m) for m in _ROUND)  # fmt: skip
int2double_rn = _to_float("int2double_rn", i32, f64, "rn")
uint2double_rn = _to_float("uint2double_rn", u32, f64, "rn")

__all__ = [n for n in globals() if n[0] != "_" and n[-3:] in ("_rn", "_rz", "_rd", "_ru")]
