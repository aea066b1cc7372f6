"""The cpu backend's LLVM target machine: features it adds to the host's, and a compile that used
to abort the whole process on AMD Zen 4/5 (LLVM's loop vectoriser asserting "VPlan cost model and
legacy cost model disagreed" when it may pick 512-bit factors; llvmlite's LLVM keeps assertions).

The abort is checked in a child process, for a Zen 4 target machine on any x86-64 host (the code is
only compiled, never run), so a regression fails one test instead of killing the test session."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.runtime.cpu.compiler import LLVMBuildError, compile_object
from kdsl.runtime.cpu.elf import undefined_symbols
from kdsl.runtime.cpu.target import _features
from tests.lowering.test_vectorize import span_kernel


def test_avx512_hosts_steer_the_loop_vectoriser_to_256_bits() -> None:
    assert _features("+avx2,+avx512f,+fma") == "+avx2,+avx512f,+fma,+prefer-256-bit"
    assert _features("+avx512f,-prefer-256-bit") == "+avx512f,+prefer-256-bit"
    assert _features("+avx512f,+prefer-256-bit") == "+avx512f,+prefer-256-bit"
    assert _features("+avx2,-avx512f") == "+avx2,-avx512f"  # no AVX-512: left as the host says
    assert _features("") == ""


_CHILD = """
import sys
from kdsl.runtime.cpu.compiler import optimise
from kdsl.runtime.cpu.target import Host, _features, _make_tm, host

h = host()
feats = _features("+avx512f")
zen4 = Host(h.triple, "znver4", feats, h.data_layout, _make_tm(h.triple, "znver4", feats))
optimise(open(sys.argv[1]).read(), zen4)
print("compiled")
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="a Zen 4 target machine needs x86-64 LLVM")
def test_masked_scalar_loops_compile_for_zen4(tmp_path: Path) -> None:
    x, out, sums = np.zeros(100, np.float32), np.zeros(256, np.float32), np.zeros(2, np.float32)
    with kdsl.backend("cpu"):  # kdsl's vectoriser off: LLVM's loop vectoriser gets the masked loops
        warm = span_kernel.warmup(x, out, sums, 0, 100, BLOCK=128, grid=(1,), **{"lower.vector_width": 1})
    ir = tmp_path / "kernel.ll"
    ir.write_text(warm.asm["llir"])
    child = subprocess.run([sys.executable, "-c", _CHILD, str(ir)], capture_output=True, text=True, timeout=120)
    assert child.returncode == 0 and "compiled" in child.stdout, child.stderr[-2000:]


_CALLS_UNKNOWN = """
define double @f(double %x) {
  %r = call double @kdsl_no_such_function(double %x)
  %s = call double @sin(double %r)
  ret double %s
}
declare double @kdsl_no_such_function(double)
declare double @sin(double)
"""


def test_a_call_the_process_cannot_link_is_a_build_error() -> None:
    """MCJIT would link it to address 0 (the kernel would crash when run); libm's ``sin`` links."""
    with pytest.raises(LLVMBuildError, match="kdsl_no_such_function") as err:
        compile_object(_CALLS_UNKNOWN, use_cache=False, kernel="calls_unknown")
    assert "sin" not in str(err.value).split("calls ")[-1]
    obj, _ = compile_object(_CALLS_UNKNOWN.replace("kdsl_no_such_function", "cos"), use_cache=False)
    assert {"cos", "sin"} <= set(undefined_symbols(obj) or [])


def test_undefined_symbols_of_other_formats_are_unknown() -> None:
    assert undefined_symbols(b"MZ not an ELF file" * 8) is None


@kdsl.kernel
def narrow_kernel(x_ptr, y_ptr, N: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.arange(0, N)
    kl.store(y_ptr + offs, kl.load(x_ptr + offs).to(kl.float16))


def test_f64_to_f16_rounds_once() -> None:
    """f64 -> f16 goes through f32 rounded to odd (no ``__truncdfhf2`` call): values just off an f16
    tie, where rounding to nearest f32 first would make a tie and round the wrong way, and the
    edges (subnormals, overflow, NaN, signed zeros) all match numpy's single rounding."""
    ties = 1.0 + 2.0 ** -11 + np.array([2.0 ** -40, -(2.0 ** -40), 0.0])
    edge = np.array([65504.0, 65520.0, 65519.99, 2.0 ** -24, 2.0 ** -25, 2.0 ** -25 + 2.0 ** -60, 1e-300,
                     -1e-300, np.inf, -np.inf, np.nan, 0.0, -0.0, 1e300, 3.0 * 2.0 ** -26])
    rng = np.random.default_rng(3)
    x = np.concatenate([ties, -ties, edge, rng.standard_normal(64) * 10.0 ** rng.integers(-9, 6, 64)])
    x = np.resize(x, 128)
    y = np.zeros(128, np.float16)
    with kdsl.backend("cpu"):
        narrow_kernel[(1,)](x, y, N=128)
    np.testing.assert_array_equal(y.view(np.uint16)[~np.isnan(x)], x.astype(np.float16).view(np.uint16)[~np.isnan(x)])
    assert np.isnan(y[np.isnan(x)]).all()
