"""The numpy reference interpreter: kdsl's oracle backend and debug mode.

Every other backend is tested against it, so it implements the op docstrings
of ``kdsl.ir.dialects`` exactly (C integer semantics with wraparound, IEEE
floats, bounds-checked memory) and it is what ``KDSL_BACKEND=interpreter``
runs, in the spirit of Triton's ``TRITON_INTERPRET=1``.

Execution model
---------------
* **Batched programs.** Instead of running program instances one by one, a
  batch of P programs runs every op once with numpy: each value carries a
  leading batch axis (scalars ``(P,)``, tiles ``(P, *shape)``; an axis of 1
  means "the same for all programs", e.g. constants). ``program_id`` comes
  from the batch's linear program indices, axis 0 fastest. The grid is cut
  into batches whose largest tile holds about ``executor.DEFAULT_BUDGET``
  elements.
* **Divergence.** ``scf.if`` whose condition differs inside a batch runs
  each branch on its sub-batch and merges results; ``scf.for`` with
  differing bounds and ``scf.while`` run each iteration on the programs still
  looping (see ``control``).
* **Ordering.** Within a batch, an op completes for all programs before the
  next op starts; batches run in program order. A program always sees its own
  earlier stores. Kernels containing atomics run one program at a time in
  program order (row-major over the grid, axis 0 fastest), which makes them
  sequentially consistent: spin locks and counters work.
* **Memory.** Pointers are real ``int64`` addresses into the numpy array
  arguments; every access is bounds- and alignment-checked against the arrays'
  extents (``memory``), and errors name the source location, argument,
  element index and program. In kernels that make pointers from integers,
  an access may also land in a live array whose address was handed out
  (``DeviceArray.data_ptr()``, or an argument of a kernel that cast a pointer
  to an integer: ``kdsl.runtime.addresses``); anything else is out of bounds.
* **Defined where the IR is undefined** (deterministic, never a crash or a
  numpy warning): integer division/remainder by zero give 0; ``INT_MIN / -1``
  wraps; shift amounts >= bit width give 0 (``shl``, logical ``shr``) or the
  sign fill (arithmetic ``shr``); float -> int casts saturate, NaN -> 0;
  masked loads without ``other`` give 0; a ``for`` with step 0 that would run
  raises ``KernelRuntimeError``.
* ``tile.print`` / ``tile.assert``: see ``debug``.

Modules: ``values`` (array representation, bf16), ``intops``/``elementwise``/
``casts`` (numerics), ``memory`` (regions, checks), ``frames`` and ``compiler``
(closures per op), ``elementwise_ops``/``tileops``/``memory_ops``/
``reductions``/``control``/``atomics``/``debug`` (op factories), ``executor``
(launch), ``backend``.
"""

from kdsl.interpreter.backend import InterpreterBackend, run_module
from kdsl.interpreter.executor import InterpreterKernel

__all__ = ["InterpreterBackend", "InterpreterKernel", "run_module"]
