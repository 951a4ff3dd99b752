#!/bin/sh
# GPU check of the speed figures: calibrate, timer fidelity, time to verdict on real kernels, A/A
# stability, through the real binary (bench/speed.py --gpu). Prints what it measured; exits
# non-zero on failure; skips (exit 0, with a message) when there is no GPU.
# Usage: tests/gpu/check_speed.sh [--bin build/hotkernel] [--python /path/to/python] [--aa-runs 20]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$(dirname "$here")")
py=${HOTKERNEL_PYTHON:-python3}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "check_speed: SKIP: no NVIDIA GPU here (nvidia-smi missing or failing)"
    exit 0
fi
if ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "check_speed: SKIP: $py has no CUDA torch (set HOTKERNEL_PYTHON)"
    exit 0
fi
exec python3 "$root/bench/speed.py" --no-cpu --gpu --python "$py" "$@"
