"""Triton 3.5's ``triton.language`` names kl had lacked, each used as a Triton kernel uses it,
run on every backend against numpy (semantics from Triton's language/core.py, standard.py,
random.py, target_info.py and runtime/jit.py)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.ir.parser import parse_module
from kdsl.ir.printer import print_op
from kdsl.transforms import parse_pipeline

# ``triton.language.__all__`` of Triton 3.5, as released.
TRITON_35_ALL = (
    "PropagateNan", "TRITON_MAX_TENSOR_NUMEL", "load_tensor_descriptor", "store_tensor_descriptor",
    "make_tensor_descriptor", "tensor_descriptor", "abs", "advance", "arange", "argmax", "argmin", "associative_scan",
    "assume", "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg",
    "atomic_xor", "bfloat16", "bitonic_merge", "block_type", "broadcast", "broadcast_to", "cat", "cast", "cdiv",
    "ceil", "clamp", "condition", "const", "constexpr", "constexpr_type", "cos", "cumprod", "cumsum",
    "debug_barrier", "device_assert", "device_print", "div_rn", "dot", "dot_scaled", "dtype", "erf", "exp", "exp2",
    "expand_dims", "extra", "fdiv", "flip", "float16", "float32", "float64", "float8e4b15", "float8e4nv",
    "float8e4b8", "float8e5", "float8e5b16", "floor", "fma", "full", "gather", "histogram", "inline_asm_elementwise",
    "interleave", "int1", "int16", "int32", "int64", "int8", "join", "load", "log", "log2", "make_block_ptr",
    "map_elementwise", "math", "max", "max_constancy", "max_contiguous", "maximum", "min", "minimum", "multiple_of",
    "num_programs", "pair_uniform_to_normal", "permute", "philox", "philox_impl", "pi32_t", "pointer_type",
    "program_id", "rand", "rand4x", "randint", "randint4x", "randn", "randn4x", "range", "ravel", "reduce",
    "reduce_or", "reshape", "rsqrt", "slice", "sigmoid", "sin", "softmax", "sort", "split", "sqrt", "sqrt_rn",
    "static_assert", "static_print", "static_range", "store", "sum", "swizzle2d", "target_info", "tensor", "topk",
    "trans", "tuple", "uint16", "uint32", "uint64", "uint8", "uint_to_uniform_float", "umulhi", "view", "void",
    "where", "xor_sum", "zeros", "zeros_like",
)


def test_kl_has_every_triton_35_name() -> None:
    missing = sorted(set(TRITON_35_ALL) - set(kl.__all__))
    assert missing == []
    assert all(hasattr(kl, n) for n in kl.__all__)


# --- reduce_or ------------------------------------------------------------------------------
@kdsl.kernel
def reduce_or_kernel(x_ptr, b_ptr, out_ptr, R: kl.constexpr, C: kl.constexpr):
    r = kl.arange(0, R)[:, None]
    c = kl.arange(0, C)[None, :]
    x = kl.load(x_ptr + r * C + c)
    kl.store(out_ptr + kl.arange(0, C), kl.reduce_or(x, 0))
    kl.store(out_ptr + C + kl.arange(0, R), x.reduce_or(axis=1))
    kl.store(out_ptr + C + R, kl.reduce_or(x, None))
    k = kl.reduce_or(x, 1, keep_dims=True)
    kl.static_assert(k.shape == (R, 1))
    kl.store(out_ptr + C + R + 1 + kl.arange(0, R)[:, None], k)
    b = kl.load(b_ptr + r * C + c) != 0  # int1: "any"
    kl.store(out_ptr + C + 2 * R + 1 + kl.arange(0, R), kl.reduce_or(b, 1).to(kl.int32))


def test_reduce_or(backend: str) -> None:
    rng = np.random.default_rng(1)
    R, C = 4, 8
    x = (rng.integers(0, 2, (R, C)) << rng.integers(0, 31, (R, C))).astype(np.int32)
    b = np.zeros((R, C), np.int32)
    b[1, 3] = b[3, 0] = 1
    out = np.zeros(C + 3 * R + 1, np.int32)
    reduce_or_kernel[(1,)](x, b, out, R=R, C=C)
    want = np.concatenate([np.bitwise_or.reduce(x, 0), np.bitwise_or.reduce(x, 1), [np.bitwise_or.reduce(x, None)],
                           np.bitwise_or.reduce(x, 1), b.any(1).astype(np.int32)])
    np.testing.assert_array_equal(out, want)


def test_reduce_or_refuses_floats() -> None:
    @kdsl.kernel
    def k(x_ptr):
        kl.store(x_ptr, kl.reduce_or(kl.load(x_ptr + kl.arange(0, 4)), 0))

    with pytest.raises(kdsl.CompilationError, match="reduce_or is only supported for integers"):
        kdsl.compile_to_ir(k, "*f32")


# --- condition / range(disable_licm) ------------------------------------------------------------
@kdsl.kernel
def licm_kernel(x_ptr, out_ptr, n, scale, BLOCK: kl.constexpr, NO_LICM: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    acc = kl.zeros((BLOCK,), kl.float32)
    i = 0
    while kl.condition(i < n, disable_licm=NO_LICM):
        acc += kl.load(x_ptr + offs) * (scale * 2.0)  # the load and the product are loop-invariant
        i += 1
    for j in kl.range(0, n, disable_licm=NO_LICM):
        acc += kl.exp(scale * 0.0) * j  # exp of a loop-invariant scalar
    kl.store(out_ptr + offs, acc)


@pytest.mark.parametrize("no_licm", [False, True])
def test_condition_and_range_disable_licm(backend: str, no_licm: bool) -> None:
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    licm_kernel[(1,)](x, out, 3, 0.5, BLOCK=16, NO_LICM=no_licm)
    np.testing.assert_allclose(out, 3 * x + (0 + 1 + 2), rtol=1e-6)


def _ops_in_loops(text: str) -> list[str]:
    """Names of the ops directly inside the kernel's loops (one level deep)."""
    m = parse_module(text, "<t>")
    return [op.NAME for loop in m.walk() if loop.NAME in ("scf.for", "scf.while")
            for region in loop.regions for op in region.block.ops]


def test_disable_licm_reaches_the_licm_pass() -> None:
    inside = {}
    for no_licm in (False, True):
        m = kdsl.compile_to_ir(licm_kernel, "*f32", "*f32", "i32", "f32", BLOCK=16, NO_LICM=no_licm)
        text = print_op(m)
        assert (text.count("{disable_licm = true}") == 2) is no_licm
        assert print_op(parse_module(text, "<t>")) == text  # the attribute round-trips
        parse_pipeline("licm").run(m)
        inside[no_licm] = _ops_in_loops(print_op(m))
    # licm hoists the invariant pointer arithmetic and exp out of both loops, unless told not to
    assert "math.exp" in inside[True] and "math.exp" not in inside[False]
    assert len(inside[True]) > len(inside[False]) + 4


def test_condition_outside_while_is_an_error() -> None:
    @kdsl.kernel
    def k(x_ptr, n):
        if kl.condition(n > 0):
            kl.store(x_ptr, 1)

    with pytest.raises(kdsl.CompilationError, match="only be the test of a `while` loop"):
        kdsl.compile_to_ir(k, "*i32", "i32")


# --- philox family ---------------------------------------------------------------------------
def philox_np(c: list[np.ndarray], k0: int, k1: int, rounds: int = 10) -> list[np.ndarray]:
    """Philox-4x32 on arbitrary counters (Salmon et al. SC'11, Triton's constants)."""
    m32 = np.uint64(0xFFFFFFFF)
    c0, c1, c2, c3 = (np.asarray(w).astype(np.uint64) for w in c)
    for _ in range(rounds):
        pb = np.uint64(0xCD9E8D57) * c2
        pa = np.uint64(0xD2511F53) * c0
        c0, c1, c2, c3 = (pb >> np.uint64(32)) ^ c1 ^ np.uint64(k0), pb & m32, (pa >> np.uint64(32)) ^ c3 ^ np.uint64(k1), pa & m32
        k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return [w.astype(np.uint32) for w in (c0, c1, c2, c3)]


def uniform_np(w: np.ndarray) -> np.ndarray:
    x = w.view(np.int32).astype(np.int64)
    return np.where(x < 0, -x - 1, x).astype(np.int32).astype(np.float32) * np.float32(4.6566127342e-10)


@kdsl.kernel
def philox_kernel(out_ptr, f_ptr, seed, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    a, b, c, d = kl.philox(seed, offs, offs * 3, 7, offs + 1)
    e, f, g, h = kl.philox_impl(offs.to(kl.uint32), (offs * 5).to(kl.uint32), kl.full((BLOCK,), 9, kl.uint32),
                                offs.to(kl.uint32), 0x12345678, 0x0BADF00D, n_rounds=7)
    for i, w in enumerate((a, b, c, d, e, f, g, h)):
        kl.store(out_ptr + i * BLOCK + offs, w)
    u1 = kl.uint_to_uniform_float(a)
    u2 = kl.uint_to_uniform_float(b)
    n1, n2 = kl.pair_uniform_to_normal(u1, u2)
    kl.store(f_ptr + offs, u1)
    kl.store(f_ptr + BLOCK + offs, n1)
    kl.store(f_ptr + 2 * BLOCK + offs, n2)


def test_philox_family(backend: str) -> None:
    B, seed = 16, 0x1_2345_6789
    out = np.zeros(8 * B, np.uint32)
    f = np.zeros(3 * B, np.float32)
    philox_kernel[(1,)](out, f, seed, BLOCK=B)
    o = np.arange(B, dtype=np.uint32)
    want = philox_np([o, o * 3, np.full(B, 7), o + 1], seed & 0xFFFFFFFF, seed >> 32)
    want += philox_np([o, o * 5, np.full(B, 9), o], 0x12345678, 0x0BADF00D, rounds=7)
    np.testing.assert_array_equal(out, np.concatenate(want))
    u1, u2 = uniform_np(want[0]), uniform_np(want[1])
    np.testing.assert_array_equal(f[:B], u1)
    r = np.sqrt(-2.0 * np.log(np.maximum(np.float32(1e-7), u1).astype(np.float64)))
    np.testing.assert_allclose(f[B:], np.concatenate([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)]),
                               atol=2e-5)


def test_philox_impl_checks_counter_types() -> None:
    @kdsl.kernel
    def k(out_ptr):
        a, _, _, _ = kl.philox_impl(1.0, 2, 3, 4, 5, 6)
        kl.store(out_ptr, a)

    with pytest.raises(kdsl.CompilationError, match="philox_impl needs four uint32 or four uint64"):
        kdsl.compile_to_ir(k, "*u32")


# --- type objects ---------------------------------------------------------------------------------
def test_type_objects_on_the_host() -> None:
    bt = kl.block_type(kl.float32, [16, 32])
    assert bt.is_block() and bt.shape == (16, 32) and bt.numel == 512 and bt.scalar == kl.float32
    assert bt.element_ty == kl.float32 and bt.nbytes == 2048 and bt.get_block_shapes() == (16, 32)
    assert isinstance(bt, kl.block_type) and not isinstance(kl.float32, kl.block_type)
    with pytest.raises(TypeError, match="0d block_type"):
        kl.block_type(kl.float32, [])
    with pytest.raises(ValueError, match="more than Triton's maximum of 1048576"):
        kl.block_type(kl.float32, [2048, 1024])
    assert kl.pi32_t == kl.pointer_type(kl.int32)
    assert isinstance(kl.void, kl.dtype) and kl.void.is_void() and kl.void.primitive_bitwidth == 0
    assert kl.void != kl.int32 and not kl.int32.is_void()
    assert kl.constexpr(3).type == kl.constexpr_type(3) != kl.constexpr_type(4)
    assert repr(kl.constexpr_type(3)) == "constexpr_type[3]"
    assert isinstance((1, 2), kl.tuple) and kl.tuple([1, 2]) == (1, 2) and not isinstance([1], kl.tuple)
    assert isinstance(kl.slice(0, 2, 1), kl.slice) and (5, 6, 7)[kl.slice(1, 3, 1)] == (6, 7)
    assert kl.TRITON_MAX_TENSOR_NUMEL == 1048576


@kdsl.kernel
def types_kernel(x_ptr: kl.const, out_ptr, pair, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    x = kl.load(x_ptr + offs)
    kl.static_assert(x.type == kl.block_type(kl.int32, [BLOCK]))
    kl.static_assert(isinstance(x.type, kl.block_type))
    kl.static_assert(x_ptr.type == kl.pi32_t)
    kl.static_assert(x.dtype != kl.void)
    kl.static_assert(isinstance(pair, kl.tuple))
    t = kl.tuple([x, x + 1, x + 2])
    kl.static_assert(isinstance(t, kl.tuple))
    mid = t[kl.slice(1, 3, 1)]  # (x + 1, x + 2)
    kl.store(out_ptr + offs, mid[0] * pair[0] + mid[1] * pair[1])


def test_type_objects_in_a_kernel(backend: str) -> None:
    x = np.arange(8, dtype=np.int32)
    out = np.zeros(8, np.int32)
    types_kernel[(1,)](x, out, (3, 5), BLOCK=8)
    np.testing.assert_array_equal(out, (x + 1) * 3 + (x + 2) * 5)


def test_void_is_not_a_value_type() -> None:
    @kdsl.kernel
    def k(out_ptr):
        kl.store(out_ptr, kl.zeros((4,), kl.void))

    with pytest.raises(kdsl.CompilationError, match=r"cannot be kl\.void"):
        kdsl.compile_to_ir(k, "*i32")


# --- kl.const ---------------------------------------------------------------------------------------
@kdsl.kernel
def _atomic_callee(p):
    kl.atomic_add(p, 1)


@kdsl.kernel
def _store_through_loop(x_ptr: kl.const, n):
    p = x_ptr
    for _ in range(n):
        p += 1
    kl.store(p, 1)


@kdsl.kernel
def _store_through_call(x_ptr: kl.const):
    _atomic_callee(kl.where(True, x_ptr, x_ptr) + 1)


@kdsl.kernel
def _store_direct(x_ptr: kl.const):
    kl.store(x_ptr + kl.arange(0, 4), 0)


@pytest.mark.parametrize("kernel, what", [(_store_direct, "kl.store"), (_store_through_loop, "kl.store"),
                                          (_store_through_call, "kl.atomic_add")])
def test_store_to_const_pointer_is_an_error(kernel: kdsl.KernelFunction, what: str) -> None:
    args = ["*i32", "i32"] if kernel is _store_through_loop else ["*i32"]
    with pytest.raises(kdsl.CompilationError, match=f"{what}: cannot store to a constant pointer"):
        kdsl.compile_to_ir(kernel, *args)


# --- TRITON_MAX_TENSOR_NUMEL ---------------------------------------------------------------------------
def test_tile_size_limit() -> None:
    @kdsl.kernel
    def at_limit(out_ptr):
        kl.store(out_ptr + kl.arange(0, kl.TRITON_MAX_TENSOR_NUMEL), 1.0)

    @kdsl.kernel
    def over(out_ptr, N: kl.constexpr):
        a = kl.arange(0, N)
        kl.store(out_ptr, kl.sum(a[:, None] + a[None, :]))

    @kdsl.kernel
    def histogram_intermediate(x_ptr, out_ptr):
        h = kl.histogram(kl.load(x_ptr + kl.arange(0, 4096)), 1024)  # (1024, 4096) inside kdsl's histogram
        kl.store(out_ptr + kl.arange(0, 1024), h)

    kdsl.compile_to_ir(at_limit, "*f32")
    kdsl.compile_to_ir(histogram_intermediate, "*i32", "*i32")
    with pytest.raises(kdsl.CompilationError, match=r"shape \(2048, 2048\) has 4194304 elements"):
        kdsl.compile_to_ir(over, "*i32", N=2048)


# --- target_info, constexpr_function, must_use_result ---------------------------------------------------
@kdsl.constexpr_function
def log2_of(n):
    return n.bit_length() - 1


@kdsl.kernel
def target_kernel(out_ptr, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    if kl.target_info.is_cuda() or kl.target_info.is_hip():
        kl.store(out_ptr + offs, -1)
    elif kl.target_info.cuda_capability_geq(9, 0) or kl.target_info.is_hip_cdna3() or kl.target_info.is_hip_cdna4():
        kl.store(out_ptr + offs, -2)
    else:
        kl.store(out_ptr + offs, offs * log2_of(BLOCK))
    kl.static_assert(kl.target_info.current_target().backend != "cuda")
    kl.static_assert(log2_of(BLOCK) == 3)


def test_target_info_and_constexpr_function(backend: str) -> None:
    out = np.zeros(8, np.int32)
    target_kernel[(1,)](out, BLOCK=8)
    np.testing.assert_array_equal(out, np.arange(8) * 3)
    assert kl.target_info.current_target().backend == backend
    assert log2_of(1024) == 10  # a plain function on the host
    assert not kl.target_info.is_cuda() and not kl.target_info.cuda_capability_geq(8)


def test_constexpr_function_refuses_runtime_values() -> None:
    @kdsl.kernel
    def k(out_ptr, n):
        kl.store(out_ptr, log2_of(n))

    with pytest.raises(kdsl.CompilationError, match="constexpr_function 'log2_of' takes compile-time arguments"):
        kdsl.compile_to_ir(k, "*i32", "i32")


@kdsl.must_use_result("Assign it.")
@kdsl.constexpr_function
def pure_helper(n):
    return n + 1


def test_must_use_result() -> None:
    @kdsl.kernel
    def dropped(out_ptr):
        pure_helper(3)
        kl.store(out_ptr, 0)

    @kdsl.kernel
    def advance_dropped(out_ptr):
        p = kl.make_block_ptr(out_ptr, (8,), (1,), (0,), (4,), (0,))
        kl.advance(p, (4,))
        kl.store(p, kl.zeros((4,), kl.int32))

    @kdsl.kernel
    def used(out_ptr):
        kl.store(out_ptr, pure_helper(3))

    with pytest.raises(kdsl.CompilationError, match=r"The result of pure_helper is not being used\. Assign it\."):
        kdsl.compile_to_ir(dropped, "*i32")
    with pytest.raises(kdsl.CompilationError, match=r"The result of kl\.advance is not being used"):
        kdsl.compile_to_ir(advance_dropped, "*i32")
    kdsl.compile_to_ir(used, "*i32")


# --- tensor members Triton adds with _tensor_member_fn -------------------------------------------------
@kdsl.kernel
def members_kernel(out_ptr, f_ptr, seed, BLOCK: kl.constexpr):
    offs = kl.arange(0, BLOCK)
    (out_ptr + offs).store(seed.randint(offs))  # Triton: x.store(v) is kl.store(x, v); seed.randint(o)
    a, _, _, _ = seed.randint4x(offs)
    (out_ptr + BLOCK + offs).store(a)
    (f_ptr + offs).store(seed.rand(offs))
    (f_ptr + BLOCK + offs).store(seed.randn(offs) * 0.0 + kl.randn(seed, offs))


def test_tensor_member_functions(backend: str) -> None:
    B, seed = 16, 42
    out = np.zeros(2 * B, np.uint32)
    f = np.zeros(2 * B, np.float32)
    members_kernel[(1,)](out, f, seed, BLOCK=B)
    o = np.arange(B, dtype=np.uint32)
    w = philox_np([o, np.zeros(B), np.zeros(B), np.zeros(B)], seed, 0)
    np.testing.assert_array_equal(out, np.concatenate([w[0], w[0]]))
    np.testing.assert_array_equal(f[:B], uniform_np(w[0]))
    u1, u2 = uniform_np(w[0]), uniform_np(w[1])
    r = np.sqrt(-2.0 * np.log(np.maximum(np.float32(1e-7), u1).astype(np.float64)))
    np.testing.assert_allclose(f[B:], r * np.cos(2 * np.pi * u2), atol=2e-5)


# --- host side: driver and testing -------------------------------------------------------------------
def test_driver_active(backend: str) -> None:
    from kdsl.runtime import driver

    target = driver.active.get_current_target()
    assert target.backend == backend and target.warp_size >= 1 and isinstance(target.arch, str)
    props = driver.active.utils.get_device_properties(driver.active.get_current_device())
    for key in ("multiprocessor_count", "max_shared_mem", "max_num_regs", "warpSize", "max_threads_per_sm"):
        assert isinstance(props[key], int) and props[key] >= 0
    assert props["multiprocessor_count"] >= 1 and props["warpSize"] == target.warp_size
    with pytest.raises(ValueError, match="one device"):
        driver.active.utils.get_device_properties(1)


def test_active_torch_device(backend: str) -> None:
    """Triton's tutorials start with ``DEVICE = driver.active.get_active_torch_device()``."""
    torch = pytest.importorskip("torch")
    from kdsl.runtime import driver

    device = driver.active.get_active_torch_device()
    assert device == torch.device("cpu")
    x = torch.arange(8, dtype=torch.float32, device=device)
    _double[(1,)](x, 8, BLOCK=8)
    assert x.tolist() == [2.0 * i for i in range(8)]


@kdsl.kernel
def _double(x, n, BLOCK: kl.constexpr):  # type: ignore[no-untyped-def]
    offs = kl.arange(0, BLOCK)
    kl.store(x + offs, kl.load(x + offs, mask=offs < n) * 2, mask=offs < n)


def test_testing_signatures_match_triton() -> None:
    p = inspect.signature(kdsl.testing.do_bench).parameters
    assert list(p)[:6] == ["fn", "warmup", "rep", "grad_to_none", "quantiles", "return_mode"]
    assert (p["warmup"].default, p["rep"].default, p["return_mode"].default) == (25, 100, "mean")
    assert list(inspect.signature(kdsl.testing.assert_close).parameters) == ["x", "y", "atol", "rtol", "err_msg"]
    b = list(inspect.signature(kdsl.testing.Benchmark).parameters)
    assert b[:7] == ["x_names", "x_vals", "line_arg", "line_vals", "line_names", "plot_name", "args"]


def test_triton_top_level_runtime_names() -> None:
    """Names Triton users reach for outside kernels: ``triton.JITFunction`` (isinstance checks that
    unwrap an autotuner's ``.fn``), ``triton.OutOfResources`` / ``triton.runtime.errors
    .OutOfResources`` (caught to skip a configuration; a kdsl CompilationError)."""
    import kdsl.runtime.errors

    @kdsl.jit
    def k(x):  # type: ignore[no-untyped-def]
        kl.store(x, 1.0)

    tuned = kdsl.autotune(configs=[kdsl.Config({})], key=[])(k)
    assert isinstance(k, kdsl.JITFunction) and isinstance(tuned.fn, kdsl.JITFunction)
    assert kdsl.OutOfResources is kdsl.runtime.errors.OutOfResources is kdsl.runtime.OutOfResources
    err = kdsl.OutOfResources(70000, 65536, "shared memory")
    assert isinstance(err, kdsl.CompilationError) and (err.required, err.limit, err.name) == (70000, 65536, "shared memory")
    assert "out of resource: shared memory, Required: 70000, Hardware limit: 65536" in str(err)
