"""Argument binding, grids and launch options."""

from __future__ import annotations

import numpy as np
import pytest

import kdsl
import kdsl.language as kl
from kdsl.errors import LaunchError

from . import fe_kernels as K


def _arrays(n: int = 100) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.arange(n, dtype=np.float32)
    return x, x * 2, np.zeros(n, np.float32)


def test_keyword_and_positional_binding() -> None:
    x, y, out = _arrays()
    K.vector_add[(4,)](x, y_ptr=y, out_ptr=out, n=100, BLOCK=32)
    np.testing.assert_array_equal(out, x + y)


def test_missing_argument_names_the_parameter() -> None:
    x, y, out = _arrays()
    with pytest.raises(LaunchError) as info:
        K.vector_add[(1,)](x, y, out, BLOCK=32)
    assert info.value.param == "n"
    assert "vector_add" in str(info.value)


def test_missing_constexpr() -> None:
    x, y, out = _arrays()
    with pytest.raises(LaunchError) as info:
        K.vector_add[(1,)](x, y, out, 100)
    assert info.value.param == "BLOCK"
    assert "constexpr" in str(info.value)


def test_too_many_arguments() -> None:
    x, y, out = _arrays()
    with pytest.raises(LaunchError, match="takes 5 arguments but 6 were given"):
        K.vector_add[(1,)](x, y, out, 100, 32, 7)


def test_unknown_keyword() -> None:
    x, y, out = _arrays()
    with pytest.raises(LaunchError) as info:
        K.vector_add[(1,)](x, y, out, 100, BLOCK=32, BLOK=3)
    assert info.value.param == "BLOK"


def test_duplicate_argument() -> None:
    x, y, out = _arrays()
    with pytest.raises(LaunchError) as info:
        K.vector_add[(1,)](x, y, out, 100, n=100, BLOCK=32)
    assert info.value.param == "n"


@pytest.mark.parametrize("grid", [(-1,), (1.5,), (1, 2, 3, 4), (), "x", (True,)])
def test_bad_grid(grid: object) -> None:
    x, y, out = _arrays()
    with pytest.raises(LaunchError) as info:
        K.vector_add[grid](x, y, out, 100, BLOCK=32)
    assert info.value.param == "grid"


def test_zero_grid_does_nothing() -> None:
    x, y, out = _arrays()
    K.vector_add[(0,)](x, y, out, 100, BLOCK=32)
    assert not out.any()


def test_callable_grid_sees_all_named_arguments() -> None:
    x, y, out = _arrays(1000)
    seen: dict[str, object] = {}

    def grid(meta: dict[str, object]) -> tuple[int]:
        seen.update(meta)
        return (kdsl.cdiv(meta["n"], meta["BLOCK"]),)  # type: ignore[arg-type]

    K.vector_add[grid](x, y, out, 1000, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)
    assert seen["BLOCK"] == 128 and seen["n"] == 1000 and seen["x_ptr"] is x


def test_int_grid_and_launch_options() -> None:
    x, y, out = _arrays(64)
    K.vector_add[2](x, y, out, 64, BLOCK=32, num_warps=4, num_stages=2, num_threads=64)
    np.testing.assert_array_equal(out, x + y)
    out[:] = 0  # Triton's other GPU launch options are accepted and change nothing
    K.vector_add[2](x, y, out, 64, BLOCK=32, num_ctas=1, maxnreg=128, enable_fp_fusion=False,
                    launch_cooperative_grid=False)  # fmt: skip
    np.testing.assert_array_equal(out, x + y)
    out[:] = 0  # and Triton's AMD ones (tutorial 03's non-CUDA autotuning configurations)
    K.vector_add[2](x, y, out, 64, BLOCK=32, waves_per_eu=2, matrix_instr_nonkdim=16, kpack=2,
                    schedule_hint="none")  # fmt: skip
    np.testing.assert_array_equal(out, x + y)


def test_default_arguments_apply() -> None:
    @kdsl.kernel
    def fill(out_ptr, value=3.0, BLOCK: kl.constexpr = 8):
        kl.store(out_ptr + kl.arange(0, BLOCK), kl.full((BLOCK,), value, kl.float32))

    out = np.zeros(8, np.float32)
    fill[(1,)](out)
    np.testing.assert_array_equal(out, 3.0)


def test_calling_a_kernel_directly_is_an_error() -> None:
    with pytest.raises(LaunchError, match=r"kernel\[grid\]") as info:
        K.vector_add(1, 2)
    assert isinstance(info.value, RuntimeError)  # Triton's exception type


def test_dlpack_and_array_interface_arguments_are_views() -> None:
    class ArrayLike:
        def __init__(self, a: np.ndarray) -> None:
            self.a = a
            self.__array_interface__ = a.__array_interface__

    x, y, out = _arrays(32)
    wrapped = ArrayLike(out)
    K.vector_add[(1,)](x, y, wrapped, 32, BLOCK=32)
    np.testing.assert_array_equal(out, x + y)  # written through the view, no copy

    class DLPackOnly:
        def __init__(self, a: np.ndarray) -> None:
            self.a = a

        def __dlpack__(self, **kw: object) -> object:
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self) -> tuple[int, int]:
            return self.a.__dlpack_device__()

    out2 = np.zeros(32, np.float32)
    K.vector_add[(1,)](x, y, DLPackOnly(out2), 32, BLOCK=32)
    np.testing.assert_array_equal(out2, x + y)


def test_torch_tensors_that_require_grad_are_views(backend: str) -> None:
    """Tutorial 05's autograd.Function hands its kernels the parameters themselves (requires_grad
    set), which torch will not export through DLPack; the kernel works on their storage, as
    Triton's ``data_ptr()`` does, reading and writing without a copy."""
    torch = pytest.importorskip("torch", reason="needs torch (pip install torch)")
    x = torch.arange(32, dtype=torch.float32, requires_grad=True)
    y = torch.ones(32, dtype=torch.float32)
    out = torch.zeros(32, dtype=torch.float32, requires_grad=True)
    K.vector_add[(1,)](x, y, out, 32, BLOCK=32)
    np.testing.assert_array_equal(out.detach().numpy(), np.arange(32, dtype=np.float32) + 1)
    assert x.requires_grad and out.requires_grad and x.grad is None


def test_unsupported_argument_type() -> None:
    x, y, out = _arrays()
    with pytest.raises(LaunchError) as info:
        K.vector_add[(1,)](x, y, out, object(), BLOCK=32)
    assert info.value.param == "n"


def test_integer_too_large() -> None:
    x, y, out = _arrays()
    with pytest.raises(LaunchError) as info:
        K.vector_add[(1,)](x, y, out, 2**64, BLOCK=32)
    assert info.value.param == "n"


def test_none_argument_is_a_constant() -> None:
    @kdsl.kernel
    def maybe(out_ptr, bias_ptr):
        v = 1.0
        if bias_ptr is not None:
            v = kl.load(bias_ptr)
        kl.store(out_ptr, v)

    out = np.zeros(1, np.float32)
    maybe[(1,)](out, None)
    assert out[0] == 1.0
    maybe[(1,)](out, np.array([5.0], np.float32))
    assert out[0] == 5.0
