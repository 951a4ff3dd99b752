#!/usr/bin/env bash
# Call B, second command on the same warm card: the blank candidate alone (its row was voided by
# the parent's clock with 10 verifies sharing the card); its output is the call's own tail, quoted
# in the README.
export HOTKERNEL_BIN=$PWD/build/hotkernel HOTKERNEL_TORCH_PYTHON=python3 HOTKERNEL_PYTHON=python3
timeout 100 python3 tests/gpu/check_cheats.py --jobs 2 --only blank,sched_idle_fork_server,autogroup_nice 2>&1 | tail -8
