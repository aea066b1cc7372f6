"""The semantic layer: one object owning the language's typing, promotion,
broadcasting and masking rules, emitting IR through a :class:`Builder`.

The AST visitor (and every ``kl`` builtin) goes through :class:`Semantic`;
nothing else decides how types combine. It is assembled from a chain of
focused classes, one per concern:

* :mod:`semantic_base`   -- builder, errors, constants, ``to_tensor``;
* :mod:`semantic_cast`   -- ``cast`` / ``bitcast``;
* :mod:`semantic_shape`  -- creation, splat/broadcast, reshapes, subscripts;
* :mod:`semantic_arith`  -- operators with Triton's promotion;
* :mod:`semantic_math`   -- math functions, min/max, ``where``;
* :mod:`semantic_memory` -- program ids, load/store, atomics, hints, debug;
* :mod:`semantic_reduce` -- reductions, scans, ``dot``;
* :mod:`semantic_indexing` -- gather, histogram, sort/topk, flip, cat, swizzle2d
  (sorting networks in :mod:`semantic_sort`);
* :mod:`semantic_fp8`    -- fp8 element types computed through f32, and RTNE/RTZ float
  encoding with integer ops;
* :mod:`semantic_scaled` -- ``dot_scaled`` (microscaling formats decoded onto ``dot``; built on
  :mod:`semantic_fp8`'s decoder);
* :mod:`semantic_blockptr` -- block pointers and tensor descriptors (as
  pointer tiles + masks; ``load``/``store`` dispatch on a block pointer here);
* :mod:`semantic_map`    -- ``map_elementwise``'s broadcasting, ``pack`` grouping and
  results (the mapped function is traced by the visitor, ``frontend/lanes.py``).

The last four each build on :class:`ReduceSemantic` and are independent of each other, so
:class:`Semantic` combines them (cooperative multiple inheritance: no method is defined twice).

Every user error raises :class:`kdsl.errors.CompilationError` at
``builder.loc`` (the visitor sets it before each expression).
"""

from __future__ import annotations

from kdsl.frontend.semantic_base import CallFunction, is_py_scalar, unwrap
from kdsl.frontend.semantic_blockptr import BlockPtrSemantic
from kdsl.frontend.semantic_indexing import IndexingSemantic
from kdsl.frontend.semantic_map import MapSemantic
from kdsl.frontend.semantic_scaled import ScaledDotSemantic


class Semantic(IndexingSemantic, ScaledDotSemantic, BlockPtrSemantic, MapSemantic):
    """``Semantic(builder, call_function=None)``.

    ``call_function(fn, args)`` is supplied by the visitor: it emits a call of
    the user ``@kdsl.kernel`` function ``fn`` at the builder's insertion point
    and returns its results (used for ``kl.reduce``/``kl.associative_scan``
    combine functions); ``map_function`` (set afterwards) traces the function of
    ``kl.map_elementwise``.
    """


__all__ = ["CallFunction", "Semantic", "is_py_scalar", "unwrap"]
