"""Counter-based random numbers: Philox (4x32 and 4x64) as in Triton.

Written over the semantic's operators (``umulhi``, ``*``, ``^``, ``+`` on
unsigned integers), so every backend that implements those ops exactly
produces bit-identical streams. Conventions follow Triton: the seed is
widened to uint64 and split into two 32-bit key words (low, high); 32-bit
offsets are the first counter word (others zero); 64-bit offsets use the
4x64 variant keyed by (seed, 0). ``rand`` maps a word to [0, 1) by treating it
as signed, folding negatives with ``-x - 1`` and scaling; ``randn`` is
Box-Muller on two uniforms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kdsl.ir.types import ScalarType, i32, i64, u32, u64
from kdsl.language.core import NO_SEMANTIC, builtin, tensor

if TYPE_CHECKING:
    from kdsl.frontend.semantic import Semantic

N_ROUNDS_DEFAULT = 10

PHILOX_32 = (0x9E3779B9, 0xBB67AE85, 0xD2511F53, 0xCD9E8D57)  # key A, key B, round A, round B
PHILOX_64 = (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B, 0xD2E7470EE14C6C93, 0xCA5A826395121157)

Words = tuple[tensor, tensor, tensor, tensor]


def _philox_rounds(sem: Semantic, c: Words, k0: tensor, k1: tensor, n_rounds: int) -> Words:
    """``n_rounds`` Philox rounds on counter ``c`` with key ``(k0, k1)`` (all unsigned)."""
    key_a, key_b, round_a, round_b = PHILOX_32 if c[0].dtype == u32 else PHILOX_64
    c0, c1, c2, c3 = c
    for _ in range(n_rounds):
        _c0, _c2 = c0, c2
        c0 = sem.xor(sem.xor(sem.umulhi(round_b, _c2), c1), k0)
        c2 = sem.xor(sem.xor(sem.umulhi(round_a, _c0), c3), k1)
        c1 = sem.mul(round_b, _c2)
        c3 = sem.mul(round_a, _c0)
        k0 = sem.add(k0, key_a)
        k1 = sem.add(k1, key_b)
    return c0, c1, c2, c3


def _philox(sem: Semantic, seed: Any, c: tuple[Any, Any, Any, Any], n_rounds: int) -> Words:
    """Key Philox with ``seed`` (any integer scalar) and run it on counter ``c``."""
    s = sem.to_tensor(seed)
    if not (isinstance(s.dtype, ScalarType) and s.dtype.is_integer):
        raise sem.error(f"random seed must be an integer, got {s.dtype}")
    s = sem.cast(s, u64)
    words = [sem.to_tensor(x) for x in c]
    width = words[0].dtype.bitwidth if isinstance(words[0].dtype, ScalarType) else 0
    if width == 32:
        wty = u32
        k1 = sem.cast(sem.and_(sem.binary("rshift", s, 32), 0xFFFFFFFF), u32)
        k0 = sem.cast(sem.and_(s, 0xFFFFFFFF), u32)
    elif width == 64:
        wty = u64
        k0, k1 = s, sem.constant(0, u64)
    else:
        raise sem.error(f"random offsets must be 32- or 64-bit integers, got {words[0].dtype}")
    w = tuple(sem.bitcast(x, wty) for x in words)
    return _philox_rounds(sem, (w[0], w[1], w[2], w[3]), k0, k1, n_rounds)


def _rounds(sem: Semantic, n_rounds: Any) -> int:
    return sem.const_int(n_rounds, "n_rounds")


def _randint4x(sem: Semantic, seed: Any, offset: Any, n_rounds: Any) -> Words:
    off = sem.to_tensor(offset)
    zero = sem.mul(off, 0)
    return _philox(sem, seed, (off, zero, zero, zero), _rounds(sem, n_rounds))


def _uniform(sem: Semantic, x: tensor) -> tensor:
    """A random 32/64-bit word -> float32 uniformly in [0, 1) (Triton's conversion)."""
    if isinstance(x.dtype, ScalarType) and x.dtype.bitwidth == 32:
        xi = sem.bitcast(x, i32)
        scale = 4.6566127342e-10
    else:
        xi = sem.bitcast(x, i64)
        scale = 1.0842020432385337e-19
    xi = sem.where(sem.compare("lt", xi, 0), sem.sub(sem.neg(xi), 1), xi)
    return sem.mul(xi, scale)


def _box_muller(sem: Semantic, u1: tensor, u2: tensor) -> tuple[tensor, tensor]:
    """Box-Muller transform of two uniforms into two standard normals."""
    u1 = sem.minmax("max", 1.0e-7, u1)
    th = sem.mul(6.283185307179586, u2)
    r = sem.math_unary("sqrt", sem.mul(-2.0, sem.math_unary("log", u1)))
    return sem.mul(r, sem.math_unary("cos", th)), sem.mul(r, sem.math_unary("sin", th))


@builtin
def philox_impl(c0: Any, c1: Any, c2: Any, c3: Any, k0: Any, k1: Any, n_rounds: Any = N_ROUNDS_DEFAULT,
                _semantic: Semantic = NO_SEMANTIC) -> Words:
    """``n_rounds`` Philox rounds on the counter ``(c0, c1, c2, c3)`` with key ``(k0, k1)``.

    The counter words must all be uint32 (Philox-4x32) or all uint64 (Philox-4x64), as in
    Triton; the key words are converted to that type. Returns the four output words."""
    sem = _semantic
    words = [sem.to_tensor(c) for c in (c0, c1, c2, c3)]
    wty = words[0].dtype
    if wty not in (u32, u64) or any(w.dtype != wty for w in words):
        raise sem.error(f"philox_impl needs four uint32 or four uint64 counter words, got {[str(w.dtype) for w in words]}")
    keys = [sem.to_tensor(k) for k in (k0, k1)]
    for k in keys:
        if not (isinstance(k.dtype, ScalarType) and k.dtype.is_integer):
            raise sem.error(f"philox_impl key words must be integers, got {k.dtype}")
    k0t, k1t = (k if k.dtype == wty else sem.cast(k, wty) for k in keys)
    return _philox_rounds(sem, (words[0], words[1], words[2], words[3]), k0t, k1t, _rounds(sem, n_rounds))


@builtin
def philox(seed: Any, c0: Any, c1: Any, c2: Any, c3: Any, n_rounds: Any = N_ROUNDS_DEFAULT,
           _semantic: Semantic = NO_SEMANTIC) -> Words:
    """Philox keyed by ``seed`` on the counter ``(c0, c1, c2, c3)`` (32- or 64-bit integer words,
    reinterpreted as unsigned): 32-bit counters split the seed into (low, high) key words,
    64-bit counters use ``(seed, 0)``. What ``randint4x`` calls with ``(offset, 0, 0, 0)``."""
    return _philox(_semantic, seed, (c0, c1, c2, c3), _rounds(_semantic, n_rounds))


@builtin
def uint_to_uniform_float(x: Any, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """A random 32- or 64-bit integer word -> float32 uniformly in [0, 1) (Triton's mapping:
    the word as signed, negatives folded with ``-x - 1``, times the largest scale below 2**-31
    (2**-63) that keeps the result below 1.0)."""
    t = _semantic.to_tensor(x)
    if not (isinstance(t.dtype, ScalarType) and t.dtype.is_integer and t.dtype.bitwidth in (32, 64)):
        raise _semantic.error(f"uint_to_uniform_float needs 32- or 64-bit integers, got {t.dtype}")
    return _uniform(_semantic, t)


@builtin
def pair_uniform_to_normal(u1: Any, u2: Any, _semantic: Semantic = NO_SEMANTIC) -> tuple[tensor, tensor]:
    """Box-Muller: two uniforms in [0, 1) -> two independent standard normals
    (``u1`` is clamped below at 1e-7 so its log is finite)."""
    return _box_muller(_semantic, _semantic.to_tensor(u1), _semantic.to_tensor(u2))


@builtin
def randint4x(seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT, _semantic: Semantic = NO_SEMANTIC) -> Words:
    """Four blocks of random unsigned words for ``(seed, offset)`` (the fastest entry point)."""
    return _randint4x(_semantic, seed, offset, n_rounds)


@builtin
def randint(seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """One block of random unsigned words (uint32 for 32-bit offsets)."""
    return _randint4x(_semantic, seed, offset, n_rounds)[0]


@builtin
def rand(seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """float32 uniform in [0, 1) for each offset."""
    return _uniform(_semantic, _randint4x(_semantic, seed, offset, n_rounds)[0])


@builtin
def rand4x(seed: Any, offsets: Any, n_rounds: Any = N_ROUNDS_DEFAULT,
           _semantic: Semantic = NO_SEMANTIC) -> tuple[tensor, ...]:
    """Four independent float32 uniforms in [0, 1) per offset."""
    words = _randint4x(_semantic, seed, offsets, n_rounds)
    return tuple(_uniform(_semantic, w) for w in words)


@builtin
def randn(seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT, _semantic: Semantic = NO_SEMANTIC) -> tensor:
    """float32 standard normal per offset (Box-Muller of the first two words)."""
    w = _randint4x(_semantic, seed, offset, n_rounds)
    u1, u2 = _uniform(_semantic, w[0]), _uniform(_semantic, w[1])
    return _box_muller(_semantic, u1, u2)[0]


@builtin
def randn4x(seed: Any, offset: Any, n_rounds: Any = N_ROUNDS_DEFAULT,
            _semantic: Semantic = NO_SEMANTIC) -> tuple[tensor, ...]:
    """Four float32 standard normals per offset."""
    w = _randint4x(_semantic, seed, offset, n_rounds)
    u = [_uniform(_semantic, x) for x in w]
    n1, n2 = _box_muller(_semantic, u[0], u[1])
    n3, n4 = _box_muller(_semantic, u[2], u[3])
    return n1, n2, n3, n4


__all__ = ["N_ROUNDS_DEFAULT", "pair_uniform_to_normal", "philox", "philox_impl", "rand", "rand4x", "randint",
           "randint4x", "randn", "randn4x", "uint_to_uniform_float"]
