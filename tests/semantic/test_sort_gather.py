"""Scan/sort/indexing ops of triton.language: gather, histogram, sort, topk,
bitonic_merge, flip, cat, swizzle2d -- exact results against numpy on every backend.

Triton facts (triton-lang.org/main/python-api/generated/triton.language.*.html and
triton/language/standard.py): ``gather(src, index, axis)`` has index's shape and
src and index differ only on ``axis``; ``histogram`` counts values in bins of width
1 from 0 (``mask`` excludes elements); ``sort``/``flip``/``topk`` work on the last
dimension by default with power-of-two lengths, ``topk`` returns the k largest,
largest first; ``cat`` concatenates (Triton may reorder, kdsl never does);
``swizzle2d`` is the integer formula in ``standard.py``. Where Triton is undefined
kdsl defines (docstrings of kdsl/language/indexing.py): an out-of-range gather index
gives 0, values outside the histogram's bins are not counted, NaNs sort after +inf.

Few distinct kernels and small constexpr sizes: compile time dominates.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kdsl
import kdsl.language as kl
from kdsl.errors import CompilationError

from ._util import line_of

SPECIAL_F32 = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -1.5, 1.5], np.float32)


def bits(a: np.ndarray) -> np.ndarray:
    """The bit patterns of ``a`` (exact comparison, NaN payloads and -0.0 included)."""
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def sort_keys(a: np.ndarray) -> np.ndarray:
    """kdsl's sort order as integers: ints themselves; floats by IEEE totalOrder with
    the negative-NaN block rotated above +inf (kl.sort's docstring)."""
    if a.dtype.kind in "iu":
        return a.astype(np.int64) if a.dtype.kind == "i" else a.astype(np.uint64)
    w = a.dtype.itemsize * 8
    s = a.view(f"i{w // 8}")
    key = np.where(s < 0, s ^ np.array((1 << (w - 1)) - 1, s.dtype), s)
    mant = {16: 10, 32: 23, 64: 52}[w]
    # subtract with wrap-around (unsigned arithmetic), back to signed
    return (key.view(f"u{w // 8}") - np.array((1 << mant) - 1, f"u{w // 8}")).view(f"i{w // 8}")


def sort_ref(a: np.ndarray, descending: bool, axis: int = -1) -> np.ndarray:
    order = np.argsort(sort_keys(a), axis=axis, kind="stable")
    out = np.take_along_axis(a, order, axis=axis)
    return np.flip(out, axis=axis) if descending else out


# --- kernels -------------------------------------------------------------------------------

@kdsl.kernel
def gather2d_kernel(src, idx, out, R: kl.constexpr, C: kl.constexpr, IR: kl.constexpr, IC: kl.constexpr,
                    AXIS: kl.constexpr):
    s = kl.load(src + kl.arange(0, R)[:, None] * C + kl.arange(0, C)[None, :])
    o = kl.arange(0, IR)[:, None] * IC + kl.arange(0, IC)[None, :]
    kl.store(out + o, kl.gather(s, kl.load(idx + o), AXIS))


@kdsl.kernel
def gather1d_kernel(src, idx, out, N: kl.constexpr, M: kl.constexpr):
    o = kl.arange(0, M)
    kl.store(out + o, kl.load(src + kl.arange(0, N)).gather(kl.load(idx + o), 0))


@kdsl.kernel
def hist_kernel(x, m, out, N: kl.constexpr, B: kl.constexpr, MASKED: kl.constexpr):
    v = kl.load(x + kl.arange(0, N))
    if MASKED:
        kl.store(out + kl.arange(0, B), kl.histogram(v, B, mask=kl.load(m + kl.arange(0, N)) != 0))
    else:
        kl.store(out + kl.arange(0, B), v.histogram(B))


@kdsl.kernel
def rows_kernel(x, out, R: kl.constexpr, C: kl.constexpr, OP: kl.constexpr, ARG: kl.constexpr, K: kl.constexpr):
    """One kernel for the row-wise ops: OP picks sort/flip/topk, ARG is their dim or order."""
    v = kl.load(x + kl.arange(0, R)[:, None] * C + kl.arange(0, C)[None, :])
    if OP == "sort":
        kl.store(out + kl.arange(0, R)[:, None] * C + kl.arange(0, C)[None, :], kl.sort(v, descending=ARG))
    elif OP == "sort0":
        kl.store(out + kl.arange(0, R)[:, None] * C + kl.arange(0, C)[None, :], kl.sort(v, dim=0, descending=ARG))
    elif OP == "flip":
        kl.store(out + kl.arange(0, R)[:, None] * C + kl.arange(0, C)[None, :], kl.flip(v, ARG))
    elif OP == "topk":
        kl.store(out + kl.arange(0, R)[:, None] * K + kl.arange(0, K)[None, :], kl.topk(v, K, descending=ARG))


@kdsl.kernel
def vec_kernel(x, out, N: kl.constexpr, OP: kl.constexpr, ARG: kl.constexpr):
    """1-D sort (ARG = descending), bitonic_merge and flip."""
    o = kl.arange(0, N)
    v = kl.load(x + o)
    if OP == "sort":
        kl.store(out + o, v.sort(descending=ARG))
    elif OP == "merge":
        kl.store(out + o, kl.bitonic_merge(v, descending=ARG))
    else:
        kl.store(out + o, v.flip())


@kdsl.kernel
def cat_kernel(a, b, out, R: kl.constexpr, C: kl.constexpr):
    o = kl.arange(0, R)[:, None] * C + kl.arange(0, C)[None, :]
    kl.store(out + kl.arange(0, 2 * R)[:, None] * C + kl.arange(0, C)[None, :],
             kl.cat(kl.load(a + o), kl.load(b + o), can_reorder=True))


@kdsl.kernel
def swizzle_kernel(out_i, out_j, size_i, SI: kl.constexpr, SJ: kl.constexpr, SG: kl.constexpr):
    i = kl.arange(0, SI)[:, None]
    j = kl.arange(0, SJ)[None, :]
    ni, nj = kl.swizzle2d(i, j, size_i, SJ, SG)
    o = i * SJ + j
    kl.store(out_i + o, ni, mask=i < size_i)
    kl.store(out_j + o, nj, mask=i < size_i)


# --- gather --------------------------------------------------------------------------------

def _gather_ref(src: np.ndarray, idx: np.ndarray, axis: int) -> np.ndarray:
    n = src.shape[axis]
    ok = (idx.astype(np.int64) >= 0) & (idx.astype(np.int64) < n)
    picked = np.take_along_axis(src, np.where(ok, idx, 0).astype(np.int64), axis=axis)
    return np.where(ok, picked, np.zeros((), src.dtype))


def test_gather_axis0_float(backend: str) -> None:
    rng = np.random.default_rng(1)
    src = rng.standard_normal((4, 8)).astype(np.float32)
    src[0, :] = SPECIAL_F32
    src[1, 0] = np.frombuffer(np.uint32(0x7FC01234).tobytes(), np.float32)[0]  # NaN payload
    idx = rng.integers(0, 4, (8, 8)).astype(np.int64)  # 8 rows from 4: index shape differs on axis 0
    idx[0, :3] = [-1, 4, 1 << 40]  # out of range -> 0
    out = np.full((8, 8), 7.0, np.float32)
    gather2d_kernel[(1,)](src, idx, out, R=4, C=8, IR=8, IC=8, AXIS=0)
    np.testing.assert_array_equal(bits(out), bits(_gather_ref(src, idx, 0)))


def test_gather_axis1_int(backend: str) -> None:
    rng = np.random.default_rng(2)
    src = rng.integers(-(2**31), 2**31, (4, 8)).astype(np.int32)
    idx = rng.integers(0, 8, (4, 2)).astype(np.int32)
    idx[1, 1], idx[2, 0] = 8, -3
    out = np.full((4, 2), 99, np.int32)
    gather2d_kernel[(1,)](src, idx, out, R=4, C=8, IR=4, IC=2, AXIS=-1)
    np.testing.assert_array_equal(out, _gather_ref(src, idx, 1))


def test_gather_1d_half_with_unsigned_index(backend: str) -> None:
    src = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -2.5, 65504.0, 3.0], np.float16)
    src.view(np.uint16)[7] = 0x7E05  # a NaN with a payload
    idx = np.array([7, 1, 0, 255, 3, 8, 2, 6, 7, 7, 4, 5, 0, 1, 2, 200], np.uint8)
    out = np.zeros(16, np.float16)
    gather1d_kernel[(1,)](src, idx, out, N=8, M=16)
    np.testing.assert_array_equal(bits(out), bits(_gather_ref(src, idx, 0)))


# --- histogram -------------------------------------------------------------------------------

@pytest.mark.parametrize("masked", [False, True])
def test_histogram(backend: str, masked: bool) -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(-4, 12, 32).astype(np.int32)  # some below 0, some >= 8 bins: not counted
    m = rng.integers(0, 2, 32).astype(np.int32)
    out = np.full(8, -1, np.int32)
    hist_kernel[(1,)](x, m, out, N=32, B=8, MASKED=masked)
    keep = x[m != 0] if masked else x
    np.testing.assert_array_equal(out, np.bincount(keep[(keep >= 0) & (keep < 8)], minlength=8))


# --- sort / topk / flip ------------------------------------------------------------------------

def _sort_input_f32() -> np.ndarray:
    rng = np.random.default_rng(4)
    x = rng.standard_normal(16).astype(np.float32)
    x[:8] = SPECIAL_F32  # -0.0 / +0.0 / inf / NaN / duplicates
    x[9] = -np.nan  # a negative NaN: after the positive ones
    x[10] = x[11] = 2.0
    return x


@pytest.mark.parametrize("descending", [False, True])
def test_sort_1d_float(backend: str, descending: bool) -> None:
    x = _sort_input_f32()
    out = np.zeros_like(x)
    vec_kernel[(1,)](x, out, N=16, OP="sort", ARG=descending)
    np.testing.assert_array_equal(bits(out), bits(sort_ref(x, descending)))


@pytest.mark.parametrize(("dtype", "descending"), [(np.float16, False), (np.float64, True)])
def test_sort_1d_half_double(backend: str, dtype: type, descending: bool) -> None:
    x = _sort_input_f32().astype(dtype)  # the NaNs keep their signs
    x.view(f"u{x.itemsize}")[12] |= 5  # a payload on a new NaN
    x.view(f"u{x.itemsize}")[12] |= np.array(0x7C00 if dtype == np.float16 else 0x7FF0 << 48, f"u{x.itemsize}")
    out = np.zeros_like(x)
    vec_kernel[(1,)](x, out, N=16, OP="sort", ARG=descending)
    np.testing.assert_array_equal(bits(out), bits(sort_ref(x, descending)))


def test_bitonic_merge(backend: str) -> None:
    x = np.concatenate([np.arange(0, 16, 2), np.arange(15, 0, -2)]).astype(np.int32)  # up, then down
    out = np.zeros_like(x)
    vec_kernel[(1,)](x, out, N=16, OP="merge", ARG=False)
    np.testing.assert_array_equal(out, np.sort(x))


def test_sort_2d_last_dim_descending_float(backend: str) -> None:
    x = np.random.default_rng(5).standard_normal((4, 8)).astype(np.float32)
    x[0] = SPECIAL_F32
    x[3, :4] = 1.0
    out = np.zeros_like(x)
    rows_kernel[(1,)](x, out, R=4, C=8, OP="sort", ARG=True, K=1)
    np.testing.assert_array_equal(bits(out), bits(sort_ref(x, True)))


def test_sort_2d_ints(backend: str) -> None:
    x = np.random.default_rng(6).integers(-5, 5, (4, 8)).astype(np.int16)  # many duplicates
    x[0, 0], x[0, 1] = np.iinfo(np.int16).min, np.iinfo(np.int16).max
    out = np.zeros_like(x)
    rows_kernel[(1,)](x, out, R=4, C=8, OP="sort", ARG=False, K=1)
    np.testing.assert_array_equal(out, np.sort(x, axis=1))


def test_sort_dim0_unsigned(backend: str) -> None:
    # kdsl extension: Triton sorts only the last dimension
    x = np.random.default_rng(7).integers(0, 2**32, (4, 8), dtype=np.uint64).astype(np.uint32)
    out = np.zeros_like(x)
    rows_kernel[(1,)](x, out, R=4, C=8, OP="sort0", ARG=True, K=1)
    np.testing.assert_array_equal(out, np.sort(x, axis=0)[::-1])


def test_topk(backend: str) -> None:
    x = np.random.default_rng(8).standard_normal((2, 16)).astype(np.float32)
    x[0, :8] = SPECIAL_F32
    out = np.zeros((2, 4), np.float32)
    rows_kernel[(1,)](x, out, R=2, C=16, OP="topk", ARG=True, K=4)
    np.testing.assert_array_equal(bits(out), bits(sort_ref(x, True)[:, :4]))


def test_topk_smallest_ints(backend: str) -> None:
    x = np.random.default_rng(9).integers(-100, 100, (2, 16)).astype(np.int32)
    out = np.zeros((2, 2), np.int32)
    rows_kernel[(1,)](x, out, R=2, C=16, OP="topk", ARG=False, K=2)
    np.testing.assert_array_equal(out, np.sort(x, axis=1)[:, :2])


@pytest.mark.parametrize("dim", [0, None])
def test_flip_2d(backend: str, dim: int | None) -> None:
    x = np.random.default_rng(10).standard_normal((4, 8)).astype(np.float32)
    x[1] = SPECIAL_F32
    out = np.zeros_like(x)
    rows_kernel[(1,)](x, out, R=4, C=8, OP="flip", ARG=dim, K=1)
    np.testing.assert_array_equal(bits(out), bits(np.flip(x, axis=1 if dim is None else dim)))


def test_flip_1d(backend: str) -> None:
    x = np.arange(16, dtype=np.int8) - 8
    out = np.zeros_like(x)
    vec_kernel[(1,)](x, out, N=16, OP="flip", ARG=False)
    np.testing.assert_array_equal(out, x[::-1])


# --- cat / swizzle2d -------------------------------------------------------------------------

def test_cat_is_exact_concatenation(backend: str) -> None:
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    b = -np.arange(8, dtype=np.float32).reshape(2, 4) - 100
    out = np.zeros((4, 4), np.float32)
    cat_kernel[(1,)](a, b, out, R=2, C=4)
    np.testing.assert_array_equal(out, np.concatenate([a, b], axis=0))


def swizzle_ref(i: int, j: int, size_i: int, size_j: int, size_g: int) -> tuple[int, int]:
    """The documented formula (triton/language/standard.py ``swizzle2d``), in Python ints."""
    ij = i * size_j + j
    size_gj = size_g * size_j
    off_i = ij // size_gj * size_g
    g = min(size_i - off_i, size_g)
    ij %= size_gj
    return off_i + ij % g, ij // g


def test_swizzle_ref_matches_documented_example() -> None:
    moved = np.zeros((4, 4), int)
    for i in range(4):
        for j in range(4):
            ni, nj = swizzle_ref(i, j, 4, 4, 2)
            moved[ni, nj] = i * 4 + j
    np.testing.assert_array_equal(moved, [[0, 2, 4, 6], [1, 3, 5, 7], [8, 10, 12, 14], [9, 11, 13, 15]])


def test_swizzle2d(backend: str) -> None:
    size_i, sj, sg = 7, 4, 3  # the last group has one row
    oi, oj = np.full((8, 4), -1, np.int32), np.full((8, 4), -1, np.int32)
    swizzle_kernel[(1,)](oi, oj, size_i, SI=8, SJ=sj, SG=sg)
    ref = np.array([[swizzle_ref(i, j, size_i, sj, sg) for j in range(sj)] for i in range(size_i)])
    np.testing.assert_array_equal(oi[:size_i], ref[..., 0])
    np.testing.assert_array_equal(oj[:size_i], ref[..., 1])


# --- properties (one fast backend) -------------------------------------------------------------

_F32 = st.one_of(
    st.floats(width=32, allow_nan=False),
    st.sampled_from([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1.0]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x=hnp.arrays(np.float32, 16, elements=_F32), descending=st.booleans())
def test_sort_property_cpu(x: np.ndarray, descending: bool) -> None:
    if "cpu" not in kdsl.available_backends():
        pytest.skip("backend 'cpu' unavailable")
    out = np.zeros_like(x)
    with kdsl.backend("cpu"):
        vec_kernel[(1,)](x, out, N=16, OP="sort", ARG=descending)
    np.testing.assert_array_equal(bits(out), bits(sort_ref(x, descending)))


@settings(max_examples=40, deadline=None)
@given(
    src=hnp.arrays(np.float32, (4, 8), elements=_F32),
    idx=hnp.arrays(np.int32, (4, 2), elements=st.integers(-2, 9)),
)
def test_gather_property_cpu(src: np.ndarray, idx: np.ndarray) -> None:
    if "cpu" not in kdsl.available_backends():
        pytest.skip("backend 'cpu' unavailable")
    out = np.zeros((4, 2), np.float32)
    with kdsl.backend("cpu"):
        gather2d_kernel[(1,)](src, idx, out, R=4, C=8, IR=4, IC=2, AXIS=1)
    np.testing.assert_array_equal(bits(out), bits(_gather_ref(src, idx, 1)))


# --- errors ------------------------------------------------------------------------------------

@kdsl.kernel
def bad_kernel(x, CASE: kl.constexpr):
    v = kl.load(x + kl.arange(0, 8)[:, None] * 4 + kl.arange(0, 4)[None, :])
    i = kl.arange(0, 8)
    if CASE == "axis":
        kl.gather(v, v.to(kl.int32), 2)  # MARK: gather-axis
    elif CASE == "rank":
        kl.gather(v, i, 0)  # MARK: gather-rank
    elif CASE == "shape":
        kl.gather(v, kl.zeros((8, 8), kl.int32), 0)  # MARK: gather-shape
    elif CASE == "float-index":
        kl.gather(v, v, 0)  # MARK: gather-float-index
    elif CASE == "sort-length":
        kl.sort(kl.zeros((6,), kl.float32))  # MARK: sort-length
    elif CASE == "topk-k":
        kl.topk(v, 3)  # MARK: topk-k
    elif CASE == "hist-float":
        kl.histogram(v.reshape(32), 8)  # MARK: hist-float
    elif CASE == "cat-shape":
        kl.cat(v, i)  # MARK: cat-shape


ERRORS = [
    ("axis", "gather-axis", "kl.gather axis 2 is out of range for a tensor of rank 2"),
    ("rank", "gather-rank", "src and index must have the same rank"),
    ("shape", "gather-shape", "index dimension 1 (8) must equal src dimension 1 (4)"),
    ("float-index", "gather-float-index", "index must be an integer tensor"),
    ("sort-length", "sort-length", "kl.sort needs a power-of-two length along dim 0, got 6"),
    ("topk-k", "topk-k", "kl.topk k must be a power of two at most 4, got 3"),
    ("hist-float", "hist-float", "kl.histogram needs integer values, got f32"),
    ("cat-shape", "cat-shape", "kl.cat needs operands of one shape"),
]


@pytest.mark.parametrize(("case", "marker", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_arguments_name_the_line(case: str, marker: str, message: str) -> None:
    with pytest.raises(CompilationError) as info:
        kdsl.compile_to_ir(bad_kernel, "*f32", CASE=case)
    line = line_of(__file__, f"MARK: {marker}")
    assert info.value.loc.line == line
    text = str(info.value)
    assert f"test_sort_gather.py:{line}:" in text  # file:line:col: error: message, then the source
    assert message in text


def test_several_work_items_exchange_through_local_memory(backend: str) -> None:
    # the device backends' default here is one work-item per program; with a work-group of
    # 8 the gather's and every sort step's foreign reads go through __local copies
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    x[2] = SPECIAL_F32
    out = np.zeros_like(x)
    rows_kernel[(2,)](x, out, R=4, C=8, OP="sort", ARG=False, K=1, num_threads=8)
    np.testing.assert_array_equal(bits(out), bits(sort_ref(x, False)))
    idx = rng.integers(-1, 5, (8, 8)).astype(np.int32)
    got = np.zeros((8, 8), np.float32)
    gather2d_kernel[(2,)](x, idx, got, R=4, C=8, IR=8, IC=8, AXIS=0, num_threads=8)
    np.testing.assert_array_equal(bits(got), bits(_gather_ref(x, idx, 0)))
