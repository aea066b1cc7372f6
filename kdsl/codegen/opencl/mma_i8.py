"""OpenCL C for an int8 x int8 -> int32 ``wi.mma`` with AVX-512 VNNI (``vpdpbusd``).

Why: the generic integer micro-kernel widens every ``b`` byte to an int lane and multiplies with
``vpmulld`` (two micro-ops, one lane-product per lane), so an int8 matmul ran at a third of the
fp32 rate. ``vpdpbusd`` adds four byte products into each int32 lane in one instruction: four
times the work per instruction of that loop, exactly (products and sums wrap in 32 bits, as the
scalar loops do).

It multiplies *unsigned* bytes of its first operand by *signed* bytes of its second, and lane
``l`` sums bytes ``4l..4l+3`` of both. So ``b``'s rows are repacked once per mma: four
consecutive ``k`` of one column make one int32 lane, 16 columns a vector, panel by panel, each
byte XOR ``0x80`` (``b + 128`` as unsigned); four bytes of a row of ``a`` are broadcast as
signed. Then ``sum((b + 128) * a) = sum(a * b) + 128 * sum(a)``, and every accumulator starts
``128 * rowsum(a)`` lower. The repack touches ``k x n`` bytes once and the row sums ``m x k``
once, against ``m x n x k`` products (1/m and 1/n of them: 1/128 and 1/256 at 128 x 256 x 128).

Clang exposes the instruction as ``__builtin_ia32_vpdpbusd512``. PoCL compiles for its own
name of the CPU (``skylake-avx512`` on this Xeon, which has VNNI), so the micro-kernel is a
function of its own with ``__attribute__((target("avx512vnni")))``; the renderer emits it only
for a device that runs on a host with the instruction (``DeviceCaps.int8_dot``, from the host's
CPU features, part of the device key), called once per mma.
"""

from __future__ import annotations

from collections.abc import Callable

from kdsl.codegen.opencl import vmem
from kdsl.ir.core import Operation
from kdsl.ir.types import MemRefType, ScalarType

_TYPEDEF = "kd_v16si"
_DECL = f"typedef int {_TYPEDEF} __attribute__((vector_size(64)));\n"


def applies(op: Operation) -> bool:
    """int8 ``a`` and ``b`` and int32 accumulators in private arrays, 16-lane vectors, ``k`` and
    ``n`` multiples of 16 (whole byte rows for the row sums, whole vectors for the repack)."""
    types = [x.type for x in (op.a, op.b, op.c, *([op.init] if op.init is not None else []))]
    if not all(isinstance(t, MemRefType) and isinstance(t.element, ScalarType) for t in types):
        return False
    names = tuple(t.element.name for t in types[:3])  # type: ignore[union-attr]
    private = all(t.space == "private" for t in types)  # type: ignore[union-attr]
    attrs = op.attributes
    shape_ok = int(attrs["k"]) % 16 == 0 and int(attrs["n"]) % 16 == 0 and int(attrs["block_n"]) % 16 == 0
    return names == ("i8", "i8", "i32") and private and int(attrs["vector_width"]) == 16 and shape_ok


def render(op: Operation, names: list[str], emit: Callable[[str], None], helper: vmem.Helper) -> None:
    """Call the VNNI micro-kernel for this mma's shape (``names``: C names of a, b, c[, init]),
    registering its function in the prelude once per shape (module doc)."""
    attrs = op.attributes
    m, n, k = int(attrs["m"]), int(attrs["n"]), int(attrs["k"])
    bm, bn = int(attrs["block_m"]), int(attrs["block_n"])
    name = f"kd_mma_i8_{m}x{n}x{k}_{bm}x{bn}"
    helper(_TYPEDEF, _DECL)
    helper(name, _function(name, m, n, k, bm, bn, helper))
    a, b, c = names[:3]
    emit(f"{name}({a}, {b}, {names[3] if len(names) > 3 else c}, {c});")


def _function(name: str, m: int, n: int, k: int, bm: int, bn: int, helper: vmem.Helper) -> str:
    lines: list[str] = []
    nv, k4, vt = bn // 16, k // 4, _TYPEDEF

    def emit(line: str) -> None:
        lines.append("  " + line)

    def v(x: str) -> str:
        return f"__builtin_convertvector({x}, {vt})"

    def ld(elem: str, ptr: str) -> str:
        return vmem.load(helper, elem, 16, "private", ptr)

    # b repacked: column group g (16 columns), k step q -> 16 lanes at (g * k4 + q) * 16
    emit(f"uint pb[{k4 * n}];")
    emit(f"for (int g = 0; g < {n // 16}; g += 1) {{")
    emit(f"  for (int q = 0; q < {k4}; q += 1) {{")
    for t in range(4):
        emit(f"    const uint16 x{t} = convert_uint16(as_uchar16({ld('char', f'b + (4 * q + {t}) * {n} + g * 16')}));")
    packed = "(x0 | (x1 << 8) | (x2 << 16) | (x3 << 24)) ^ (uint16)(0x80808080u)"
    emit("    " + vmem.store(helper, "uint", 16, "private", f"pb + (g * {k4} + q) * 16", packed))
    emit("  }")
    emit("}")
    # 128 * rowsum(a): what the unsigned b adds to each row (uint: wraps as the products do)
    emit(f"uint rs[{m}];")
    emit(f"for (int r = 0; r < {m}; r += 1) {{")
    emit("  int16 s = (int16)(0);")
    emit(f"  for (int t = 0; t < {k}; t += 16) s += convert_int16({ld('char', f'a + r * {k} + t')});")
    emit("  const int8 s8 = s.lo + s.hi;")
    emit("  const int4 s4 = s8.lo + s8.hi;")
    emit("  const int2 s2 = s4.lo + s4.hi;")
    emit("  rs[r] = (uint)(s2.x + s2.y) * 128u;")
    emit("}")
    emit(f"for (int j = 0; j < {n}; j += {bn}) {{")
    emit(f"  for (int i = 0; i < {m}; i += {bm}) {{")
    for r in range(bm):
        for s in range(nv):
            init = ld("int", f"src + (i + {r}) * {n} + j + {s * 16}")
            emit(f"    {vt} c{r}_{s} = {v(f'as_int16(as_uint16({init}) - (uint16)(rs[i + {r}]))')};")
    emit(f"    for (int q = 0; q < {k4}; q += 1) {{")
    for s in range(nv):
        packed_b = ld("uint", f"pb + ((j / 16 + {s}) * {k4} + q) * 16")
        emit(f"      const {vt} b{s} = {v(f'as_int16({packed_b})')};")
    for r in range(bm):
        emit(f"      const {vt} a{r} = {v(f'(int16)(as_int(vload4(0, a + (i + {r}) * {k} + 4 * q)))')};")
        for s in range(nv):
            emit(f"      c{r}_{s} = __builtin_ia32_vpdpbusd512(c{r}_{s}, b{s}, a{r});")
    emit("    }")
    for r in range(bm):
        for s in range(nv):
            out = f"__builtin_convertvector(c{r}_{s}, int16)"
            emit("    " + vmem.store(helper, "int", 16, "private", f"c + (i + {r}) * {n} + j + {s * 16}", out))
    emit("  }")
    emit("}")
    head = (f'__attribute__((target("avx512vnni,avx512bw"))) __attribute__((noinline))\n'
            f"static void {name}(const char* a, const char* b, const int* src, int* c) {{\n")
    return head + "\n".join(lines) + "\n}\n"


__all__ = ["applies", "render"]
