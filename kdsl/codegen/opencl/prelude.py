"""Helper functions the generated OpenCL C may call, emitted only when used.

They pin down what C leaves undefined exactly as the interpreter defines it:
integer division by zero (0) and ``MIN / -1`` (wraps), shift amounts outside
``[0, bits)``, narrow-float rounding, NaN-propagating max/min, and float
atomics as compare-and-swap loops (PoCL has no float atomics), and 16-bit atomics
(OpenCL has none) as compare-and-swap loops on the aligned 32-bit word holding them.
"""

from __future__ import annotations

from kdsl.ir.types import ScalarType

INT_TYPES = ("char", "short", "int", "long", "uchar", "ushort", "uint", "ulong")

HEADER = """\
#pragma OPENCL FP_CONTRACT OFF
"""

FIXED: dict[str, str] = {
    "kd_half": """\
inline float kd_h2f(ushort h) {
  if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0u)  /* NaN: keep the payload, as numpy */
    return as_float(((uint)(h & 0x8000u) << 16) | 0x7f800000u | ((uint)(h & 0x3ffu) << 13));
  return vload_half(0, (__private const half*)&h);
}
inline ushort kd_f2h(float x) {
  if (isnan(x)) {
    uint u = as_uint(x);
    ushort m = (ushort)((u & 0x7fffffu) >> 13);
    return (ushort)(((u >> 16) & 0x8000u) | 0x7c00u | (m ? m : 1u));
  }
  ushort h; vstore_half_rte(x, 0, (__private half*)&h); return h;
}
inline ushort kd_d2h(double x) {
  if (isnan(x)) return kd_f2h((float)x);
  ushort h; vstore_half_rte(x, 0, (__private half*)&h); return h;
}
inline float kd_rh(float x) { return kd_h2f(kd_f2h(x)); }
inline float kd_rhd(double x) { return kd_h2f(kd_d2h(x)); }
""",
    "kd_rbf": """\
inline float kd_rbf(float x) {
  uint u = as_uint(x);
  if (isnan(x)) return as_float((u | 0x00400000u) & 0xffff0000u);  /* quiet, sign and payload kept */
  u += 0x7fffu + ((u >> 16) & 1u);
  return as_float(u & 0xffff0000u);
}
/* bf16 registers hold exact bf16 values (every op rounds), so their bits are the top half */
inline ushort kd_bfbits(float x) { return (ushort)(as_uint(x) >> 16); }
inline float kd_bffrom(ushort h) { return as_float(((uint)h) << 16); }
""",
    "kd_d2f_odd": """\
/* double -> float rounded to odd (an inexact result gets an odd last bit): rounding that once
   more to bf16 equals one correct rounding of the double */
inline float kd_d2f_odd(double x) {
  float y = (float)x;
  if (isnan(x) || isinf(y) || (double)y == x) return y;
  uint u = as_uint(y);
  if ((u & 1u) == 0u) u += ((x > (double)y) == ((u >> 31) == 0u)) ? 1u : 0xffffffffu;
  return as_float(u);
}
""",
}


def int_helpers(kind: str, t: ScalarType) -> tuple[str, str]:
    """(name, C source) of an integer helper ``kind`` in div/rem/shl/shr for ``t``."""
    c = {"i1": "uchar", "i8": "char", "i16": "short", "i32": "int", "i64": "long",
         "u8": "uchar", "u16": "ushort", "u32": "uint", "u64": "ulong"}[t.name]
    bits = t.bitwidth if t.name != "i1" else 8
    uc = c if c.startswith("u") else "u" + c
    name = f"kd_{kind}_{c}"
    if kind == "div":
        if t.is_signed:
            body = f"return b == 0 ? ({c})0 : (b == -1 ? ({c})(({uc})0 - ({uc})a) : ({c})(a / b));"
        else:
            body = f"return b == 0 ? ({c})0 : ({c})(a / b);"
    elif kind == "rem":
        if t.is_signed:
            body = f"return (b == 0 || b == -1) ? ({c})0 : ({c})(a % b);"
        else:
            body = f"return b == 0 ? ({c})0 : ({c})(a % b);"
    elif kind == "shl":
        body = f"return ({uc})b >= {bits} ? ({c})0 : ({c})(({uc})a << ({uc})b);"
    else:
        if t.is_signed:
            body = f"return ({c})(a >> (({uc})b >= {bits} ? {bits - 1} : ({uc})b));"
        else:
            body = f"return ({uc})b >= {bits} ? ({c})0 : ({c})(a >> b);"
    return name, f"inline {c} {name}({c} a, {c} b) {{ {body} }}\n"


def minmax_nan(kind: str, c: str) -> tuple[str, str]:
    """NaN-propagating max/min for float type ``c``."""
    name = f"kd_{kind}nan_{c}"
    fn = "fmax" if kind == "max" else "fmin"
    return name, f"inline {c} {name}({c} a, {c} b) {{ return (isnan(a) || isnan(b)) ? a + b : {fn}(a, b); }}\n"


def float_atomic(kind: str, c: str) -> tuple[str, str]:
    """CAS-loop float atomic ``kind`` (add/max/min) on ``float``/``double``; returns the old value."""
    name = f"kd_atomic_{kind}_{c}"
    it, cas, asu, asf = (("uint", "atomic_cmpxchg", "as_uint", "as_float") if c == "float"
                         else ("ulong", "atom_cmpxchg", "as_ulong", "as_double"))
    if kind == "add":
        new = "o + v"
    else:
        # NaN-propagating, and -0.0 below +0.0 (IEEE maximum/minimum, the interpreter's rule)
        fn = "fmax" if kind == "max" else "fmin"
        tie = "(signbit(o) ? v : o)" if kind == "max" else "(signbit(o) ? o : v)"
        new = f"((isnan(o) || isnan(v)) ? o + v : (o == v ? {tie} : {fn}(o, v)))"
    src = (
        f"inline {c} {name}(volatile __global {c}* p, {c} v) {{\n"
        f"  volatile __global {it}* q = (volatile __global {it}*)p;\n"
        f"  {it} old = *q, seen;\n"
        f"  for (;;) {{\n"
        f"    {c} o = {asf}(old);\n"
        f"    seen = {cas}(q, old, {asu}(({c})({new})));\n"
        f"    if (seen == old) return o;\n"
        f"    old = seen;\n"
        f"  }}\n"
        f"}}\n"
    )
    return name, src


# (register -> 16 bits, 16 bits -> register) of the 16-bit element types, in C
_NARROW_BITS = {"f16": ("kd_f2h({})", "kd_h2f({})"), "bf16": ("kd_bfbits(kd_rbf({}))", "kd_bffrom({})"),
                "i16": ("(ushort)({})", "(short)({})"), "u16": ("(ushort)({})", "(ushort)({})")}


def narrow_atomic(kind: str, t: ScalarType, c: str) -> tuple[str, str]:
    """16-bit ``add`` (f16/bf16, the sum rounded to ``t``) or ``cas`` (bit patterns compared, as a
    hardware compare-and-swap does) on the half of an aligned 32-bit word that holds the element
    (little-endian: the element at ``addr % 4 == 2`` is the high half); returns the old value.
    ``c`` is the register type of ``t``; the C needs the helpers of ``FIXED`` for f16/bf16."""
    enc, dec = _NARROW_BITS[t.name]
    name = f"kd_atomic_{kind}_{t.name}"
    args = f"{c} v" if kind == "add" else f"{c} cmp, {c} v"
    new = enc.format(f"{dec.format('h')} + v") if kind == "add" else f"(h == {enc.format('cmp')} ? {enc.format('v')} : h)"
    src = (
        f"inline {c} {name}(volatile __global void* p, {args}) {{\n"
        f"  volatile __global uint* q = (volatile __global uint*)((ulong)p & ~(ulong)3);\n"
        f"  uint sh = (uint)((ulong)p & 2) * 8u;\n"
        f"  uint old = *q, seen;\n"
        f"  for (;;) {{\n"
        f"    ushort h = (ushort)(old >> sh);\n"
        f"    ushort n = {new};\n"
        f"    seen = atomic_cmpxchg(q, old, (old & ~(0xffffu << sh)) | ((uint)n << sh));\n"
        f"    if (seen == old) return {dec.format('h')};\n"
        f"    old = seen;\n"
        f"  }}\n"
        f"}}\n"
    )
    return name, src
