#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: runs `hotkernel gpu-info --json` and `hotkernel roofline ...
# --json` (default GPU 0, and the same card by name), prints them and the raw nvidia-smi answers
# they are parsed from, and fails when the results are inconsistent. Skips (exit 0) without a GPU.
# Usage: tests/gpu/check_gpu_info.sh [out_dir]     (binary: $HOTKERNEL_BIN, default build/hotkernel)
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="${HOTKERNEL_BIN:-build/hotkernel}"
OUT="${1:-${OUT:-$(mktemp -d)}}"
mkdir -p "$OUT"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP: no working nvidia-smi on this machine (no NVIDIA GPU/driver); nothing to check"
    exit 0
fi
[ -x "$BIN" ] || { echo "FAIL: $BIN not built (cmake -S . -B build -G Ninja && ninja -C build)"; exit 1; }

echo "== raw nvidia-smi (what gpu_info parses)"
nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,power.limit,compute_cap,clocks.max.sm,mig.mode.current \
    --format=csv,noheader,nounits | tee "$OUT/query-gpu-inventory.csv"
echo "== raw nvidia-smi clock/throttle query (what verify parses)"
nvidia-smi -i 0 --query-gpu=index,clocks.sm,clocks.max.sm,clocks_event_reasons.active,power.draw,temperature.gpu \
    --format=csv,noheader,nounits | tee "$OUT/query-gpu-clocks.csv"

echo "== hotkernel gpu-info --json"
"$BIN" gpu-info --json | tee "$OUT/gpu-info.json"
echo "== hotkernel gpu-info"
"$BIN" gpu-info

# 2^40 flops over 384 MiB (compute-bound on any card in the table) and 2^30 over 4 GiB (memory-bound).
echo "== hotkernel roofline (GPU 0, compute-bound)"
"$BIN" roofline --flops 1099511627776 --bytes 402653184 --dtype bf16 --json | tee "$OUT/roofline-compute.json"
echo "== hotkernel roofline (GPU 0, memory-bound)"
"$BIN" roofline --flops 1073741824 --bytes 4294967296 --dtype bf16 --json | tee "$OUT/roofline-memory.json"
NAME="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gpus"][0]["name"])' "$OUT/gpu-info.json")"
echo "== hotkernel roofline --gpu \"$NAME\" (by name)"
"$BIN" roofline --gpu "$NAME" --flops 1099511627776 --bytes 402653184 --dtype bf16 --json | tee "$OUT/roofline-by-name.json"

python3 - "$OUT" <<'PY'
import csv, json, sys
out = sys.argv[1]
info = json.load(open(f"{out}/gpu-info.json"))
raw = [[c.strip() for c in row] for row in csv.reader(open(f"{out}/query-gpu-inventory.csv")) if row]
problems = []
if info["count"] != len(raw) or info["count"] < 1:
    problems.append(f"gpu-info count {info['count']} but nvidia-smi listed {len(raw)} GPUs")
for g, r in zip(info["gpus"], raw):
    if g["name"] != r[1] or g["uuid"] != r[2] or g["driver"] != r[3]:
        problems.append(f"GPU {g['index']}: name/uuid/driver differ from nvidia-smi: {g} vs {r}")
    if not g["compute_capability"]:
        problems.append(f"GPU {g['index']}: no compute capability")
    if g["spec"] is None:
        print(f"NOTE: GPU {g['index']} ({g['name']}) has no spec-table row: {g.get('spec_reason')}")
c = json.load(open(f"{out}/roofline-compute.json"))
m = json.load(open(f"{out}/roofline-memory.json"))
n = json.load(open(f"{out}/roofline-by-name.json"))
if c["bound"] != "compute" or m["bound"] != "memory":
    problems.append(f"bounds: {c['bound']} / {m['bound']}, expected compute / memory")
want_c = 1099511627776 / (c["peak_tflops"] * 1e12) * 1e3
want_m = 4294967296 / (m["peak_mem_gbs"] * 1e9) * 1e3
if abs(c["attainable_ms"] - want_c) > 0.01 * want_c or abs(m["attainable_ms"] - want_m) > 0.01 * want_m:
    problems.append(f"attainable_ms {c['attainable_ms']} / {m['attainable_ms']}, expected {want_c} / {want_m}")
if n["spec_key"] != c["spec_key"] or n["attainable_ms"] != c["attainable_ms"]:
    problems.append("roofline by index and by name disagree")
if c.get("gpu_uuid") != info["gpus"][0]["uuid"]:
    problems.append("roofline GPU 0 uuid differs from gpu-info")
print("\n".join("FAIL: " + p for p in problems) or
      f"OK: {info['count']} GPU(s); GPU 0 = {c['gpu']} ({c['spec_key']}); compute floor {c['attainable_ms']:.4f} ms, "
      f"memory floor {m['attainable_ms']:.4f} ms")
sys.exit(1 if problems else 0)
PY
