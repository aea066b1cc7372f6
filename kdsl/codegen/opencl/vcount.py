"""OpenCL C for vector accesses limited to a lane count (``wi.gvload``/``wi.gvstore`` whose
``mask`` is an ``i32``, ``wi.vload``/``wi.vstore`` with ``count``): the lane-count iteration
that ends a vector loop (docs/LOWERING.md).

OpenCL C 1.2 has no masked load or store, and an access past the count may lie past the
buffer, so each is staged through a private array of one vector: a load copies lanes
``i < n`` from memory and fills the rest with ``other`` (0 when absent), then reads the
array as one vector; a store writes the vector to the array and copies lanes ``i < n``
out. The arithmetic between them runs as one vector op either way -- which is what the
scalar remainder loop lacked (a scalar ``exp`` per element). ``n`` outside ``[0, N]`` is
clamped. Where clang targets AVX-512F (PoCL on this host), 16 lanes of 32 bits -- the
common case -- are one masked ``vmovups`` instead (``__builtin_ia32_loadups512_mask`` and
its kin): clang vectorises the copy loops into two 8-lane masked moves and a store to
the stack that the vector reload cannot forward from. A counted streaming store
(``nontemporal``) copies its lanes out as scalar streaming stores, as the scalar remainder
did: there is no masked streaming store, and a plain store into a line that streaming
stores are filling costs a write-combining flush (docs/LOWERING.md).

f16 lanes (``float`` registers, ``ushort`` bits in global memory) convert the staged bits
with the helpers of :mod:`.vector` (NaN payloads as the scalar path keeps them).
"""

from __future__ import annotations

from kdsl.codegen.opencl import vmem
from kdsl.codegen.opencl.vmem import SPACES, Helper

# AVX-512F masked moves of 16 lanes of 32 bits: (builtin stem, clang vector type, reinterpretation)
_AVX512 = {"float": ("ups512", "kd_v16sf", ""), "int": ("dqusi512", "kd_v16si", ""),
           "uint": ("dqusi512", "kd_v16si", "int")}  # fmt: skip
_AVX512_TYPES = """\
#if defined(__clang__) && defined(__AVX512F__)
typedef float kd_v16sf __attribute__((vector_size(64)));
typedef int kd_v16si __attribute__((vector_size(64)));
#define KD_LANES16(n) ((ushort)((n) <= 0 ? 0u : (n) >= 16 ? 0xFFFFu : (1u << (n)) - 1u))
#endif
"""


def _avx512(helper: Helper, elem: str, lanes: int, stride: int) -> tuple[str, str, str] | None:
    if lanes != 16 or stride != 1 or elem not in _AVX512:
        return None
    helper("kd_avx512_types", _AVX512_TYPES)
    return _AVX512[elem]


def load(helper: Helper, elem: str, lanes: int, space: str, stride: int = 1) -> str:
    """Name of ``elemN f(S const elem* p, int n, elem o)``: lanes ``i < n`` read ``p[i * stride]``,
    the others are ``o``; nothing past lane ``n - 1`` is read."""
    s = SPACES[space]
    name = f"kd_ldn_{elem}{lanes}_{space}" + (f"_s{stride}" if stride != 1 else "")
    at = "i" if stride == 1 else f"i * {stride}"
    staged = (
        f"  __private {elem} t[{lanes}];\n"
        f"  for (int i = 0; i < {lanes}; i++) t[i] = i < n ? p[{at}] : o;\n"
        f"  return {vmem.load(helper, elem, lanes, 'private', 't')};\n"
    )
    fast = _avx512(helper, elem, lanes, stride)
    if fast is not None:
        suffix, vt, via = fast
        o = f"as_{via}16(({elem}16)(o))" if via else f"({elem}16)(o)"
        got = (f"__builtin_ia32_load{suffix}_mask(({s} const void*)p, __builtin_convertvector({o}, {vt}), "
               f"KD_LANES16(n))")  # fmt: skip
        got = f"__builtin_convertvector({got}, {via or elem}16)"
        staged = f"#if defined(__clang__) && defined(__AVX512F__)\n  return {f'as_{elem}16({got})' if via else got};\n#else\n{staged}#endif\n"
    return helper(name, f"inline {elem}{lanes} {name}({s} const {elem}* p, int n, {elem} o) {{\n{staged}}}\n")


def store(helper: Helper, elem: str, lanes: int, space: str, nontemporal: bool = False) -> str:
    """Name of ``void f(S elem* p, int n, elemN v)``: lanes ``i < n`` of ``v`` to ``p[i]``, with
    ``nontemporal`` as scalar streaming stores."""
    s = SPACES[space]
    name = f"kd_stn_{elem}{lanes}_{space}" + ("_nt" if nontemporal else "")
    put = "__builtin_nontemporal_store(t[i], p + i)" if nontemporal else "p[i] = t[i]"
    staged = (
        f"  __private {elem} t[{lanes}];\n"
        f"  {vmem.store(helper, elem, lanes, 'private', 't', 'v')}\n"
        f"  for (int i = 0; i < min(n, {lanes}); i++) {put};\n"
    )
    fast = None if nontemporal else _avx512(helper, elem, lanes, 1)
    if fast is not None:
        suffix, vt, via = fast
        v = f"as_{via}16(v)" if via else "v"
        st = f"__builtin_ia32_store{suffix}_mask(({s} void*)p, __builtin_convertvector({v}, {vt}), KD_LANES16(n));"
        staged = f"#if defined(__clang__) && defined(__AVX512F__)\n  {st}\n#else\n{staged}#endif\n"
    return helper(name, f"inline void {name}({s} {elem}* p, int n, {elem}{lanes} v) {{\n{staged}}}\n")


def load_half(helper: Helper, lanes: int, whole: str) -> str:
    """Name of ``floatN f(__global const ushort* p, int n, float o)`` for f16 lanes: the bits of
    lanes ``i < n`` staged, converted by ``whole`` (the private-array form of ``kd_ldhN``), and
    ``o`` in the other lanes."""
    name = f"kd_ldhn{lanes}"
    ids = ", ".join(str(i) for i in range(lanes))
    src = (
        f"inline float{lanes} {name}(__global const ushort* p, int n, float o) {{\n"
        f"  __private ushort t[{lanes}];\n"
        f"  for (int i = 0; i < {lanes}; i++) t[i] = i < n ? p[i] : (ushort)0;\n"
        f"  return select({whole}(t), (float{lanes})(o), (int{lanes})({ids}) >= n);\n"
        f"}}\n"
    )
    return helper(name, src)


def store_half(helper: Helper, lanes: int, bits: str) -> str:
    """Name of ``void f(__global ushort* p, int n, floatN x)`` for f16 lanes: ``bits`` (the
    encoding of ``kd_sthN``) staged, lanes ``i < n`` copied out."""
    name = f"kd_sthn{lanes}"
    src = (
        f"inline void {name}(__global ushort* p, int n, float{lanes} x) {{\n"
        f"  __private ushort t[{lanes}];\n"
        f"  {vmem.store(helper, 'ushort', lanes, 'private', 't', f'{bits}(x)')}\n"
        f"  for (int i = 0; i < min(n, {lanes}); i++) p[i] = t[i];\n"
        f"}}\n"
    )
    return helper(name, src)
