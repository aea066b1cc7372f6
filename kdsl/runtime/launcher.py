"""The launch fast path: a generated binder per kernel, a launcher per specialisation.

Per launch, ``KernelFunction.run`` does only: call the kernel's generated
binder (Python itself binds positional/keyword arguments and defaults, and
the binder computes one cheap key per argument: its kind, dtype, ``== 1``,
``% 16``, pointer/offset alignment, array size class, constexpr value), one dict lookup, and the
:class:`Launcher` call (pick the runtime arguments, convert the few that need
it, ``CompiledKernel.launch``). Anything unusual -- a ``TypeError`` while
binding, an unhashable constant, an unknown keyword -- falls back to the slow,
fully checked path in ``jit``, which also builds the launcher on a miss.

The per-argument key is at least as fine as the specialisation (``ParamSpec``)
it stands for, so equal keys always mean the same compiled kernel.
"""

from __future__ import annotations

import inspect
import keyword
import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kdsl.errors import LaunchError
from kdsl.ir.types import HOST_DTYPE_NAMES
from kdsl.runtime import streaming as _streaming
from kdsl.runtime.args import as_array, holds_array
from kdsl.runtime.backend import CompiledKernel
from kdsl.runtime.device_array import DeviceArray
from kdsl.runtime.reinterpret import Reinterpreted, device_base, host_array, unwrap
from kdsl.tools.tensor_descriptor import TensorDescriptor

if TYPE_CHECKING:
    from kdsl.transforms.sanitize import SanitizeInfo

# Keys are interned strings where possible: their hash is cached, tuples re-hash.
_ONE = "i=1"
_I32 = "i32"
_I32_16 = "i32/16"
_I64 = "i64"
_I64_16 = "i64/16"
_F = "f"
_B = "b"


def argkey(v: Any) -> Any:
    """Cheap specialisation key of a runtime (non-constexpr) argument."""
    t = type(v)
    if t is DeviceArray:
        return v._key
    if t is int:
        if v == 1:
            return _ONE
        if -2147483648 <= v < 2147483648:
            return _I32 if v % 16 else _I32_16
        if -9223372036854775808 <= v < 9223372036854775808:
            return _I64 if v % 16 else _I64_16
        if 0 <= v < 18446744073709551616:
            return ("u64", v % 16 == 0)
        return ("int", v)  # out of every integer type: the slow path raises OverflowError
    if t is np.ndarray:
        # An array owning its memory comes from numpy's allocator (malloc: 16-byte
        # aligned on every 64-bit platform numpy supports); only views need the
        # (slow, ~1 us) address lookup.
        if v.base is None:
            return (v.dtype, True, v.nbytes >= _streaming.LARGE_BYTES)
        return (v.dtype, v.ctypes.data % 16 == 0, v.nbytes >= _streaming.LARGE_BYTES)
    if t is float:
        return _F
    if t is bool:
        return _B
    return _slow_argkey(v)


def _slow_argkey(v: Any) -> Any:
    if isinstance(v, np.generic):
        if isinstance(v, np.integer):
            return ("n", v.dtype, v == 1, v % 16 == 0)
        return ("n", v.dtype)
    if isinstance(v, tuple) and holds_array(v):  # a structured parameter: its elements' keys
        from kdsl.language.core import constexpr

        return ("T", type(v), tuple(("k", constkey(e.value)) if isinstance(e, constexpr) else argkey(e) for e in v))
    if v is None or isinstance(v, (str, tuple)) or callable(v):
        return ("c", type(v), v)  # a compile-time constant (must be hashable)
    if isinstance(v, TensorDescriptor):
        return v.launch_key(argkey)
    on_device = device_base(v)
    if on_device is not None:
        return ("R", v.dtype, on_device._key)
    found = host_array(v)  # torch CPU tensors, kdsl.reinterpret and other array-likes
    if found is not None:
        arr, elem = found
        # not __array_interface__ (numpy 2.4)
        return ("X", type(v), elem, arr.ctypes.data % 16 == 0, arr.nbytes >= _streaming.LARGE_BYTES)
    return ("c", type(v), v)


def constkey(v: Any) -> Any:
    """Key of a constexpr argument: its type and value (must be hashable)."""
    t = type(v)
    if t is int or t is bool or t is float or t is str:
        return (t, v)
    from kdsl.language.core import constexpr

    if isinstance(v, constexpr):
        return constkey(v.value)
    if isinstance(v, np.generic):
        return (type(v.item()), v.item())
    return (t, v)


def make_binder(signature: inspect.Signature, constexprs: set[str]) -> Callable[..., Any] | None:
    """Generate ``bind(*args, **kw) -> (values, keys, options)`` for this signature.

    Returns None when the signature cannot be mirrored (``*args``, keyword-only
    parameters, names clashing with the generated code's): those kernels always
    take the slow path.
    """
    params = list(signature.parameters.values())
    names = [p.name for p in params]
    for p in params:
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY) or p.name.startswith("_kdsl_"):
            return None
        if keyword.iskeyword(p.name) or not p.name.isidentifier():
            return None
    namespace: dict[str, Any] = {"_kdsl_k": argkey, "_kdsl_c": constkey, "_kdsl_DA": DeviceArray}
    plist = []
    for p in params:
        if p.default is inspect.Parameter.empty:
            plist.append(p.name)
        else:
            namespace[f"_kdsl_d_{p.name}"] = p.default
            plist.append(f"{p.name}=_kdsl_d_{p.name}")
    # device arrays (the hot case) get their precomputed key without a call
    keys = [f"_kdsl_c({n})" if n in constexprs else f"({n}._key if type({n}) is _kdsl_DA else _kdsl_k({n}))"
            for n in names]
    tail = "," if len(names) == 1 else ""
    src = (
        f"def _kdsl_bind({', '.join([*plist, '**_kdsl_opts'])}):\n"
        f"    return ({', '.join(names)}{tail}), ({', '.join(keys)}{tail}), _kdsl_opts\n"
    )
    exec(compile(src, "<kdsl binder>", "exec"), namespace)
    binder: Callable[..., Any] = namespace["_kdsl_bind"]
    return binder


def _host_view(a: DeviceArray) -> Any:
    return a._host


def _reinterpreted_host(r: Reinterpreted) -> Any:
    return _host_view(r.base)  # type: ignore[arg-type]  # only built for a device-array base


class Launcher:
    """Everything a warm launch of one (argument kinds, specialisation) needs.

    ``__call__`` is generated per launcher: it picks the runtime arguments
    and applies the few conversions inline (e.g. ``v[2]._host``) -- no loops.
    """

    __slots__ = ("call", "handle", "kernel")

    def __init__(
        self,
        kernel: CompiledKernel,
        leaves: Sequence[tuple[int, str, str]],
        values: Sequence[Any],
        written: frozenset[int] = frozenset(),
        kernel_name: str = "",
        sanitize: SanitizeInfo | None = None,
    ) -> None:
        """``leaves``: per argument of the compiled entry, ``(parameter index, accessor, name)``
        (:func:`kdsl.runtime.args.launch_leaves`: ``(3, "", "x")`` for a plain parameter,
        ``(3, ".shape[0]", "desc.shape[0]")`` for a field of a structured one)."""
        self.kernel = kernel
        # what the launch returns (Triton's ``kernel[grid](...)`` gives its CompiledKernel); set by the JIT
        self.handle: Any = None
        namespace: dict[str, Any] = {"_launch": kernel.launch}
        exprs = [f"v[{i}]{acc}" for i, acc, _ in leaves]
        items = []
        checks = []
        for pos, ((i, acc, name), expr) in enumerate(zip(leaves, exprs)):
            sample = _field(values[i], acc)
            if pos in written and isinstance(unwrap(sample), np.ndarray):
                # numpy promised this memory immutable: refuse before anything runs
                namespace[f"_ro{pos}"] = _read_only_error(name, kernel_name)
                view = f"{expr}.base" if isinstance(sample, Reinterpreted) else expr
                checks.append(f"    if not {view}.flags.writeable: _ro{pos}()\n")
            f = converter(sample)
            if f is None:
                items.append(expr)
            elif f is _host_view:
                items.append(f"{expr}._host")
            else:
                namespace[f"_c{pos}"] = f
                items.append(f"_c{pos}({expr})")
        tail = ""
        if sanitize is not None:  # hidden (lo, hi) per checked pointer, then the report buffer
            items, tail = _sanitize_items(namespace, sanitize, exprs, items, [n for _, _, n in leaves], kernel_name)
            checks.append("    _r = _san_new()\n")
        src = f"def _call(grid, v):\n{''.join(checks)}    _launch(grid, [{', '.join(items)}])\n{tail}"
        exec(compile(src, "<kdsl launcher>", "exec"), namespace)
        self.call: Callable[[tuple[int, int, int], Sequence[Any]], None] = namespace["_call"]

    def __call__(self, grid: tuple[int, int, int], values: Sequence[Any]) -> None:
        self.call(grid, values)


def _field(value: Any, accessor: str) -> Any:
    """``value`` read through an accessor of :func:`kdsl.runtime.args.launch_leaves`: a path of
    ``.name`` and ``[k]`` steps (``.shape[0]``, ``[1][2]``, ``[0].base``)."""
    for name, index in _STEP.findall(accessor):
        value = getattr(value, name) if name else value[int(index)]
    return value


_STEP = re.compile(r"\.(\w+)|\[(\d+)\]")


def _sanitize_items(
    namespace: dict[str, Any],
    info: SanitizeInfo,
    exprs: Sequence[str],
    items: list[str],
    names: Sequence[str],
    kernel_name: str,
) -> tuple[list[str], str]:
    """Launch-list items and the post-launch check for a sanitiser-instrumented kernel.

    ``exprs[p]`` reads the entry's runtime argument ``p`` from the parameter values ``v``.
    """
    from kdsl.runtime.sanitize import byte_range, make_reporter, new_report

    namespace["_san_range"] = byte_range
    namespace["_san_new"] = new_report
    namespace["_san_fail"] = make_reporter(info, list(range(len(exprs))), names, kernel_name)
    hidden = [f"*_san_range({exprs[p]})" for p in info.params]
    args = "[" + ", ".join(exprs) + "]"
    return [*items, *hidden, "_r"], f"    if _r[0]: _san_fail(_r, {args})\n" if info.checks else ""


def _read_only_error(name: str, kernel_name: str) -> Callable[[], None]:
    def fail() -> None:
        raise LaunchError("array is read-only but the kernel writes through this pointer", name, kernel_name)

    return fail


def converter(v: Any) -> Callable[[Any], Any] | None:
    """How a user value becomes the backend's launch argument (None: as is)."""
    if isinstance(v, DeviceArray):
        return _host_view if v._host is not None else None
    on_device = device_base(v)
    if on_device is not None:
        return _reinterpreted_host if on_device._host is not None else unwrap
    if isinstance(v, np.ndarray) and v.dtype.name in HOST_DTYPE_NAMES:  # ml_dtypes fp8 / bfloat16
        return as_array
    if isinstance(v, (np.ndarray, int, float)) and not isinstance(v, bool):
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool
    if isinstance(v, np.generic):
        return None
    return as_array


# ``os.environ.get`` costs ~1 us (it encodes the key); the launch path reads the
# mapping's underlying dict, which ``os.environ[k] = v`` and monkeypatch keep in sync.
_ENV_DATA: dict[Any, Any] | None = getattr(os.environ, "_data", None)
_ENCODE: Callable[[str], Any] | None = getattr(os.environ, "encodekey", None)


def env_flag_reader(name: str) -> Callable[[], bool]:
    """A fast ``os.environ.get(name, "0") not in ("", "0")``."""
    if _ENV_DATA is None or _ENCODE is None:
        return lambda: os.environ.get(name, "0") not in ("", "0")
    data, key = _ENV_DATA, _ENCODE(name)
    off = (None, b"", b"0", "", "0")
    return lambda: data.get(key) not in off
