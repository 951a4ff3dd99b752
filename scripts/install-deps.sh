#!/usr/bin/env bash
# Installs what hotkernel's build, example and tests need on Debian 12, idempotently:
# a second run installs nothing. Parts: build, python (Debian's torch 1.13), torch2 (a venv
# with a current torch, triton and cuobjdump from PyPI), node (the MCP TypeScript test client),
# mcp-python (a venv with the official MCP Python SDK client), fuzz (clang), shells (bash, zsh, fish
# and man, which the completion and man page tests drive), wheel (a venv with scikit-build-core,
# auditwheel and uv: scripts/build-wheel and the wheel's smoke test), slurm (Debian 12's Slurm
# 22.05.8 with munge 0.5.15, slurmdbd and MariaDB's server core 10.11 for sacct: the real
# single-node cluster scripts/slurm-up starts for tests/scale/test_slurm.py; 15 packages, ~15 s;
# never started by apt here, as Debian's policy-rc.d and the lack of systemd see to).
# Usage: scripts/install-deps.sh [build] [python] [torch2] [node] [mcp-python] [fuzz] [shells] [wheel] [slurm]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(build python torch2 node mcp-python fuzz shells wheel slurm)
want() { local p; for p in "${parts[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }

TORCH2_VENV=${HOTKERNEL_TORCH2_VENV:-/opt/hotkernel-dev/torch2}
MCP_PY_VENV=${HOTKERNEL_MCP_PY_VENV:-/opt/hotkernel-dev/mcp-sdk}
WHEEL_VENV=${HOTKERNEL_WHEEL_VENV:-/opt/hotkernel-dev/wheel}
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"

apt_pkgs=()
want build && apt_pkgs+=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev libfmt-dev
                         libgtest-dev libgmock-dev libboost-dev libssl-dev libcairo2-dev fonts-dejavu-core python3
                         python3-pytest ccache git)
want python && apt_pkgs+=(python3-torch python3-numpy python3-pytest)
want torch2 && apt_pkgs+=(python3-venv binutils)
want mcp-python && apt_pkgs+=(python3-venv)
want wheel && apt_pkgs+=(python3-venv)
want node && ! command -v npm >/dev/null && apt_pkgs+=(nodejs npm)
want fuzz && apt_pkgs+=(clang libclang-rt-14-dev)
want shells && apt_pkgs+=(bash zsh fish man-db groff-base)
# mariadb-server (not -core) would upgrade perl, which no purge undoes (reference/scale.md §3.6).
want slurm && apt_pkgs+=(slurmctld slurmd slurm-client munge slurmdbd slurm-wlm-mysql-plugin mariadb-server-core
                         mariadb-client-core)

missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}" >&2
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if want torch2; then
  if ! "$TORCH2_VENV/bin/python" -c "import torch, triton" 2>/dev/null; then
    echo "install-deps: creating $TORCH2_VENV (torch, triton, cuobjdump from PyPI; a few GB)" >&2
    $SUDO mkdir -p "$(dirname "$TORCH2_VENV")"
    $SUDO /usr/bin/python3 -m venv "$TORCH2_VENV"
    $SUDO "$TORCH2_VENV/bin/pip" install -q --disable-pip-version-check -r scripts/requirements-torch2.txt
  fi
fi

# pytest-xdist for the python3 the tests run under (two workers on the CPU suites): pip for a
# python3 that manages its own packages (pyenv, a venv), Debian's package for /usr/bin/python3.
if want python && ! python3 -c "import xdist" 2>/dev/null; then
  if [ "$(command -v python3)" = /usr/bin/python3 ]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends python3-pytest-xdist
  else
    python3 -m pip install -q --disable-pip-version-check pytest-xdist==3.8.0 execnet==2.1.2
  fi
fi

# jsonschema for the python3 the tests run under (the export tests validate files against the
# formats' published schemas).
if want python && ! python3 -c "import jsonschema" 2>/dev/null; then
  if [ "$(command -v python3)" = /usr/bin/python3 ]; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends python3-jsonschema
  else
    python3 -m pip install -q --disable-pip-version-check jsonschema==4.26.0 jsonschema-specifications==2025.9.1 \
      referencing==0.37.0 rpds-py==0.30.0 attrs==26.1.0 typing_extensions==4.15.0
  fi
fi

if want node; then
  if [ ! -d tests/mcp/node_modules/@modelcontextprotocol/sdk ]; then
    echo "install-deps: npm install in tests/mcp (from the committed package-lock.json)" >&2
    (cd tests/mcp && npm install --no-audit --no-fund --loglevel=error)
  fi
fi

if want mcp-python; then
  want_mcp=$(grep -E '^mcp==' scripts/requirements-mcp-python.txt)
  if [ "$("$MCP_PY_VENV/bin/python" -m pip freeze --disable-pip-version-check 2>/dev/null | grep -E '^mcp==')" != "$want_mcp" ]; then
    echo "install-deps: creating $MCP_PY_VENV (the MCP Python SDK client, $want_mcp, from PyPI)" >&2
    $SUDO mkdir -p "$(dirname "$MCP_PY_VENV")"
    $SUDO /usr/bin/python3 -m venv "$MCP_PY_VENV"
    $SUDO "$MCP_PY_VENV/bin/pip" install -q --disable-pip-version-check -r scripts/requirements-mcp-python.txt
  fi
fi

if want wheel; then
  if ! cmp -s scripts/requirements-wheel.txt "$WHEEL_VENV/requirements.txt"; then
    echo "install-deps: creating $WHEEL_VENV (scikit-build-core, auditwheel, uv from PyPI)" >&2
    $SUDO rm -rf "$WHEEL_VENV"
    $SUDO mkdir -p "$(dirname "$WHEEL_VENV")"
    $SUDO /usr/bin/python3 -m venv "$WHEEL_VENV"
    $SUDO "$WHEEL_VENV/bin/pip" install -q --disable-pip-version-check -r scripts/requirements-wheel.txt
    $SUDO cp scripts/requirements-wheel.txt "$WHEEL_VENV/requirements.txt"
  fi
fi
