"""Helper functions the generated OpenCL C may call, emitted only when used.

They pin down what C leaves undefined exactly as the interpreter defines it:
integer division by zero (0) and ``MIN / -1`` (wraps), shift amounts outside
``[0, bits)``, narrow-float rounding, NaN-propagating max/min, and float
atomics as compare-and-swap loops (PoCL has no float atomics).
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
        fn = "fmax" if kind == "max" else "fmin"
        new = f"((isnan(o) || isnan(v)) ? o + v : {fn}(o, v))"
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
