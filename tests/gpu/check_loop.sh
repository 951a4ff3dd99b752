#!/usr/bin/env bash
# GPU check of the measuring loop: bench, verify and record the bundled example
# (examples/rmsnorm) on a real NVIDIA GPU, and print the verdict, the speedup with its 95% CI,
# the wall time, the flags and the leaderboard row. Exits 0 with SKIP when there is no GPU.
#
#   HOTKERNEL_BIN     the binary (default build/hotkernel)
#   HOTKERNEL_PYTHON  an interpreter with CUDA torch and triton (default python3)
#   N, BENCH_N        verify pairs (default 10), bench runs (default 5)
#   OUT               where the JSON files go (default a temp dir)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${HOTKERNEL_BIN:-$ROOT/build/hotkernel}
PY=${HOTKERNEL_PYTHON:-python3}
N=${N:-10}
BENCH_N=${BENCH_N:-5}
OUTDIR=${OUT:-$(mktemp -d)}
EX=$ROOT/examples/rmsnorm

source "$ROOT/tests/gpu/gpu_preamble.sh"
mkdir -p "$OUTDIR"
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); python: $PY"

t0=$(date +%s.%N)
"$BIN" --python "$PY" --json bench "$EX/rmsnorm_baseline.py" --n "$BENCH_N" >"$OUTDIR/bench.json"
t1=$(date +%s.%N)
"$BIN" --python "$PY" --json verify "$EX/rmsnorm_baseline.py" "$EX/rmsnorm_candidate.py" --n "$N" \
    >"$OUTDIR/verify.json"
t2=$(date +%s.%N)
(cd "$OUTDIR" && "$BIN" --json record --result verify.json \
    --note "fused one-pass Triton RMSNorm (examples/rmsnorm)" \
    --who "tests/gpu/check_loop.sh: the bundled hand-written example" >record.json)

"$PY" - "$OUTDIR" "$t0" "$t1" "$t2" <<'PYEOF'
import json, sys
out, t0, t1, t2 = sys.argv[1], *map(float, sys.argv[2:])
b = json.load(open(f"{out}/bench.json"))
v = json.load(open(f"{out}/verify.json"))
r = json.load(open(f"{out}/record.json"))
m = v["measurement"]
print(f"bench baseline: n={b['n']} mean {b['mean_ms']:.4f} ms ± {b['std_ms']:.4f}, min {b['min_ms']:.4f}, "
      f"cv {b['cv_pct']:.2f}%, timer {b.get('timer')}, wall {t1 - t0:.1f} s")
print(f"verify: verdict {v['verdict']}  reasons {v['reasons']}")
print(f"  baseline  {v['baseline']['mean_ms']:.5f} ± {v['baseline']['std_ms']:.5f} ms (min {v['baseline']['min_ms']:.5f})")
print(f"  candidate {v['candidate']['mean_ms']:.5f} ± {v['candidate']['std_ms']:.5f} ms (min {v['candidate']['min_ms']:.5f})")
if "speedup" in v:
    ci = v.get("speedup_ci95", {})
    print(f"  speedup {v['speedup']:.3f}x  95% CI {ci.get('low')}-{ci.get('high')}")
print(f"  n={v['n']} pairs + {v['warmup']} warm-up, wall {t2 - t1:.1f} s (verify's own {m['wall_s']:.1f} s)")
print(f"  gpu {m['gpu']}")
print(f"  clocks before {m['clocks_before']}")
print(f"  clocks after  {m['clocks_after']}")
print(f"  versions {m['versions']}  roofline {v.get('roofline')}")
for f in v["flags"]:
    print(f"  FLAG {f['id']}: {f['message']}")
for w in v["warnings"]:
    print(f"  warning {w['id']}: {w['message']}")
print("leaderboard row:")
print(r["row"])
ok = v["verdict"] == "faster" and m["gpu"] is not None and m["clocks_before"].get("sm_clock_mhz") is not None
# bench kept the spread between the baseline's processes; verify's floors are at least its bound.
import os
ps = b.get("process_spread") or {}
print(f"  process spread: bench's {ps}; verify's bound {v.get('process_spread_bound_pct')}% "
      f"({v.get('process_spread_source')})")
spread_ok = bool(ps.get("kept")) and os.path.isfile(ps["kept"]) and \
    (v.get("process_spread_bound_pct") or 0) >= ps.get("cv_pct", float("inf")) and \
    not any(w["id"] == "spread_not_benched" for w in v["warnings"])
ok = ok and spread_ok
print("PASS" if ok else "FAIL: expected verdict faster with a GPU and clock record, and bench's process_spread "
      "kept and used by verify")
sys.exit(0 if ok else 1)
PYEOF
