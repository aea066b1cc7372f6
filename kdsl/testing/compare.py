"""``kdsl.testing.assert_close``: Triton's ``triton.testing.assert_close``.

Triton's rules, which differ from ``numpy.testing.assert_allclose``'s and ``torch.testing``'s:
the absolute tolerance defaults to 1e-2 and the relative one to 0 (a pure absolute test), either
may be a function of the first operand's dtype (``atol=lambda dtype: ...``), NaNs compare equal,
and a single-element comparison fails with ``"<err_msg> x is not close to y (atol=..., rtol=...)"``.
Operands may be scalars, lists, numpy arrays, kdsl device arrays or torch tensors (bfloat16
compared as float32, as Triton does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Tolerance = float | Callable[[Any], float] | None


def _host(v: Any) -> tuple[np.ndarray[Any, Any], Any]:
    """(a numpy copy or view of ``v``, the dtype a tolerance function is given: torch's for a tensor)."""
    if type(v).__module__.startswith("torch") and hasattr(v, "detach"):
        dtype = v.dtype
        t = v.detach().cpu()
        if str(dtype) == "torch.bfloat16":
            t = t.float()
        return t.numpy(), dtype
    arr = np.asarray(v)
    return arr, arr.dtype


def assert_close(x: Any, y: Any, atol: Tolerance = None, rtol: Tolerance = None, err_msg: str = "") -> None:
    """Raise ``AssertionError`` unless ``|x - y| <= atol + rtol * |y|`` everywhere (NaN == NaN)."""
    a, dtype = _host(x)
    b, _ = _host(y)
    tol_a = 1e-2 if atol is None else atol
    tol_r = 0.0 if rtol is None else rtol
    abs_tol = float(tol_a(dtype) if callable(tol_a) else tol_a)
    rel_tol = float(tol_r(dtype) if callable(tol_r) else tol_r)
    if a.size > 1 or b.size > 1:
        np.testing.assert_allclose(a, b, atol=abs_tol, rtol=rel_tol, equal_nan=True, err_msg=err_msg)
        return
    if not np.allclose(a, b, atol=abs_tol, rtol=rel_tol):
        raise AssertionError(f"{err_msg} {a} is not close to {b} (atol={abs_tol}, rtol={rel_tol})")


__all__ = ["assert_close"]
