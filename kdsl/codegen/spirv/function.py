"""Building one SPIR-V function: blocks, typed instructions, structured control flow.

The typed helpers pick the opcode from the operand type so that callers say
*what* to compute (``add``, ``lt``, ``convert``) and not which of ``OpIAdd`` /
``OpFAdd``, ``OpSLessThan`` / ``OpULessThan`` / ``OpFOrdLessThan`` applies.
``Function``-storage variables are collected separately and placed at the top
of the first block, where SPIR-V requires them, whenever they are requested.
"""

from __future__ import annotations

from kdsl.codegen.spirv import grammar_table as g
from kdsl.codegen.spirv.module import Module, TypeInfo, instruction

_INT_CMP = {
    "eq": ("OpIEqual", "OpIEqual"),
    "ne": ("OpINotEqual", "OpINotEqual"),
    "lt": ("OpSLessThan", "OpULessThan"),
    "le": ("OpSLessThanEqual", "OpULessThanEqual"),
    "gt": ("OpSGreaterThan", "OpUGreaterThan"),
    "ge": ("OpSGreaterThanEqual", "OpUGreaterThanEqual"),
}
# Ordered comparisons (false when a NaN is involved) except ``ne`` (true then), as arith.cmp defines.
_FLOAT_CMP = {
    "eq": "OpFOrdEqual",
    "ne": "OpFUnordNotEqual",
    "lt": "OpFOrdLessThan",
    "le": "OpFOrdLessThanEqual",
    "gt": "OpFOrdGreaterThan",
    "ge": "OpFOrdGreaterThanEqual",
}
_BINARY = {
    "add": ("OpIAdd", "OpIAdd", "OpFAdd"),
    "sub": ("OpISub", "OpISub", "OpFSub"),
    "mul": ("OpIMul", "OpIMul", "OpFMul"),
    "div": ("OpSDiv", "OpUDiv", "OpFDiv"),
    "rem": ("OpSRem", "OpUMod", "OpFRem"),
    "and": ("OpBitwiseAnd", "OpBitwiseAnd", ""),
    "or": ("OpBitwiseOr", "OpBitwiseOr", ""),
    "xor": ("OpBitwiseXor", "OpBitwiseXor", ""),
    "shl": ("OpShiftLeftLogical", "OpShiftLeftLogical", ""),
    "shr": ("OpShiftRightArithmetic", "OpShiftRightLogical", ""),
}
_BOOL_BINARY = {
    "and": "OpLogicalAnd",
    "or": "OpLogicalOr",
    "xor": "OpLogicalNotEqual",
    "eq": "OpLogicalEqual",
    "ne": "OpLogicalNotEqual",
}


class FunctionBuilder:
    """Instructions of one function, appended in block order."""

    def __init__(self, module: Module, ret: int, params: tuple[int, ...] = (), name: str = "") -> None:
        self.m = module
        self.id = module.new_id()
        self.head = instruction("OpFunction", [ret, self.id, g.FUNCTION_CONTROL["None"], module.t_func(ret, params)])
        if name:
            module.name(self.id, name)
        self.vars: list[int] = []
        self.body: list[int] = []
        self.entry_label = module.new_id()
        self.block = self.entry_label  # the block instructions are currently appended to
        self.no_contraction = True

    # --- raw --------------------------------------------------------------------------
    def emit(self, opname: str, *operands: int) -> None:
        self.body.extend(instruction(opname, operands))

    def op(self, opname: str, rtype: int, *operands: int) -> int:
        """Emit an instruction with a result; returns the new id."""
        rid = self.m.new_id()
        self.emit(opname, rtype, rid, *operands)
        return rid

    def info(self, type_id: int) -> TypeInfo:
        return self.m.info[type_id]

    def variable(self, ptr_type: int, name: str = "") -> int:
        """A ``Function``-storage variable (placed at the top of the entry block)."""
        vid = self.m.new_id()
        self.vars.extend(instruction("OpVariable", [ptr_type, vid, g.STORAGE_CLASS["Function"]]))
        if name:
            self.m.name(vid, name)
        return vid

    def finish(self) -> None:
        """Close the function and append it to the module's function section."""
        words = [
            *self.head,
            *instruction("OpLabel", [self.entry_label]),
            *self.vars,
            *self.body,
            *instruction("OpFunctionEnd", []),
        ]
        self.m.sections["functions"].extend(words)

    # --- blocks and control flow -------------------------------------------------------------
    def new_label(self) -> int:
        return self.m.new_id()

    def label(self, lid: int) -> None:
        self.emit("OpLabel", lid)
        self.block = lid

    def branch(self, target: int) -> None:
        self.emit("OpBranch", target)

    def branch_cond(self, cond: int, then: int, other: int) -> None:
        self.emit("OpBranchConditional", cond, then, other)

    def selection_merge(self, merge: int) -> None:
        self.emit("OpSelectionMerge", merge, g.SELECTION_CONTROL["None"])

    def loop_merge(self, merge: int, cont: int, control: str = "None") -> None:
        self.emit("OpLoopMerge", merge, cont, g.LOOP_CONTROL[control])

    def phi(self, rtype: int, incoming: list[tuple[int, int]], rid: int = 0) -> int:
        """``OpPhi`` with (value, predecessor block) pairs; ``rid`` lets loops pre-allocate the id."""
        rid = rid or self.m.new_id()
        flat = [x for pair in incoming for x in pair]
        self.emit("OpPhi", rtype, rid, *flat)
        return rid

    # --- typed arithmetic ------------------------------------------------------------------------
    def binary(self, kind: str, t: int, a: int, b: int) -> int:
        """``kind`` in add sub mul div rem and or xor shl shr, opcode chosen by ``t``."""
        ti = self.info(t)
        if ti.kind == "bool":
            return self.op(_BOOL_BINARY[kind], t, a, b)
        names = _BINARY[kind]
        opname = names[2] if ti.kind == "float" else names[0] if ti.signed else names[1]
        rid = self.op(opname, t, a, b)
        if ti.kind == "float" and self.no_contraction and kind in ("add", "sub", "mul"):
            self.m.decorate(rid, "NoContraction")  # keep a*b+c two roundings, as the interpreter computes
        return rid

    def neg(self, t: int, a: int) -> int:
        if self.info(t).kind == "float":
            return self.op("OpFNegate", t, a)
        return self.op("OpSNegate", t, a)

    def cmp(self, pred: str, a_type: int, a: int, b: int) -> int:
        ti = self.info(a_type)
        bt = self.m.t_bool()
        if ti.kind == "float":
            return self.op(_FLOAT_CMP[pred], bt, a, b)
        if ti.kind == "bool":
            return self._bool_cmp(pred, a, b)
        signed_op, unsigned_op = _INT_CMP[pred]
        return self.op(signed_op if ti.signed else unsigned_op, bt, a, b)

    def _bool_cmp(self, pred: str, a: int, b: int) -> int:
        bt = self.m.t_bool()
        if pred in _BOOL_BINARY:
            return self.op(_BOOL_BINARY[pred], bt, a, b)
        if pred in ("gt", "le"):
            a, b = b, a
            pred = "lt" if pred == "gt" else "ge"
        if pred == "lt":  # false < true
            return self.op("OpLogicalAnd", bt, self.lnot(a), b)
        return self.op("OpLogicalOr", bt, a, self.lnot(b))  # ge

    def lnot(self, a: int) -> int:
        return self.op("OpLogicalNot", self.m.t_bool(), a)

    def land(self, a: int, b: int) -> int:
        return self.op("OpLogicalAnd", self.m.t_bool(), a, b)

    def lor(self, a: int, b: int) -> int:
        return self.op("OpLogicalOr", self.m.t_bool(), a, b)

    def select(self, t: int, cond: int, a: int, b: int) -> int:
        return self.op("OpSelect", t, cond, a, b)

    def const(self, t: int, value: bool | int | float) -> int:
        return self.m.const(t, value)

    def ext(self, t: int, name: str, *args: int) -> int:
        """A GLSL.std.450 extended instruction."""
        return self.op("OpExtInst", t, self.m.ext_import(), g.GLSL_STD_450[name], *args)

    def isnan(self, a: int) -> int:
        return self.op("OpIsNan", self.m.t_bool(), a)

    def bitcast(self, t: int, a: int) -> int:
        return self.op("OpBitcast", t, a)

    def convert(self, dst: int, src_type: int, a: int) -> int:
        """Value conversion between numeric types (int<->int by the *source*
        signedness, int<->float, float<->float). Float -> int is the raw
        conversion (undefined out of range); callers saturate first."""
        s, d = self.info(src_type), self.info(dst)
        if src_type == dst:
            return a
        if s.kind == "float" and d.kind == "float":
            return self.op("OpFConvert", dst, a)
        if s.kind == "float":
            return self.op("OpConvertFToS" if d.signed else "OpConvertFToU", dst, a)
        if d.kind == "float":
            return self.op("OpConvertSToF" if s.signed else "OpConvertUToF", dst, a)
        if s.bits == d.bits:
            return self.bitcast(dst, a)
        if s.signed and s.bits < d.bits:
            return self._sign_extend(dst, s.bits, d.bits, a)
        unsigned = self.m.t_int(d.bits, False)  # OpUConvert needs an unsigned result type
        r = self.op("OpUConvert", unsigned, a)
        return r if unsigned == dst else self.bitcast(dst, r)

    def _sign_extend(self, dst: int, src_bits: int, dst_bits: int, a: int) -> int:
        """Sign extension as zero extension + shift left + arithmetic shift right.

        ``OpSConvert`` would do, but Mesa 22 (lavapipe) folds a signed compare
        of an ``OpSConvert`` result wrongly (``i64(-4) > 0`` came out true).
        """
        m = self.m
        wide_u, wide_s = m.t_int(dst_bits, False), m.t_int(dst_bits, True)
        narrow_u = m.t_int(src_bits, False)
        w = self.op("OpUConvert", wide_u, self.bitcast(narrow_u, a))
        sh = m.const(m.t_int(32, False), dst_bits - src_bits)
        w = self.bitcast(wide_s, self.op("OpShiftLeftLogical", wide_u, w, sh))
        w = self.op("OpShiftRightArithmetic", wide_s, w, sh)
        return w if wide_s == dst else self.bitcast(dst, w)
