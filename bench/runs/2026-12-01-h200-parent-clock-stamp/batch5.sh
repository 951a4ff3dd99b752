#!/usr/bin/env bash
# Device batch 5: the host-CPU probe of the parent's clock, then the whole cheats table, on the final code.
set -u
export HOTKERNEL_BIN=$PWD/.carry/hotkernel HOTKERNEL_PYTHON=python3 HOTKERNEL_TORCH_PYTHON=python3
"$HOTKERNEL_BIN" --version
t0=$SECONDS
timeout 40 python3 bench/probes/parent_clock_probe.py --bin "$HOTKERNEL_BIN" --python python3 --device cpu --shape 128x128 --dtype fp32 --iters 48 --n 5 --fractions 0.1,0.2 > $OUT/probe-cpu-128x128-fp32.jsonl 2>&1
echo "probe cpu: $((SECONDS - t0)) s"; tail -1 $OUT/probe-cpu-128x128-fp32.jsonl
t0=$SECONDS
timeout 225 python3 tests/gpu/check_cheats.py --jobs 8 > $OUT/check-cheats.log 2>&1; rc=$?
tail -60 $OUT/check-cheats.log
echo "cheats: rc $rc in $((SECONDS - t0)) s"
