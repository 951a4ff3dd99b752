#!/usr/bin/env python3
"""Where a forked run's first second goes, step by step: the parent imports torch (and the
contract) without touching CUDA, as the fork server does, then forks one child per run. Each
child times, with a device sync after each step: the CUDA context, drawing the inputs, the fp32
reference, the kernel's first and second call, the contract's check() first and second time,
check_quick(), a CUDA-graph capture, and then how long its exit takes (from the child's last
word to the parent's waitpid), with and without freeing its memory first. One JSON line per
child; the medians per step at the end. With --ops, each child times instead the first run of
every tensor op check() does, one by one.

    python3 bench/probes/run_cost_probe.py [--children 4] [--ops] [49152x8192 4096x8192]
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))


def child(shape, free_first, wfd):
    import torch
    import hotkernel_contract as hk
    steps = {}
    rows, cols = (int(v) for v in shape.split("x"))

    def step(name, f):
        t0 = time.perf_counter()
        r = f()
        torch.cuda.synchronize()
        steps[name] = round(time.perf_counter() - t0, 4)
        return r

    step("context", lambda: torch.empty(1, device="cuda"))
    x = step("inputs", lambda: torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16))
    ref = step("reference_fp32", lambda: torch.nn.functional.gelu(x.float()))
    out = step("call_1", lambda: torch.nn.functional.gelu(x))
    step("call_2", lambda: torch.nn.functional.gelu(x))
    c = step("check_1", lambda: hk.check(out, ref, "bf16"))
    step("check_2", lambda: hk.check(out, ref, "bf16"))
    step("check_quick_1", lambda: hk.check_quick(out, ref, "bf16"))
    step("check_quick_2", lambda: hk.check_quick(out, ref, "bf16"))
    step("normal_", lambda: x.normal_())
    g = torch.cuda.CUDAGraph()

    def capture():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            torch.nn.functional.gelu(x)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            torch.nn.functional.gelu(x)
        g.replay()
    step("graph_capture", capture)
    if free_first:
        del x, ref, out, g
        step("free_and_empty_cache", torch.cuda.empty_cache)
    steps["check_ok"] = bool(c["ok"])
    os.write(wfd, (json.dumps(steps) + "\n").encode())
    os.write(wfd, repr(time.time()).encode())
    os._exit(0)


def check_ops(shape, wfd):
    """The first time (lazy kernel loading included) of each tensor op that check() runs, in
    check()'s order, on the same tensors: which of its ~0.2 s first-call cost is which op."""
    import torch
    rows, cols = (int(v) for v in shape.split("x"))
    torch.empty(1, device="cuda")
    x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
    ref = torch.nn.functional.gelu(x.float())
    out = torch.nn.functional.gelu(x)
    torch.cuda.synchronize()
    env = {"out": out, "ref": ref, "torch": torch}
    ops = [("of", "out.double()"), ("rf", "ref.double()"), ("fin_ref", "bool(torch.isfinite(rf).all())"),
           ("nonfinite", "int((~torch.isfinite(of)).sum())"), ("scale", "float(rf.pow(2).mean().sqrt())"),
           ("diff", "(of - rf).abs()"), ("max_abs", "float(diff.max())"), ("bound", "1e-3 + 1.6e-2 * rf.abs()"),
           ("bad", "diff > bound"), ("n_bad", "int(bad.sum())"),
           ("used", "float((diff / bound.clamp_min(1e-300)).max())"),
           ("norm_f64", "float(rf.norm())"), ("norm_f32", "float(ref.norm())"),
           ("sub_f32", "torch.sub(out, ref).abs_()"), ("bound_f32", "ref.abs().mul_(1.6e-2).add_(1e-3)"),
           ("div_max_f32", "float(sub_f32.div_(bound_f32).max())"),
           ("again_diff", "(of - rf).abs()"), ("again_n_bad", "int(bad.sum())")]
    steps = {}
    for name, expr in ops:
        t0 = time.perf_counter()
        env[name] = eval(expr, env)
        torch.cuda.synchronize()
        steps[name] = round(time.perf_counter() - t0, 4)
    os.write(wfd, (json.dumps({"ops_first_s": steps}) + "\n").encode())
    os.write(wfd, repr(time.time()).encode())
    os._exit(0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shapes", nargs="*", default=["49152x8192", "4096x8192"])
    ap.add_argument("--children", type=int, default=4)
    ap.add_argument("--ops", action="store_true", help="instead: the first time of each op check() runs")
    args = ap.parse_args()
    t0 = time.perf_counter()
    import torch  # noqa: F401  (the parent never touches CUDA)
    import hotkernel_contract  # noqa: F401
    print(json.dumps({"parent_import_s": round(time.perf_counter() - t0, 3)}), flush=True)
    for shape in args.shapes:
        rows = []
        for i in range(args.children):
            free_first = bool(i % 2)
            r, w = os.pipe()
            t_fork = time.time()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                try:
                    if args.ops:
                        check_ops(shape, w)
                    child(shape, free_first, w)
                finally:
                    os._exit(1)
            os.close(w)
            data = b""
            while True:
                b = os.read(r, 65536)
                if not b:
                    break
                data += b
            _, status = os.waitpid(pid, 0)
            t_reaped = time.time()
            os.close(r)
            try:
                head, last = data.decode().rsplit("\n", 1)
                row = json.loads(head)
                row["exit_s"] = round(t_reaped - float(last), 4)
            except ValueError:
                row = {"error": "child said %r, status %d" % (data[-300:], status)}
            row.update({"shape": shape, "child": i, "freed_first": free_first,
                        "fork_to_reap_s": round(t_reaped - t_fork, 3)})
            rows.append(row)
            print(json.dumps(row), flush=True)
        if args.ops:
            continue
        keys = [k for k, v in rows[0].items() if isinstance(v, float)]
        print(json.dumps({"shape": shape, "median_s": {k: statistics.median(r[k] for r in rows if k in r)
                                                        for k in keys}}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
