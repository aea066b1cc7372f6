"""``@kdsl.heuristics``: meta-parameters computed from the launch arguments (``triton.heuristics``),
alone and stacked with ``@kdsl.autotune`` in both orders.

Facts (triton-lang.org ``triton.heuristics``; triton/runtime/autotuner.py, facts only): each value
is a function of a dict holding the positional arguments by name and the keyword arguments
(meta-parameters included); heuristics run in order, each seeing the ones before; under
``@autotune`` they see the config being run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kdsl
from kdsl.autotune import Config, autotune

from . import at_kernels as K

FAST = {"warmup": 0.5, "rep": 2, "max_repeats": 3}
EVEN = {"EVEN": lambda a: a["n"] % a["BLOCK"] == 0}


def run(kernel: Any, n: int, **meta: Any) -> np.ndarray:
    x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
    out = np.full(n + 1, -1, np.float32)
    kernel[lambda m: (kdsl.cdiv(n, m["BLOCK"]),)](x, y, out, n, **meta)
    np.testing.assert_array_equal(out[:n], x + 1)
    return out


@pytest.mark.parametrize("backend_name", ["interpreter", "cpu", "opencl", "vulkan"])
def test_heuristic_values_reach_the_kernel(backend_name: str) -> None:
    if backend_name not in kdsl.available_backends():
        pytest.skip(f"backend {backend_name!r} unavailable")
    seen: list[dict[str, Any]] = []

    def tag(args: dict[str, Any]) -> int:
        seen.append(dict(args))
        return 2 if args["EVEN"] else 1  # sees the heuristic computed before it

    k = kdsl.heuristics({**EVEN, "TAG": tag})(K.even_add_kernel)
    with kdsl.backend(backend_name):
        assert run(k, 64, BLOCK=32)[64] == 2
        assert run(k, 70, BLOCK=32)[70] == 1  # ragged: the masked path
    assert seen[0]["n"] == 64 and seen[0]["BLOCK"] == 32 and "x" in seen[0]


def test_autotune_over_heuristics_sees_each_config() -> None:
    k = autotune(configs=[Config({"BLOCK": 16}), Config({"BLOCK": 24})], key=["n"], persist=False, **FAST)(
        kdsl.heuristics({**EVEN, "TAG": lambda a: a["BLOCK"]})(K.even_add_kernel))
    out = run(k, 48)  # 48 is a multiple of 16 and of 24: both configs take the EVEN path
    assert out[48] == k.best_config.kwargs["BLOCK"]
    assert k.best_config.kwargs["EVEN"] is True
    out = run(k, 50)  # same key? no: n is the key -> retuned; ragged for both
    assert k.best_config.kwargs["EVEN"] is False and out[50] == k.best_config.kwargs["BLOCK"]


def test_cached_choice_recomputes_heuristics() -> None:
    # the key ignores n, so the second launch reuses the choice: EVEN must follow the new n
    k = autotune(configs=[Config({"BLOCK": 16}), Config({"BLOCK": 32})], key=[], persist=False, **FAST)(
        kdsl.heuristics({**EVEN, "TAG": lambda a: 5})(K.even_add_kernel))
    run(k, 64)
    assert k.best_config.kwargs["EVEN"] is True
    run(k, 65)  # would read out of bounds if the cached EVEN=True were reused
    assert k.best_config.kwargs["EVEN"] is False


def test_heuristics_over_autotune() -> None:
    k = kdsl.heuristics({"TAG": lambda a: 7})(
        autotune(configs=[Config({"BLOCK": 16, "EVEN": False}), Config({"BLOCK": 32, "EVEN": False})],
                 key=["n"], persist=False, **FAST)(K.even_add_kernel))
    assert run(k, 40)[40] == 7


def test_bad_uses() -> None:
    with pytest.raises(TypeError, match="must decorate"):
        kdsl.heuristics(EVEN)(lambda x: x)
    with pytest.raises(TypeError, match="must be a function"):
        kdsl.heuristics({"EVEN": True})(K.even_add_kernel)
    with pytest.raises(TypeError, match="takes a dict"):
        kdsl.heuristics([("EVEN", lambda a: True)])  # type: ignore[arg-type]
