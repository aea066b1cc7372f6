"""Golden tile IR for representative kernels (frontend output, before passes).

Regenerate after an intended change with ``KDSL_UPDATE_GOLDEN=1 pytest
tests/frontend/test_golden.py`` and review the diff of ``golden/``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kdsl
from kdsl.ir.printer import print_op

from . import fe_kernels as K

GOLDEN = Path(__file__).parent / "golden"

f32 = np.zeros(64, np.float32)
i32 = np.zeros(64, np.int32)

CASES: dict[str, tuple[Any, tuple[Any, ...], dict[str, Any]]] = {
    "vector_add": (K.vector_add, (f32, f32, f32, 1000), {"BLOCK": 128}),
    "softmax": (K.softmax, (f32, f32, 13, 13, 13), {"BLOCK": 16}),
    "loop_sum": (K.loop_sum, (f32, f32, 37), {"BLOCK": 8}),
    "if_else": (K.if_else, (f32, f32, 3), {}),
    "while_loop": (K.while_loop, (i32, 10), {}),
    "early_return": (K.early_return, (f32, f32, 20), {}),
    "call_helper": (K.call_helper, (f32, f32), {"BLOCK": 4}),
    "static_unroll": (K.static_unroll, (f32, f32), {"N": 3}),
    "matmul": (K.matmul, (f32, f32, f32, 33, 20, 40, 40, 1, 20, 1, 20, 1), {"BM": 16, "BN": 16, "BK": 16}),
}


def render(name: str) -> str:
    fn, args, meta = CASES[name]
    return print_op(kdsl.compile_to_ir(fn, *args, **meta)) + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_ir(name: str) -> None:
    path = GOLDEN / f"{name}.mlir"
    text = render(name)
    if os.environ.get("KDSL_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"missing golden file {path}; run with KDSL_UPDATE_GOLDEN=1"
    assert text == path.read_text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_round_trips_through_parser(name: str) -> None:
    from kdsl.ir.parser import parse_module

    text = render(name)
    assert print_op(parse_module(text)) + "\n" == text


@pytest.mark.parametrize("name", sorted(CASES))
def test_optimized_ir_verifies(name: str) -> None:
    from kdsl.ir.verifier import verify

    fn, args, meta = CASES[name]
    module = kdsl.compile_to_ir(fn, *args, optimize=True, **meta)
    verify(module)
    assert "tile.call" not in print_op(module)  # the inline pass removed every call
