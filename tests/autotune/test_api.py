"""@kdsl.autotune behaviour: keys, pruning, hooks, reset/restore, rejection, timeouts."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import kdsl
from kdsl.autotune import Autotuner, Config, autotune
from kdsl.errors import LaunchError

from . import at_kernels as K

FAST = {"warmup": 0.5, "rep": 2, "max_repeats": 3}


def tuned(kernel: Any, configs: list[Config], **kw: Any) -> Autotuner:
    opts = {**FAST, **kw}
    return autotune(configs=configs, **opts)(kernel)


def grid_of(n: int) -> Any:
    return lambda meta: (kdsl.cdiv(n, meta["BLOCK"]),)


def blocks(*bs: int) -> list[Config]:
    return [Config({"BLOCK": b}) for b in bs]


def test_best_config_result_and_timings() -> None:
    at = tuned(K.add_kernel, blocks(32, 64, 128), key=["n"])
    n = 300
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    out = np.zeros_like(x)
    at[grid_of(n)](x, y, out, n)
    assert at.best_config in blocks(32, 64, 128)
    np.testing.assert_allclose(out, x + y)
    assert len(at.configs_timings) == 3 and all(t > 0 for t in at.configs_timings.values())


def test_key_values_and_dtypes_retune() -> None:
    at = tuned(K.add_kernel, blocks(32, 64), key=["n"], persist=False)
    for n in (100, 100, 200):
        x = np.ones(n, np.float32)
        at[grid_of(n)](x, x, np.empty_like(x), n)
    assert at.trials == 4  # n=100 tuned once, n=200 once
    x64 = np.ones(200, np.float64)
    out = np.empty_like(x64)
    at[grid_of(200)](x64, x64, out, 200)
    assert at.trials == 6  # a new dtype is a new key
    np.testing.assert_allclose(out, 2.0)


def test_grid_callable_receives_config_meta() -> None:
    seen: list[int] = []

    def grid(meta: dict[str, Any]) -> tuple[int]:
        seen.append(meta["BLOCK"])
        return (kdsl.cdiv(meta["n"], meta["BLOCK"]),)

    at = tuned(K.add_kernel, blocks(32, 64), persist=False)
    x = np.ones(100, np.float32)
    at[grid](x, x, np.empty_like(x), 100)
    assert {32, 64} <= set(seen)


def test_conflicting_meta_is_an_error() -> None:
    at = tuned(K.add_kernel, blocks(32, 64))
    x = np.ones(10, np.float32)
    with pytest.raises(LaunchError, match="Conflicting meta-parameters: BLOCK") as info:
        at[(1,)](x, x, x, 10, BLOCK=32)
    assert isinstance(info.value, ValueError)  # Triton raises ValueError here


def test_early_prune_and_perf_model_top_k() -> None:
    calls: list[int] = []

    def early(configs: list[Config], named: dict[str, Any], **kw: Any) -> list[Config]:
        calls.append(len(configs))
        assert named["n"] == 64
        return [c for c in configs if c.kwargs["BLOCK"] <= 64]

    def model(**kw: Any) -> float:
        return 1.0 / kw["BLOCK"]  # bigger blocks predicted faster

    at = tuned(K.add_kernel, blocks(16, 32, 64, 128), persist=False,
               prune_configs_by={"early_config_prune": early, "perf_model": model, "top_k": 2})
    x = np.ones(64, np.float32)
    at[grid_of(64)](x, x, np.empty_like(x), 64)
    assert calls == [4]
    assert at.trials == 2
    assert {c.kwargs["BLOCK"] for c in at.configs_timings} == {32, 64}


def test_hooks_are_called() -> None:
    pre: list[int] = []
    post: list[Any] = []
    cfg_pre: list[int] = []
    configs = [Config({"BLOCK": 32}, pre_hook=lambda a: cfg_pre.append(a["BLOCK"])), Config({"BLOCK": 64})]
    at = tuned(K.add_kernel, configs, persist=False, pre_hook=lambda a: pre.append(a["BLOCK"]),
               post_hook=lambda a, exception: post.append(exception))
    x = np.ones(64, np.float32)
    at[grid_of(64)](x, x, np.empty_like(x), 64)
    assert {32, 64} <= set(pre)
    assert post and all(e is None for e in post)
    assert cfg_pre


def test_reset_to_zero_between_timed_runs() -> None:
    before: list[float] = []
    at = tuned(K.atomic_sum_kernel, blocks(32, 64), reset_to_zero=["total"], persist=False,
               pre_hook=lambda a: before.append(float(a["total"][0])))
    x = np.arange(100, dtype=np.float32)
    total = np.zeros(1, np.float32)
    at[grid_of(100)](x, total, 100)
    assert before and all(v == 0.0 for v in before)
    assert total[0] == pytest.approx(x.sum())  # the user's launch applied the kernel exactly once


def test_restore_value_between_timed_runs() -> None:
    x0 = np.arange(50, dtype=np.float32)
    seen: list[bool] = []
    at = tuned(K.inplace_inc_kernel, blocks(16, 32), restore_value=["x"], persist=False,
               pre_hook=lambda a: seen.append(bool(np.array_equal(a["x"], x0))))
    x = x0.copy()
    at[grid_of(50)](x, 50)
    assert seen and all(seen)
    np.testing.assert_array_equal(x, x0 + 1)


def test_wrong_result_candidate_is_rejected() -> None:
    configs = [Config({"BLOCK": 32, "FACTOR": 1}), Config({"BLOCK": 128, "FACTOR": 3}), Config({"BLOCK": 64, "FACTOR": 1})]
    at = tuned(K.scale_kernel, configs, persist=False)
    x = np.random.rand(200).astype(np.float32)
    out = np.zeros_like(x)
    at[grid_of(200)](x, out, 200)
    assert at.best_config is not None and at.best_config.kwargs["FACTOR"] == 1
    reasons = {c.kwargs["BLOCK"]: r for c, r in at.rejected}
    assert "wrong result" in reasons[128]
    np.testing.assert_allclose(out, x)


def test_compile_failure_is_rejected() -> None:
    at = tuned(K.add_kernel, blocks(32, 3, 64), persist=False)  # arange(0, 3): not a power of two
    x = np.ones(64, np.float32)
    out = np.empty_like(x)
    at[grid_of(64)](x, x, out, 64)
    reasons = {c.kwargs["BLOCK"]: r for c, r in at.rejected}
    assert set(reasons) == {3} and "Compilation" in reasons[3]
    np.testing.assert_allclose(out, 2.0)


def test_hanging_candidate_times_out_and_is_killed() -> None:
    configs = [Config({"BLOCK": 32, "SPIN": 0}), Config({"BLOCK": 32, "SPIN": 1})]
    at = tuned(K.maybe_hang_kernel, configs, persist=False, timeout=3.0)
    x = np.ones(32, np.float32)
    out = np.zeros_like(x)
    at[(1,)](x, out, 32)
    assert at.best_config == configs[0]
    (cfg, reason), = at.rejected
    assert cfg == configs[1] and "timeout" in reason and "interrupted" in reason
    assert not [t for t in threading.enumerate() if t.name.startswith("kdsl-trial")]
    np.testing.assert_allclose(out, 3.0)


def test_abandoned_trial_never_launches() -> None:
    """A trial past its timeout whose interrupt is swallowed (as native code calling back into
    Python may do) must not go on to launch on the arrays later trials and the user share."""
    import contextlib
    import time

    launches: list[int] = []

    def swallowing_hook(args: dict[str, Any]) -> None:
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            with contextlib.suppress(BaseException):  # deliberately the bad callback
                time.sleep(0.05)

    slow = Config({"BLOCK": 64}, pre_hook=swallowing_hook)
    at = tuned(K.add_kernel, [Config({"BLOCK": 32}), slow], persist=False, timeout=0.5,
               post_hook=lambda args, exception: launches.append(args["BLOCK"]))
    x = np.ones(64, np.float32)
    out = np.zeros_like(x)
    at[grid_of(64)](x, x, out, 64)
    time.sleep(2.5)  # the abandoned trial's hook has returned by now
    assert at.best_config.kwargs["BLOCK"] == 32 and 64 not in launches
    assert any("timeout" in r for _, r in at.rejected)
    np.testing.assert_allclose(out, 2.0)


def test_single_config_launches_without_tuning() -> None:
    at = tuned(K.add_kernel, blocks(64))
    x = np.ones(10, np.float32)
    out = np.empty_like(x)
    at[grid_of(10)](x, x, out, 10)
    assert at.trials == 0 and at.best_config == blocks(64)[0]
    np.testing.assert_allclose(out, 2.0)


def test_decorating_a_plain_function_is_an_error() -> None:
    with pytest.raises(TypeError):
        autotune(configs=blocks(1))(lambda: None)  # type: ignore[arg-type]
