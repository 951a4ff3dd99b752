#!/bin/sh
# hotkernel's speed and fidelity figures: per-run overhead fresh vs warm, time to
# verdict, CLI start-up and MCP round trip; with --gpu also calibration, timer fidelity, time to
# verdict on real kernels and A/A stability. See bench/speed.py for what each figure is.
# Usage: bench/run.sh [--bin build/hotkernel] [--python PY] [--gpu] [--n 10] [--aa-runs 20] [--json]
exec python3 "$(dirname "$0")/speed.py" "$@"
