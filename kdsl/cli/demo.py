"""``python -m kdsl demo``: Triton's tutorial kernels, written in kdsl, checked against numpy.

The kernels below are Triton's tutorials (vector add, fused softmax, blocked
matmul) with ``tl`` -> ``kl`` and ``triton.jit`` -> ``kdsl.kernel`` and nothing
else changed: the demo is the shortest proof that the DSL, the frontend and a
backend agree with numpy. It prints one row per kernel (max abs error against
numpy, steady-state time of kdsl and numpy, first-call time including
compilation) and then the tile IR of the vector-add kernel.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import kdsl
import kdsl.language as kl
from kdsl.__main__ import version
from kdsl.runtime.backends import resolve_backend

# --- the kernels -------------------------------------------------------------


@kdsl.kernel
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: kl.constexpr):  # type: ignore[no-untyped-def]
    pid = kl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + kl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = kl.load(x_ptr + offsets, mask=mask)
    y = kl.load(y_ptr + offsets, mask=mask)
    output = x + y
    kl.store(output_ptr + offsets, output, mask=mask)


@kdsl.kernel
def softmax_kernel(  # type: ignore[no-untyped-def]
    output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols, BLOCK_SIZE: kl.constexpr
):
    # A persistent kernel: each program walks rows pid, pid + num_programs, ...
    row_start = kl.program_id(0)
    row_step = kl.num_programs(0)
    for row_idx in kl.range(row_start, n_rows, row_step):  # type: ignore[attr-defined]  # kdsl-only iterator
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = kl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = kl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - kl.max(row, axis=0)
        numerator = kl.exp(row_minus_max)
        denominator = kl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        kl.store(output_ptrs, softmax_output, mask=mask)


@kdsl.kernel
def leaky_relu(x):  # type: ignore[no-untyped-def]
    return kl.where(x >= 0, x, 0.01 * x)


@kdsl.kernel
def matmul_kernel(  # type: ignore[no-untyped-def]
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_SIZE_M: kl.constexpr, BLOCK_SIZE_N: kl.constexpr, BLOCK_SIZE_K: kl.constexpr,
    GROUP_SIZE_M: kl.constexpr, ACTIVATION: kl.constexpr,
):  # fmt: skip
    # Grouped ("super-grouping") program order for L2 reuse, as in the tutorial.
    pid = kl.program_id(axis=0)
    num_pid_m = kl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = kl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + kl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + kl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = kl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = kl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=kl.float32)
    for k in range(0, kl.cdiv(K, BLOCK_SIZE_K)):
        a = kl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = kl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = kl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator

    offs_cm = pid_m * BLOCK_SIZE_M + kl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + kl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    kl.store(c_ptrs, c, mask=c_mask)


# --- host-side wrappers (what a user writes around a kernel) -----------------


def add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    output = np.empty_like(x)
    n_elements = output.size
    grid = lambda meta: (kdsl.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731 - the tutorial's idiom
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


def softmax(x: np.ndarray, max_programs: int = 128) -> np.ndarray:
    n_rows, n_cols = x.shape
    block = 1 << max(n_cols - 1, 0).bit_length()  # next power of two >= n_cols
    y = np.empty_like(x)
    grid = (min(n_rows, max_programs),)
    softmax_kernel[grid](y, x, x.strides[0] // x.itemsize, y.strides[0] // y.itemsize, n_rows, n_cols, BLOCK_SIZE=block)
    return y


def matmul(a: np.ndarray, b: np.ndarray, activation: str = "") -> np.ndarray:
    (M, K), (_, N) = a.shape, b.shape
    c = np.empty((M, N), dtype=np.float32)
    bm, bn, bk = 64, 64, 32
    grid = (kdsl.cdiv(M, bm) * kdsl.cdiv(N, bn),)
    sa, sb, sc = (s // a.itemsize for s in a.strides), (s // b.itemsize for s in b.strides), (s // 4 for s in c.strides)
    matmul_kernel[grid](
        a, b, c, M, N, K, *sa, *sb, *sc,
        BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=8, ACTIVATION=activation,
    )  # fmt: skip
    return c


# --- numpy references ----------------------------------------------------------


def softmax_ref(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]


def leaky_relu_ref(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0, x, np.float32(0.01) * x)


# --- the benchmark table -------------------------------------------------------


@dataclass
class Case:
    """One row of the table: a kdsl call and the numpy call it must match."""

    name: str
    shape: str
    run: Callable[[], np.ndarray]
    reference: Callable[[], np.ndarray]
    tolerance: float


@dataclass
class Row:
    case: Case
    error: float
    first_ms: float
    kdsl_ms: float
    numpy_ms: float

    @property
    def ok(self) -> bool:
        return self.error <= self.case.tolerance


def make_cases(small: bool, seed: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    n = 4099 if small else 98432
    rows, cols = (37, 129) if small else (1823, 781)
    m, k, nn = (96, 80, 72) if small else (256, 256, 256)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    s = rng.standard_normal((rows, cols), dtype=np.float32)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, nn), dtype=np.float32)
    mm_tol = 1e-5 * k * 4  # fp32 accumulation-order differences grow with K
    return [
        Case("vector add", f"{n}", lambda: add(x, y), lambda: x + y, 0.0),
        Case("fused softmax", f"{rows}x{cols}", lambda: softmax(s), lambda: softmax_ref(s), 1e-6),
        Case("matmul", f"{m}x{k} @ {k}x{nn}", lambda: matmul(a, b), lambda: a @ b, mm_tol),
        Case(
            "matmul+leaky_relu",
            f"{m}x{k} @ {k}x{nn}",
            lambda: matmul(a, b, "leaky_relu"),
            lambda: leaky_relu_ref(a @ b),
            mm_tol,
        ),
    ]


def best_ms(fn: Callable[[], Any], repeat: int) -> float:
    """Best wall time of ``repeat`` calls, in milliseconds (min is the least noisy statistic)."""
    times = []
    for _ in range(max(repeat, 1)):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * min(times)


def run_case(case: Case, repeat: int) -> Row:
    t0 = time.perf_counter()
    got = case.run()
    first_ms = 1e3 * (time.perf_counter() - t0)
    want = case.reference()
    error = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    return Row(case, error, first_ms, best_ms(case.run, repeat), best_ms(case.reference, repeat))


def format_table(rows: Sequence[Row]) -> str:
    header = ("kernel", "shape", "max abs err", "kdsl ms", "numpy ms", "first call ms", "check")
    body = [
        (
            r.case.name,
            r.case.shape,
            f"{r.error:.2e}",
            f"{r.kdsl_ms:.2f}",
            f"{r.numpy_ms:.3f}",
            f"{r.first_ms:.1f}",
            "ok" if r.ok else f"FAIL (tol {r.case.tolerance:.0e})",
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in (header, *body)) for i in range(len(header))]

    def fmt(line: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip()

    return "\n".join([fmt(header), fmt(tuple("-" * w for w in widths)), *map(fmt, body)])


def vector_add_ir() -> str:
    """The tile IR the frontend produces for ``add_kernel`` (before optimisation)."""
    from kdsl.ir.printer import print_op

    module = kdsl.compile_to_ir(add_kernel, "*f32", "*f32", "*f32", "i32", BLOCK_SIZE=1024)
    return print_op(module)


def backend_name(name: str | None) -> str:
    """The backend launches use: ``name`` if given, else kdsl's current default."""
    return name or kdsl.current_backend_name()


@contextlib.contextmanager
def chosen_backend(name: str | None) -> Iterator[None]:
    if name is None:
        yield
        return
    with kdsl.backend(name):
        resolve_backend(name)  # fail now, with the reason, if it cannot run here
        yield


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m kdsl demo",
        description="Run Triton's tutorial kernels written in kdsl, check them against numpy, print a table.",
    )
    p.add_argument("--backend", default=None, help="backend to run on (default: kdsl's default; env KDSL_BACKEND)")
    p.add_argument("--small", action="store_true", help="small shapes: a quick correctness check")
    p.add_argument("--repeat", type=int, default=5, help="timed calls per kernel; the best is reported (default 5)")
    p.add_argument("--seed", type=int, default=0, help="random seed for the inputs")
    p.add_argument("--no-ir", dest="ir", action="store_false", help="do not print the vector-add tile IR")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with chosen_backend(args.backend):
        print(f"kdsl {version()} demo on backend '{backend_name(args.backend)}' (times: best of {args.repeat})\n")
        rows = [run_case(case, args.repeat) for case in make_cases(args.small, args.seed)]
        print(format_table(rows))
        if args.ir:
            print("\ntile IR of add_kernel (python -m kdsl compile shows every stage):\n")
            print(vector_add_ir())
    failed = [r.case.name for r in rows if not r.ok]
    if failed:
        print(f"\nFAILED: {', '.join(failed)} disagree with numpy")
        return 1
    return 0
