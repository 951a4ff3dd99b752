#!/usr/bin/env bash
# Call D, second command on the same warm card: six more rows of tests/gpu/check_cheats.py with
# call C's binary (the timer, /proc/<pid>/mem, process_vm and seed cheats, and two that must gain
# nothing).
set -u
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$PWD/build/hotkernel HOTKERNEL_TORCH_PYTHON=python3
timeout 95 python3 tests/gpu/check_cheats.py --jobs 6 --only patch_timer,proc_mem_nonce,process_vm_clock,predict_seed,signal_outside,slow_the_baseline > $OUT/check_cheats.log 2>&1; echo "rc=$?"
grep -v "| yes$\|| no$" $OUT/check_cheats.log | tail -10
