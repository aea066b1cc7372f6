"""kdsl.testing: do_bench and perf_report basic properties."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kdsl.testing import Benchmark, do_bench, last_level_cache_bytes, perf_report
from kdsl.testing.timing import flush_bytes


def test_do_bench_measures_sleep_and_counts_by_budget() -> None:
    calls = []

    def fn() -> None:
        calls.append(1)
        time.sleep(0.002)

    ms = do_bench(fn, warmup=4, rep=20)
    assert 1.9 <= ms < 20
    assert 6 + 1 + 1 <= len(calls) <= 6 + 4 + 15  # 1 + 5 estimate + ~warmup/2ms + ~rep/2ms


def test_do_bench_return_modes_and_quantiles() -> None:
    samples = do_bench(lambda: time.sleep(0.001), warmup=1, rep=10, return_mode="all")
    assert isinstance(samples, list) and len(samples) >= 1 and all(s > 0 for s in samples)
    q = do_bench(lambda: None, warmup=1, rep=2, quantiles=[0.5, 0.2, 0.8])
    assert isinstance(q, list) and len(q) == 3 and q[1] <= q[0] <= q[2]
    one = do_bench(lambda: None, warmup=1, rep=2, quantiles=[0.5])
    assert isinstance(one, float)
    lo = do_bench(lambda: time.sleep(0.001), warmup=1, rep=5, return_mode="min")
    hi = do_bench(lambda: time.sleep(0.001), warmup=1, rep=5, return_mode="max")
    assert lo > 0 and hi > 0
    with pytest.raises(ValueError):
        do_bench(lambda: None, return_mode="fastest")


def test_grad_to_none_and_flush_size(monkeypatch: pytest.MonkeyPatch) -> None:
    class T:
        grad: object = 1

    t = T()
    do_bench(lambda: None, warmup=1, rep=1, grad_to_none=[t])
    assert t.grad is None
    assert last_level_cache_bytes() >= 1 << 20
    monkeypatch.delenv("KDSL_BENCH_FLUSH_BYTES")
    assert flush_bytes() == last_level_cache_bytes()


def test_perf_report_table_csv_png(tmp_path: Path) -> None:
    @perf_report(Benchmark(x_names=["n"], x_vals=[1, 2, 4], line_arg="p", line_vals=["a", "b"],
                           line_names=["A", "B"], styles=[("blue", "-"), ("green", "--")], ylabel="ms",
                           plot_name="toy", args={"k": 10}, x_log=True))
    def bench(n: int, p: str, k: int) -> tuple[float, float, float]:
        v = float(n * k if p == "a" else n)
        return v, v - 1, v + 1

    table = bench.run(print_data=True, save_path=str(tmp_path))
    assert table.column("A") == [10.0, 20.0, 40.0] and table.column("B-max") == [2.0, 3.0, 5.0]
    assert (tmp_path / "toy.png").stat().st_size > 1000
    assert (tmp_path / "toy.csv").read_text().splitlines()[0] == "n,A,A-min,A-max,B,B-min,B-max"
