"""Compiler knobs as launch options: pass options reach the pipeline, backends declare lowering knobs.

The autotuner's declared space is only useful if every knob in it changes the
compiled kernel: these tests launch with ``"pass.option"`` and ``"lower.*"``
options and check the optimised IR, the compile cache and the results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kdsl
from kdsl.autotune import Config, autotune
from kdsl.autotune.space import backend_knobs, tunable_space
from kdsl.runtime.backends import resolve_backend
from kdsl.runtime.cache import DiskCache
from kdsl.transforms import default_pipeline
from kdsl.transforms.base import PassError

from . import at_kernels as K


def final_ir(dump_dir: Path) -> str:
    """The IR after the last pass of the one compilation dumped into ``dump_dir``."""
    files = sorted(dump_dir.glob("*.mlir"))
    assert files, f"nothing dumped into {dump_dir}"
    return files[-1].read_text()


def loop_inputs() -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    x = np.arange(64, dtype=np.float32)
    return x, x.reshape(4, 16).sum(axis=0)


def test_default_pipeline_takes_pass_options() -> None:
    pm = default_pipeline(options={"unroll.max-trip": 0, "mask-elim.branch-uniform": False})
    by_name = {p.name: p for p in pm.passes}
    assert by_name["unroll"].options["max-trip"] == 0 and by_name["mask-elim"].options["branch-uniform"] is False
    assert "unroll{max-trip=0}" in str(pm)
    with pytest.raises(PassError, match="no pass 'nope'"):
        default_pipeline(options={"nope.x": 1})
    with pytest.raises(PassError, match="expects int"):
        default_pipeline(options={"unroll.max-trip": "8"})


def test_pass_option_at_launch_changes_the_optimised_ir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    x, want = loop_inputs()
    before = len(K.loop_sum_kernel.cache)
    for name, opts in (("default", {}), ("rolled", {"unroll.max-trip": 0})):
        monkeypatch.setenv("KDSL_DUMP", str(tmp_path / name))
        out = np.zeros(16, np.float32)
        K.loop_sum_kernel[(1,)](x, out, BLOCK=16, STEPS=4, **opts)
        np.testing.assert_allclose(out, want)
    assert "scf.for" not in final_ir(tmp_path / "default")  # 4 <= max-trip 8: unrolled
    assert "scf.for" in final_ir(tmp_path / "rolled")
    # the option is part of the compile-cache key: two entries, and each launch finds its own
    assert len(K.loop_sum_kernel.cache) == before + 2
    monkeypatch.setenv("KDSL_DUMP", str(tmp_path / "again"))
    out = np.zeros(16, np.float32)
    K.loop_sum_kernel[(1,)](x, out, BLOCK=16, STEPS=4, **{"unroll.max-trip": 0})
    np.testing.assert_allclose(out, want)
    assert not (tmp_path / "again").exists() and len(K.loop_sum_kernel.cache) == before + 2
    # and of the disk-cache key: two entries, whose stored optimised IR differs the same way
    disk = DiskCache()
    opt_irs = [(disk.entry_dir(k) / "opt.mlir").read_text() for k in disk.entry_keys()]
    assert len(opt_irs) == 2 and sorted("scf.for" in t for t in opt_irs) == [False, True]


@pytest.mark.parametrize("name", ["cpu", "opencl"])
def test_pass_option_reaches_the_native_backends(name: str) -> None:
    if name not in kdsl.available_backends():
        pytest.skip(f"backend {name!r} unavailable")
    x, want = loop_inputs()
    with kdsl.backend(name):
        for trip in (0, 16):
            out = np.zeros(16, np.float32)
            K.loop_sum_kernel[(1,)](x, out, BLOCK=16, STEPS=4, **{"unroll.max-trip": trip, "loop-split.max-body-ops": 0})
            np.testing.assert_allclose(out, want)


def test_config_options_reach_the_compiler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    x, want = loop_inputs()
    before = len(K.loop_sum_kernel.cache)
    at = autotune(configs=[Config({"STEPS": 4}, options={"unroll.max-trip": t}) for t in (2, 16)], key=[],
                  warmup=0.5, rep=1, max_repeats=2, persist=False, compile_workers=1)(K.loop_sum_kernel)
    out = np.zeros(16, np.float32)
    at[(1,)](x, out, BLOCK=16)
    np.testing.assert_allclose(out, want)
    assert len(at.configs_timings) == 2 and not at.rejected
    assert len(K.loop_sum_kernel.cache) == before + 2  # one compiled kernel per option value


@pytest.mark.parametrize(
    ("option", "value", "match"),
    [
        ("unrol.max-trip", 0, "no pass 'unrol' in the pipeline"),
        ("unroll.max-trp", 0, "pass 'unroll' has no option 'max-trp'"),
        ("unroll.max-trip", "4", "option 'max-trip' expects int"),
        ("mask-elim.branch-uniform", 1, "expects bool"),
        ("lower.vector_widht", 4, "unknown lowering knob"),
        ("lower.dot_block_m", 0, "must be a positive int"),
        ("lower.prefetch", -1, "must be an int >= 0"),
        ("lower.prefetch", True, "must be an int >= 0"),
    ],
)
def test_unknown_or_mistyped_knob_is_a_launch_error(option: str, value: Any, match: str) -> None:
    x, _ = loop_inputs()
    with pytest.raises(kdsl.LaunchError, match=match) as info:
        K.loop_sum_kernel[(1,)](x, np.zeros(16, np.float32), BLOCK=16, STEPS=4, **{option: value})
    assert info.value.param == option and f"'{option}'" in str(info.value)


def test_config_with_a_bad_option_is_discarded_with_the_reason() -> None:
    x, want = loop_inputs()
    at = autotune(configs=[Config({"STEPS": 4}, options={"unroll.max-trip": 1}),
                           Config({"STEPS": 4}, options={"unroll.bogus": 1})],
                  warmup=0.5, rep=1, max_repeats=2, persist=False)(K.loop_sum_kernel)
    out = np.zeros(16, np.float32)
    at[(1,)](x, out, BLOCK=16)
    np.testing.assert_allclose(out, want)
    assert at.best_config is not None and at.best_config.options == {"unroll.max-trip": 1}
    [(bad, reason)] = at.rejected
    assert bad.options == {"unroll.bogus": 1} and "no option 'bogus'" in reason


# --- lowering knobs declared by the backends ------------------------------------------------
def matmul_inputs(n: int = 32) -> tuple[np.ndarray[Any, Any], ...]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    return a, b, a @ b


def one_at_a_time(subspaces: list[dict[str, tuple[Any, ...]]]) -> list[dict[str, Any]]:
    """Every value of every declared knob once, the other knobs of its product at their defaults."""
    out: list[dict[str, Any]] = []
    for sub in subspaces:
        base = {k: v[0] for k, v in sub.items()}
        for k, values in sub.items():
            out += [{**base, k: v} for v in values if {**base, k: v} not in out]
    return out


@pytest.mark.parametrize("name", ["cpu", "opencl"])
def test_declared_lowering_knobs_compile_and_run(name: str) -> None:
    if name not in kdsl.available_backends():
        pytest.skip(f"backend {name!r} unavailable")
    a, b, want = matmul_inputs()
    with kdsl.backend(name):
        backend = resolve_backend()
        subspaces = backend_knobs(backend)
        keys = set().union(*subspaces)
        assert {"lower.vector_width", "lower.dot_block_m", "lower.dot_block_n"} <= keys
        if name == "opencl":
            assert set(subspaces[0]["lower.vector_width"]) == {4, 8, 16}
        space = tunable_space(backend)
        assert len(space) >= 100 and any("unroll.max-trip" in c.options for c in space)
        assert space[0].options["unroll.max-trip"] == 8  # config 0 is the untuned kernel: defaults first
        for opts in one_at_a_time(subspaces):
            c = np.zeros_like(want)
            K.matmul_kernel[(4,)](a, b, c, 32, 32, 32, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, **opts)
            np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4, err_msg=str(opts))


def test_vulkan_declares_only_what_it_honours() -> None:
    if "vulkan" not in kdsl.available_backends():
        pytest.skip("backend 'vulkan' unavailable")
    a, b, want = matmul_inputs(16)
    with kdsl.backend("vulkan"):
        backend = resolve_backend()
        [sub] = backend_knobs(backend)
        assert set(sub) == {"num_threads", "lower.chunk"}
        assert max(sub["num_threads"]) <= backend.target().max_workgroup_size
        c = np.zeros_like(want)
        K.matmul_kernel[(1,)](a, b, c, 16, 16, 16, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, num_threads=32,
                              **{"lower.chunk": 2})
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


def test_default_space_tunes_a_matmul_end_to_end() -> None:
    name = next((n for n in ("cpu", "opencl") if n in kdsl.available_backends()), None)
    if name is None:
        pytest.skip("no native backend")
    a, b, want = matmul_inputs()
    with kdsl.backend(name):
        at = autotune(key=["M"], search="guided", max_trials=3, warmup=1, rep=2, max_repeats=3,
                      persist=False)(K.matmul_kernel)
        c = np.zeros_like(want)
        at[(4,)](a, b, c, 32, 32, 32, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
        assert at.best_config in at.candidate_configs() and at.trials == 3 and not at.rejected
        assert any(k.startswith("lower.") for k in at.best_config.options)
