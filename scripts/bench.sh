#!/usr/bin/env bash
# Run every benchmark script bench/bench_*.py in turn, passing the arguments on
# (e.g. --backend NAME). Each script prints its own table of ratios against its
# baselines; see bench/README.md. Exits non-zero if any script failed.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
py=${KDSL_VENV:-$root/.venv}/bin/python

shopt -s nullglob
scripts=(bench/bench_*.py)
if [ "${#scripts[@]}" -eq 0 ]; then
    echo "bench: no benchmark scripts (bench/bench_*.py) yet"
    exit 0
fi
failed=0
for s in "${scripts[@]}"; do
    echo "== $s"
    "$py" "$s" "$@" || { echo "bench: $s FAILED"; failed=1; }
done
exit "$failed"
