#!/usr/bin/env bash
# Device batch 3: check_contract and the whole cheats table.
set -u
export HOTKERNEL_BIN=$PWD/.carry/hotkernel HOTKERNEL_PYTHON=python3 HOTKERNEL_TORCH_PYTHON=python3
W=/tmp/hk-batch3; mkdir -p $W/logs; export LOG_DIR=$W/logs
timeout 270 bash scripts/test-gpu check_contract 2>&1 | tail -22
t0=$SECONDS
timeout 300 python3 tests/gpu/check_cheats.py --jobs 6 > $W/cheats.log 2>&1; rc=$?
tail -75 $W/cheats.log
echo "cheats: rc $rc in $((SECONDS - t0)) s"
cp $W/cheats.log $W/logs/check_contract.log "$OUT/" 2>/dev/null
