"""The vectorisable f32 math functions: accuracy in ulp, special values, and
that element loops calling them really vectorise (no scalar libm calls)."""

from __future__ import annotations

import ctypes
import re

import llvmlite.ir as ir
import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.codegen.llvm import render_llvm, vmath
from kdsl.codegen.llvm.types import F32, I64, PTR
from kdsl.lowering import Layout, lower_to_wi
from kdsl.runtime.cpu.compiler import compile_object, optimised_ir
from kdsl.runtime.cpu.loader import LoadedObject, RunFn

from ._helpers import entry_of

MAX_ULP = {"exp": 1, "exp2": 1, "log": 1, "log2": 2, "tanh": 2, "sin": 0.51, "cos": 0.51}


def _array_fn(name: str, lanes: int = 1) -> LoadedObject:
    """A ``kdsl_run``-shaped function applying ``kd_<name>f`` to argv[0][i] for i in [start, end)
    (``lanes > 1``: ``lanes`` at a time through the AVX-512 vector variant; ``end - start`` a
    multiple of ``lanes``)."""
    mod = ir.Module(name=f"t_{name}_{lanes}")
    vt = ir.VectorType(F32, lanes) if lanes > 1 else F32
    fn = ir.Function(mod, RunFn_type(), "kdsl_run")
    argv, _, _, _, start, end = fn.args
    entry, head, body, done = (fn.append_basic_block(n) for n in ("entry", "head", "body", "done"))
    b = ir.IRBuilder(entry)
    src = b.load(argv, typ=PTR)
    dst = b.load(b.gep(argv, [ir.Constant(I64, 1)], source_etype=I64), typ=PTR)
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(start, entry)
    b.cbranch(b.icmp_signed("<", i, end), body, done)
    b.position_at_end(body)
    x = b.load(b.gep(src, [i], source_etype=F32), typ=vt, align=4)
    fn = vmath.get(mod, name, lanes, avx512=lanes == 16)
    b.store(b.call(fn, [x]), b.gep(dst, [i], source_etype=F32), align=4)
    i.add_incoming(b.add(i, ir.Constant(I64, lanes)), body)
    b.branch(head)
    b.position_at_end(done)
    b.ret_void()
    obj, _ = compile_object(str(mod), use_cache=False)
    return LoadedObject(obj)


def RunFn_type() -> ir.FunctionType:
    return ir.FunctionType(ir.VoidType(), [PTR, ir.IntType(32), ir.IntType(32), ir.IntType(32), I64, I64])


def _apply(name: str, x: np.ndarray) -> np.ndarray:
    lo = _array_fn(name)
    out = np.empty_like(x)
    argv = np.array([x.ctypes.data, out.ctypes.data], np.uint64)
    lo.run(argv.ctypes.data, 1, 1, 1, 0, x.size)
    return out


def _ulps(got: np.ndarray, want64: np.ndarray) -> np.ndarray:
    want = want64.astype(np.float32)
    spacing = np.spacing(np.abs(want)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want64) / spacing


_REF = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "tanh": np.tanh, "sin": np.sin,
        "cos": np.cos}
_DOMAIN = {"exp": (-87.0, 88.0), "exp2": (-125.0, 127.0), "log": (1e-37, 3e38), "log2": (1e-37, 3e38),
           "tanh": (-12.0, 12.0), "sin": (-20.0, 20.0), "cos": (-20.0, 20.0)}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MAX_ULP))
def test_accuracy_in_ulp(name: str) -> None:
    lo, hi = _DOMAIN[name]
    rng = np.random.default_rng(0)
    if name.startswith("log"):
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), 200_000)).astype(np.float32)
        x = np.concatenate([x, np.float32(1.0) + np.arange(-500, 500, dtype=np.float32) * np.float32(2**-23)])
    else:
        x = rng.uniform(lo, hi, 200_000).astype(np.float32)
        x = np.concatenate([x, np.linspace(-1e-3, 1e-3, 1001, dtype=np.float32)])
    got = _apply(name, x)
    err = _ulps(got, _REF[name](x.astype(np.float64)))
    assert err.max() <= MAX_ULP[name], (name, float(err.max()), x[np.argmax(err)])


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_trig_accuracy_over_the_whole_float_range(name: str) -> None:
    """Huge arguments go through the exact 2^s mod 2pi reduction (no libm fallback)."""
    rng = np.random.default_rng(5)
    mags = np.exp(rng.uniform(np.log(1e-30), np.log(3e38), 200_000))
    x = (mags * rng.choice([-1.0, 1.0], mags.size)).astype(np.float32)
    near = (np.arange(1, 20_001) * (np.pi / 2)).astype(np.float32)  # close to multiples of pi/2
    x = np.concatenate([x, near, -near, np.array([2.0**24, 2.0**24 + 2, 2.0**127, 1e-45, 0.0], np.float32)])
    got = _apply(name, x)
    want = _REF[name](x.astype(np.float64))
    err = _ulps(got, want)
    assert err.max() <= MAX_ULP[name], (name, float(err.max()), x[np.argmax(err)])


@pytest.mark.parametrize("name", ["exp2", "exp"])
def test_exp_avx512_scalef_variants(name: str) -> None:
    """The 16-lane ``exp2``/``exp`` on ``vscalefps``: <= 1 ulp over the whole range, subnormal
    results (one rounding) and the special values included."""
    from kdsl.runtime.cpu.target import host

    if host().vector_bytes != 64:
        pytest.skip("the host has no AVX-512F")
    rng = np.random.default_rng(3)
    k = 1.0 if name == "exp2" else np.log(2.0)  # the same results, in exp's units
    x = np.concatenate([
        rng.uniform(-160.0, 130.0, 400_000) * k, rng.uniform(-150.0, -120.0, 100_000) * k,
        np.linspace(-1e-3, 1e-3, 1008),
        np.array([127.99, 128.0, -149.0, -149.5, -150.0, -126.0, 200.0, -200.0]) * k,
        [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1e-45, -1.0, 88.72, 88.73, -103.97, -87.33, -87.34],
    ]).astype(np.float32)  # fmt: skip
    x = x[: x.size // 16 * 16]
    out = np.empty_like(x)
    lo = _array_fn(name, 16)
    argv = np.array([x.ctypes.data, out.ctypes.data], np.uint64)
    lo.run(argv.ctypes.data, 1, 1, 1, 0, x.size)
    with np.errstate(all="ignore"):
        want64 = _REF[name](x.astype(np.float64))
        want = want64.astype(np.float32)
    special = ~np.isfinite(want) | (want == 0)
    np.testing.assert_array_equal(out[special], want[special])
    sub = (want64 < 2.0**-126) & ~special  # subnormal results: within one unit of 2^-149
    assert np.abs(out[sub].astype(np.float64) - want64[sub]).max() <= 2.0**-149
    norm = ~special & ~sub
    err = _ulps(out[norm], want64[norm])
    assert err.max() <= 1.0, (float(err.max()), x[norm][np.argmax(err)])


@pytest.mark.parametrize("lanes", [1, 8, 16])
@pytest.mark.parametrize("name", ["exp2", "exp"])
def test_exp_underflow_boundary(name: str, lanes: int) -> None:
    """Around the smallest subnormal: exactly 0 where the result rounds to 0 (those lanes skip the
    scaling, ``vmath._underflows``), subnormals within one unit of 2^-149 just above."""
    from kdsl.runtime.cpu.target import host

    if lanes == 16 and host().vector_bytes != 64:
        pytest.skip("the host has no AVX-512F")
    k = 1.0 if name == "exp2" else np.log(2.0)  # the same results, in exp's units
    x2 = np.array([-np.inf, -1e30, -1000.0, -200.0, -152.5, -152.0, -151.0, -150.5, -150.01, -150.0, -149.99,
                   -149.75, -149.5, -149.25, -149.0, -140.0, -127.0, -126.0])  # fmt: skip
    x = np.resize((x2 * k).astype(np.float32), 32)
    out = np.empty_like(x)
    argv = np.array([x.ctypes.data, out.ctypes.data], np.uint64)
    fn = _array_fn(name, lanes)  # kept alive: its code is unmapped when it is collected
    fn.run(argv.ctypes.data, 1, 1, 1, 0, x.size)
    with np.errstate(all="ignore"):
        want64 = _REF[name](x.astype(np.float64))
    zero = want64.astype(np.float32) == 0
    np.testing.assert_array_equal(out[zero], 0.0)
    assert np.abs(out[~zero].astype(np.float64) - want64[~zero]).max() <= 2.0**-149


def test_avx512_exp_masks_underflowing_lanes_out_of_vscalefps() -> None:
    """The 16-lane ``exp2``/``exp`` pass ``vscalefps`` a computed lane mask (zeroing the others):
    an underflowing lane takes a microcode assist, which made ``exp2(-inf)`` -- every masked
    attention score -- 28 times slower than ``exp2(0)`` on this host."""
    mod = ir.Module(name="t_scalef_mask")
    for name in ("exp2", "exp"):
        vmath.get(mod, name, 16, avx512=True)
    calls = [line for line in str(mod).splitlines() if "call" in line and "scalef" in line]
    assert len(calls) == 2
    assert all(re.search(r", i16 %\S+, i32 4\)$", line) for line in calls), calls


def test_special_values() -> None:
    sp = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1e-45, -1.0, 100.0, -200.0], np.float32)
    with np.errstate(all="ignore"):
        for name in MAX_ULP:
            got = _apply(name, sp)
            want = _REF[name](sp.astype(np.float64)).astype(np.float32)
            np.testing.assert_allclose(got, want, rtol=3e-7, atol=0, err_msg=name, equal_nan=True)


@kdsl.kernel
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: kl.constexpr):
    row = kl.program_id(0)
    offs = kl.arange(0, BLOCK)
    x = kl.load(in_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf"))
    e = kl.exp(x - kl.max(x, axis=0))
    kl.store(out_ptr + row * n_cols + offs, e / kl.sum(e, axis=0), mask=offs < n_cols)


def test_softmax_loops_vectorise_without_libm_calls() -> None:
    x = np.zeros(16, np.float32)
    module = kdsl.compile_to_ir(softmax_kernel, x, x, 16, BLOCK=1024, optimize=True)
    text = render_llvm(lower_to_wi(module, entry_of(module), Layout(1))).ir
    opt = optimised_ir(text)
    assert re.search(r"<(8|16) x float>", opt)
    assert not re.search(r"call .*@expf", opt)
    assert re.search(r"fadd reassoc <(8|16) x float>", opt)  # the sum reduction runs in vector lanes


@kdsl.kernel
def trig_kernel(x_ptr, o_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs, mask=offs < n)
    kl.store(o_ptr + offs, kl.sin(x) + kl.cos(x), mask=offs < n)


def test_sin_cos_loops_vectorise_without_libm_calls() -> None:
    x = np.zeros(16, np.float32)
    module = kdsl.compile_to_ir(trig_kernel, x, x, 16, BLOCK=1024, optimize=True)
    opt = optimised_ir(render_llvm(lower_to_wi(module, entry_of(module), Layout(1))).ir)
    assert re.search(r"fmul <(4|8|16) x double>", opt)
    assert not re.search(r"call .*@(sinf|cosf|llvm\.sin|llvm\.cos)", opt)


def test_loaded_function_is_callable_twice() -> None:
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    np.testing.assert_allclose(_apply("exp", x), np.exp(x), rtol=3e-7)
    assert ctypes.sizeof(ctypes.c_void_p) == 8
    assert RunFn is not None
