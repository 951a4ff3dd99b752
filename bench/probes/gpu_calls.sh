# Shell functions the device calls of bench/runs/*/scripts share: source it from the repository
# root on the GPU machine, where $OUT is the folder whose files come back. It sets HK (this
# checkout's build/hotkernel), ROOT and the environment a run of hotkernel there needs.
#
#   probe NAME ARGS...          bench/probes/parent_clock_probe.py on the GPU, its log in $OUT/probe-NAME.log
#   honest_set SECONDS          tests/gpu/check_cheats.py's honest rows, $OUT/honest.log
#   gelu_targets W              the one-shape gelu bf16 16384x8192 (W/g1) and the 4-workload one,
#                               M = 2048..16384 x K = 8192 (W/g4), each with a candidate doing 1% more
#                               rows of work (*_slow_candidate.py)
#   bench_gelus                 bench --n 10 of both gelu baselines (W/bench-gelu1.json, W/bench-gelu4.json,
#                               copied to $OUT), each reported with the process spread it kept
#   v LABEL BASELINE CANDIDATE COUNT   COUNT verifies, each reported on one line (report) and kept as W/LABEL_i.json
#   aa_loop LABEL BASELINE CANDIDATE UNTIL_S   A/A verifies until UNTIL_S seconds after T0, then the verdicts' count
#   floors FILE                 a verify's per-workload roofline: each side's % of the datasheet and measured floors
set -u
ROOT=$PWD
HK=$ROOT/build/hotkernel
export HOTKERNEL_PYTHON=python3 PYTHONUNBUFFERED=1 HOTKERNEL_BIN=$HK HOTKERNEL_TORCH_PYTHON=python3
T0=$(date +%s)

probe() {
  local name=$1; shift; local s=$(date +%s)
  timeout ${PROBE_S:-110} python3 "$ROOT/bench/probes/parent_clock_probe.py" --bin "$HK" --python python3 --device cuda \
    --dtype bf16 "$@" > "$OUT/probe-$name.log" 2>&1
  echo "probe $name rc=$? in $(( $(date +%s) - s )) s"; tail -1 "$OUT/probe-$name.log"
}

honest_set() {
  local s=$(date +%s)
  timeout "$1" python3 "$ROOT/tests/gpu/check_cheats.py" --jobs 7 \
    --only blank,compiled,copy_then_kernel,cuda_extension,fused,jittered,triton_kernel > "$OUT/honest.log" 2>&1
  echo "honest rc=$? in $(( $(date +%s) - s )) s"
  grep -v "| yes$\|| no$" "$OUT/honest.log" | tail -12
}

slower() {  # candidate file, slow copy: the call computes 1% more rows than it returns
  python3 - "$1" "$2" <<'PY'
import sys
t = open(sys.argv[1]).read()
n = t.replace("    return _baseline(x)\n", "    y = _baseline(x)\n    _baseline(x[: max(1, x.shape[0] // 100)])  # 1% more work\n    return y\n")
assert n != t
open(sys.argv[2], "w").write(n)
PY
}

gelu_targets() {
  W=$1; rm -rf "$W"; mkdir -p "$W"
  "$HK" new torch.nn.functional:gelu --shape MxK --dims M=2048,4096,8192,16384 --dims K=8192 --device cuda \
    --out-dir "$W/g4" --name gelu4 --json > /dev/null 2>&1; echo "new4 rc=$?"
  "$HK" new torch.nn.functional:gelu --shape 16384x8192 --device cuda --out-dir "$W/g1" --name gelu1 --json \
    > /dev/null 2>&1; echo "new1 rc=$?"
  slower "$W/g4/gelu4_candidate.py" "$W/g4/gelu4_slow_candidate.py"
  slower "$W/g1/gelu1_candidate.py" "$W/g1/gelu1_slow_candidate.py"
}

bench_gelus() {
  for t in g1/gelu1 g4/gelu4; do
    timeout 90 "$HK" bench $W/${t}_baseline.py --n 10 --json > $W/bench-${t#*/}.json 2>/dev/null
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('bench', sys.argv[1].split('/')[-1], 'cv_pct', r.get('cv_pct'), [(w['name'], w.get('cv_pct')) for w in r.get('workloads', [])], 'process_spread', r.get('process_spread'))" $W/bench-${t#*/}.json
  done
  cp $W/bench-gelu1.json $W/bench-gelu4.json $OUT/
}

report() {  # file wall label: the verdict, its pairs, each run's wall time and the runs' median phases
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys, statistics as st
r = json.load(open(sys.argv[1]))
runs = r.get("runs", [])
wl = r.get("workloads") or []
print(sys.argv[3], sys.argv[2], "s", r.get("verdict"), "n", r.get("n"), "speedup", r.get("speedup"),
      "per-workload", [(w.get("name"), w.get("verdict")) for w in wl] if wl else "",
      "runs", [round(x["wall_s"], 2) for x in runs])
if r.get("verdict") in ("invalid", "error", None): print("  reasons", str(r.get("reasons") or r.get("error"))[:600])
keys = []
for x in runs:
    for k in x["line"].get("phases_s", {}):
        if k not in keys: keys.append(k)
print("  median phases", {k: round(st.median([x["line"]["phases_s"].get(k, 0) for x in runs]), 4) for k in keys})
w0 = runs[0]["line"].get("workloads") if runs else None
if w0:
    print("  workloads", [(w["name"], w.get("phases_s")) for w in w0])
PY
}

v() {
  for i in $(seq 1 "$4"); do
    local s=$(date +%s.%N)
    timeout 60 "$HK" verify "$2" "$3" --json --detail full > "$W/$1_$i.json" 2>/dev/null
    report "$W/$1_$i.json" "$(python3 -c "import time;print(round(time.time()-$s,2))")" "$1"
  done
}

aa_loop() {
  local i=0
  while [ $(( $(date +%s) - T0 )) -lt "$4" ]; do
    i=$((i+1)); local s=$(date +%s.%N)
    timeout 40 "$HK" verify "$2" "$3" --json > "$W/$1_aa_$i.json" 2>/dev/null
    python3 - "$W/$1_aa_$i.json" "$(python3 -c "import time;print(round(time.time()-$s,2))")" "$1" "$i" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
pc = [w.get("parent_clock", {}) for x in r.get("runs", []) for w in (x["line"].get("workloads") or [x["line"]])]
pc += [x["line"].get("parent_clock", {}) for x in r.get("runs", [])]
used = [round(p["excess_ms"] / p["allowed_ms"], 2) for p in pc if p.get("allowed_ms")]
print("AA", sys.argv[3], sys.argv[4], sys.argv[2], "s", r.get("verdict"), "n", r.get("n"), "speedup", r.get("speedup"),
      "used", max(used) if used else None,
      "warnings", [w.get("id") if isinstance(w, dict) else str(w)[:60] for w in r.get("warnings", [])])
PY
  done
  python3 - "$W" "$1" <<'PY'
import glob, json, sys, collections
v = collections.Counter(json.load(open(f)).get("verdict") for f in glob.glob("%s/%s_aa_*.json" % (sys.argv[1], sys.argv[2])))
print("A/A", sys.argv[2], "verdicts", dict(v))
PY
}

floors() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for w in r.get("workloads") or []:
    f = w.get("roofline") or {}
    print("floor", w.get("name"), {k: (round(v, 4) if isinstance(v, float) else v) for k, v in f.items()
                                   if "pct" in k or "attainable" in k})
PY
}
