"""Property test of the in-place lowering and array sharing (``kdsl.lowering.inplace``,
``kdsl.lowering.coalesce``): random loop bodies over three carried 2-D tiles -- swaps, stored
temporaries, dots accumulating into carried or dying tiles, branches that rescale or pass tiles
through, transposed and row-broadcast reads of old values -- run on every compiled backend and
compared with the interpreter (the reference, which has no storage to share)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kdsl

STATEMENTS = (
    "a = kl.exp2(a * 0.1) * 0.5",
    "t = kl.exp2(a * 0.05)\n{i}a = t + kl.sum(t, axis=1)[:, None] * 0.01",
    "a, b = b, a",
    "a, b = b * 0.5, a + b",
    "a = kl.dot(x, y, a)",
    "b = kl.dot(kl.exp2(a * 0.01), y, b)",
    "c = kl.trans(a) + b",
    "c = kl.cumsum(a, axis=1) * 0.01",
    "a = kl.where(a > b, a, c)",
    "if kl.max(kl.sum(a, axis=1), axis=0) > {k}:\n{i}    a = a * 0.5\n{i}    b = b - 1.0",
    "if it % 2 == 0:\n{i}    c = a\n{i}else:\n{i}    c = kl.trans(b)",
    "p = kl.exp2(a * 0.01)\n{i}if kl.max(kl.sum(p, axis=1), axis=0) > {k}:\n{i}    p = kl.exp2(b * 0.01)\n{i}c = kl.dot(p, y, c)",
)


def _source(name: str, body: list[int], limits: list[float], clamp: list[bool]) -> str:
    """The kernel; ``clamp[j]`` bounds carried tile j at the end of the body (an elementwise
    expression: yielded lazily), else its last stored value is yielded as is (the in-place case)."""
    ind = " " * 8
    lines = []
    for n, s in enumerate(body):
        lines.append(ind + STATEMENTS[s].format(i=ind, k=limits[n % len(limits)]))
    for v, on in zip("abc", clamp):
        if on:
            lines.append(ind + f"{v} = kl.minimum(kl.maximum({v}, -50.0), 50.0)")
    loop = "\n".join(lines)
    return f'''import kdsl
import kdsl.language as kl


@kdsl.kernel
def {name}(x_ptr, y_ptr, out_ptr, steps, N: kl.constexpr):
    r = kl.arange(0, N)
    idx = r[:, None] * N + r[None, :]
    x = kl.load(x_ptr + idx)
    y = kl.load(y_ptr + idx) * 0.1
    a = x
    b = x * 0.5
    c = kl.zeros([N, N], dtype=kl.float32)
    for it in range(0, steps):
{loop}
    kl.store(out_ptr + idx, a)
    kl.store(out_ptr + N * N + idx, b)
    kl.store(out_ptr + 2 * N * N + idx, c)
'''


def _load(tmp: Path, name: str, source: str) -> Any:
    path = tmp / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"kdsl_inplace_{name}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, name)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("inplace_prop")


_COUNTER = [0]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.lists(st.integers(0, len(STATEMENTS) - 1), min_size=1, max_size=5),
    limits=st.lists(st.sampled_from([-1e9, 5.0, 40.0, 1e9]), min_size=1, max_size=3),
    steps=st.integers(0, 3),
    clamp=st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_random_loop_bodies_match_interpreter(
    workdir: Path, body: list[int], limits: list[float], steps: int, clamp: list[bool]
) -> None:
    _COUNTER[0] += 1
    name = f"loop_{_COUNTER[0]}"
    kern = _load(workdir, name, _source(name, body, limits, clamp))
    n = 16
    rng = np.random.default_rng(len(body) * 7 + steps)
    x = rng.uniform(-2, 2, (n, n)).astype(np.float32)
    y = rng.uniform(-2, 2, (n, n)).astype(np.float32)
    results: dict[str, np.ndarray] = {}
    for be in kdsl.available_backends():
        out = np.zeros(3 * n * n, np.float32)
        with kdsl.backend(be):
            kern[(1,)](x, y, out, steps, N=n)
        results[be] = out
    ref = results.pop("interpreter")
    finite = np.isfinite(ref)
    for be, got in results.items():
        np.testing.assert_array_equal(np.isfinite(got), finite, err_msg=f"{be}: non-finite positions")
        got, want = got[finite], ref[finite]
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3, err_msg=f"{be}: {body} {limits} {clamp} steps={steps}")
