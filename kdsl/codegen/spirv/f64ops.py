"""Emitter helpers for kdsl's own f64 math on SPIR-V (``mathlib64``, ``trig64``, ``pow64``).

Why one place: the double-double building blocks (exact sums and products), the u64 bit
operations, Horner's rule and run-time-indexed constant tables are shared by every f64 function
the backend implements itself.
"""

from __future__ import annotations

from collections.abc import Callable

from kdsl.codegen.spirv.emit import Emitter


def poly(e: Emitter, coefs: tuple[float, ...], x: int) -> int:
    """``sum coefs[n] * x**n`` by Horner's rule (separate multiply and add: two roundings)."""
    f, d = e.f, e.t.float_t(64)
    r = f.const(d, coefs[-1])
    for c in coefs[-2::-1]:
        r = f.binary("add", d, f.binary("mul", d, r, x), f.const(d, c))
    return r


class F64Ops:
    """Small helpers over the emitter for f64/i64/u64 code."""

    def __init__(self, e: Emitter) -> None:
        self.e, self.f = e, e.f
        self.d, self.u, self.i = e.t.float_t(64), e.t.u64, e.t.int_t(64, True)
        self.i32 = e.t.i32

    def c(self, v: float) -> int:
        return self.f.const(self.d, v)

    def cu(self, v: int) -> int:
        return self.f.const(self.u, v)

    def add(self, a: int, b: int) -> int:
        return self.f.binary("add", self.d, a, b)

    def sub(self, a: int, b: int) -> int:
        return self.f.binary("sub", self.d, a, b)

    def mul(self, a: int, b: int) -> int:
        return self.f.binary("mul", self.d, a, b)

    def split(self, a: int) -> tuple[int, int]:
        """Veltkamp: ``a = hi + lo`` with 26-bit halves (``|a| < 2**996``)."""
        c = self.mul(a, self.c(134217729.0))  # 2**27 + 1
        hi = self.sub(c, self.sub(c, a))
        return hi, self.sub(a, hi)

    def two_prod(self, a: int, b: int) -> tuple[int, int]:
        """``a * b = p + err`` exactly (Dekker). Not GLSL ``Fma``: lavapipe's is not fused, so
        ``fma(a, b, -p)`` would be rounded twice (docs/VULKAN.md)."""
        p = self.mul(a, b)
        ah, al = self.split(a)
        bh, bl = self.split(b)
        err = self.add(self.add(self.add(self.sub(self.mul(ah, bh), p), self.mul(ah, bl)), self.mul(al, bh)),
                       self.mul(al, bl))  # fmt: skip
        return p, err

    def two_sum(self, a: int, b: int) -> tuple[int, int]:
        """``a + b = s + err`` exactly (Knuth)."""
        s = self.add(a, b)
        bb = self.sub(s, a)
        err = self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))
        return s, err

    def fast_two_sum(self, a: int, b: int) -> tuple[int, int]:
        """``a + b = s + err`` exactly when ``|a| >= |b|`` (or ``a == 0``)."""
        s = self.add(a, b)
        return s, self.sub(b, self.sub(s, a))

    def uop(self, kind: str, a: int, b: int) -> int:
        return self.f.binary(kind, self.u, a, b)

    def u_to_d(self, a: int) -> int:
        """A u64 below 2**63 as f64 (through the signed conversion)."""
        return self.f.convert(self.d, self.i, self.f.bitcast(self.i, a))

    def poly(self, coefs: tuple[float, ...], z: int) -> int:
        return poly(self.e, coefs, z)

    def copysign(self, mag: int, sign_of: int) -> int:
        """``mag`` with the sign bit of ``sign_of`` (bit operations: -0.0 and NaN keep theirs)."""
        u = self.u
        m = self.uop("and", self.f.bitcast(u, mag), self.cu((1 << 63) - 1))
        s = self.uop("and", self.f.bitcast(u, sign_of), self.cu(1 << 63))
        return self.f.bitcast(self.d, self.uop("or", m, s))

    def table(self, elem: int, consts: list[int], name: str) -> Callable[[int], int]:
        """A function-local array initialised with ``consts`` (ids of constants of type ``elem``)
        and its reader: ``load(i32 index)``. Why an array: the index is only known at run time
        (an exponent, a mantissa's leading bits)."""
        e, f = self.e, self.f
        arr = e.m.t_array(elem, len(consts))
        var = f.variable(e.m.t_ptr("Function", arr), name)
        f.emit("OpStore", var, e.m.const_composite(arr, consts))
        ptr = e.m.t_ptr("Function", elem)
        return lambda idx: f.op("OpLoad", elem, f.op("OpAccessChain", ptr, var, idx))
