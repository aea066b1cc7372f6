#!/usr/bin/env bash
# Set up a kdsl development environment; safe to run any number of times.
#
#   1. system packages (OpenCL/Vulkan CPU drivers, SPIR-V tools) via apt when run
#      as root on Debian; otherwise print the apt-get line to run;
#   2. a virtualenv in .venv made with the system python3 (>= 3.10);
#   3. `pip install -e '.[test]'`, skipped when a stamp says this exact
#      pyproject.toml is already installed (editable, from this checkout).
#
# A second run does no network access and takes well under a second.
# Environment: KDSL_PYTHON picks the interpreter used to create .venv;
# KDSL_VENV moves the virtualenv (default: .venv in the repository root).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
venv=${KDSL_VENV:-$root/.venv}

say() { printf 'setup: %s\n' "$*"; }

# --- 1. system packages -------------------------------------------------------
apt_packages=(pocl-opencl-icd ocl-icd-libopencl1 mesa-vulkan-drivers libvulkan1 spirv-tools spirv-headers vulkan-validationlayers)

missing_debs() {
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || printf '%s\n' "$p"
    done
}

pick_python() {
    # The first interpreter >= 3.10 among KDSL_PYTHON, python3, python3.1x, /usr/bin/python3.
    local c
    for c in ${KDSL_PYTHON:-} python3 python3.13 python3.12 python3.11 python3.10 /usr/bin/python3; do
        command -v "$c" >/dev/null 2>&1 || continue
        if "$c" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
            command -v "$c"
            return 0
        fi
    done
    return 1
}

python=$(pick_python) || { say "no python3 >= 3.10 found (install python3, or set KDSL_PYTHON)"; exit 1; }

# Debian's python3 needs python3-venv for `python3 -m venv` (ensurepip).
if [ ! -x "$venv/bin/python" ] && ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
    apt_packages+=(python3-venv)
fi

if command -v dpkg-query >/dev/null 2>&1; then
    mapfile -t missing < <(missing_debs "${apt_packages[@]}")
    if [ "${#missing[@]}" -eq 0 ]; then
        say "system packages present"
    elif [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        say "missing system packages (OpenCL/Vulkan backends will be skipped without them):"
        say "    sudo apt-get install ${missing[*]}"
    fi
else
    say "not a Debian system: install an OpenCL ICD (PoCL), a Vulkan driver (lavapipe) and spirv-tools yourself"
fi

# --- 2. virtualenv ------------------------------------------------------------
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
    say "creating $venv with $python ($("$python" -V 2>&1))"
    "$python" -m venv "$venv"
fi
vpy=$venv/bin/python

# --- 3. the package, editable, with test extras -------------------------------
# The stamp keys on pyproject.toml and the interpreter; the import check makes
# sure the editable install points at *this* checkout (a moved or cloned tree
# must reinstall).
stamp=$venv/.kdsl-setup-stamp
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $("$vpy" -V 2>&1) $root"
installed_here() {
    (cd / && "$vpy" - "$root" 2>/dev/null) <<'EOF'
import os, sys
import kdsl
sys.exit(os.path.dirname(os.path.dirname(os.path.abspath(kdsl.__file__))) != sys.argv[1])
EOF
}
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && installed_here; then
    say "python packages up to date ($vpy)"
else
    say "pip install -e '.[test]' into $venv"
    export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_PROGRESS_BAR=off
    # (This machine's pip.conf lists local package folders that may not exist;
    # pip warns once per package about each. Drop only those lines.)
    "$vpy" -m pip install -q -e "$root[test]" 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
    installed_here || { say "kdsl does not import from $root after install"; exit 1; }
    printf '%s' "$want" >"$stamp"
fi
say "ready: $vpy"
