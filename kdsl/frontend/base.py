"""Shared state and plumbing of the per-function code generator.

The generator is split by syntax kind into mixins (statements, expressions,
calls, control flow); this base declares the state they share and owns the
two cross-cutting duties: every visited node sets the builder's location, and
any non-kdsl exception raised while compiling user code becomes a
``CompilationError`` at the innermost location being compiled.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kdsl.errors import CompilationError, KdslError
from kdsl.frontend.locations import SourceInfo
from kdsl.frontend.scope import NameResolver
from kdsl.ir.core import Block, Builder, IRError, Location, Operation

if TYPE_CHECKING:
    from kdsl.frontend.compiler import ModuleGenerator
    from kdsl.runtime.jit import KernelFunction


@dataclass
class Ret:
    """Marks a statement list that ended by returning ``value`` (None for a bare return)."""

    value: Any


class GeneratorBase(ast.NodeVisitor):
    """State of one function being generated; see the mixins for the visitors."""

    mod: ModuleGenerator
    kfn: KernelFunction
    src: SourceInfo
    builder: Builder
    sem: Any
    resolver: NameResolver
    scope: dict[str, Any]
    loop_depth: int
    is_kernel: bool
    debug: bool
    lanes: tuple[int, ...] | None  # lane mode (frontend/lanes.py): the lanes' shape; None otherwise
    active: Any  # lane mode: the i1 mask of the lanes the code being emitted runs for

    # --- location + error plumbing ------------------------------------------------
    def loc(self, node: ast.AST) -> Location:
        return self.src.loc(node)

    def error(self, message: str, node: ast.AST | None = None) -> CompilationError:
        return CompilationError(message, self.loc(node) if node is not None else self.builder.loc)

    def unsupported(self, node: ast.AST, what: str) -> CompilationError:
        return self.error(f"unsupported language construct: {what} is not supported in kernels", node)

    def visit(self, node: ast.AST) -> Any:
        prev = self.builder.loc
        if hasattr(node, "lineno"):
            self.builder.loc = self.loc(node)
        try:
            return super().visit(node)
        except KdslError:
            raise
        except IRError as exc:
            raise CompilationError(exc.message, exc.loc if exc.loc.known else self.builder.loc) from exc
        except RecursionError as exc:
            raise CompilationError("kernel too deeply nested or recursive", self.builder.loc) from exc
        except Exception as exc:
            raise CompilationError(f"{type(exc).__name__}: {exc}", self.builder.loc) from exc
        finally:
            self.builder.loc = prev

    def generic_visit(self, node: ast.AST) -> Any:
        raise self.unsupported(node, _describe(node))

    # --- helpers shared by the mixins ----------------------------------------------
    def in_block(self, block: Block) -> tuple[Block | None, int | None]:
        """Point the builder at the end of ``block``; return the old insertion point."""
        saved = (self.builder.block, self.builder.index)
        self.builder.set_insertion_point_to_end(block)
        return saved

    def restore(self, saved: tuple[Block | None, int | None]) -> None:
        self.builder.block, self.builder.index = saved

    def insert_op(self, op: Operation) -> Operation:
        return self.builder.insert(op)


def _describe(node: ast.AST) -> str:
    names = {
        "With": "'with'",
        "AsyncWith": "'async with'",
        "Try": "'try'",
        "TryStar": "'try'",
        "Raise": "'raise'",
        "Lambda": "'lambda'",
        "ClassDef": "'class' definition",
        "FunctionDef": "nested function definition",
        "AsyncFunctionDef": "nested function definition",
        "Delete": "'del'",
        "Global": "'global'",
        "Nonlocal": "'nonlocal'",
        "Yield": "'yield'",
        "YieldFrom": "'yield from'",
        "Await": "'await'",
        "Import": "'import'",
        "ImportFrom": "'import'",
        "Set": "set literal",
        "SetComp": "set comprehension",
        "DictComp": "dict comprehension",
        "NamedExpr": "assignment expression ':='",
        "Match": "'match'",
        "AsyncFor": "'async for'",
        "Starred": "starred expression",
    }
    kind = type(node).__name__
    return names.get(kind, f"'{kind}'")
