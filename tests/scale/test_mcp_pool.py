"""The pool over MCP: the same verify call with candidates and gpus, its progress per job (every
job's outcome reaches the client), its lean result (one lean verify result per candidate, with
the card), and a notifications/cancelled that ends every job's runs."""
import json
import os
import subprocess
import threading
import time

from scale_support import BIN, H100_A, H100_B, PY, env_for, runs, write_script


class Raw:
    """`hotkernel mcp` over stdio, messages one by one (notifications included)."""

    def __init__(self, env, cwd, timeout=120):
        self.proc = subprocess.Popen([BIN, "mcp", "--python", PY], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=env, cwd=cwd)
        self.watchdog = threading.Timer(timeout, self.proc.kill)
        self.watchdog.start()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "0"}}})
        assert self.next()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def next(self):
        line = self.proc.stdout.readline()
        assert line, "hotkernel mcp closed stdout"
        return json.loads(line)

    def close(self):
        self.watchdog.cancel()
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def call(arguments, rid=1):
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": "verify", "arguments": arguments, "_meta": {"progressToken": "t"}}}


def test_progress_per_job_and_a_lean_result_per_candidate(tmp_path):
    base = write_script(tmp_path, "base.py", sleep=0.1)
    cands = [write_script(tmp_path, f"c{i}.py", mean=0.8, sleep=0.1) for i in range(3)]
    s = Raw(env_for(tmp_path, mask=f"{H100_A},{H100_B}"), tmp_path)
    try:
        s.send(call({"baseline": base, "candidates": cands, "n": 3, "gpus": "all"}))
        progress = []
        while True:
            m = s.next()
            if m.get("method") == "notifications/progress":
                progress.append(m["params"])
                continue
            break
        r = m["result"]["structuredContent"]
        assert not m["result"].get("isError"), m
    finally:
        s.close()
    text = " ".join(p.get("message", "") for p in progress)
    # Each job's outcome, but the last one's (a progress equal to the total would race the answer).
    assert sum(f"{c} on GPU" in text for c in cands) >= 2 and "faster" in text, progress
    assert [p["progress"] for p in progress] == sorted(p["progress"] for p in progress)
    assert len({p["progress"] for p in progress}) == len(progress), "progress must rise, or MCP drops it"
    assert [x["candidate_script"] for x in r["results"]] == cands
    for x in r["results"]:
        assert x["verdict"] == "faster" and x["gpu_uuid"] in (H100_A, H100_B)
        assert "runs" not in x and "measurement" not in x  # lean, with the path of its whole record
        assert os.path.exists(x["full_record"])
    assert os.path.exists(r["full_record"])


def test_cancelled_over_mcp_every_jobs_runs_end(tmp_path):
    base = write_script(tmp_path, "base.py")
    slow = [write_script(tmp_path, f"slow{i}.py", sleep=20) for i in range(2)]
    pids = tmp_path / "pids"
    pids.mkdir()
    s = Raw(env_for(tmp_path, mask=f"{H100_A},{H100_B}", extra={"HK_PID_DIR": str(pids)}), tmp_path)
    try:
        s.send(call({"baseline": base, "candidates": slow, "n": 3, "timeout_s": 120}))
        # Both jobs are on their cards once a slow run has started (the baseline runs first, briefly).
        deadline = time.time() + 60
        while time.time() < deadline and len({e["cvd"] for e in runs(tmp_path)}) < 2:
            time.sleep(0.2)
        assert len({e["cvd"] for e in runs(tmp_path)}) == 2
        time.sleep(1)
        procs_before = {int(n.split("-")[0]) for n in os.listdir(pids) if "slow" in n}
        procs_before = {p for p in procs_before if os.path.exists(f"/proc/{p}")}
        assert len(procs_before) == 2, "the two slow runs are not both running"
        s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
        deadline = time.time() + 20
        alive = procs_before
        while alive and time.time() < deadline:
            alive = {p for p in procs_before if _running(p)}
            time.sleep(0.2)
        assert not alive, "runs outlived the cancelled call"
    finally:
        s.close()


def _running(pid):
    """Alive and not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
