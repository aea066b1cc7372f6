"""OpenCL C for whole-vector loads and stores that need only element alignment.

``vloadN``/``vstoreN`` are the portable spelling, but PoCL implements them in its kernel
library from narrower pieces, and its LLVM keeps them apart: a ``vload16`` of floats
becomes two 128-bit loads, a 256-bit load and two inserts, a ``vstore16`` three
stores (seen in the disassembly of every block copy and ``wi.mma`` accumulator of the
attention kernel). Clang lets a typedef lower a type's alignment, so a ``floatN``
typedef aligned to its element (``kd_ufloatN``) makes the same access one unaligned
full-width instruction (``vmovups zmm``). Clang-based compilers (PoCL, and the other
OpenCL compilers built on clang) get that; any other compiler gets ``vloadN``/``vstoreN``
from the same macros, so the generated source stays portable.

The accesses go through macros (``KD_VLD``/``KD_VST``) because the cast names the
pointer's address space, which a typedef cannot leave open in OpenCL C 1.2.
"""

from __future__ import annotations

from collections.abc import Callable

# A renderer's ``helper(name, source) -> name``: registers prelude text once.
Helper = Callable[[str, str], str]

_MACROS = """\
#ifdef __clang__
#define KD_VLD(T, N, S, p) (*(S const kd_u##T##N*)(p))
#define KD_VST(T, N, S, p, v) (*(S kd_u##T##N*)(p) = (v))
#else
#define KD_VLD(T, N, S, p) vload##N(0, p)
#define KD_VST(T, N, S, p, v) vstore##N(v, 0, p)
#endif
"""

_ITEMSIZE = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "float": 4,
             "long": 8, "ulong": 8, "double": 8}  # fmt: skip

# IR memory space -> OpenCL address-space qualifier of a pointer into it
SPACES = {"private": "__private", "local": "__local", "global": "__global"}


def _declare(helper: Helper, elem: str, lanes: int) -> None:
    helper("kd_vmem", _MACROS)
    name = f"kd_u{elem}{lanes}"
    helper(name, f"#ifdef __clang__\ntypedef {elem}{lanes} __attribute__((aligned({_ITEMSIZE[elem]}))) {name};\n#endif\n")


def load(helper: Helper, elem: str, lanes: int, space: str, ptr: str) -> str:
    """Expression loading ``lanes`` consecutive ``elem`` (C scalar type) at ``ptr`` in ``space``
    (a key of :data:`SPACES`) as one ``elemN`` vector. A 3-vector is 4 elements wide in
    memory, so it keeps ``vload3``."""
    if lanes == 3:
        return f"vload3(0, {ptr})"
    _declare(helper, elem, lanes)
    return f"KD_VLD({elem}, {lanes}, {SPACES[space]}, {ptr})"


def store(helper: Helper, elem: str, lanes: int, space: str, ptr: str, value: str) -> str:
    """Statement storing the ``elemN`` vector ``value`` at ``ptr`` (element-aligned) in ``space``."""
    if lanes == 3:
        return f"vstore3({value}, 0, {ptr});"
    _declare(helper, elem, lanes)
    return f"KD_VST({elem}, {lanes}, {SPACES[space]}, {ptr}, {value});"
