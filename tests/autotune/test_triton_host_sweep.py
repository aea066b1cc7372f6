"""Triton's autotuning and ``triton.testing`` API, as a Triton user exercises it, on every backend.

Each test states a behaviour of ``triton.autotune`` / ``triton.Config`` / ``triton.heuristics`` /
``triton.testing`` read from Triton's sources (``python/triton/runtime/autotuner.py``,
``python/triton/testing.py``) and unit tests (``python/test/unit/runtime/test_autotuner.py``),
with ``triton`` -> ``kdsl``. Timing budgets are tiny: these tests check behaviour, not speed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl import Config

FAST: dict[str, Any] = {"warmup": 0.2, "rep": 0.5, "max_repeats": 2}
TWO = [Config(kwargs={"BLOCK_SIZE": 32}), Config(kwargs={"BLOCK_SIZE": 128})]


def quick_bench(kernel_call: Any, quantiles: Any) -> Any:
    """Triton's test helper: ``do_bench(kernel_call, quantiles=quantiles, warmup=1, rep=1)``."""
    return kdsl.testing.do_bench(kernel_call, quantiles=quantiles, warmup=0.2, rep=0.5, max_repeats=2)


def copy_kernel() -> Any:
    """A fresh ``dst[i] = src[i]`` kernel (fresh, so that no tuning choice is shared between tests)."""

    @kdsl.kernel
    def _kernel(dst, src, N, BLOCK_SIZE: kl.constexpr):
        offsets = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
        kl.store(dst + offsets, kl.load(src + offsets, mask=offsets < N), mask=offsets < N)

    return _kernel


def grid_for(n: int) -> Any:
    return lambda META: (kdsl.cdiv(n, META["BLOCK_SIZE"]),)


# --- keys --------------------------------------------------------------------------------
def test_kwargs_in_any_order_and_key_values(backend: str) -> None:
    """test_autotuner.py::test_kwargs: arguments by keyword in any order; a new ``M`` is a new key."""
    M, N = 64, 16

    @kdsl.autotune(configs=[Config(kwargs={"BLOCK_SIZE_M": 2}), Config(kwargs={"BLOCK_SIZE_M": 4})], key=["M"],
                   do_bench=quick_bench)
    @kdsl.kernel
    def _kernel(dst, src, stride_m: kl.constexpr, M, BLOCK_SIZE_N: kl.constexpr, BLOCK_SIZE_M: kl.constexpr):
        offsets_m = kl.program_id(0) * BLOCK_SIZE_M + kl.arange(0, BLOCK_SIZE_M)
        offsets_n = kl.arange(0, BLOCK_SIZE_N)
        x = kl.load(src + offsets_m[:, None] * stride_m + offsets_n[None, :])
        kl.store(dst + offsets_m[:, None] * stride_m + offsets_n[None, :], x)

    src = np.random.rand(M * N).astype(np.float32)
    grid = lambda META: (kdsl.cdiv(M, META["BLOCK_SIZE_M"]),)  # noqa: E731
    dst = np.zeros_like(src)
    _kernel[grid](dst, src, N, M, N)
    np.testing.assert_array_equal(dst, src)
    dst = np.zeros_like(src)
    _kernel[grid](dst=dst, src=src, M=M // 2, stride_m=N, BLOCK_SIZE_N=N)
    np.testing.assert_array_equal(dst, src)
    assert len(_kernel.cache) == 2


def test_dtype_keys(backend: str) -> None:
    """test_dtype_cache_results: a dtype passed as a constexpr can be the key (``cache_results``
    accepted); the dtype of every array argument is part of every key."""
    n = 256

    @kdsl.autotune(configs=TWO, key=["DTYPE"], cache_results=True, **FAST)
    @kdsl.kernel
    def _kernel(dst, src, N, DTYPE: kl.constexpr, BLOCK_SIZE: kl.constexpr):
        offsets = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
        x = kl.load(src + offsets, mask=offsets < N)
        kl.store(dst + offsets, x.to(DTYPE) * 2, mask=offsets < N)

    for src_dtype, dtype, dst_dtype in [(np.float32, kl.float32, np.float32), (np.float32, kl.float32, np.float32),
                                        (np.float32, kl.int32, np.int32), (np.float64, kl.int32, np.int32)]:
        src = (np.arange(n) * 1.5).astype(src_dtype)
        dst = np.zeros(n, dst_dtype)
        _kernel[grid_for(n)](dst, src, n, dtype)
        np.testing.assert_array_equal(dst, (src.astype(dst_dtype) * 2))
    assert len(_kernel.cache) == 3


# --- reset_to_zero / restore_value -------------------------------------------------------
@pytest.mark.parametrize("pass_kwargs", [False, True])
def test_restore_value(backend: str, pass_kwargs: bool) -> None:
    """test_restore: an in-place ``+= 1`` kernel applied exactly once whatever the tuning ran."""
    N = 1024

    @kdsl.autotune(configs=TWO, key=["N"], restore_value=["src"], do_bench=quick_bench)
    @kdsl.kernel
    def _kernel(src, N, BLOCK_SIZE: kl.constexpr):
        offsets = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
        x = kl.load(src + offsets, mask=offsets < N) + 1
        kl.store(src + offsets, x, mask=offsets < N)

    src = np.zeros(N, np.float32)
    if pass_kwargs:
        _kernel[grid_for(N)](src=src, N=N)
    else:
        _kernel[grid_for(N)](src, N)
    kdsl.testing.assert_close(src, np.ones_like(src))


@kdsl.kernel
def _optional_store(src, dst, N, BLOCK_SIZE: kl.constexpr):
    offsets = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
    mask = offsets < N
    if src is not None:
        kl.store(src + offsets, kl.full([BLOCK_SIZE], 1, dtype=src.dtype.element_ty), mask=mask)
    else:
        kl.store(dst + offsets, kl.full([BLOCK_SIZE], 1, dtype=dst.dtype.element_ty), mask=mask)


@pytest.mark.parametrize("which", ["reset_to_zero", "restore_value"])
@pytest.mark.parametrize("src_is_none", [False, True])
def test_reset_and_restore_skip_none(backend: str, which: str, src_is_none: bool) -> None:
    """test_reset_to_zero / test_restore_with_none: an optional buffer passed as ``None`` may be
    listed; the tuner skips it."""
    N = 1024
    dst = np.full(N, 2.0, np.float32)
    src = None if src_is_none else dst
    at = kdsl.autotune(configs=TWO, key=["N"], do_bench=quick_bench, **{which: ["src"]})(kdsl.kernel(_optional_store.fn))
    at[grid_for(N)](src, dst, N)
    kdsl.testing.assert_close(dst, np.ones_like(dst))


# --- hooks -------------------------------------------------------------------------------
def test_hooks_bracket_every_run_and_see_heuristics(backend: str) -> None:
    """test_hooks: pre- and post-hooks are called the same number of times (the post-hook asserts
    the balance); heuristics under the tuner are applied to each config; after tuning Triton calls
    the pre-hook once more with ``reset_only=True`` (no post-hook follows)."""
    N = 256
    src = np.arange(N, dtype=np.float32)
    values: dict[str, Any] = {"counter": 0, "has_exception": False, "reset_only": 0, "stages": set()}

    def _pre_hook(*args: Any, **kwargs: Any) -> None:
        values["counter"] += 1
        values["reset_only"] += bool(kwargs.get("reset_only"))
        values["stages"].add(args[0]["N_STAGES"])

    def _post_hook(*args: Any, exception: BaseException | None) -> None:
        values["counter"] -= 1
        if exception is not None:
            values["has_exception"] = True
        assert values["counter"] == 0

    configs = [Config(kwargs={"BLOCK_SIZE": 256}), Config(kwargs={"BLOCK_SIZE": 32})]

    @kdsl.autotune(configs=configs, key=["N"], do_bench=quick_bench, pre_hook=_pre_hook, post_hook=_post_hook)
    @kdsl.heuristics({"N_STAGES": lambda nargs: 64 if nargs["N"] == 256 else 4})
    @kdsl.kernel
    def _kernel(src, N, N_STAGES: kl.constexpr, BLOCK_SIZE: kl.constexpr):
        offsets = kl.arange(0, BLOCK_SIZE)
        for _ in kl.range(kl.cdiv(N, BLOCK_SIZE), num_stages=N_STAGES):
            x = kl.load(src + offsets, mask=offsets < N)
            kl.store(src + offsets, x * 2, mask=offsets < N)
            offsets += BLOCK_SIZE

    _kernel[(1,)](src, N)
    np.testing.assert_array_equal(src, np.arange(N) * 2)
    assert values == {"counter": 1, "has_exception": False, "reset_only": 1, "stages": {64}}


def test_config_that_fails_to_compile_is_skipped_and_seen_by_post_hook(backend: str) -> None:
    """test_exceed_threads / out-of-resources: a config failing at compile time (Triton: OutOfResources,
    CompileTimeAssertionFailure) is skipped, and ``post_hook`` gets the exception."""
    N = 256
    seen: list[tuple[int, str]] = []

    def _post_hook(args: dict[str, Any], exception: BaseException | None) -> None:
        seen.append((args["BLOCK_SIZE"], type(exception).__name__))

    configs = [Config(kwargs={"BLOCK_SIZE": 512}), Config(kwargs={"BLOCK_SIZE": 32})]

    @kdsl.autotune(configs=configs, key=["N"], do_bench=quick_bench, post_hook=_post_hook)
    @kdsl.kernel
    def _kernel(dst, src, N, BLOCK_SIZE: kl.constexpr):
        kl.static_assert(BLOCK_SIZE <= 128, "BLOCK_SIZE too large")
        offsets = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
        kl.store(dst + offsets, kl.load(src + offsets, mask=offsets < N), mask=offsets < N)

    src = np.random.rand(N).astype(np.float32)
    dst = np.zeros_like(src)
    _kernel[grid_for(N)](dst, src, N)
    np.testing.assert_array_equal(dst, src)
    assert _kernel.best_config == configs[1]
    assert (512, "CompilationError") in seen and (32, "NoneType") in seen
    assert not any(b == 32 and e != "NoneType" for b, e in seen)


def test_config_pre_hook_runs_before_the_chosen_launch(backend: str) -> None:
    """``Config(..., pre_hook=f)``: called with every argument plus the config's meta-parameters
    before each run, the final launch included."""
    N = 64
    calls: list[int] = []

    def fill(nargs: dict[str, Any]) -> None:
        calls.append(nargs["BLOCK_SIZE"])
        nargs["dst"][:] = -1.0

    configs = [Config({"BLOCK_SIZE": 16}, pre_hook=fill), Config({"BLOCK_SIZE": 32}, pre_hook=fill)]
    at = kdsl.autotune(configs=configs, key=["N"], do_bench=quick_bench)(copy_kernel())
    src = np.random.rand(N).astype(np.float32)
    dst = np.zeros_like(src)
    at[grid_for(N)](dst, src, N)
    np.testing.assert_array_equal(dst, src)
    assert set(calls) == {16, 32} and calls[-1] == at.best_config.kwargs["BLOCK_SIZE"]


# --- pruning -----------------------------------------------------------------------------
@pytest.mark.parametrize("with_perf_model", [False, True])
def test_prune_configs(backend: str, with_perf_model: bool) -> None:
    """test_prune_configs: ``early_config_prune(configs, named_args, **kwargs)`` sees the positional
    arguments by name and the keyword ones; with ``top_k=1`` only the perf model runs."""
    N = 1024
    records: dict[str, bool] = {}

    def early_config_prune(configs: list[Config], named_args: dict[str, Any], **kwargs: Any) -> list[Config]:
        records["run_early_config_prune"] = True
        if kwargs.get("N") == 1024:
            records["capture_kwargs"] = True
        if "dst" in named_args and "src" in named_args and len(named_args) == 2:
            records["capture_named_args"] = True
        return [configs[0]]

    def perf_model(*args: Any, **kwargs: Any) -> float:
        records["run_perf_model"] = True
        return float(kwargs["BLOCK_SIZE"])

    prune = {"perf_model": perf_model, "top_k": 1} if with_perf_model else {"early_config_prune": early_config_prune}
    at = kdsl.autotune(configs=TWO, key=["N"], prune_configs_by=prune, do_bench=quick_bench)(copy_kernel())
    src = np.random.rand(N).astype(np.float32)
    dst = np.empty_like(src)
    at[grid_for(N)](dst, src, N=N)
    np.testing.assert_array_equal(src, dst)
    if with_perf_model:
        assert records == {"run_perf_model": True} and at.best_config == TWO[0]
    else:
        assert records == {"run_early_config_prune": True, "capture_kwargs": True, "capture_named_args": True}


def test_fractional_top_k_after_early_prune(backend: str) -> None:
    """test_prune_configs_fractional_top_k_after_early_prune: the perf model sees only what the
    early prune kept, ``top_k=0.5`` keeps half of those (0.3 of two configs still keeps one)."""
    configs = [Config(kwargs={"BLOCK_SIZE": b}) for b in (16, 32, 64, 128, 256, 512, 1024, 2048)]
    estimated: list[int] = []
    benchmarked: list[int] = []

    def bench(kernel_call: Any, quantiles: Any) -> list[float]:
        kernel_call()
        return [1.0, 1.0, 1.0]

    def perf_model(**kwargs: Any) -> float:
        estimated.append(kwargs["BLOCK_SIZE"])
        return float(kwargs["BLOCK_SIZE"])

    def pre_hook(nargs: dict[str, Any]) -> None:
        benchmarked.append(nargs["BLOCK_SIZE"])

    prune = {"early_config_prune": lambda c, named, **kw: c[:6], "perf_model": perf_model, "top_k": 0.5}
    at = kdsl.autotune(configs=configs, key=["N"], prune_configs_by=prune, do_bench=bench, pre_hook=pre_hook)(
        copy_kernel())
    N = 100
    src = np.random.rand(N).astype(np.float32)
    dst = np.empty_like(src)
    at[grid_for(N)](dst, src, N)
    np.testing.assert_array_equal(src, dst)
    assert estimated == [16, 32, 64, 128, 256, 512]
    assert set(benchmarked) == {16, 32, 64}
    small = kdsl.autotune(configs=TWO, key=["N"], prune_configs_by={"perf_model": perf_model, "top_k": 0.3},
                          do_bench=bench)(copy_kernel())
    small[grid_for(N)](dst, src, N)
    assert small.best_config == TWO[0]


@pytest.mark.parametrize("prune_kind", ["early_config_prune", "perf_model"])
def test_pruned_to_one_config_skips_benchmarking(backend: str, prune_kind: str) -> None:
    """test_pruned_single_config_skips_benchmark: no ``do_bench`` call; ``best_config`` is the one left."""

    def do_not_bench(kernel_call: Any, quantiles: Any) -> Any:
        raise AssertionError("autotune benchmark should be skipped for a single pruned config")

    prune: dict[str, Any] = (
        {"early_config_prune": lambda configs, named_args, **kw: [configs[1]]} if prune_kind == "early_config_prune"
        else {"perf_model": lambda **kw: 0 if kw["BLOCK_SIZE"] == 128 else 1, "top_k": 1})
    at = kdsl.autotune(configs=TWO, key=["N"], prune_configs_by=prune, do_bench=do_not_bench)(copy_kernel())
    N = 1024
    src = np.random.rand(N).astype(np.float32)
    dst = np.empty_like(src)
    at[grid_for(N)](dst, src, N=N)
    np.testing.assert_array_equal(src, dst)
    assert at.best_config == TWO[1]


def test_pruning_errors() -> None:
    """test_prune_all_configs: pruning every config is an error; so is a ``top_k`` that is neither an
    int nor a fraction <= 1.0 (Triton: ``TypeError``)."""
    N = 64
    src = np.zeros(N, np.float32)
    none_left = kdsl.autotune(configs=TWO, key=["N"], prune_configs_by={"early_config_prune": lambda c, n, **k: []})
    with pytest.raises(ValueError, match="at least one"):
        none_left(copy_kernel())[grid_for(N)](src, src, N)
    bad_k = kdsl.autotune(configs=TWO, key=["N"], prune_configs_by={"perf_model": lambda **k: 1.0, "top_k": 1.5})
    with pytest.raises(TypeError, match="top_k"):
        bad_k(copy_kernel())[grid_for(N)](src, src, N)


# --- results -----------------------------------------------------------------------------
def test_do_bench_argument_decides_and_timings_are_reported(backend: str) -> None:
    """A user ``do_bench(kernel_call, quantiles)`` measures each config (Triton: the median comes
    first); the lowest wins; ``best_config``, ``configs_timings``, ``cache`` and ``bench_time``
    report it. A tuner reading a persisted choice back (kdsl keeps them: ``cache_results``) reports
    the same timings."""
    fake = {32: 3.0, 128: 1.0}

    def bench(kernel_call: Any, quantiles: Any) -> list[float]:
        assert list(quantiles) == [0.5, 0.2, 0.8]
        kernel_call()
        return [fake[bench.block], 0.0, 9.0]  # type: ignore[attr-defined]

    def note(nargs: dict[str, Any]) -> None:
        bench.block = nargs["BLOCK_SIZE"]  # type: ignore[attr-defined]

    kernel = copy_kernel()
    at = kdsl.autotune(configs=TWO, key=["N"], do_bench=bench, pre_hook=note)(kernel)
    N = 300
    src = np.random.rand(N).astype(np.float32)
    dst = np.zeros_like(src)
    at[grid_for(N)](dst, src, N)
    np.testing.assert_array_equal(dst, src)
    assert at.best_config == TWO[1] and list(at.cache.values()) == [TWO[1]]
    assert at.configs_timings == {TWO[0]: 3.0, TWO[1]: 1.0}
    assert at.bench_time > 0 and at.base_fn is kernel.fn
    first = kdsl.autotune(configs=TWO, key=["N"], **FAST)(kernel)  # no user code: the choice is persisted
    first[grid_for(N)](dst, src, N)
    again = kdsl.autotune(configs=TWO, key=["N"], **FAST)(kernel)
    dst[:] = 0
    again[grid_for(N)](dst, src, N)
    np.testing.assert_array_equal(dst, src)
    assert first.trials >= 2 and again.trials == 0 and again.best_config == first.best_config
    assert again.configs_timings == first.configs_timings and len(again.configs_timings) == 2


def test_config_api() -> None:
    """``Config``: Triton's positional order, ``all_kwargs``, ``__str__``, equality and hashing."""
    c = Config({"BLOCK_SIZE": 128}, 8, 2)
    assert (c.num_warps, c.num_stages, c.num_ctas, c.maxnreg, c.pre_hook) == (8, 2, 1, None, None)
    assert c.all_kwargs() == {"BLOCK_SIZE": 128, "num_warps": 8, "num_ctas": 1, "num_stages": 2}
    assert str(c) == "BLOCK_SIZE: 128, num_warps: 8, num_ctas: 1, num_stages: 2, maxnreg: None, ir_override: None"
    assert Config({"BLOCK_SIZE": 128}, num_warps=8, num_stages=2) == c
    assert len({c, Config({"BLOCK_SIZE": 128}, 8, 2), Config({"BLOCK_SIZE": 64}, 8, 2)}) == 2
    assert Config(kwargs={"A": 1}, maxnreg=128).all_kwargs()["maxnreg"] == 128


def test_tuned_meta_parameter_passed_by_hand_is_an_error() -> None:
    at = kdsl.autotune(configs=TWO, key=["N"])(copy_kernel())
    src = np.zeros(64, np.float32)
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK_SIZE"):
        at[(1,)](src, src, 64, BLOCK_SIZE=64)


def test_autotuner_warmup_compiles_every_pruned_config(backend: str) -> None:
    """``Autotuner.warmup`` (and ``run(..., warmup=True)``): one compiled kernel per pruned config,
    nothing launched."""
    kernel = copy_kernel()
    at = kdsl.autotune(configs=[*TWO, Config({"BLOCK_SIZE": 64})], key=["N"],
                       prune_configs_by={"early_config_prune": lambda c, n, **k: c[:2]})(kernel)
    src = np.ones(64, np.float32)
    dst = np.zeros_like(src)
    assert len(at.warmup(dst, src, 64, grid=(1,))) == 2
    assert len(at.run(dst, src, 64, grid=(1,), warmup=True)) == 2
    assert not dst.any() and sum(1 for key in kernel.cache if key[0] == backend) == 2


# --- stacking with heuristics ------------------------------------------------------------
def test_heuristics_alone_and_stacked_both_ways(backend: str) -> None:
    """The documented ``triton.heuristics`` example (``BLOCK_SIZE = next_power_of_2(x_size)``), and
    heuristics under the tuner (seeing each config) and over it (seeing the arguments only)."""

    @kdsl.heuristics(values={"BLOCK_SIZE": lambda args: kdsl.next_power_of_2(args["x_size"])})
    @kdsl.kernel
    def double(x_ptr, x_size, BLOCK_SIZE: kl.constexpr):
        offs = kl.arange(0, BLOCK_SIZE)
        kl.store(x_ptr + offs, kl.load(x_ptr + offs, mask=offs < x_size) * 2, mask=offs < x_size)

    x = np.arange(37, dtype=np.float32)
    double[(1,)](x, 37)
    np.testing.assert_array_equal(x, np.arange(37) * 2)

    @kdsl.kernel
    def fill(dst, N, BLOCK_SIZE: kl.constexpr, VALUE: kl.constexpr, EVEN: kl.constexpr):
        offsets = kl.program_id(0) * BLOCK_SIZE + kl.arange(0, BLOCK_SIZE)
        mask = offsets < N
        if EVEN:
            mask = offsets >= 0  # N is a multiple of BLOCK_SIZE: no mask needed
        kl.store(dst + offsets, kl.full([BLOCK_SIZE], VALUE, kl.float32), mask=mask)

    under = kdsl.autotune(configs=TWO, key=["N"], do_bench=quick_bench)(
        kdsl.heuristics({"EVEN": lambda a: a["N"] % a["BLOCK_SIZE"] == 0, "VALUE": lambda a: a["N"] + 0.5})(fill))
    over = kdsl.heuristics({"VALUE": lambda a: a["N"] + 0.25, "EVEN": lambda a: False})(
        kdsl.autotune(configs=TWO, key=["N"], do_bench=quick_bench)(kdsl.kernel(fill.fn)))
    for n in (256, 100):
        for tuned, value in ((under, n + 0.5), (over, n + 0.25)):
            dst = np.zeros(n + 64, np.float32)
            tuned[grid_for(n)](dst, n)
            np.testing.assert_array_equal(dst[:n], value)
            assert not dst[n:].any()


# --- kdsl.testing ------------------------------------------------------------------------
def test_do_bench_return_modes_and_quantiles() -> None:
    """``do_bench``: ``return_mode`` min/max/mean/median (a float) or all (the samples);
    ``quantiles`` a list, or a float for one quantile; any other mode is refused."""
    calls = [0]

    def fn() -> None:
        calls[0] += 1

    kw: dict[str, Any] = {"warmup": 0.1, "rep": 0.5, "max_repeats": 5}
    samples = kdsl.testing.do_bench(fn, return_mode="all", **kw)
    assert isinstance(samples, list) and 1 <= len(samples) <= 5 and all(s >= 0 for s in samples)
    for mode in ("min", "max", "mean", "median"):
        assert isinstance(kdsl.testing.do_bench(fn, return_mode=mode, **kw), float)
    q = kdsl.testing.do_bench(fn, quantiles=[0.5, 0.2, 0.8], **kw)
    assert isinstance(q, list) and len(q) == 3 and q[1] <= q[0] <= q[2]
    assert isinstance(kdsl.testing.do_bench(fn, quantiles=[0.5], **kw), float)
    with pytest.raises((ValueError, AssertionError)):
        kdsl.testing.do_bench(fn, return_mode="p50")
    assert calls[0] > 5


def test_do_bench_cudagraph_is_documented_absent() -> None:
    with pytest.raises(AttributeError, match=r"no CUDA graphs.*do_bench"):
        kdsl.testing.do_bench_cudagraph  # noqa: B018


def test_assert_close_uses_tritons_tolerances() -> None:
    """Absolute 1e-2 and relative 0 by default; tolerances may be functions of the dtype; NaNs
    compare equal; a scalar mismatch names both values and the caller's message."""
    ac = kdsl.testing.assert_close
    ac(np.array([1.0, 2.0]), [1.009, 2.0])
    with pytest.raises(AssertionError):
        ac(np.array([100.0, 2.0]), [100.5, 2.0])  # rtol 1e-2 would accept this; Triton's 0 does not
    ac(np.array([100.0, 2.0]), [100.5, 2.0], rtol=lambda dtype: 1e-2 if dtype == np.float64 else 0.0)
    ac(np.float32(3.0), 3.5, atol=lambda dtype: 1.0 if dtype == np.float32 else 0.0)
    ac(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    with pytest.raises(AssertionError, match=r"^ctx 1.0 is not close to 1.5 \(atol=0.01, rtol=0.0\)$"):
        ac(1.0, 1.5, err_msg="ctx")
    with kdsl.backend("cpu" if "cpu" in kdsl.available_backends() else "interpreter"):
        ac(kdsl.tensor(np.ones(4, np.float32)), np.ones(4))


def test_perf_report_prints_and_saves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``perf_report(Benchmark(...))`` + ``run(print_data=True, save_path=...)``: several ``x_names``
    given tuples of values, the table printed under ``<plot_name>:``, a PNG, a CSV and results.html
    written into a directory created if missing; ``return_df=True`` gives a DataFrame (with pandas)."""

    @kdsl.testing.perf_report(kdsl.testing.Benchmark(
        x_names=["M", "N"], x_vals=[(2, 3), (4, 5)], line_arg="provider", line_vals=["a", "b"],
        line_names=["A", "B"], plot_name="sweep-demo", args={"scale": 10}, ylabel="ms"))
    def bench(M: int, N: int, provider: str, scale: int) -> Any:
        v = float(M * N * scale)
        return v if provider == "a" else (v / 2, v / 4, v)

    out = tmp_path / "new" / "dir"
    table = bench.run(print_data=True, save_path=str(out))
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "sweep-demo:" and printed[1].split() == ["M", "N", "A", "B"]
    assert printed[2].split() == ["2", "3", "60", "30"] and printed[3].split() == ["4", "5", "200", "100"]
    assert table.column("A") == [60.0, 200.0] and table.column("B") == [30.0, 100.0]
    assert (out / "sweep-demo.png").stat().st_size > 1000
    assert (out / "sweep-demo.csv").read_text().splitlines()[0].startswith("M,N,A,")
    assert 'src="sweep-demo.png"' in (out / "results.html").read_text()
    try:
        import pandas as pd
    except ImportError:
        return
    df = bench.run(return_df=True)
    assert isinstance(df, pd.DataFrame) and list(df["A"]) == [60.0, 200.0]


def test_isolated_trials_after_the_parent_used_the_device(backend: str) -> None:
    """kdsl's ``isolate=True`` (each trial in a forked child) after the parent has launched: works
    where the runtime survives ``fork()`` (the cpu backend's thread pool restarts in the child; it
    used to wait forever for the parent's threads), and is refused by name where the driver does not."""
    N = 100
    kernel = copy_kernel()
    src = np.random.rand(N).astype(np.float32)
    dst = np.zeros_like(src)
    kernel[(4,)](dst, src, N, BLOCK_SIZE=32)  # the parent's runtime is up (cpu: its thread pool)
    dst[:] = 0
    at = kdsl.autotune(configs=TWO, key=["N"], isolate=True, timeout=30, persist=False, **FAST)(kernel)
    if backend in ("interpreter", "cpu"):
        at[grid_for(N)](dst, src, N)
        np.testing.assert_array_equal(dst, src)
        assert not at.rejected and len(at.configs_timings) == 2
    else:
        with pytest.raises(TypeError, match=f"isolate=True.*{backend} driver does not survive fork"):
            at[grid_for(N)](dst, src, N)
