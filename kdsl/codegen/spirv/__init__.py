"""SPIR-V code generation: grammar tables, module builder, emitter from the work-item IR."""

from kdsl.codegen.spirv.emit import PrintSpec, SpirvKernel, emit_spirv
from kdsl.codegen.spirv.target import Target

__all__ = ["PrintSpec", "SpirvKernel", "Target", "emit_spirv"]
