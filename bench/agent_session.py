#!/usr/bin/env python3
"""The bytes an agent pays for one scripted session with `hotkernel mcp`: initialize, tools/list,
new, bench, five verifies (the untouched candidate against its baseline, the noise floor an agent
starts from) and record, each call at its defaults, the way an agent makes them. Prints the bytes
of every answer (what enters the agent's context) and of every request, and the session's
total on the wire; progress notifications are counted apart (clients that ask for progress
get them; they rarely enter the model's context). #19's bound: the whole session <= 40 KB.

Real runs on this machine's interpreter (CPU without a GPU): a few minutes.

Run: bench/agent_session.py --bin build/hotkernel --python /usr/bin/python3 [--shape 64x256] [--json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/hotkernel")
    ap.add_argument("--python", default=sys.executable, help="the interpreter with torch")
    ap.add_argument("--shape", default="64x256")
    ap.add_argument("--verifies", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="hk-agent-")
    env = dict(os.environ, HOTKERNEL_KEEP_WARM_S="0")
    p = subprocess.Popen([os.path.abspath(a.bin), "mcp", "--python", a.python], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=work, env=env)
    watchdog = threading.Timer(1800, p.kill)
    watchdog.start()
    rows, totals = [], {"sent": 0, "answers": 0, "progress": 0}
    next_id = [0]

    def send(msg):
        line = (json.dumps(msg) + "\n").encode()
        p.stdin.write(line)
        p.stdin.flush()
        totals["sent"] += len(line)
        return len(line)

    def request(label, method, params):
        next_id[0] += 1
        sent = send({"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params})
        progress = 0
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit("hotkernel mcp closed stdout during " + label)
            m = json.loads(line)
            if m.get("id") == next_id[0]:
                totals["answers"] += len(line)
                rows.append({"call": label, "request_bytes": sent, "answer_bytes": len(line), "progress_bytes": progress})
                return m
            progress += len(line)
            totals["progress"] += len(line)

    def call(label, tool, arguments):
        m = request(label, "tools/call", {"name": tool, "arguments": arguments, "_meta": {"progressToken": label}})
        r = m["result"]
        if r.get("isError"):
            raise SystemExit(label + " failed: " + r["content"][0]["text"][:500])
        return r["structuredContent"]

    request("initialize", "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                         "clientInfo": {"name": "agent-session", "version": "0"}})
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    request("tools/list", "tools/list", {})
    new = call("new", "new", {"from": "torch.nn.functional:gelu", "shape": a.shape, "dtype": "fp32", "out_dir": "t"})
    baseline, candidate = new["files"]["baseline"], new["files"]["candidate"]
    call("bench", "bench", {"script": baseline})
    last = None
    for i in range(a.verifies):
        last = call("verify %d" % (i + 1), "verify", {"baseline": baseline, "candidate": candidate})
    call("record", "record", {"result": last["full_record"], "note": "untouched candidate", "who": "bench/agent_session.py"})
    p.stdin.close()
    p.wait(timeout=60)
    watchdog.cancel()
    wire = totals["sent"] + totals["answers"] + totals["progress"]
    out = {"rows": rows, "sent_bytes": totals["sent"], "answer_bytes": totals["answers"],
           "progress_bytes": totals["progress"], "wire_bytes": wire, "without_progress_bytes": wire - totals["progress"],
           "verdict_of_last_verify": last["verdict"], "shape": a.shape, "python": a.python}
    if a.json:
        print(json.dumps(out))
        return
    print("%-12s %9s %9s %9s" % ("call", "request", "answer", "progress"))
    for r in rows:
        print("%-12s %9d %9d %9d" % (r["call"], r["request_bytes"], r["answer_bytes"], r["progress_bytes"]))
    print("on the wire: %d bytes (%d without progress notifications); answers %d, requests %d, progress %d"
          % (wire, wire - totals["progress"], totals["answers"], totals["sent"], totals["progress"]))


if __name__ == "__main__":
    main()
