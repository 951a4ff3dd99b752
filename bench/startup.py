#!/usr/bin/env python3
"""Start-up cost of the hotkernel binary: CLI `--version` / `--help`, and an MCP client's
first contact (spawn `hotkernel mcp`, initialize, notifications/initialized, tools/list).

Each figure is the median (with min and p90) over N fresh processes, timed from just before
spawn to the moment the answer has been read, with time.perf_counter on this machine.
Standard library only; no GPU is touched (start-up must not touch one).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def summarize(samples):
    s = sorted(samples)
    p90 = s[min(len(s) - 1, int(round(0.9 * (len(s) - 1))))]
    return {"median_ms": statistics.median(s), "min_ms": s[0], "p90_ms": p90, "n": len(s)}


def time_cli(binary, args, n):
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = subprocess.run([binary, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        samples.append((time.perf_counter() - t0) * 1e3)
        if r.returncode != 0:
            sys.exit(f"{binary} {' '.join(args)} exited {r.returncode}: {r.stderr.decode(errors='replace')}")
    return summarize(samples)


def read_response(proc, want_id):
    while True:
        line = proc.stdout.readline()
        if not line:
            sys.exit("hotkernel mcp closed stdout before answering")
        msg = json.loads(line)  # any non-JSON line is a protocol violation
        if msg.get("id") == want_id:
            return msg


def time_mcp(binary, n):
    first_contact, to_exit = [], []
    tools = 0
    for _ in range(n):
        t0 = time.perf_counter()
        proc = subprocess.Popen([binary, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, bufsize=0)
        send = lambda obj: proc.stdin.write((json.dumps(obj) + "\n").encode())
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "0"}}})
        init = read_response(proc, 1)
        assert init["result"]["protocolVersion"] == "2025-11-25", init
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = read_response(proc, 2)
        first_contact.append((time.perf_counter() - t0) * 1e3)
        tools = len(listed["result"]["tools"])
        proc.stdin.close()
        rc = proc.wait(timeout=30)
        to_exit.append((time.perf_counter() - t0) * 1e3)
        if rc != 0:
            sys.exit(f"hotkernel mcp exited {rc} on stdin EOF")
    return summarize(first_contact), summarize(to_exit), tools


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.environ.get("HOTKERNEL_BIN", os.path.join(here, "..", "build", "hotkernel")))
    ap.add_argument("-n", type=int, default=50, help="fresh processes per figure (default 50)")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK):
        sys.exit(f"no hotkernel binary at {a.bin}; build it or pass --bin / set HOTKERNEL_BIN")

    time_cli(a.bin, ["--version"], 3)  # warm the page cache so the first sample is not a disk read
    version = time_cli(a.bin, ["--version"], a.n)
    help_ = time_cli(a.bin, ["--help"], a.n)
    mcp_list, mcp_exit, tools = time_mcp(a.bin, a.n)
    out = {
        "binary": os.path.realpath(a.bin),
        "method": "median over n fresh processes, perf_counter from before spawn until the answer is read",
        "cli_version": version,
        "cli_help": help_,
        "mcp_initialize_tools_list": mcp_list,
        "mcp_initialize_tools_list_exit": mcp_exit,
        "tools_listed": tools,
    }
    if a.json:
        print(json.dumps(out, indent=2))
        return
    print(f"hotkernel start-up ({out['binary']}, n={a.n} fresh processes each, median [min, p90] in ms)")
    rows = [("hotkernel --version", version),
            ("hotkernel --help", help_),
            (f"mcp: spawn, initialize, tools/list ({tools} tools)", mcp_list),
            ("mcp: the same, then stdin EOF and exit 0", mcp_exit)]
    for label, s in rows:
        print(f"  {label:<48} {s['median_ms']:7.2f}  [{s['min_ms']:.2f}, {s['p90_ms']:.2f}]")
    print("Timed with time.perf_counter around subprocess spawn on this machine; includes process creation,")
    print("dynamic linking and the static tool registry. No GPU, driver or Python interpreter is touched.")


if __name__ == "__main__":
    main()
