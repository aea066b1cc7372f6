# %% [markdown]
# # 08 — Reading the IR and writing a pass
#
# Every kernel goes down a ladder of printable stages (see `docs/ARCHITECTURE.md`):
#
# 1. **Python source** — the `@kdsl.kernel` function;
# 2. **tile IR** — what the frontend emits: SSA ops on whole tiles (`tile`, `arith`, `math`, `scf` dialects),
#    one `tile.func` per (kernel, specialisation) plus `tile.call`s to helper kernels;
# 3. **optimised tile IR** — after the default pipeline `inline, canonicalize, cse, dce`;
# 4. backend code (work-item IR, OpenCL C / SPIR-V / LLVM IR) — for the device backends.
#
# Every IR stage prints as text that parses back (`kdsl.ir.parser.parse_module`).

# %%
import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.ir.printer import print_op
from tutorial_utils import as_image, benchmark, pick, show_table

# %% [markdown]
# A small kernel with a helper call, a constant expression and a redundant computation — so that every
# pass has something to do:

# %%
@kdsl.kernel
def scale(x):
    return x * 2.0


@kdsl.kernel
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    mask = offs < n
    x = kl.load(x_ptr + offs, mask=mask)
    y = kl.load(y_ptr + offs, mask=mask)
    unused = kl.exp(x)  # dead code: dce removes it
    a = scale(x) + y * (3 - 2)  # a call (inline), a constant expression (canonicalize)
    b = scale(x) + y * (3 - 2)  # the same again (cse)
    kl.store(out_ptr + offs, a + b, mask=mask)

# %% [markdown]
# ## Stage 2: the tile IR straight from the frontend
#
# `kdsl.compile_to_ir` takes Triton-style signature strings (`*f32` = pointer to f32) or real arguments.
# Note the two `tile.func`s, the `tile.call`s, the value names taken from the Python variables
# (`%offs`, `%mask`), and the types: `tile<128xf32>` is a 128-element tile, `ptr<f32>` a pointer.

# %%
module = kdsl.compile_to_ir(axpy_kernel, "*f32", "*f32", "*f32", "i32", BLOCK=128)
print(print_op(module))

# %% [markdown]
# ## Stage 3: after the default pipeline

# %%
optimized = kdsl.compile_to_ir(axpy_kernel, "*f32", "*f32", "*f32", "i32", BLOCK=128, optimize=True)
print(print_op(optimized))

# %% [markdown]
# ## Pass by pass
#
# `PassManager(dump=True)` (or the environment variable `KDSL_DUMP=1` for a whole program, or
# `KDSL_DUMP=some/dir/` for one file per pass) prints the IR after each pass to stderr. Here we capture the
# dumps in a directory and show how the op count falls:

# %%
import pathlib
import tempfile

from kdsl.transforms import PassManager, default_pipeline, parse_pipeline

with tempfile.TemporaryDirectory() as d:
    default_pipeline(dump=d).run(kdsl.compile_to_ir(axpy_kernel, "*f32", "*f32", "*f32", "i32", BLOCK=128))
    for f in sorted(pathlib.Path(d).iterdir()):
        text = f.read_text()
        print(f"{f.name:28s} {text.count(' = ') :3d} op results, {text.count('tile.call')} calls")
    last = sorted(pathlib.Path(d).iterdir())[-1]

# %% [markdown]
# What each pass did:
#
# - **inline** replaced each `tile.call @scale` by the callee's body (and dropped the now unused function);
# - **canonicalize** folded `3 - 2` to `1`, then `y * 1` to `y`, and applied algebraic rules;
# - **cse** merged the second `scale(x) + y` into the first (same op, same operands, no side effects);
# - **dce** removed `kl.exp(x)`, whose result is never used.
#
# The same pipeline runs from the command line on a text file: `python -m kdsl opt file.mlir -p inline,canonicalize,cse,dce`.

# %% [markdown]
# ## Writing a pass
#
# A pass changes IR through **rewrite patterns**: a `RewritePattern` looks at one op, checks its
# conditions, and changes IR only through the `PatternRewriter` (so the driver knows what to revisit).
# `apply_patterns_greedily` runs patterns to a fixpoint. Here: strength reduction of an integer
# multiplication by a power of two into a left shift (`x * 1024` -> `x << 10`) — the vector add kernel
# computes `pid * BLOCK_SIZE`, a good candidate.

# %%
from kdsl.ir.dialects import arith
from kdsl.ir.rewriter import PatternRewriter, RewritePattern
from kdsl.ir.types import ScalarType
from kdsl.transforms import Pass
from kdsl.transforms.greedy import apply_patterns_greedily


def constant_value(value):
    """The Python value of an `arith.constant` result, else None."""
    op = value.owner_op  # the defining op (None for a block argument)
    return op.attributes.get("value") if isinstance(op, arith.ConstantOp) else None


class MulPow2ToShl(RewritePattern):
    OPS = ("arith.mul",)

    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> bool:
        ty = op.results[0].type
        if not (isinstance(ty, ScalarType) and ty.is_integer):
            return False  # scalars only, to keep the example short
        c = constant_value(op.operands[1])
        if not isinstance(c, int) or c <= 1 or c & (c - 1):
            return False
        rewriter.set_insertion_point(op)
        shift = rewriter.create(arith.ConstantOp, result_types=[ty], attributes={"value": c.bit_length() - 1})
        shl = rewriter.create(arith.ShlOp, [op.operands[0], shift.results[0]], [ty])
        rewriter.replace_op(op, shl)
        return True


class StrengthReduce(Pass):
    name = "strength-reduce"
    summary = "integer multiplication by a power of two -> shift left"

    def run(self, module):
        apply_patterns_greedily(module, [MulPow2ToShl()])

# %%
from kdsl.ops.elementwise import add_kernel

m = kdsl.compile_to_ir(add_kernel, "*f32", "*f32", "*f32", "i32", BLOCK_SIZE=1024, optimize=True)
PassManager([StrengthReduce()] + list(parse_pipeline("canonicalize,dce").passes)).run(m)
text = print_op(m)
print("\n".join(line for line in text.splitlines() if "pid" in line or "arith.sh" in line or "value = 10" in line))
assert "arith.shl" in text and "arith.mul" not in text

# %% [markdown]
# The rewritten module still verifies (the pass manager verifies after each pass) and still runs —
# backends take IR, not Python — so we can execute it directly with the backend API and compare:

# %%
from kdsl.runtime.backend import LaunchOptions
from kdsl.runtime.backends import resolve_backend

backend = resolve_backend("interpreter")
compiled = backend.compile(m, "add_kernel", LaunchOptions())
n = pick(3000, 100000)
x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
out = np.zeros_like(x)
compiled.launch((kdsl.cdiv(n, 1024), 1, 1), [x, y, out, n])
print("strength-reduced kernel matches numpy:", np.array_equal(out, x + y))

# %% [markdown]
# ## Benchmark: how long does each stage take?
#
# Compilation time of the frontend and of the pipeline for kernels of growing size (the library's
# matmul kernel with more and more epilogue features), compared with the time numpy needs to add two
# arrays of a million elements (just a yardstick).

# %%
import time

from kdsl.ops.matmul import matmul_kernel

variants = [dict(ACTIVATION=""), dict(ACTIVATION="gelu"), dict(ACTIVATION="gelu_tanh")]
args = ["*f32"] * 6 + ["i32"] * 12
rows = []
for meta in variants:
    full = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, GROUP_M=8, HAS_BIAS=True, HAS_SCALE=False,
                HAS_RESIDUAL=True, ACC_INT=False, **meta)
    t0 = time.perf_counter()
    mod = kdsl.compile_to_ir(matmul_kernel, *args, **full)
    t1 = time.perf_counter()
    default_pipeline().run(mod)
    t2 = time.perf_counter()
    rows.append((meta["ACTIVATION"] or "none", 1e3 * (t1 - t0), 1e3 * (t2 - t1), print_op(mod).count("\n")))
for r in rows:
    print(f"activation {r[0]:10s} frontend {r[1]:7.1f} ms  passes {r[2]:7.1f} ms  {r[3]} lines of IR")

# %%
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(6, 3))
labels = [r[0] for r in rows]
ax.bar(labels, [r[1] for r in rows], label="frontend")
ax.bar(labels, [r[2] for r in rows], bottom=[r[1] for r in rows], label="passes")
ax.set_ylabel("ms")
ax.set_title("compile time of matmul_kernel variants")
ax.legend()
as_image(fig)
