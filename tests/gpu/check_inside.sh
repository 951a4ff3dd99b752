#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: the look-inside tools for real. torch-profile of the bundled
# example (fallback: a gelu script), profile with ncu on a PyTorch gelu using regex 'gelu' (and a
# regex that misses, which must be an error listing the kernels that ran), top-kernels on the CSV
# it saved, disassemble of a fresh Triton cache entry and of a fat CUDA executable built here
# with nvcc, and nsys (a report, or the clear error where nsys cannot import its trace).
# Prints everything; exits non-zero on a failure; skips (exit 0) without a GPU.
# Usage: tests/gpu/check_inside.sh [out_dir]   (binary: $HOTKERNEL_BIN, interpreter: $HOTKERNEL_PYTHON)
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN="${HOTKERNEL_BIN:-build/hotkernel}"
PY="${HOTKERNEL_PYTHON:-python3}"
export HOTKERNEL_PYTHON="$PY"
OUT="${1:-${OUT:-$(mktemp -d)}}"
mkdir -p "$OUT"
FIX=tests/fixtures/h200

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP: no working nvidia-smi on this machine (no NVIDIA GPU/driver); nothing to check"
    exit 0
fi
[ -x "$BIN" ] || { echo "FAIL: $BIN not built (cmake -S . -B build -G Ninja && ninja -C build)"; exit 1; }

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# check FILE PYTHON-EXPRESSION MESSAGE: evaluates the expression with r = the JSON in FILE.
check() {
    "$PY" - "$1" "$2" <<'PY' || fail "$3"
import json, sys
r = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2], {"r": r})
print(("ok:   " if ok else "BAD:  ") + sys.argv[2])
sys.exit(0 if ok else 1)
PY
}

echo "== torch-profile of the bundled example"
SCRIPT=examples/rmsnorm/rmsnorm_baseline.py
[ -f "$SCRIPT" ] || SCRIPT=$FIX/gelu_once.py
if "$BIN" torch-profile "$SCRIPT" --n 10 --json >"$OUT/torch-profile.json" 2>"$OUT/torch-profile.err"; then
    cat "$OUT/torch-profile.json"; echo
    "$BIN" torch-profile "$SCRIPT" --n 10 || true
    check "$OUT/torch-profile.json" 'r["cuda_available"] and r["kernel_count"] > 0' "torch-profile found no GPU kernels"
    check "$OUT/torch-profile.json" 'abs(sum(k["pct"] for k in r["kernels"]) - 100) < 1e-6 or r["kernel_count"] > len(r["kernels"])' "kernel pct does not add up"
    check "$OUT/torch-profile.json" 'all("Activity Buffer" not in k["name"] for k in r["kernels"])' "bookkeeping row among kernels"
    check "$OUT/torch-profile.json" 'any(o["name"].startswith("aten::") and o["input_shapes"] for o in r["ops"])' "no aten op with shapes"
else
    cat "$OUT/torch-profile.err"; fail "torch-profile $SCRIPT"
fi

echo "== profile --tool ncu on a PyTorch gelu, regex 'gelu'"
if "$BIN" profile --tool ncu "python3 $FIX/gelu_once.py" --ncu-kernel-regex gelu --launch-count 1 \
        --output "$OUT/ncu-gelu" --timeout-s 300 --json >"$OUT/profile-ncu.json" 2>"$OUT/profile-ncu.err"; then
    cat "$OUT/profile-ncu.json"; echo
    check "$OUT/profile-ncu.json" '"Gelu" in r["kernels"][0]["name"]' "ncu did not profile the gelu kernel"
    check "$OUT/profile-ncu.json" 'r["kernels"][0]["duration_ns"] > 0 and r["kernels"][0]["dram_throughput_pct"] is not None' "no duration/DRAM metric"
    check "$OUT/profile-ncu.json" 'r["kernels"][0]["bound"] in ("memory", "compute", "latency")' "no bound"
    ls -la "$OUT"/ncu-gelu.*
else
    cat "$OUT/profile-ncu.err"; fail "profile --tool ncu (gelu)"
fi

echo "== profile --tool ncu with a regex that matches nothing (must be an error listing what ran)"
if "$BIN" profile --tool ncu "python3 $FIX/gelu_once.py" --ncu-kernel-regex no_such_kernel_xyz \
        --timeout-s 300 >"$OUT/profile-nomatch.out" 2>"$OUT/profile-nomatch.err"; then
    fail "a regex matching nothing did not fail"
else
    cat "$OUT/profile-nomatch.err"
    grep -q "Kernels that did run" "$OUT/profile-nomatch.err" || fail "the no-match error does not list the kernels that ran"
fi

echo "== top-kernels on the CSV profile saved"
if [ -f "$OUT/ncu-gelu.csv" ] && "$BIN" top-kernels "$OUT/ncu-gelu.csv" --json >"$OUT/top-kernels.json" 2>"$OUT/top-kernels.err"; then
    cat "$OUT/top-kernels.json"; echo
    "$BIN" top-kernels "$OUT/ncu-gelu.csv" || true
    check "$OUT/top-kernels.json" 'r["tool"] == "ncu" and "Gelu" in r["kernels"][0]["name"] and r["kernels"][0]["hint"]' "top-kernels lost the gelu row"
else
    cat "$OUT/top-kernels.err" 2>/dev/null; fail "top-kernels on $OUT/ncu-gelu.csv"
fi

echo "== disassemble a fresh Triton cache entry"
TCACHE=$(mktemp -d)
if TRITON_CACHE_DIR="$TCACHE" "$PY" $FIX/tri_kernel.py; then
    if TRITON_CACHE_DIR="$TCACHE" "$BIN" disassemble triton-cache --kernel softmax --max-lines 40 --json \
            >"$OUT/disassemble-triton.json" 2>"$OUT/disassemble-triton.err"; then
        TRITON_CACHE_DIR="$TCACHE" "$BIN" disassemble triton-cache --kernel softmax --max-lines 40 || true
        check "$OUT/disassemble-triton.json" 'r["triton"]["name"] == "softmax_kernel" and r["instruction_count"] > 50' "triton SASS missing"
        check "$OUT/disassemble-triton.json" 'r["arch"].startswith("sm_90") and r["registers"]' "triton arch/registers"
        check "$OUT/disassemble-triton.json" 'r["triton"]["entry_dir"].startswith("'"$TCACHE"'")' "did not pick the fresh cache"
    else
        cat "$OUT/disassemble-triton.err"; fail "disassemble triton-cache"
    fi
else
    fail "the Triton kernel did not run (triton missing?)"
fi

echo "== disassemble a fat CUDA executable built here with nvcc"
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
if [ -n "$NVCC" ]; then
    "$NVCC" -O3 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
        -gencode arch=compute_90,code=compute_90 \
        -o "$OUT/saxpy" $FIX/saxpy.cu && "$OUT/saxpy" || fail "nvcc build/run of saxpy.cu"
    if "$BIN" disassemble "$OUT/saxpy" --json >"$OUT/disassemble-exe.json" 2>"$OUT/disassemble-exe.err"; then
        "$BIN" disassemble "$OUT/saxpy" --max-lines 30 || true
        check "$OUT/disassemble-exe.json" 'sorted(r["archs_available"]) == ["sm_80", "sm_90"] and r["arch"] == "sm_90"' "fat binary archs"
        check "$OUT/disassemble-exe.json" 'r["functions"][0]["demangled"].startswith("void saxpy<float>")' "demangled name"
    else
        cat "$OUT/disassemble-exe.err"; fail "disassemble $OUT/saxpy"
    fi
    "$BIN" disassemble "$OUT/saxpy" --level ptx --max-lines 20 --json >"$OUT/disassemble-exe-ptx.json" \
        && check "$OUT/disassemble-exe-ptx.json" '"_Z5saxpyIfEviT_PKS0_PS0_" in r["functions"]' "PTX entry of the executable" \
        || fail "disassemble --level ptx of the executable"
    echo "== profile --tool ncu on the executable (regex saxpy)"
    "$BIN" profile --tool ncu "$OUT/saxpy" --ncu-kernel-regex saxpy --launch-count 1 --output "$OUT/ncu-saxpy" \
        || fail "profile --tool ncu on saxpy"
else
    echo "no nvcc on this machine: skipped the executable"
fi

echo "== profile --tool nsys (a report, or the clear error where nsys cannot import its trace)"
"$BIN" profile --tool nsys "python3 $FIX/gelu_once.py" --timeout-s 180 --json >"$OUT/profile-nsys.json" 2>"$OUT/profile-nsys.err"
rc=$?
cat "$OUT/profile-nsys.json" "$OUT/profile-nsys.err"
if [ $rc -eq 0 ]; then
    check "$OUT/profile-nsys.json" 'r["kernel_count"] > 0' "nsys report without kernels"
elif ! grep -qE "wrote no report|nsys was not found" "$OUT/profile-nsys.err"; then
    fail "nsys failed without a clear error"
fi

echo "== $failures failure(s); outputs in $OUT"
[ "$failures" -eq 0 ]
