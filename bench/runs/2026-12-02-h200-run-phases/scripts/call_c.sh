#!/usr/bin/env bash
# On the H200, the final binary (harness compiled once, module drops worked out in the server):
# the one-shape 1% verify 5 times, the 4-workload verify twice, then check_cheats and check_loop.
set -u
HK=$PWD/build/hotkernel; export HOTKERNEL_PYTHON=python3; ROOT=$PWD
W=/tmp/rc; rm -rf $W; mkdir -p $W; cd $W
slower() {
  python3 - "$1" "$2" <<'PY'
import sys
t = open(sys.argv[1]).read()
n = t.replace("    return _baseline(x)\n", "    y = _baseline(x)\n    _baseline(x[: max(1, x.shape[0] // 100)])  # 1% more work\n    return y\n")
assert n != t
open(sys.argv[2], "w").write(n)
PY
}
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm --format=csv,noheader
"$HK" calibrate --json > $OUT/calibrate.json 2>/dev/null; echo "calibrate rc=$?"
"$HK" new torch.nn.functional:gelu --shape MxK --dims M=2048,4096,8192,16384 --dims K=8192 --device cuda --out-dir $W/g4 --name gelu4 --json > /dev/null 2>&1; echo "new4 rc=$?"
"$HK" new torch.nn.functional:gelu --shape 16384x8192 --device cuda --out-dir $W/g1 --name gelu1 --json > /dev/null 2>&1; echo "new1 rc=$?"
slower $W/g4/gelu4_candidate.py $W/g4/gelu4_slow_candidate.py
slower $W/g1/gelu1_candidate.py $W/g1/gelu1_slow_candidate.py
"$HK" bench $W/g1/gelu1_baseline.py --n 2 --json > /dev/null 2>&1
report() {  # file wall label
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys, statistics as st
r = json.load(open(sys.argv[1]))
runs = r["runs"]
print(sys.argv[3], sys.argv[2], "s", r["verdict"], "n", r["n"], "speedup", r.get("speedup"),
      "runs", [round(x["wall_s"], 2) for x in runs])
if r["verdict"] == "invalid": print("  reasons", str(r.get("reasons"))[:400])
keys = []
for x in runs:
    for k in x["line"].get("phases_s", {}):
        if k not in keys: keys.append(k)
med = {k: round(st.median([x["line"]["phases_s"].get(k, 0) for x in runs]), 4) for k in keys}
pre = [x["line"]["phases_s"].get("process_age", 0) - x["line"]["phases_s"].get("in_runner", 0) for x in runs]
print("  median phases", med, "before_runner", round(st.median(pre), 4))
wl = runs[0]["line"].get("workloads")
if wl:
    print("  workloads", [(w["name"], w.get("phases_s")) for w in wl])
PY
}
for i in 1 2 3 4 5; do
  s=$(date +%s.%N)
  "$HK" verify $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py --json --detail full > $W/v1_$i.json 2>/dev/null
  report $W/v1_$i.json $(python3 -c "import time;print(round(time.time()-$s,2))") V1
done
cp $W/v1_1.json $OUT/verify1.json
for i in 1 2; do
  s=$(date +%s.%N)
  "$HK" verify $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py --json --detail full > $W/v4_$i.json 2>/dev/null
  report $W/v4_$i.json $(python3 -c "import time;print(round(time.time()-$s,2))") V4
done
cd $ROOT
export PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
timeout 330 python3 tests/gpu/check_cheats.py --jobs 8 > $OUT/check_cheats.log 2>&1; echo "check_cheats rc=$?"; tail -3 $OUT/check_cheats.log
LOG_DIR=$OUT timeout 120 bash scripts/test-gpu check_loop 2>&1 | tail -4
