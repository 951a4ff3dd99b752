#!/usr/bin/env bash
# On the H200, the same binary as call B, in what device time was left: check_contract, then
# check_cheats part 2 of 2 until 430 s.
set -u
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$PWD/build/hotkernel HOTKERNEL_TORCH_PYTHON=python3 HOTKERNEL_PYTHON=python3
(LOG_DIR=/tmp timeout 260 bash scripts/test-gpu check_contract 2>&1 | tail -14
 cp /tmp/check_contract.log $OUT/c-check_contract.log
 timeout $((430 - SECONDS)) python3 tests/gpu/check_cheats.py --jobs 8 --part 2/2 > $OUT/c-check_cheats.log 2>&1
 echo "check_cheats rc=$?"; tail -4 $OUT/c-check_cheats.log) 2>&1 | tee $OUT/c.log
