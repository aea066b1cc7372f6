"""The launch side of sanitiser mode: the switch, the hidden arguments, the report.

``kdsl.transforms.sanitize`` instruments a kernel with bounds checks against
hidden ``(lo, hi)`` byte ranges and a report buffer; this module decides when
that happens (:func:`sanitize_enabled`: ``kdsl.set_sanitize``, else
``KDSL_SANITIZE``; ``@kdsl.kernel(sanitize=...)`` overrides both), computes
the ranges from the launch arguments, and turns a filled report into an
:class:`~kdsl.errors.OutOfBoundsError` worded like the interpreter's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kdsl.errors import OutOfBoundsError
from kdsl.ir.core import Location
from kdsl.runtime.args import as_array
from kdsl.runtime.device_array import DeviceArray
from kdsl.runtime.launcher import env_flag_reader
from kdsl.runtime.reinterpret import unwrap as unwrap_reinterpret

if TYPE_CHECKING:  # the instrumentation (and kdsl.transforms) loads only when a kernel is sanitised
    from kdsl.transforms.sanitize import SanitizeInfo

REPORT_WORDS = 8  # check id, byte offset (low, high 32 bits), program id x, y, z, spare

_env = env_flag_reader("KDSL_SANITIZE")
_override: list[bool | None] = [None]  # set_sanitize's choice (None: the environment decides)


def set_sanitize(enabled: bool | None) -> None:
    """Turn sanitiser mode on or off for every kernel without its own ``sanitize=``.

    ``None`` goes back to the ``KDSL_SANITIZE`` environment variable. Kernels
    compiled in sanitiser mode are cached separately, so switching is cheap.
    """
    if enabled is not None and not isinstance(enabled, bool):
        raise TypeError(f"set_sanitize expects True, False or None, got {enabled!r}")
    _override[0] = enabled


def sanitize_enabled() -> bool:
    flag = _override[0]
    return _env() if flag is None else flag


def byte_range(value: Any) -> tuple[int, int]:
    """``(lo, hi)``: the bytes an array argument covers, relative to its element 0.

    The span of the view (all its strides, as the interpreter checks):
    ``lo <= 0`` is below element 0 for negative strides, ``hi`` one past
    the last byte.
    """
    value = unwrap_reinterpret(value)
    if isinstance(value, DeviceArray):
        shape, strides, isz = value.shape, value.strides, value.dtype.itemsize
    else:
        arr = value if isinstance(value, np.ndarray) else as_array(value)
        if arr is None:
            return 0, 0
        shape, strides, isz = arr.shape, arr.strides, arr.itemsize
    if any(n == 0 for n in shape):
        return 0, 0
    lo = hi = 0
    for n, s in zip(shape, strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return lo, hi + isz


def new_report() -> np.ndarray[Any, Any]:
    return np.zeros(REPORT_WORDS, np.int32)


def make_reporter(
    info: SanitizeInfo, arg_index: Sequence[int], names: Sequence[str], kernel: str
) -> Callable[[np.ndarray[Any, Any], Sequence[Any]], None]:
    """``fail(report, values)``: raise the error a non-zero report describes.

    ``arg_index[p]`` is the position in ``values`` (all parameters) of the
    entry's runtime parameter ``p``.
    """

    def fail(report: np.ndarray[Any, Any], values: Sequence[Any]) -> None:
        raise report_error(info, report, [values[i] for i in arg_index], [names[i] for i in arg_index], kernel)

    return fail


def report_error(
    info: SanitizeInfo, report: np.ndarray[Any, Any], args: Sequence[Any], names: Sequence[str], kernel: str
) -> OutOfBoundsError:
    words = [int(w) for w in report.astype(np.int64)]
    check = info.checks[words[0] - 1]
    offset = (words[1] & 0xFFFFFFFF) | (words[2] << 32)
    value = unwrap_reinterpret(args[check.param])
    dtype = value.dtype if isinstance(value, DeviceArray) else getattr(as_array(value), "dtype", np.dtype(np.uint8))
    isz = dtype.itemsize
    lo, hi = byte_range(value)
    index, rem = divmod(offset, isz)
    elem = f"element index {index}" if rem == 0 else f"byte offset {offset}"
    shape = tuple(value.shape) if hasattr(value, "shape") else ()
    where = f"program id ({words[3]}, {words[4]}, {words[5]})"
    message = (
        f"out-of-bounds {check.what} in kernel '{kernel}': {elem} relative to argument '{names[check.param]}' "
        f"({dtype} array of shape {shape}) (outside its valid element range [{lo // isz}, {hi // isz - 1}]) "
        f"({where}) [sanitizer]"
    )
    return OutOfBoundsError(message, Location(check.file, check.line, check.col))
