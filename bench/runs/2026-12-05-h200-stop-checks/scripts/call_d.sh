#!/usr/bin/env bash
# Call D: call C's binary against the GPU cheats that the audit hook's rules or the per-sample
# state check catch (the hook now lets go of events none of its rules take before its lock, and
# the check reads identities through object's hash): tests/gpu/check_cheats.py on those rows.
set -u
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$PWD/build/hotkernel HOTKERNEL_TORCH_PYTHON=python3
nvidia-smi --query-gpu=name,uuid --format=csv,noheader
s=$(date +%s)
timeout 170 python3 tests/gpu/check_cheats.py --jobs 10 --only runner_class_check,resnapshot_harness,rebind_module_global,side_stream,tamper_reset,tensor_shadow,unrecorded_op_override,seen_rules_cleared,zeros,skip_unchanged > $OUT/check_cheats.log 2>&1; echo "rc=$? in $(( $(date +%s) - s )) s"
grep -v "| yes$\|| no$" $OUT/check_cheats.log | tail -14
