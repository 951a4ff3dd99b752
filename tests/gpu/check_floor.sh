#!/usr/bin/env bash
# GPU check of the roofline of each workload: calibrate measures the streaming copy at several
# sizes (copy_curve), and a verify of a 4-workload copy (torch.clone, 32 to 256 MiB a call) puts
# each workload's time within 5% of the floor calibrate's copy of that size predicts
# (pct_of_measured_floor 95-105), with no under-floor flag. Prints the curve and each
# workload's floor. Exits 0 with SKIP when there is no GPU.
#
#   HOTKERNEL_BIN     the binary (default build/hotkernel)
#   HOTKERNEL_PYTHON  an interpreter with CUDA torch (default python3)
#   OUT               where the JSON files go (default a temp dir)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${HOTKERNEL_BIN:-$ROOT/build/hotkernel}
PY=${HOTKERNEL_PYTHON:-python3}
OUTDIR=${OUT:-$(mktemp -d)}

source "$ROOT/tests/gpu/gpu_preamble.sh"
mkdir -p "$OUTDIR"
"$BIN" --python "$PY" --json calibrate > "$OUTDIR/calibrate.json"
"$BIN" --python "$PY" --json new torch:clone --shape MxK --dims M=1024,2048,4096,8192 --dims K=8192 \
    --device cuda --out-dir "$OUTDIR/clone4" --name clone4 > /dev/null
"$BIN" --python "$PY" --json verify "$OUTDIR/clone4/clone4_baseline.py" "$OUTDIR/clone4/clone4_candidate.py" \
    > "$OUTDIR/verify.json"

"$PY" - "$OUTDIR" <<'PYEOF'
import json, sys
out = sys.argv[1]
c = json.load(open(f"{out}/calibrate.json"))
v = json.load(open(f"{out}/verify.json"))
curve = c.get("copy_curve") or []
print("copy by size:", ", ".join(f"{p['bytes'] / 2**20:.0f} MiB {p['gbs']:.0f} GB/s" for p in curve))
ok = len(curve) >= 3 and curve[-1]["gbs"] == c["mem_gbs"]
for w in v.get("workloads") or []:
    f = w.get("roofline") or {}
    pct = [f.get(k) for k in ("baseline_pct_of_measured_floor", "candidate_pct_of_measured_floor")]
    print(f"  {w['name']}: attainable_ms_measured {f.get('attainable_ms_measured')} at {f.get('measured_mem_gbs')} GB/s, "
          f"pct_of_measured_floor {pct}, pct_of_floor {f.get('baseline_pct_of_floor')}")
    ok = ok and all(isinstance(p, (int, float)) and 95 <= p <= 105 for p in pct)
flags = [f["id"] for f in v.get("flags", [])]
print("verdict", v["verdict"], "flags", flags)
ok = ok and len(v.get("workloads") or []) == 4 and not any("floor" in f for f in flags)
print("PASS" if ok else "FAIL: expected a copy curve of 3+ sizes ending at mem_gbs, and each workload of a copy within "
      "5% of its measured floor (95-105%) with no under-floor flag")
sys.exit(0 if ok else 1)
PYEOF
