"""The public ``kdsl`` namespace."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import kdsl


@pytest.mark.parametrize(("n", "expected"), [(-3, 0), (0, 0), (1, 1), (2, 2), (3, 4), (16, 16), (17, 32), (1000, 1024), (2**40 + 1, 2**41)])
def test_next_power_of_2(n: int, expected: int) -> None:
    assert kdsl.next_power_of_2(n) == expected


@pytest.mark.parametrize(("x", "y"), [(0, 4), (1, 4), (4, 4), (5, 4), (1000, 128), (-3, 2)])
def test_cdiv(x: int, y: int) -> None:
    assert kdsl.cdiv(x, y) == -(-x // y)


def test_config_is_a_frozen_hashable_dataclass() -> None:
    c = kdsl.Config({"BLOCK": 128}, num_warps=4)
    assert c.kwargs == {"BLOCK": 128} and c.num_threads == 0 and c.num_stages == 3  # Triton's defaults
    assert hash(c) == hash(kdsl.Config({"BLOCK": 128}, num_warps=4))
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.num_threads = 3  # type: ignore[misc]
    assert c.all_kwargs() == {"BLOCK": 128, "num_warps": 4, "num_ctas": 1, "num_stages": 3}


def test_config_takes_tritons_positional_order() -> None:
    c = kdsl.Config({"BLOCK": 64}, 8, 2, 1, 128)  # kwargs, num_warps, num_stages, num_ctas, maxnreg
    assert (c.num_warps, c.num_stages, c.num_ctas, c.maxnreg) == (8, 2, 1, 128)
    assert c.all_kwargs() == {"BLOCK": 64, "num_warps": 8, "num_ctas": 1, "num_stages": 2, "maxnreg": 128}
    assert kdsl.Config.from_json(c.to_json()) == c
    with pytest.raises(ValueError, match="ir_override"):
        kdsl.Config({"BLOCK": 64}, ir_override="k.ttgir")


def test_public_names() -> None:
    for name in ("kernel", "jit", "cdiv", "next_power_of_2", "Config", "available_backends", "set_backend",
                 "backend", "CompilationError", "LaunchError", "KernelRuntimeError", "compile_to_ir"):
        assert hasattr(kdsl, name), name
    assert kdsl.jit is kdsl.kernel


def test_decorator_forms_keep_metadata() -> None:
    def f(x_ptr):
        """doc"""

    k1 = kdsl.kernel(f)
    k2 = kdsl.kernel(debug=True, do_not_specialize=[0])(f)
    assert isinstance(k1, kdsl.KernelFunction) and isinstance(k2, kdsl.KernelFunction)
    assert k1.__name__ == "f" and k1.__doc__ == "doc" and k2.debug is True
    assert "kdsl.kernel" in repr(k1)


def test_compile_to_ir_optimize_flag() -> None:
    from kdsl.ir.printer import print_op

    from . import fe_kernels as K

    f = np.zeros(4, np.float32)
    raw = print_op(kdsl.compile_to_ir(K.call_helper, f, f, BLOCK=4))
    opt = print_op(kdsl.compile_to_ir(K.call_helper, f, f, BLOCK=4, optimize=True))
    assert "tile.call" in raw and "tile.call" not in opt
    with pytest.raises(TypeError):
        kdsl.compile_to_ir(lambda: None)  # type: ignore[arg-type]
