"""Binding launch arguments to parameters and turning them into a specialisation.

Launch arguments become, per parameter, either a compile-time constant or a
runtime value: numpy arrays (and zero-copy numpy views of objects exposing
``__array_interface__`` or ``__dlpack__``, e.g. torch CPU tensors) are
pointers to their dtype, as are ``kdsl`` device arrays (aligned when their
byte offset is a multiple of 16); Python ints are i32/i64/u64 by value, bools i1,
floats f32 (``np.float64`` too: it subclasses ``float``, and Triton passes it as fp32);
other numpy scalars keep their dtype (Triton refuses them). As in Triton, ints equal to 1
become constants and ints/pointers divisible by 16 are marked so, unless the
parameter is listed in ``do_not_specialize`` (``do_not_specialize_on_alignment``: no
divisibility facts, ``== 1`` still specialised). A host ``TensorDescriptor``
becomes a structured parameter: its base and each shape/stride entry follow
the rules above as separate runtime leaves (see :func:`launch_leaves`). A plain
array parameter not in ``do_not_specialize`` also records whether the array is
large (:mod:`kdsl.runtime.streaming`).

Tuples (and NamedTuples) holding arrays are structured too, as in Triton: each element
follows the rules above (nested tuples recursively; ``kl.constexpr`` elements, ``None``,
ints equal to 1 and functions stay compile-time) and the kernel sees the same tuple with
runtime leaves. A tuple without arrays is a compile-time constant as a whole: the values
Triton would pass at run time compile in, which changes no result.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kdsl.errors import LaunchError, LaunchOverflowError
from kdsl.frontend.specialization import ParamSpec, int_type
from kdsl.ir.types import HOST_DTYPE_NAMES, PointerType, ScalarType, Type, f32, i1, scalar_from_numpy
from kdsl.runtime.device_array import DeviceArray
from kdsl.runtime.reinterpret import Reinterpreted, device_base, host_array, storage_view
from kdsl.runtime.streaming import is_large
from kdsl.tools.tensor_descriptor import FIELDS, TensorDescriptor

# Launch options besides the parameters. ``num_threads`` sizes kdsl's work-groups; the rest are
# Triton's GPU launch options, accepted so Triton launches run unchanged and without effect on
# the result: warps/stages/CTAs/registers are GPU scheduling, ``enable_fp_fusion`` allows (never
# requires) contracting a*b+c into an FMA and kdsl never contracts, ``launch_cooperative_grid``
# changes nothing for kernels without grid-wide barriers (the language has none). ``debug`` is
# Triton's per-launch debug flag: it overrides ``@kernel(debug=...)`` for this launch.
# ``waves_per_eu``, ``matrix_instr_nonkdim``, ``kpack`` and ``schedule_hint`` are Triton's AMD
# (HIP) compile options: occupancy, MFMA shape and scheduling hints, which tutorial 03's
# non-CUDA autotuning configurations carry next to the meta-parameters; they change no result.
# ``extern_libs`` names bitcode libraries to link: kdsl links none, so only an empty one is accepted.
LAUNCH_OPTIONS = ("num_threads", "num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion",
                  "launch_cooperative_grid", "debug", "waves_per_eu", "matrix_instr_nonkdim", "kpack",
                  "schedule_hint", "extern_libs")


@dataclass
class Binding:
    """Arguments of one launch: every parameter's value plus the launch options."""

    values: dict[str, Any]  # parameter -> user value (defaults applied)
    options: dict[str, Any]  # launch options given


def bind(
    signature: inspect.Signature, args: Sequence[Any], kwargs: dict[str, Any], kernel: str, constexprs: set[str]
) -> Binding:
    params = signature.parameters
    # Pass knobs travel as dotted launch options (``"pass.option"``) for the optimiser.
    options = {k: kwargs.pop(k) for k in list(kwargs) if (k in LAUNCH_OPTIONS or "." in k) and k not in params}
    names = list(params)
    if len(args) > len(names):
        raise LaunchError(f"takes {len(names)} arguments but {len(args)} were given", None, kernel)
    values: dict[str, Any] = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in params:
            raise LaunchError("unexpected keyword argument (not a parameter of the kernel)", k, kernel)
        if k in values:
            raise LaunchError("given both positionally and by keyword", k, kernel)
        values[k] = v
    out: dict[str, Any] = {}
    for name, p in params.items():
        if name in values:
            out[name] = values[name]
        elif p.default is not inspect.Parameter.empty:
            out[name] = p.default
        else:
            what = "constexpr argument" if name in constexprs else "argument"
            raise LaunchError(f"missing required {what}", name, kernel)
    return Binding(out, options)


def mock_pointer(value: Any) -> PointerType | None:
    """The pointer type a dtype given in place of an array stands for (Triton's ``warmup`` takes
    ``torch.float32`` or ``tl.float32`` for a tensor argument), or None if ``value`` is no dtype."""
    if isinstance(value, ScalarType):
        return PointerType(value)
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":
        name = str(value).removeprefix("torch.")
        special = HOST_DTYPE_NAMES.get(name)
        return PointerType(ScalarType(special) if special else scalar_from_numpy(np.dtype(name)))
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return PointerType(scalar_from_numpy(np.dtype(value)))
    return None


def as_array(value: Any) -> np.ndarray[Any, Any] | None:
    """A numpy view of an array-like argument (no copy) as a backend receives it, or None if not
    array-like (fp8/bfloat16 data are viewed as their unsigned-integer bits)."""
    if isinstance(value, np.ndarray) and value.dtype.name not in HOST_DTYPE_NAMES:
        return value
    return storage_view(value)


def specialize(
    binding: Binding,
    constexprs: set[str],
    do_not_specialize: set[str],
    kernel: str,
    no_alignment: frozenset[str] | set[str] = frozenset(),
    annotated: dict[str, ScalarType] | None = None,
) -> tuple[list[ParamSpec], list[Any]]:
    """ParamSpecs of every parameter and the runtime argument list for the backend.

    ``annotated``: parameters whose annotation is a dtype (``v: kl.uint8`` or ``"tl.uint8"``); a
    scalar passed to one has that type, as in Triton (``KernelParam.annotation_type``), instead
    of the type its value would give, and is not specialised on being 1."""
    specs: list[ParamSpec] = []
    runtime: list[Any] = []
    for name, value in binding.values.items():
        ann = annotated.get(name) if annotated else None
        if ann is not None and isinstance(value, (bool, int, float, np.generic)) and name not in constexprs:
            integral = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
            ok = integral and ann.is_integer and name not in do_not_specialize and name not in no_alignment
            div = _div16(True, int(value)) if ok else 1
            specs.append(ParamSpec.runtime(name, ann, div))
            runtime.append(value)
            continue
        spec, arg = _one(name, value, name in constexprs, name not in do_not_specialize, kernel,
                         name not in no_alignment)  # fmt: skip
        specs.append(spec)
        if not spec.is_const:
            runtime.append(arg)
    return specs, runtime


def _one(name: str, value: Any, is_constexpr: bool, spec_ok: bool, kernel: str,
         align_ok: bool = True) -> tuple[ParamSpec, Any]:  # fmt: skip
    from kdsl.language.core import constexpr

    if isinstance(value, constexpr):  # Triton: a kl.constexpr argument is compile-time for any parameter
        return _constexpr_arg(name, value.value, kernel)
    if is_constexpr:
        return _constexpr_arg(name, value, kernel)
    if isinstance(value, (DeviceArray, TensorDescriptor, tuple)) or device_base(value) is not None:
        obj = _kdsl_object_arg(name, value, spec_ok, kernel, align_ok)
        if obj is not None:
            return obj
    if value is None or isinstance(value, (str, Type, tuple)):
        return ParamSpec.const(name, value), None
    if isinstance(value, np.generic) and not isinstance(value, (np.bool_, float)):
        return _numpy_scalar(name, value, spec_ok, kernel, align_ok)  # np.float64 is a float: f32 below
    if isinstance(value, (bool, np.bool_, int, float)):
        return _python_scalar(name, value, spec_ok and align_ok, spec_ok, kernel)
    try:
        found = host_array(value)
    except TypeError as exc:
        raise LaunchError(f"arrays of dtype {getattr(value, 'dtype', '?')} are not supported", name, kernel) from exc
    except Exception as exc:
        raise LaunchError(f"cannot view {type(value).__name__} as a host array: {exc}", name, kernel) from exc
    if found is None:
        if callable(value):
            return ParamSpec.const(name, value), None
        raise LaunchError(f"unsupported argument type {type(value).__name__}", name, kernel)
    arr, elem = found
    address = arr.ctypes.data  # not __array_interface__: slower, and numpy 2.4 grows a heap block on it
    div = _div16(spec_ok and align_ok, address)
    return ParamSpec.runtime(name, PointerType(elem), div, large=spec_ok and is_large(arr.nbytes)), arr


def _python_scalar(name: str, value: bool | np.bool_ | int | float, div_ok: bool, spec_ok: bool,
                   kernel: str) -> tuple[ParamSpec, Any]:  # fmt: skip
    """Triton's rules for Python scalars: bools i1, ints by value (``== 1`` specialised), floats f32."""
    if isinstance(value, (bool, np.bool_)):
        return ParamSpec.runtime(name, i1), bool(value)
    if isinstance(value, float):
        return ParamSpec.runtime(name, f32), value
    if spec_ok and value == 1:
        return ParamSpec.const(name, 1), None
    try:
        t = int_type(value)
    except OverflowError as exc:
        raise LaunchOverflowError(str(exc), name, kernel) from exc
    return ParamSpec.runtime(name, t, _div16(div_ok, value)), value


def _div16(ok: bool, n: int) -> int:
    """The divisibility fact of an int or address: 16 when it divides ``n`` and may be used."""
    return 16 if ok and n % 16 == 0 else 1


def _kdsl_object_arg(name: str, value: Any, spec_ok: bool, kernel: str,
                     align_ok: bool = True) -> tuple[ParamSpec, Any] | None:  # fmt: skip
    """Spec and runtime value of a device array (possibly reinterpreted), a host descriptor or a
    tuple holding arrays (None for a tuple without arrays: a compile-time constant)."""
    if isinstance(value, tuple):
        return (_tuple_arg(name, value, spec_ok, kernel, align_ok), value) if holds_array(value) else None
    if isinstance(value, TensorDescriptor):
        return _descriptor_arg(name, value, spec_ok, kernel), value
    if isinstance(value, Reinterpreted):
        arr = value.base
        assert isinstance(arr, DeviceArray)
        div = _div16(spec_ok and align_ok, arr.offset)
        return ParamSpec.runtime(name, PointerType(value.dtype), div, large=spec_ok and arr.large), arr
    elem = scalar_from_numpy(value.dtype)
    div = _div16(spec_ok and align_ok, value.offset)
    return ParamSpec.runtime(name, PointerType(elem), div, large=spec_ok and value.large), value


def is_array_like(value: Any) -> bool:
    """An argument that becomes a pointer: numpy/kdsl/reinterpreted arrays, descriptors, torch tensors."""
    if isinstance(value, (np.ndarray, DeviceArray, TensorDescriptor, Reinterpreted)):
        return True
    if value is None or isinstance(value, (int, float, bool, str, tuple, np.generic)):
        return False
    return hasattr(value, "__array_interface__") or hasattr(value, "__dlpack__")


def holds_array(value: tuple[Any, ...]) -> bool:
    """Does the tuple hold an array at any depth (then it is a structured parameter)?"""
    return any(holds_array(e) if isinstance(e, tuple) else is_array_like(e) for e in value)


def _tuple_arg(name: str, value: tuple[Any, ...], spec_ok: bool, kernel: str, align_ok: bool) -> ParamSpec:
    """A structured spec whose tree mirrors the tuple (NamedTuples keep their class): each element
    specialised as a parameter of its own, named ``name[i]`` in errors."""
    from kdsl.frontend.values import NamedTupleTree, StaticTree, is_namedtuple
    from kdsl.language.core import constexpr

    types: list[Type] = []
    divs: list[int] = []

    def go(path: str, v: Any) -> Any:
        if isinstance(v, tuple):
            subs = tuple(go(f"{path}[{i}]", e) for i, e in enumerate(v))
            return NamedTupleTree(type(v), subs) if is_namedtuple(v) else subs
        if isinstance(v, constexpr):
            return StaticTree(type(v.value).__name__, v.value)
        spec, _ = _one(path, v, False, spec_ok, kernel, align_ok)
        if spec.is_const:
            return StaticTree(type(spec.value).__name__, spec.value)
        if spec.tree is not None:  # a TensorDescriptor inside the tuple
            types.extend(spec.leaf_types)
            divs.extend(spec.arg_divisibility)
            return spec.tree
        assert spec.type is not None
        types.append(spec.type)
        divs.append(spec.divisibility)
        return "leaf"

    return ParamSpec.structured(name, go(name, value), tuple(types), tuple(divs))


def _descriptor_arg(name: str, desc: TensorDescriptor, spec_ok: bool, kernel: str) -> ParamSpec:
    """A structured spec: the tree of a ``kl.tensor_descriptor`` whose leaves are the
    runtime base/shape/stride arguments (entries specialised to 1 stay in the tree)."""
    from kdsl.frontend.values import AggregateTree, StaticTree
    from kdsl.language.blockptr import tensor_descriptor

    types: list[Type] = []
    divs: list[int] = []

    def leaf(field: str, value: Any) -> Any:
        spec, _ = _one(f"{name}.{field}", value, False, spec_ok, kernel)
        if spec.is_const:
            return StaticTree(type(spec.value).__name__, spec.value)
        if spec.type is None or spec.tree is not None:
            raise LaunchError(f"TensorDescriptor {field} must be an array or int, got {type(value).__name__}", name,
                              kernel)
        types.append(spec.type)
        divs.append(spec.divisibility)
        return "leaf"

    base = leaf("base", desc.base)
    if not isinstance(types[0] if types else None, PointerType):
        raise LaunchError("TensorDescriptor base must be an array", name, kernel)
    shape = tuple(leaf(f"shape[{i}]", v) for i, v in enumerate(desc.shape))
    strides = tuple(leaf(f"strides[{i}]", v) for i, v in enumerate(desc.strides))
    tree = AggregateTree(tensor_descriptor, (tuple(desc.block_shape), desc.padding), (base, shape, strides))
    return ParamSpec.structured(name, tree, tuple(types), tuple(divs))


def launch_leaves(specs: Sequence[ParamSpec]) -> list[tuple[int, str, str]]:
    """Per runtime argument of the compiled entry: (parameter index, accessor, name).

    A plain parameter is its value (accessor ``""``); a host ``TensorDescriptor``
    contributes its runtime leaves as ``.base``, ``.shape[i]``, ``.strides[i]``; a tuple
    its leaves as ``[i]``, ``[i][j]``, ... (a descriptor inside a tuple: ``[i].base``).
    Accessors are Python syntax: the launcher appends them to the parameter's value.
    """
    out: list[tuple[int, str, str]] = []
    for i, spec in enumerate(specs):
        if spec.is_const:
            continue
        paths = [""] if spec.tree is None else _leaf_paths(spec.tree, "")
        out += [(i, acc, f"{spec.name}{acc}") for acc in paths]
    return out


def _leaf_paths(tree: Any, acc: str) -> list[str]:
    """Accessors of the runtime leaves of a structured parameter's tree, in argument order."""
    from kdsl.frontend.values import AggregateTree, NamedTupleTree, StaticTree

    if isinstance(tree, StaticTree):
        return []
    if isinstance(tree, str):  # "leaf"
        return [acc]
    if isinstance(tree, AggregateTree):  # a host TensorDescriptor: its fields by name
        return [p for f, sub in zip(FIELDS, tree.fields) for p in _leaf_paths(sub, f"{acc}.{f}")]
    subs = tree.fields if isinstance(tree, NamedTupleTree) else tree
    return [p for k, sub in enumerate(subs) for p in _leaf_paths(sub, f"{acc}[{k}]")]


def _constexpr_arg(name: str, value: Any, kernel: str) -> tuple[ParamSpec, Any]:
    is_scalar = isinstance(value, (int, float, bool, np.generic))
    if isinstance(value, DeviceArray) or (not is_scalar and as_array(value) is not None):
        raise LaunchError("a constexpr parameter needs a compile-time value, not an array", name, kernel)
    return ParamSpec.const(name, value.item() if isinstance(value, np.generic) else value), None


def _numpy_scalar(name: str, value: np.generic, spec_ok: bool, kernel: str,
                  align_ok: bool = True) -> tuple[ParamSpec, Any]:  # fmt: skip
    try:
        t: ScalarType = scalar_from_numpy(value.dtype)
    except TypeError as exc:
        raise LaunchError(f"numpy scalars of dtype {value.dtype} are not supported", name, kernel) from exc
    if t.is_integer and not t.is_boolean:
        v = int(value)
        if spec_ok and v == 1:
            return ParamSpec.const(name, 1), None
        return ParamSpec.runtime(name, t, _div16(spec_ok and align_ok, v)), value
    return ParamSpec.runtime(name, t), value


# program_id / num_programs are i32 in the IR, as in Triton.
MAX_GRID_DIM = 2**31 - 1


def normalize_grid(grid: Any, named: dict[str, Any], kernel: str) -> tuple[int, int, int]:
    """The launch grid as three non-negative ints (a callable gets the named arguments)."""
    if callable(grid):
        grid = grid(named)
    if isinstance(grid, (int, np.integer)) and not isinstance(grid, bool):
        grid = (grid,)
    if not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3:
        raise LaunchError(f"grid must be a tuple of 1 to 3 ints, got {grid!r}", "grid", kernel)
    dims: list[int] = []
    for d in grid:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise LaunchError(f"grid dimensions must be ints, got {d!r}", "grid", kernel)
        if d < 0:
            raise LaunchError(f"grid dimensions must be non-negative, got {int(d)}", "grid", kernel)
        if d > MAX_GRID_DIM:
            raise LaunchError(f"grid dimension {int(d)} exceeds {MAX_GRID_DIM} (program ids are i32)", "grid", kernel)
        dims.append(int(d))
    while len(dims) < 3:
        dims.append(1)
    return dims[0], dims[1], dims[2]


GridFn = Callable[[dict[str, Any]], Sequence[int]]
