"""The lowering of an attention step as Triton's tutorial 06 writes it (``dot(q, k.T)``, row
max/sum, ``exp2`` of the rescale factor, ``dot(p.to(f16), v, acc)``) on a vector layout.

What is checked in the work-item IR (the decisions that took the tutorial's forward pass from
0.7x to torch's speed on the cpu backend, docs/OPTIMIZER.md "Session 12"):
- both ``wi.mma`` read f32 arrays only: ``k``'s block copy is widened through the transpose and
  ``p.to(f16)`` is stored rounded-then-widened, so no conversion sits in a micro-kernel loop;
- the per-row ``alpha = exp2(m_i - m_ij)`` is vectorised: a row reduction's element loop (which
  holds the reduction loop and stays scalar) no longer takes other ops of its shape with it;
- a dot narrower than the layout's ``dot_block_n`` keeps as many accumulators in more rows.
Numbers match the interpreter on every compiled backend (widening f16 is exact, and ``p`` is
rounded to f16 once either way).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.ir.printer import print_op
from kdsl.ir.verifier import verify
from kdsl.lowering import Layout, lower_to_wi


@kdsl.kernel
def attention_step(q_ptr, k_ptr, v_ptr, o_ptr, N_CTX, BLOCK_M: kl.constexpr, BLOCK_N: kl.constexpr,
                   D: kl.constexpr):  # fmt: skip
    offs_m = kl.program_id(0) * BLOCK_M + kl.arange(0, BLOCK_M)
    offs_n = kl.arange(0, BLOCK_N)
    offs_d = kl.arange(0, D)
    q = kl.load(q_ptr + offs_m[:, None] * D + offs_d[None, :])
    m_i = kl.zeros([BLOCK_M], dtype=kl.float32) - float("inf")
    l_i = kl.zeros([BLOCK_M], dtype=kl.float32) + 1.0
    acc = kl.zeros([BLOCK_M, D], dtype=kl.float32)
    for start_n in range(0, N_CTX, BLOCK_N):
        k = kl.load(k_ptr + (start_n + offs_n)[:, None] * D + offs_d[None, :])
        qk = kl.dot(q, k.T)
        m_ij = kl.maximum(m_i, kl.max(qk, 1) * 0.18)
        p = kl.math.exp2(qk * 0.18 - m_ij[:, None])
        alpha = kl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + kl.sum(p, 1)
        v = kl.load(v_ptr + (start_n + offs_n)[:, None] * D + offs_d[None, :])
        acc = kl.dot(p.to(kl.float16), v, acc * alpha[:, None])
        m_i = m_ij
    kl.store(o_ptr + offs_m[:, None] * D + offs_d[None, :], acc / l_i[:, None])


def _wi_text(layout: Layout) -> str:
    mod = kdsl.compile_to_ir(attention_step, "*f16", "*f16", "*f16", "*f32", "i32", optimize=True, BLOCK_M=32,
                             BLOCK_N=16, D=32)  # fmt: skip
    entry = next(op for op in mod.body.ops if op.attributes.get("kernel")).attributes["sym_name"]
    wmod = lower_to_wi(mod, entry, layout)
    verify(wmod)
    return print_op(wmod)


def test_attention_step_on_a_vector_layout() -> None:
    text = _wi_text(Layout(1, 1, vector_width=16, dot_block_m=4, dot_block_n=32))
    mmas = [ln for ln in text.splitlines() if "wi.mma" in ln]
    assert len(mmas) == 2
    for ln in mmas:  # a, b and c of both products are f32 arrays
        operand_types = ln.split(" : ")[-1]
        assert operand_types.count("xf32, private>") == 3 and "f16" not in operand_types, ln
    # q @ k.T is 32 x 16: half the layout's 32 columns, so twice its 4 rows
    assert "block_m = 8, block_n = 16" in mmas[0]
    assert "block_m = 4, block_n = 32" in mmas[1]  # p @ v is 32 x 32
    # every exp2 works on vectors: alpha's element loop is not the row reduction's
    exps = [ln for ln in text.splitlines() if "math.exp2" in ln]
    assert exps and all("vector<16xf32>" in ln for ln in exps), exps


def test_scalar_layout_is_unchanged() -> None:
    """Without vectors (Vulkan's layout) there is no micro-kernel and nothing is widened."""
    text = _wi_text(Layout(1, 1))
    assert "wi.mma" not in text and "wi.block_load" not in text


def _backends() -> list[str]:
    present = set(kdsl.available_backends())
    return [b for b in ("cpu", "opencl", "vulkan") if b in present]


@pytest.mark.parametrize("backend", _backends())
@pytest.mark.parametrize(("block_m", "block_n"), [(32, 16), (16, 32), (64, 16)])
def test_attention_step_matches_the_interpreter(backend: str, block_m: int, block_n: int) -> None:
    rng = np.random.default_rng(block_m + block_n)
    n_ctx, d = 64, 32
    q, k, v = (rng.standard_normal((n_ctx, d)).astype(np.float16) for _ in range(3))

    def run(name: str) -> np.ndarray[Any, Any]:
        o = np.zeros((n_ctx, d), np.float32)
        with kdsl.backend(name):
            attention_step[(n_ctx // block_m,)](q, k, v, o, n_ctx, BLOCK_M=block_m, BLOCK_N=block_n, D=d)
        return o

    # exp2 may differ by an ulp between backends, which can move p by one f16 ulp (2**-11 relative)
    np.testing.assert_allclose(run(backend), run("interpreter"), rtol=1e-3, atol=1e-4)
