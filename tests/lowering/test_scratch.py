"""The lowering's scratch decision (``kdsl/lowering/scratch.py``): ``__local`` buffers past the
device's limit move, largest first, to per-work-group slices of a scratch buffer; the ``scratch``
memref space, its ``offset`` attribute and ``scratch_bytes`` round-trip and verify; renderers that
cannot place scratch arrays refuse them with a clear error instead of printing wrong code."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError
from kdsl.ir.core import IRError, ModuleOp
from kdsl.ir.parser import parse_module
from kdsl.ir.printer import print_op
from kdsl.ir.verifier import verify
from kdsl.lowering import Layout, lower_to_wi
from kdsl.lowering.coalesce import local_bytes
from kdsl.lowering.scratch import scratch_bytes, spill_to_scratch

THREE = """\
builtin.module {
  wi.func @k(%x: ptr<f32>) attributes {num_threads = 4} {
    %t = wi.local_id : i32
    %a = wi.alloc : memref<64xf32, local>
    %b = wi.alloc : memref<1000xf32, local>
    %c = wi.alloc : memref<4xi1, local>
    %v = wi.gload %x : (ptr<f32>) -> f32
    wi.store %v, %a, %t : f32, memref<64xf32, local>, i32
    wi.store %v, %b, %t : f32, memref<1000xf32, local>, i32
    wi.barrier
    %la = wi.load %a, %t : (memref<64xf32, local>, i32) -> f32
    %lb = wi.load %b, %t : (memref<1000xf32, local>, i32) -> f32
    %s = arith.add %la, %lb : f32
    wi.gstore %x, %s : ptr<f32>, f32
    %f = arith.cmp %la, %lb {predicate = "lt"} : (f32, f32) -> i1
    wi.store %f, %c, %t : i1, memref<4xi1, local>, i32
    wi.return
  }
}
"""


def test_largest_buffers_move_first_until_the_rest_fits() -> None:
    mod = parse_module(THREE)
    func = mod.body.ops[0]
    assert local_bytes(func) == 64 * 4 + 1000 * 4 + 4 * 4
    assert spill_to_scratch(func, limit=1 << 20) == 0  # everything fits: unchanged
    assert "scratch" not in print_op(mod)
    # limit 300: b (4000 B) alone brings the rest to 272 B; a and c stay in work-group memory
    assert spill_to_scratch(func, limit=300) == 4000
    verify(mod)
    text = print_op(mod)
    assert "%b = wi.alloc {offset = 0} : memref<1000xf32, scratch>" in text, text
    assert "memref<64xf32, local>" in text and "memref<4xi1, local>" in text
    assert local_bytes(func) == 272 and scratch_bytes(func) == 4000
    assert print_op(parse_module(text)) == text  # the scratch space and offsets round-trip
    # limit 100: a follows; offsets are 16-byte aligned and scratch_bytes covers both
    mod2 = parse_module(THREE)
    assert spill_to_scratch(mod2.body.ops[0], limit=100) == 4000 + 256
    assert "%a = wi.alloc {offset = 4000} : memref<64xf32, scratch>" in print_op(mod2)


def test_verifier_checks_scratch_offsets() -> None:
    with pytest.raises(IRError, match="needs an 'offset'"):
        verify(parse_module(THREE.replace("memref<64xf32, local>", "memref<64xf32, scratch>"), verify=False))
    spilled = parse_module(THREE)
    spill_to_scratch(spilled.body.ops[0], limit=300)
    text = print_op(spilled)
    with pytest.raises(IRError, match="multiple of 16"):
        verify(parse_module(text.replace("{offset = 0}", "{offset = 4}"), verify=False))
    with pytest.raises(IRError, match="outside the function's scratch_bytes"):
        verify(parse_module(text.replace("scratch_bytes = 4000", "scratch_bytes = 0"), verify=False))
    with pytest.raises(IRError, match="only a scratch memref"):
        verify(parse_module(THREE.replace("%a = wi.alloc :", "%a = wi.alloc {offset = 0} :"), verify=False))


@kdsl.kernel
def trans_kernel(X, Z, N: kl.constexpr):
    offs = kl.arange(0, N)[:, None] * N + kl.arange(0, N)[None, :]
    kl.store(Z + offs, kl.trans(kl.load(X + offs)))


def _lower(local_limit: int, scratch: bool) -> ModuleOp:
    a = np.zeros((64, 64), np.float32)
    mod = kdsl.compile_to_ir(trans_kernel, a, a, 64, optimize=True)
    entry = str(mod.body.ops[0].attributes["sym_name"])
    return lower_to_wi(mod, entry, Layout.from_options(16, ()), local_limit=local_limit, scratch=scratch)


def test_lower_to_wi_spills_only_when_asked() -> None:
    with pytest.raises(CompilationError, match="bytes of __local memory"):
        _lower(1024, scratch=False)
    func = _lower(1024, scratch=True).body.ops[0]
    assert scratch_bytes(func) == 64 * 64 * 4  # the transposed tile's exchange buffer
    assert int(func.attributes["local_bytes"]) <= 1024
    plain = _lower(1 << 20, scratch=True).body.ops[0]  # fits: no scratch at all
    assert scratch_bytes(plain) == 0 and "scratch" not in print_op(plain)


def test_renderers_without_scratch_support_refuse_it() -> None:
    from kdsl.codegen.llvm.render import render_llvm
    from kdsl.codegen.opencl.render import render_opencl

    with pytest.raises(CompilationError, match="opencl: scratch arrays"):
        render_opencl(_lower(1024, scratch=True))
    one = parse_module(THREE.replace("num_threads = 4", "num_threads = 1"))  # the LLVM renderer's layout
    assert spill_to_scratch(one.body.ops[0], limit=300) > 0
    with pytest.raises(CompilationError, match="cpu: memory space 'scratch'"):
        render_llvm(one)
