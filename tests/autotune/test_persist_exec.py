"""Persistence across processes, invalidation, executors (process pool, Dask)."""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing as mp
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import kdsl
from kdsl.autotune import Config, autotune, list_databases, use_executor

from . import at_kernels as K

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import kdsl, kdsl.language as kl
    from kdsl.autotune import Config, autotune

    BLOCKS = [int(b) for b in sys.argv[1].split(",")]

    @autotune(configs=[Config({"BLOCK": b}) for b in BLOCKS], key=["n"], warmup=0.5, rep=2, max_repeats=3)
    @kdsl.kernel
    def add(x, y, out, n, BLOCK: kl.constexpr):
        offs = kl.program_id(0) * BLOCK + kl.arange(0, BLOCK)
        m = offs < n
        kl.store(out + offs, kl.load(x + offs, mask=m) + kl.load(y + offs, mask=m)OP, mask=m)

    with kdsl.backend("interpreter"):
        x = np.ones(100, np.float32)
        out = np.zeros_like(x)
        add[lambda meta: (kdsl.cdiv(100, meta["BLOCK"]),)](x, x, out, 100)
    print(json.dumps({"trials": add.trials, "best": add.best_config.kwargs, "out": float(out[0])}))
    """
)


def run_script(path: Path, blocks: str) -> dict[str, object]:
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, str(path), blocks], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_results_persist_across_processes_and_invalidate_on_source_change(tmp_path: Path) -> None:
    script = tmp_path / "tune_me.py"
    script.write_text(SCRIPT.replace("OP", ""))
    assert run_script(script, "32,64")["trials"] == 2
    assert run_script(script, "32,64")["trials"] == 0  # every config known: no launch to time
    assert run_script(script, "32,64,128")["trials"] == 1  # only the new config is timed
    script.write_text(SCRIPT.replace("OP", " * 2.0"))  # the kernel changed: old results are not used
    again = run_script(script, "32,64,128")
    assert again["trials"] == 3 and again["out"] == 3.0
    stored = list_databases()
    assert len(stored) == 2 and all(d["kernel"].endswith("add") for d in stored)


def test_database_merges_concurrent_writers(tmp_path: Path) -> None:
    from kdsl.autotune.database import TuningDatabase

    def writer(i: int) -> None:
        db = TuningDatabase("k", "src", "dev", root=tmp_path)
        db.record("key", {}, {f"cfg{i}": {"ms": float(i), "reason": ""}}, None)

    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=writer, args=(i,)) for i in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    got = TuningDatabase("k", "src", "dev", root=tmp_path).lookup("key")
    assert sorted(got) == [f"cfg{i}" for i in range(6)]
    assert not list(tmp_path.glob(".tmp-*"))


def _tune_add(**kw: object) -> tuple[object, np.ndarray]:
    at = autotune(configs=[Config({"BLOCK": b}) for b in (32, 64, 128)], key=["n"], warmup=0.5, rep=2,
                  max_repeats=3, persist=False, **kw)(K.add_kernel)
    x = np.arange(200, dtype=np.float32)
    out = np.zeros_like(x)
    at[lambda meta: (kdsl.cdiv(200, meta["BLOCK"]),)](x, x, out, 200)
    return at, out


def test_executor_argument_with_a_process_pool() -> None:
    with cf.ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as pool:
        at, out = _tune_add(executor=pool, timeout=60)
    assert at.trials == 3 and len(at.configs_timings) == 3 and not at.rejected  # type: ignore[attr-defined]
    np.testing.assert_allclose(out, 2 * np.arange(200))


def test_use_executor_context_manager() -> None:
    with cf.ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as pool, use_executor(pool):
        at, out = _tune_add(timeout=60)
    assert len(at.configs_timings) == 3  # type: ignore[attr-defined]
    np.testing.assert_allclose(out, 2 * np.arange(200))


def test_dask_local_cluster() -> None:
    distributed = pytest.importorskip("dask.distributed", reason="dask[distributed] is not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        at, out = _tune_add(executor=client, timeout=120)
        pids = client.run(os.getpid)
    assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()
    assert len(at.configs_timings) == 3 and not at.rejected  # type: ignore[attr-defined]
    np.testing.assert_allclose(out, 2 * np.arange(200))
