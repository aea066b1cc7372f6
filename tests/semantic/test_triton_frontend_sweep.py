"""Frontend, launch and autotuning behaviour ported from Triton's own tests and docs.

Sources (read for facts; kernels rewritten with ``kl``): python/test/unit/runtime/
test_autotuner.py (hooks, pruning, reset/restore with ``None``, ``do_bench(kernel_call,
quantiles)``), python/triton/runtime/autotuner.py (``Config``'s positional order and defaults,
``autotune``'s parameters), python/triton/runtime/jit.py (``run(*args, grid, warmup, **kwargs)``,
launch options such as ``debug``), python/test/unit/language/test_core.py (``test_for_iv``,
``test_if_call``, ``test_short_circuiting``), test_jit/test_cache (compile counts per
specialisation mode: ``do_not_specialize``, ``do_not_specialize_on_alignment``).
Every kernel result is compared with a numpy (or Python) reference on every backend.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl

FAST: dict[str, Any] = {"warmup": 1, "rep": 1}


# --- launch: grids, run(..., warmup=), the debug option -----------------------------------------
@kdsl.kernel
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: kl.constexpr):
    offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
    m = offs < n
    kl.store(out_ptr + offs, kl.load(x_ptr + offs, mask=m) + kl.load(y_ptr + offs, mask=m), mask=m)


def test_run_with_warmup_flag_and_debug_option(backend: str) -> None:
    """``kernel.run(*args, grid=..., warmup=False)`` launches; ``warmup=True`` compiles only;
    ``debug=`` is a launch option as in Triton."""
    x = np.arange(70, dtype=np.float32)
    y = np.full(70, 0.5, np.float32)
    out = np.zeros(70, np.float32)
    add_kernel.run(x, y, out, 70, BLOCK=32, grid=(3,), warmup=True)
    assert not out.any()
    add_kernel.run(x, y, out, 70, BLOCK=32, grid=(3,), warmup=False)
    np.testing.assert_array_equal(out, x + y)
    out[:] = 0
    for grid in (3, [3], (3, 1, 1), lambda meta: (kdsl.cdiv(meta["n"], meta["BLOCK"]),)):
        add_kernel[grid](x, y, out, n=70, BLOCK=32, debug=True)
        np.testing.assert_array_equal(out, x + y)


def test_pre_run_hooks_see_every_launch(backend: str) -> None:
    """Triton's ``add_pre_run_hook``: called with the launch's arguments; raising stops the launch."""

    @kdsl.kernel
    def fill_kernel(out_ptr, value, BLOCK: kl.constexpr):
        kl.store(out_ptr + kl.arange(0, BLOCK), kl.full((BLOCK,), value, kl.float32))

    seen: list[Any] = []

    def refuse_negative(*args: Any, **kwargs: Any) -> None:
        seen.append((args[1:], kwargs))
        if args[1] < 0:
            raise ValueError("negative fill")

    fill_kernel.add_pre_run_hook(refuse_negative)
    out = np.zeros(4, np.float32)
    fill_kernel[(1,)](out, 2.5, BLOCK=4)
    np.testing.assert_array_equal(out, 2.5)
    with pytest.raises(ValueError, match="negative fill"):
        fill_kernel[(1,)](out, -1.0, BLOCK=4)
    np.testing.assert_array_equal(out, 2.5)
    assert seen == [((2.5,), {"BLOCK": 4}), ((-1.0,), {"BLOCK": 4})]


# --- specialisation ---------------------------------------------------------------------------
def _store_kernel(**options: Any) -> Any:
    @kdsl.kernel(**options)
    def store_kernel(x_ptr, i, BLOCK: kl.constexpr):
        kl.store(x_ptr, i + BLOCK * 0)

    return store_kernel


@pytest.mark.parametrize(("options", "compiled"), [({}, 3), ({"do_not_specialize": ["i"]}, 1),
                                                   ({"do_not_specialize_on_alignment": ["i"]}, 2)])
def test_compilations_per_specialisation_mode(backend: str, options: dict[str, Any], compiled: int) -> None:
    """Triton's test_specialize: 1 is a constant, multiples of 16 get a divisibility fact."""
    kernel = _store_kernel(**options)
    x = np.zeros(1, np.int32)
    for i in (1, 2, 4, 8, 16, 32):
        kernel[(1,)](x, i, BLOCK=512)
        assert x[0] == i
    assert len(kernel.cache) == compiled


@kdsl.kernel
def scale_kernel(x_ptr, out_ptr, scale, BLOCK: kl.constexpr):
    kl.static_assert(scale.dtype == kl.float32)
    offs = kl.arange(0, BLOCK)
    kl.store(out_ptr + offs, kl.load(x_ptr + offs) * scale)


def test_numpy_float64_scalar_is_fp32(backend: str) -> None:
    """``np.float64`` subclasses ``float``: Triton passes it as fp32 like a Python float (the product
    with an f32 tile stays f32, rounded once)."""
    x = np.linspace(-3, 3, 16, dtype=np.float32)
    out = np.zeros_like(x)
    scale = 1 / np.sqrt(np.float64(3.0))
    scale_kernel[(1,)](x, out, scale, BLOCK=16)
    np.testing.assert_array_equal(out, x * np.float32(scale))


def test_warmup_with_dtypes_then_arrays_share_one_compilation(backend: str) -> None:
    """Triton's test_jit_warmup_cache: ``warmup`` takes dtypes in place of arrays (aligned
    pointers); launching with real arrays afterwards reuses that compilation."""

    @kdsl.kernel
    def kernel_add(a, b, o, N: kl.constexpr):
        idx = kl.arange(0, N)
        kl.store(o + idx, kl.load(a + idx) + kl.load(b + idx))

    kernel_add.warmup(kl.float32, np.float32, np.dtype(np.float32), 32, grid=(1,))
    assert len(kernel_add.cache) == 1
    a = np.arange(32, dtype=np.float32)
    out = np.zeros_like(a)
    kernel_add[(1,)](a, a, out, 32)
    np.testing.assert_array_equal(out, 2 * a)
    assert len(kernel_add.cache) == 1


GLOBAL_SCALE = kl.constexpr(3)


@kdsl.kernel
def global_scale_kernel(out_ptr):
    kl.store(out_ptr, GLOBAL_SCALE * 2)


def test_constexpr_changed_after_compiling_is_seen(backend: str) -> None:
    """A captured or global ``kl.constexpr`` whose value changes after the first compile never
    leaves a stale kernel running (Triton refuses the launch; kdsl recompiles)."""

    def make(cst: kl.constexpr) -> Any:
        @kdsl.kernel
        def closure_kernel(out_ptr):
            kl.store(out_ptr + kl.arange(0, 16), kl.full((16,), cst, dtype=kl.int32))

        return closure_kernel

    cst = kl.constexpr(42)
    closure_kernel = make(cst)
    out = np.zeros(16, np.int32)
    closure_kernel[(1,)](out)
    assert (out == 42).all()
    cst.value = 43
    closure_kernel[(1,)](out)
    assert (out == 43).all()
    one = np.zeros(1, np.int32)
    global_scale_kernel[(1,)](one)
    assert one[0] == 6
    try:
        GLOBAL_SCALE.value = 5
        global_scale_kernel[(1,)](one)
        assert one[0] == 10
    finally:
        GLOBAL_SCALE.value = 3


@kdsl.kernel
def for_iv_kernel(out_ptr, lo, hi, iv: kl.constexpr):
    acc = 0
    acc = acc.to(kl.int64)
    for i in range(lo, hi, iv):
        acc += i
    kl.store(out_ptr, acc)


@pytest.mark.parametrize(("lo", "hi", "iv"), [(2**35, 2**35 + 20, 3), (15, -16, -2), (22, 18, -1)])
def test_for_iv_int64_and_negative_steps(backend: str, lo: int, hi: int, iv: int) -> None:
    out = np.zeros(1, np.int64)
    for_iv_kernel[(1,)](out, lo, hi, iv)
    assert out[0] == sum(range(lo, hi, iv))


# --- control flow and calls -----------------------------------------------------------------------
@kdsl.kernel
def short_circuit_kernel(x_ptr, out_ptr):
    if (x_ptr is not None) and hasattr(x_ptr, "dtype") and isinstance(x_ptr.dtype, kl.pointer_type) \
            and (x_ptr.dtype.element_ty == kl.int32) and (kl.load(x_ptr) == 1):
        kl.store(out_ptr, 1)
    else:
        kl.store(out_ptr, 2)


def test_short_circuit_with_pointer_type_test(backend: str) -> None:
    """``and`` stops at the first compile-time false operand (the later ones would not compile)."""
    out = np.zeros(1, np.int32)
    for x, want in [(None, 2), (np.array([1], np.int32), 1), (np.array([0], np.int32), 2),
                    (np.array([1], np.float32), 2)]:
        short_circuit_kernel[(1,)](x, out)
        assert out[0] == want
    assert isinstance(kl.pointer_type(kl.float16), kl.pointer_type)
    assert not isinstance(kl.float16, kl.pointer_type)


@kdsl.jit
def add_fn(x):
    return x + 1


@kdsl.jit
def add_fn_noreturn(x_ptr):
    kl.store(x_ptr, kl.load(x_ptr) + 1)


@kdsl.jit
def add_fn_return(x, pid):
    if pid == 0:
        return x + 1
    else:
        return x + 2


@kdsl.jit
def add_fn_static_cond(x, cond: kl.constexpr):
    if cond == "":
        return x
    else:
        return x + 1


@kdsl.kernel
def if_call_kernel(out_ptr, mode: kl.constexpr):
    pid = kl.program_id(0)
    o = out_ptr + pid
    x = kl.load(o)
    if mode == "direct":
        kl.store(o, add_fn(x))
    elif mode == "return":
        kl.store(o, add_fn_return(x, pid))
    elif mode == "expr":
        add_fn_noreturn(o)
    elif mode == "static":
        kl.store(o, add_fn_static_cond(x, mode))
    else:  # a call with early returns inside a runtime if
        if pid == 1:
            x = add_fn_return(x, pid)
        kl.store(o, x)


def test_if_call(backend: str) -> None:
    for mode, want in [("direct", [1, 1]), ("return", [1, 2]), ("expr", [1, 1]), ("static", [1, 1]),
                       ("jit_if", [0, 2])]:
        out = np.zeros(2, np.int32)
        if_call_kernel[(2,)](out, mode)
        np.testing.assert_array_equal(out, want, err_msg=mode)


# --- autotuning -----------------------------------------------------------------------------------
def test_config_is_tritons() -> None:
    """``Config(kwargs, num_warps=4, num_stages=3, num_ctas=1, maxnreg=None, pre_hook=None,
    ir_override=None)``: positional order, defaults and ``all_kwargs`` as in Triton."""
    c = kdsl.Config({"BLOCK": 32}, 8, 2)
    assert (c.num_warps, c.num_stages, c.num_ctas, c.maxnreg) == (8, 2, 1, None)
    d = kdsl.Config(kwargs={"BLOCK": 32}, num_ctas=1, maxnreg=None, pre_hook=None, ir_override=None)
    assert (d.num_warps, d.num_stages) == (4, 3)
    assert d.all_kwargs() == {"BLOCK": 32, "num_warps": 4, "num_ctas": 1, "num_stages": 3}


def _copy_kernel() -> Any:
    @kdsl.kernel
    def copy_kernel(dst, src, N, BLOCK_SIZE: kl.constexpr):
        offs = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
        kl.store(dst + offs, kl.load(src + offs, mask=offs < N), mask=offs < N)

    return copy_kernel


CONFIGS = [kdsl.Config(kwargs={"BLOCK_SIZE": 32}), kdsl.Config(kwargs={"BLOCK_SIZE": 128})]
N = 300


def grid(meta: dict[str, Any]) -> tuple[int]:
    return (kdsl.cdiv(N, meta["BLOCK_SIZE"]),)


def test_autotune_hooks_and_do_bench(backend: str) -> None:
    """Triton's test_hooks: pre/post hooks bracket every run (``post_hook(args, exception=)``),
    a user ``do_bench(kernel_call, quantiles)`` does the timing, and both really run."""
    counts = {"counter": 0, "pre": 0, "bench": 0}

    def pre_hook(*args: Any, **kwargs: Any) -> None:
        counts["counter"] += 1
        counts["pre"] += 1

    def post_hook(*args: Any, exception: BaseException | None) -> None:
        counts["counter"] -= 1
        assert counts["counter"] == 0 and exception is None

    def do_bench(kernel_call: Any, quantiles: Any) -> list[float]:
        counts["bench"] += 1
        kernel_call()
        return [1.0 + counts["bench"], 0.0, 0.0]

    tuned = kdsl.autotune(configs=CONFIGS, key=["N"], pre_hook=pre_hook, post_hook=post_hook, do_bench=do_bench,
                          use_cuda_graph=False, cache_results=True)(_copy_kernel())
    src = np.random.default_rng(0).random(N, dtype=np.float32)
    dst = np.zeros_like(src)
    tuned[grid](dst, src, N)
    np.testing.assert_array_equal(dst, src)
    # 1: after tuning Triton calls the pre-hook once more, pre_hook(args, reset_only=True), without a post-hook
    assert counts["bench"] == 2 and counts["pre"] >= 3 and counts["counter"] == 1
    assert tuned.best_config == CONFIGS[0]  # the lower time


def test_autotune_prune_sees_positional_and_keyword_arguments(backend: str) -> None:
    """Triton's test_prune_configs: ``early_config_prune(configs, named_args, **kwargs)`` gets the
    positional arguments by name and the keyword arguments; ``perf_model`` all of them."""
    records: dict[str, Any] = {}

    def early_config_prune(configs: list[kdsl.Config], named_args: dict[str, Any], **kwargs: Any) -> list[Any]:
        records["named"] = sorted(named_args)
        records["kwargs"] = sorted(kwargs)
        return [configs[1]]

    def perf_model(**kwargs: Any) -> float:
        records["model"] = sorted(kwargs)
        return float(kwargs["BLOCK_SIZE"])

    src = np.arange(N, dtype=np.float32)
    dst = np.zeros_like(src)
    tuned = kdsl.autotune(configs=CONFIGS, key=["N"], prune_configs_by={"early_config_prune": early_config_prune},
                          **FAST)(_copy_kernel())
    tuned[grid](dst, src, N=N)
    np.testing.assert_array_equal(dst, src)
    assert records == {"named": ["dst", "src"], "kwargs": ["N"]}
    assert tuned.best_config == CONFIGS[1]
    modelled = kdsl.autotune(configs=CONFIGS, key=["N"], prune_configs_by={"perf_model": perf_model, "top_k": 0.3},
                             **FAST)(_copy_kernel())
    dst[:] = 0
    modelled[grid](dst, src, N=N)
    np.testing.assert_array_equal(dst, src)
    assert modelled.best_config == CONFIGS[0]
    assert records["model"] == ["BLOCK_SIZE", "N", "dst", "num_ctas", "num_stages", "num_warps", "src"]


@kdsl.kernel
def optional_buffer_kernel(src, dst, N, BLOCK_SIZE: kl.constexpr):
    offs = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    m = offs < N
    if src is not None:
        kl.store(src + offs, kl.full([BLOCK_SIZE], 1, dtype=src.dtype.element_ty), mask=m)
    else:
        kl.store(dst + offs, kl.full([BLOCK_SIZE], 1, dtype=dst.dtype.element_ty), mask=m)


@pytest.mark.parametrize("listed", ["reset_to_zero", "restore_value"])
def test_autotune_reset_and_restore_skip_none(backend: str, listed: str) -> None:
    """Triton's test_reset_to_zero / test_restore_with_none: an optional buffer passed as None."""
    tuned = kdsl.autotune(configs=CONFIGS, key=["N"], **{listed: ["src"]}, **FAST)(optional_buffer_kernel)
    for src_is_none in (True, False):
        dst = np.full(N, 2.0, np.float32)
        if src_is_none:
            tuned[grid](None, dst, N)
        else:
            tuned[grid](src=dst, dst=dst, N=N)
        np.testing.assert_array_equal(dst, np.ones(N, np.float32))


def test_autotune_conflicts_warmup_and_heuristics_run(backend: str) -> None:
    """A tuned meta-parameter passed by hand is Triton's ValueError; ``warmup`` compiles every
    config without running; ``@heuristics`` objects take ``run(..., warmup=)`` too."""
    tuned = kdsl.autotune(configs=CONFIGS, key=["N"], **FAST)(_copy_kernel())
    src = np.arange(N, dtype=np.float32)
    dst = np.zeros_like(src)
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK_SIZE"):
        tuned[grid](dst, src, N, BLOCK_SIZE=32)
    assert len(tuned.warmup(dst, src, N, grid=grid)) == 2
    assert len(tuned.run(dst, src, N, grid=grid, warmup=True)) == 2
    assert not dst.any()
    heur = kdsl.heuristics({"BLOCK_SIZE": lambda args: kdsl.next_power_of_2(args["N"])})(_copy_kernel())
    heur.run(dst, src, N, grid=(1,), warmup=False)
    np.testing.assert_array_equal(dst, src)


def test_autotune_restores_torch_tensors(backend: str) -> None:
    torch = pytest.importorskip("torch")

    @kdsl.autotune(configs=CONFIGS, key=["N"], restore_value=["src"], reset_to_zero=["acc"], **FAST)
    @kdsl.kernel
    def inc_kernel(src, acc, N, BLOCK_SIZE: kl.constexpr):
        offs = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
        m = offs < N
        x = kl.load(src + offs, mask=m)
        kl.store(src + offs, x + 1, mask=m)
        kl.atomic_add(acc, kl.sum(kl.where(m, x, 0.0), axis=0))

    src = torch.arange(N, dtype=torch.float32)
    acc = torch.full((1,), 5.0)
    inc_kernel[grid](src, acc, N)
    np.testing.assert_array_equal(src.numpy(), np.arange(N, dtype=np.float32) + 1)
    assert acc[0].item() == sum(range(N))  # tuning zeroed it (Triton's pre_hook(reset_only=True))
    src = torch.zeros(N)
    inc_kernel[grid](src, acc, N)  # a cached choice: nothing is reset
    np.testing.assert_array_equal(src.numpy(), np.ones(N, np.float32))
    assert acc[0].item() == sum(range(N))
