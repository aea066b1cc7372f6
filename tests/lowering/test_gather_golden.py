"""Golden work-item IR of ``tile.gather`` (kdsl/lowering/ops_shape.py: ``lower_gather``).

A gather is lazy: each consumer element converts its index to unsigned, checks it
against the axis length with one compare, and reads the source at the selected
coordinate (0 when out of range), from the private array with one work-item and
from a ``__local`` copy with several. Regenerate with
``KDSL_UPDATE_GOLDEN=1 pytest tests/lowering`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import kdsl
import kdsl.language as kl
from kdsl.ir.printer import print_op
from kdsl.ir.verifier import verify
from kdsl.lowering import Layout, lower_to_wi

GOLDEN = Path(__file__).parent / "golden"


@kdsl.kernel
def gather_rows_kernel(src, idx, out, R: kl.constexpr, C: kl.constexpr):
    o = kl.arange(0, R)[:, None] * C + kl.arange(0, C)[None, :]
    kl.store(out + o, kl.gather(kl.load(src + o), kl.load(idx + o), 1))


def _wi(nt: int) -> str:
    mod = kdsl.compile_to_ir(gather_rows_kernel, "*f32", "*i64", "*f32", optimize=True, R=2, C=4)
    entry = next(op for op in mod.body.ops if op.attributes.get("kernel")).attributes["sym_name"]
    wmod = lower_to_wi(mod, entry, Layout(nt))
    verify(wmod)
    return print_op(wmod)


@pytest.mark.parametrize("nt", [1, 4])
def test_gather_wi_golden(nt: int) -> None:
    text = _wi(nt)
    path = GOLDEN / f"gather_nt{nt}.mlir"
    if os.environ.get("KDSL_UPDATE_GOLDEN") == "1" or not path.exists():
        path.write_text(text + "\n")
    assert text + "\n" == path.read_text()
    # an i64 index is range-checked as u64, in one compare
    assert "-> u64" in text and text.count('predicate = "lt"') >= 1
    if nt > 1:
        assert "local>" in text and "wi.barrier" in text
    else:
        assert "local>" not in text
