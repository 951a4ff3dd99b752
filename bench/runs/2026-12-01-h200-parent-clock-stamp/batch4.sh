#!/usr/bin/env bash
# Device batch 4: the parent's clock probes (GPU and host CPU), check_loop, check_contract.
set -u
export HOTKERNEL_BIN=$PWD/.carry/hotkernel HOTKERNEL_PYTHON=python3 HOTKERNEL_TORCH_PYTHON=python3
W=/tmp/hk-batch4; mkdir -p $W/logs; export LOG_DIR=$W/logs
"$HOTKERNEL_BIN" --version
t0=$SECONDS
timeout 150 python3 bench/probes/parent_clock_probe.py --bin "$HOTKERNEL_BIN" --python python3 --device cuda --shape 1024x1024 --dtype bf16 --n 5 --fractions 0.1,0.3,0.5 > $OUT/probe-cuda-1024x1024-bf16.jsonl 2>&1
echo "probe 1024: $((SECONDS - t0)) s"; tail -1 $OUT/probe-cuda-1024x1024-bf16.jsonl
t0=$SECONDS
timeout 150 python3 bench/probes/parent_clock_probe.py --bin "$HOTKERNEL_BIN" --python python3 --device cuda --shape 4096x8192 --dtype bf16 --n 5 --fractions 0.1,0.3,0.5 > $OUT/probe-cuda-4096x8192-bf16.jsonl 2>&1
echo "probe 4096: $((SECONDS - t0)) s"; tail -1 $OUT/probe-cuda-4096x8192-bf16.jsonl
t0=$SECONDS
timeout 100 python3 bench/probes/parent_clock_probe.py --bin "$HOTKERNEL_BIN" --python python3 --device cpu --shape 128x128 --dtype fp32 --iters 48 --n 10 --fractions 0.05,0.1,0.2 > $OUT/probe-cpu-128x128-fp32.jsonl 2>&1
echo "probe cpu: $((SECONDS - t0)) s"; tail -1 $OUT/probe-cpu-128x128-fp32.jsonl
timeout 60 bash scripts/test-gpu check_loop 2>&1 | tail -8

cp $W/logs/check_loop.log "$OUT/" 2>/dev/null
