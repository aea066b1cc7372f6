"""Work-item IR -> LLVM IR for the ``cpu`` backend (see :mod:`kdsl.codegen.llvm.render`)."""

from kdsl.codegen.llvm.render import ENTRY, RenderedLLVM, render_llvm

__all__ = ["ENTRY", "RenderedLLVM", "render_llvm"]
