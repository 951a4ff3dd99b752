#!/usr/bin/env bash
# Final device call A: the wheel on the H200 (install, gpu-info, new, bench, verify of the bundled
# example, python -m, MCP), the bundled example's pictures, then check_loop and check_contract
# with the wheel's binary.
set -u
export PYTHONUNBUFFERED=1
bash .carry/wheel_h200.sh
export HOTKERNEL_BIN=/tmp/hkv/bin/hotkernel HOTKERNEL_PYTHON=python3 HOTKERNEL_TORCH_PYTHON=python3
LOG_DIR=$OUT/gpu-logs; mkdir -p "$LOG_DIR"
t0=$SECONDS; LOG_DIR=$LOG_DIR timeout 100 scripts/test-gpu check_loop > $OUT/check_loop.log 2>&1; echo "check_loop rc=$? $((SECONDS - t0)) s"; tail -5 $OUT/check_loop.log
t0=$SECONDS; LOG_DIR=$LOG_DIR timeout 330 scripts/test-gpu check_contract > $OUT/check_contract.log 2>&1; echo "check_contract rc=$? $((SECONDS - t0)) s"; tail -25 $OUT/check_contract.log
rm -rf "$LOG_DIR"
