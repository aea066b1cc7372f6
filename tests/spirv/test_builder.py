"""SPIR-V module builder: layout order, de-duplication, typed opcodes, spirv-val/spirv-dis round trips."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kdsl.codegen.spirv import grammar_table as g
from kdsl.codegen.spirv.function import FunctionBuilder
from kdsl.codegen.spirv.module import Module, string_words

ROOT = Path(__file__).resolve().parents[2]
needs_tools = pytest.mark.skipif(shutil.which("spirv-val") is None, reason="install Debian spirv-tools")


def _validate(binary: bytes, tmp_path: Path, env: str = "vulkan1.2") -> str:
    path = tmp_path / "m.spv"
    path.write_bytes(binary)
    val = subprocess.run(["spirv-val", "--target-env", env, str(path)], capture_output=True, text=True)
    assert val.returncode == 0, val.stderr
    dis = subprocess.run(["spirv-dis", "--raw-id", str(path)], capture_output=True, text=True, check=True)
    return dis.stdout


def _skeleton() -> tuple[Module, FunctionBuilder]:
    m = Module((1, 5))
    m.capability("Shader")
    m.memory_model("Logical", "GLSL450")
    f = FunctionBuilder(m, m.t_void(), name="main")
    return m, f


def _finish(m: Module, f: FunctionBuilder) -> bytes:
    f.emit("OpReturn")
    f.finish()
    m.entry_point("GLCompute", f.id, "main", m.interface)
    m.execution_mode(f.id, "LocalSize", 8, 1, 1)
    return m.to_bytes()


def test_generated_table_is_up_to_date() -> None:
    gen = ROOT / "scripts" / "gen_spirv_tables.py"
    grammar = Path("/usr/include/spirv/unified1/spirv.core.grammar.json")
    if not grammar.exists():
        pytest.skip("install Debian spirv-headers to regenerate the table")
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen", gen)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = mod.generate(grammar.parent)
    assert text == (ROOT / "kdsl" / "codegen" / "spirv" / "grammar_table.py").read_text()


def test_table_numbers_match_the_spec() -> None:
    # spot checks against the SPIR-V specification's tables
    assert g.MAGIC == 0x07230203
    assert g.OPCODES["OpIAdd"] == 128 and g.OPCODES["OpFAdd"] == 129
    assert g.CAPABILITY["Shader"] == 1 and g.STORAGE_CLASS["PhysicalStorageBuffer"] == 5349
    assert g.GLSL_STD_450["Exp"] == 27 and g.BUILTIN["WorkgroupId"] == 26


def test_string_words_are_nul_terminated_and_padded() -> None:
    assert string_words("abc") == [0x00636261]
    assert string_words("abcd") == [0x64636261, 0]


def test_types_and_constants_are_deduplicated() -> None:
    m = Module()
    assert m.t_int(32, True) == m.t_int(32, True)
    assert m.t_int(32, True) != m.t_int(32, False)
    f32 = m.t_float(32)
    assert m.const(f32, 1.5) == m.const(f32, 1.5)
    assert m.const(m.t_int(64, True), -1) != m.const(m.t_int(64, False), (1 << 64) - 1)


@needs_tools
def test_layout_order_even_when_added_late(tmp_path: Path) -> None:
    m, f = _skeleton()
    i32 = m.t_int(32, True)
    f.binary("add", i32, m.const(i32, 1), m.const(i32, 2))
    m.capability("Int64")  # added after types and code: still lands in the capability section
    m.t_int(64, True)
    text = _validate(_finish(m, f), tmp_path)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith(";")]
    order = [next(i for i, ln in enumerate(lines) if key in ln)
             for key in ("OpCapability Int64", "OpMemoryModel", "OpEntryPoint", "OpExecutionMode", "OpName",
                         "OpTypeInt", "OpFunction ")]
    assert order == sorted(order)


@needs_tools
@pytest.mark.parametrize(("kind", "signed", "float_", "want"), [
    ("add", True, False, "OpIAdd"), ("add", False, True, "OpFAdd"), ("div", True, False, "OpSDiv"),
    ("div", False, False, "OpUDiv"), ("div", False, True, "OpFDiv"), ("rem", True, False, "OpSRem"),
    ("shr", True, False, "OpShiftRightArithmetic"), ("shr", False, False, "OpShiftRightLogical"),
])
def test_typed_helpers_pick_the_opcode(tmp_path: Path, kind: str, signed: bool, float_: bool, want: str) -> None:
    m, f = _skeleton()
    t = m.t_float(32) if float_ else m.t_int(32, signed)
    a = m.const(t, 7.0 if float_ else 7)
    f.binary(kind, t, a, a)
    text = _validate(_finish(m, f), tmp_path)
    assert want in text


@needs_tools
def test_structured_loop_with_phi_validates(tmp_path: Path) -> None:
    m, f = _skeleton()
    i32 = m.t_int(32, True)
    pre = f.block
    header, body, cont, merge = (f.new_label() for _ in range(4))
    f.branch(header)
    f.label(header)
    nxt = m.new_id()
    iv = f.phi(i32, [(m.const(i32, 0), pre), (nxt, cont)])
    cond = f.cmp("lt", i32, iv, m.const(i32, 10))
    f.loop_merge(merge, cont)
    f.branch_cond(cond, body, merge)
    f.label(body)
    f.branch(cont)
    f.label(cont)
    f.emit("OpIAdd", i32, nxt, iv, m.const(i32, 1))
    f.branch(header)
    f.label(merge)
    text = _validate(_finish(m, f), tmp_path)
    assert "OpLoopMerge" in text and "OpPhi" in text
