#!/usr/bin/env bash
# On the H200: the checked graph replays' outputs checked after the samples (no ramp after them).
# The one-shape 1% verify 5 times, the 4-workload +1% verify 4 times, A/A verifies of both.
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
report() {  # file wall label
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys, statistics as st
r = json.load(open(sys.argv[1]))
runs = r["runs"]
wl = r.get("workloads") or []
print(sys.argv[3], sys.argv[2], "s", r["verdict"], "n", r["n"], "speedup", r.get("speedup"),
      "per-workload", [(w.get("name"), w.get("verdict")) for w in wl] if wl else "",
      "runs", [round(x["wall_s"], 2) for x in runs])
if r["verdict"] == "invalid": print("  reasons", str(r.get("reasons"))[:600])
keys = []
for x in runs:
    for k in x["line"].get("phases_s", {}):
        if k not in keys: keys.append(k)
med = {k: round(st.median([x["line"]["phases_s"].get(k, 0) for x in runs]), 4) for k in keys}
print("  median phases", med)
w0 = runs[0]["line"].get("workloads")
if w0:
    print("  workloads", [(w["name"], w.get("phases_s")) for w in w0])
PY
}
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm --format=csv,noheader
"$HK" new torch.nn.functional:gelu --shape MxK --dims M=2048,4096,8192,16384 --dims K=8192 --device cuda --out-dir $W/g4 --name gelu4 --json > /dev/null 2>&1; echo "new4 rc=$?"
"$HK" new torch.nn.functional:gelu --shape 16384x8192 --device cuda --out-dir $W/g1 --name gelu1 --json > /dev/null 2>&1; echo "new1 rc=$?"
slower $W/g4/gelu4_candidate.py $W/g4/gelu4_slow_candidate.py
slower $W/g1/gelu1_candidate.py $W/g1/gelu1_slow_candidate.py
"$HK" bench $W/g1/gelu1_baseline.py --n 2 --json > /dev/null 2>&1
v() {  # label baseline candidate count
  for i in $(seq 1 $4); do
    s=$(date +%s.%N)
    "$HK" verify $2 $3 --json --detail full > $W/$1_$i.json 2>/dev/null
    report $W/$1_$i.json $(python3 -c "import time;print(round(time.time()-$s,2))") $1
  done
}
v V1 $W/g1/gelu1_baseline.py $W/g1/gelu1_slow_candidate.py 5
cp $W/V1_1.json $OUT/verify1.json
v V4 $W/g4/gelu4_baseline.py $W/g4/gelu4_slow_candidate.py 4
cp $W/V4_1.json $OUT/verify4.json
v AA4 $W/g4/gelu4_baseline.py $W/g4/gelu4_candidate.py 12
v AA1 $W/g1/gelu1_baseline.py $W/g1/gelu1_candidate.py 12
