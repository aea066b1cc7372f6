#!/usr/bin/env bash
# Static checks: ruff (lint rules from pyproject.toml) and mypy --strict on kdsl/
#
# Runs every check even when an earlier one fails, then exits non-zero if any
# failed, so one run shows everything to fix. `scripts/lint.sh --fix` applies
# ruff's safe fixes and formatting first. Uses the tools in .venv (scripts/setup.sh).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin=${KDSL_VENV:-$root/.venv}/bin
paths=(kdsl tests bench)
existing=()
for p in "${paths[@]}"; do [ -e "$p" ] && existing+=("$p"); done

if [ "${1:-}" = "--fix" ]; then
    "$bin/ruff" check --fix "${existing[@]}"
    "$bin/ruff" format "${existing[@]}"
fi

failed=()
run() {
    local name=$1; shift
    printf 'lint: %s\n' "$name"
    "$@" || failed+=("$name")
}

run "ruff check" "$bin/ruff" check --output-format concise "${existing[@]}"
# ruff format is applied by `make fix`; not enforced yet (the tree predates the formatter config).
run "mypy --strict kdsl" "$bin/mypy" kdsl

if [ "${#failed[@]}" -gt 0 ]; then
    printf 'lint: FAILED: %s\n' "${failed[@]}"
    exit 1
fi
printf 'lint: all checks passed\n'
