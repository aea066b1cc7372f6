"""The cpu backend against the interpreter (the oracle) and numpy.

Each test compiles one tile-IR module and runs it both on ``CPUBackend`` (two
threads, so grids really split) and on ``InterpreterBackend``; results must
be identical where the semantics are exact (integers, casts, memory) and
within the math contract elsewhere.
"""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import DeviceAssertionError
from tests.runtime import rt_kernels as RK

from ._helpers import compile_cpu, run_both

ALL = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
       np.float16, np.float32, np.float64]  # fmt: skip


@kdsl.kernel
def binop_kernel(x_ptr, y_ptr, out_ptr, n, OP: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    x = kl.load(x_ptr + offs, mask=m)
    y = kl.load(y_ptr + offs, mask=m)
    if OP == "add":
        r = x + y
    elif OP == "sub":
        r = x - y
    elif OP == "mul":
        r = x * y
    elif OP == "div":
        r = x // y
    elif OP == "truediv":
        r = x / y
    elif OP == "mod":
        r = x % y
    elif OP == "shl":
        r = x << y
    elif OP == "shr":
        r = x >> y
    elif OP == "max":
        r = kl.maximum(x, y)
    else:
        r = kl.minimum(x, y)
    kl.store(out_ptr + offs, r, mask=m)


def _values(dtype: type, n: int, rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        edge = [info.min, info.max, 0, 1, 2, info.max - 1]
        if info.min < 0:
            edge += [-1, -2, info.min + 1]
        vals = rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
        vals[: len(edge)] = np.array(edge, dtype=object).astype(dtype)
        return vals
    vals = (rng.standard_normal(n) * 10).astype(dtype)
    vals[:4] = np.array([0.0, -0.0, np.inf, np.nan], dtype=dtype)
    return vals


@pytest.mark.parametrize("dtype", ALL, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "mod", "max", "min"])
def test_binary_ops_match_interpreter(dtype: type, op: str) -> None:
    rng = np.random.default_rng(1)
    n = 300
    x, y = _values(dtype, n, rng), _values(dtype, n, np.random.default_rng(2))
    if np.issubdtype(dtype, np.integer):
        y[::7] = 0  # division by zero: 0 by the interpreter's rule
        if np.issubdtype(dtype, np.signedinteger):
            x[5], y[5] = np.iinfo(dtype).min, -1  # MIN / -1 wraps
    elif op == "div":
        op = "truediv"
    out = np.zeros(n, dtype)
    cpu, ref = run_both(binop_kernel, (3,), [x, y, out, n], OP=op, BLOCK=128)
    np.testing.assert_array_equal(cpu[2], ref[2])


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.uint64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["shl", "shr"])
def test_shifts_out_of_range(dtype: type, op: str) -> None:
    bits = np.dtype(dtype).itemsize * 8
    n = 64
    x = _values(dtype, n, np.random.default_rng(3))
    amounts = np.arange(n) % (bits + 5)
    y = amounts.astype(dtype)
    if np.issubdtype(dtype, np.signedinteger):
        y[-3:] = -1  # negative amounts read as huge
    out = np.zeros(n, dtype)
    cpu, ref = run_both(binop_kernel, (1,), [x, y, out, n], OP=op, BLOCK=64)
    np.testing.assert_array_equal(cpu[2], ref[2])


@kdsl.kernel
def cast_kernel(x_ptr, out_ptr, n, DST: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=m).to(DST), mask=m)


_KL = {np.int8: kl.int8, np.int16: kl.int16, np.int32: kl.int32, np.int64: kl.int64, np.uint8: kl.uint8,
       np.uint16: kl.uint16, np.uint32: kl.uint32, np.uint64: kl.uint64, np.float16: kl.float16,
       np.float32: kl.float32, np.float64: kl.float64}  # fmt: skip


@pytest.mark.parametrize("src", [np.float16, np.float32, np.float64, np.int64, np.uint32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dst", ALL, ids=lambda d: np.dtype(d).name)
def test_casts_including_out_of_range(src: type, dst: type) -> None:
    n = 200
    if np.issubdtype(src, np.floating):
        x = np.concatenate([
            np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -1.5, 1e30, -1e30, 300.0, -300.0]),
            np.random.default_rng(4).standard_normal(n - 14) * 1e5,
        ]).astype(src)
    else:
        x = _values(src, n, np.random.default_rng(5))
    out = np.zeros(n, dst)
    cpu, ref = run_both(cast_kernel, (2,), [x, out, n], DST=_KL[dst], BLOCK=128)
    np.testing.assert_array_equal(cpu[1], ref[1])


@kdsl.kernel
def bf16_kernel(x_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    m = offs < n
    x = kl.load(x_ptr + offs, mask=m).to(kl.bfloat16)
    y = (x * x + x) / 3.0
    kl.store(out_ptr + offs, y.to(kl.float32), mask=m)


def test_bf16_rounds_after_every_op() -> None:
    x = np.random.default_rng(6).standard_normal(100).astype(np.float32) * 7
    x[:3] = [np.nan, np.inf, 1e38]
    out = np.zeros(100, np.float32)
    cpu, ref = run_both(bf16_kernel, (1,), [x, out, 100], BLOCK=128)
    np.testing.assert_array_equal(cpu[1], ref[1])


@kdsl.kernel
def math_kernel(x_ptr, out_ptr, n, FN: kl.constexpr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    x = kl.load(x_ptr + offs, mask=m)
    if FN == "exp":
        r = kl.exp(x)
    elif FN == "exp2":
        r = kl.exp2(x)
    elif FN == "log":
        r = kl.log(x)
    elif FN == "log2":
        r = kl.log2(x)
    elif FN == "tanh":
        r = kl.tanh(x)
    elif FN == "sin":
        r = kl.sin(x)
    elif FN == "erf":
        r = kl.erf(x)
    elif FN == "sqrt_rn":
        r = kl.sqrt_rn(x)
    else:
        r = kl.rsqrt(x)
    kl.store(out_ptr + offs, r, mask=m)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn", ["exp", "exp2", "log", "log2", "tanh", "sin", "erf", "sqrt_rn", "rsqrt"])
def test_math_within_contract(dtype: type, fn: str) -> None:
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(500) * 5).astype(dtype)
    if fn in ("log", "log2", "sqrt_rn", "rsqrt"):
        x = np.abs(x) + np.asarray(1e-3, dtype)
    out = np.zeros_like(x)
    cpu, ref = run_both(math_kernel, (4,), [x, out, x.size], FN=fn, BLOCK=128)
    if fn == "sqrt_rn":
        np.testing.assert_array_equal(cpu[1], ref[1])
        return
    tol = {np.float16: 1e-3, np.float32: 2e-6, np.float64: 1e-13}[dtype]
    np.testing.assert_allclose(cpu[1], ref[1], rtol=tol, atol=tol)


@kdsl.kernel
def rowops_kernel(x_ptr, sum_ptr, max_ptr, cum_ptr, N: kl.constexpr):
    row = kl.program_id(0)
    offs = kl.arange(0, N)
    x = kl.load(x_ptr + row * N + offs)
    kl.store(sum_ptr + row, kl.sum(x, axis=0))
    kl.store(max_ptr + row, kl.max(x, axis=0))
    kl.store(cum_ptr + row * N + offs, kl.cumsum(x, axis=0))


@pytest.mark.parametrize("dtype", [np.int32, np.float32], ids=lambda d: np.dtype(d).name)
def test_reductions_and_scans(dtype: type) -> None:
    rows, n = 37, 64
    x = (np.random.default_rng(8).standard_normal((rows, n)) * 100).astype(dtype)
    s, mx, cum = np.zeros(rows, dtype), np.zeros(rows, dtype), np.zeros((rows, n), dtype)
    cpu, ref = run_both(rowops_kernel, (rows,), [x, s, mx, cum], N=n)
    np.testing.assert_array_equal(cpu[2], ref[2])
    rtol = 1e-5 if dtype == np.float32 else 0
    np.testing.assert_allclose(cpu[1], ref[1], rtol=rtol, atol=1e-3 if rtol else 0)
    np.testing.assert_allclose(cpu[3], ref[3], rtol=rtol, atol=1e-3 if rtol else 0)


@kdsl.kernel
def dot_kernel(a_ptr, b_ptr, c_ptr, M: kl.constexpr, N: kl.constexpr, K: kl.constexpr, ACC: kl.constexpr):
    rm = kl.arange(0, M)
    rn = kl.arange(0, N)
    rk = kl.arange(0, K)
    a = kl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = kl.load(b_ptr + rk[:, None] * N + rn[None, :])
    kl.store(c_ptr + rm[:, None] * N + rn[None, :], kl.dot(a, b, out_dtype=ACC))


@pytest.mark.parametrize("dtype,acc", [(np.float32, np.float32), (np.float16, np.float32), (np.int8, np.int32)],
                         ids=["f32", "f16", "i8"])
def test_dot(dtype: type, acc: type) -> None:
    rng = np.random.default_rng(9)
    m, n, k = 16, 32, 16
    if dtype == np.int8:
        a, b = rng.integers(-128, 127, (m, k), dtype=np.int8), rng.integers(-128, 127, (k, n), dtype=np.int8)
        want = a.astype(np.int32) @ b.astype(np.int32)
    else:
        a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
        want = a.astype(np.float64) @ b.astype(np.float64)
    c = np.zeros((m, n), acc)
    cpu, ref = run_both(dot_kernel, (1,), [a, b, c], M=m, N=n, K=k, ACC=_KL[acc])
    if dtype == np.int8:
        np.testing.assert_array_equal(cpu[2], want)
    else:
        np.testing.assert_allclose(cpu[2], want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(cpu[2], ref[2], rtol=1e-5, atol=1e-5)


@kdsl.kernel
def counter_kernel(cnt_ptr, fsum_ptr, fmax_ptr, x_ptr, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    kl.atomic_add(cnt_ptr + offs % 4, 1)
    kl.atomic_add(fsum_ptr, kl.sum(x, axis=0))
    kl.atomic_max(fmax_ptr, kl.max(x, axis=0))


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_atomics_under_parallel_execution(threads: int) -> None:
    programs, block = 512, 64
    x = np.random.default_rng(10).integers(0, 100, programs * block).astype(np.float32)
    cnt, fsum, fmax = np.zeros(4, np.int32), np.zeros(1, np.float32), np.full(1, -1.0, np.float32)
    k = compile_cpu(counter_kernel, [cnt, fsum, fmax, x], threads=threads, BLOCK=block)
    k.launch((programs, 1, 1), [cnt, fsum, fmax, x])
    np.testing.assert_array_equal(cnt, np.full(4, programs * block // 4))
    assert fsum[0] == x.sum(dtype=np.float64)  # integers below 2^24: exact in any order
    assert fmax[0] == x.max()


@kdsl.kernel
def grid3_kernel(out_ptr):
    x, y, z = kl.program_id(0), kl.program_id(1), kl.program_id(2)
    nx, ny = kl.num_programs(0), kl.num_programs(1)
    kl.store(out_ptr + x + nx * (y + ny * z), x * 10000 + y * 100 + z)


@pytest.mark.parametrize("threads", [1, 3, 8])
def test_thread_count_option_and_3d_grid(threads: int) -> None:
    out = np.zeros(7 * 5 * 3, np.int32)
    k = compile_cpu(grid3_kernel, [out], threads=threads)
    assert k.threads == threads
    k.launch((7, 5, 3), [out])
    z, y, x = np.meshgrid(np.arange(3), np.arange(5), np.arange(7), indexing="ij")
    np.testing.assert_array_equal(out, (x * 10000 + y * 100 + z).ravel())


def test_thread_count_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from kdsl.runtime.cpu.pool import default_threads

    monkeypatch.setenv("KDSL_CPU_THREADS", "5")
    assert default_threads() == 5
    monkeypatch.delenv("KDSL_CPU_THREADS")
    assert default_threads() >= 1


@kdsl.kernel
def collatz_kernel(x_ptr, out_ptr):
    pid = kl.program_id(0)
    v = kl.load(x_ptr + pid)
    steps = 0
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        steps += 1
    for i in range(0, 3):
        if i == 1:
            steps += 100
    kl.store(out_ptr + pid, steps)


def test_control_flow_while_if_for() -> None:
    x = np.arange(1, 41, dtype=np.int32)
    out = np.zeros(40, np.int32)
    cpu, ref = run_both(collatz_kernel, (40,), [x, out])
    np.testing.assert_array_equal(cpu[1], ref[1])
    assert cpu[1][26] == 111 + 100  # 27 takes 111 steps


@kdsl.kernel
def print_kernel(x_ptr):
    offs = kl.arange(0, 4)
    kl.device_print("cpu-dp ", kl.load(x_ptr + offs))


def test_device_print(capfd: pytest.CaptureFixture[str]) -> None:
    x = np.array([11, -22, 33, 44], np.int32)
    compile_cpu(print_kernel, [x]).launch((1, 1, 1), [x])
    text = capfd.readouterr().out
    assert text.count("cpu-dp") == 4
    for v in x:
        assert f"cpu-dp {v}" in text


@kdsl.kernel
def assert_kernel(x_ptr, BLOCK: kl.constexpr):
    x = kl.load(x_ptr + kl.program_id(0) * BLOCK + kl.arange(0, BLOCK))
    kl.device_assert(x > 0, "x must be positive")  # cpu-assert-line


def test_device_assert_raises_with_location() -> None:
    good = np.ones(64, np.int32)
    k = compile_cpu(assert_kernel, [good], BLOCK=16)
    k.launch((4, 1, 1), [good])
    bad = good.copy()
    bad[37] = -1
    with pytest.raises(DeviceAssertionError) as info:
        k.launch((4, 1, 1), [bad])
    assert "x must be positive" in str(info.value)
    assert info.value.loc is not None and info.value.loc.line > 0


@kdsl.kernel
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out_ptr + offs, 3.0 * kl.load(x_ptr + offs, mask=m) + kl.load(y_ptr + offs, mask=m), mask=m)


def test_aliased_arguments_use_the_safe_variant() -> None:
    y = np.arange(20, dtype=np.float32)
    want = 3 * y[:10] + y[5:15]
    k = compile_cpu(axpy_kernel, [y[:10], y[5:15], y[10:20], 10], BLOCK=16)
    k.launch((1, 1, 1), [y[:10], y[5:15], y[10:20], 10])
    np.testing.assert_array_equal(y[10:20], want)
    assert k._safe is not None  # the overlap was detected


def test_unused_pointer_overlapping_the_output_is_not_aliasing() -> None:
    """A pointer the specialised kernel never reads (an absent bias passed as the output) cannot
    alias: the no-overlap kernel runs, no safe variant is built."""
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    k = compile_cpu(RK.scale_bias, [x, out, out, 16], HAS_BIAS=False, BLOCK=16)
    assert k.unused == frozenset({1})
    k.launch((1, 1, 1), [x, out, out, 16])
    np.testing.assert_array_equal(out, 2 * x)
    assert k._safe is None
    y = x.copy()
    k2 = compile_cpu(RK.scale_bias, [x, y, y, 16], HAS_BIAS=True, BLOCK=16)
    k2.launch((1, 1, 1), [x, y, y, 16])  # read and written through two parameters: the safe variant
    np.testing.assert_array_equal(y, 3 * x)
    assert k2._safe is not None


def test_masked_loads_never_touch_memory_out_of_range() -> None:
    n = 5
    x = np.arange(n, dtype=np.float32)
    out = np.full(8, -1.0, np.float32)
    compile_cpu(axpy_kernel, [x, x, out, n], BLOCK=4096).launch((1, 1, 1), [x, x, out, n])
    np.testing.assert_array_equal(out[:n], 4 * x)
    np.testing.assert_array_equal(out[n:], -1.0)
