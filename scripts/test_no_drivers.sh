#!/usr/bin/env bash
# Prove that kdsl's test suite passes with no OpenCL or Vulkan driver visible:
# the "cpu" (LLVM via llvmlite) and "interpreter" backends run everything, and
# the opencl/vulkan parametrisations skip with an install hint.
#
# How the drivers are hidden: OCL_ICD_VENDORS points the OpenCL ICD loader at
# an empty directory (no vendor .icd files -> zero platforms) and
# VK_ICD_FILENAMES / VK_DRIVER_FILES name no driver manifest (zero Vulkan
# devices). Run from anywhere; extra arguments go to pytest.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || PY="$(command -v python3)"

EMPTY="$(mktemp -d)"
CACHE="$(mktemp -d)"
trap 'rm -rf "$EMPTY" "$CACHE"' EXIT

export OCL_ICD_VENDORS="$EMPTY"
export OCL_ICD_FILENAMES=""
export VK_ICD_FILENAMES="$EMPTY/none.json"
export VK_DRIVER_FILES="$EMPTY/none.json"
export KDSL_CACHE_DIR="$CACHE"
unset KDSL_BACKEND || true

cd "$ROOT"
"$PY" - <<'PYEOF'
import kdsl
from kdsl.runtime import backends
names = kdsl.available_backends()
print("available backends without drivers:", names)
for gone in ("opencl", "vulkan"):
    ok, why = backends.availability(gone)
    assert not ok, f"{gone} should be unavailable with no driver visible"
    print(f"  {gone}: unavailable ({why})")
PYEOF

"$PY" -m pytest -p no:cacheprovider tests/cpu tests/semantic -k "cpu or interpreter" "$@"
