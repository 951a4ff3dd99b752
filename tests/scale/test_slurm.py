"""The Slurm executor against a real Slurm: the single-node cluster of scripts/slurm-up (partitions
h100 and h200, two fake GPUs each, sacct through slurmdbd), which scripts/test starts before this
file and stops after it. Jobs run the CPU path: the synthetic scripts of scale_support, through
`hotkernel run-job` on the "node" (this host). Jobs pass, fail, run past their time limit, are
refused at submission, and are cancelled from the CLI (Ctrl-C) and over MCP.

Without a Slurm to talk to (no SLURM_CONF, or sinfo does not answer) the tests skip, saying so;
with HOTKERNEL_REQUIRE_SLURM=1 (scripts/test) that is a failure instead."""
import json
import os
import shutil
import signal
import subprocess
import threading
import time

import pytest

from scale_support import BIN, H100_A, H100_B, PY, env_for, hk, runs, spawn, write_script


def slurm_or_skip():
    why = None
    if not os.environ.get("SLURM_CONF"):
        why = "SLURM_CONF is unset (source scripts/slurm-up && slurm_up starts a test cluster)"
    elif not shutil.which("sbatch"):
        why = "sbatch is not on PATH (scripts/install-deps.sh slurm installs Slurm)"
    else:
        p = subprocess.run(["sinfo", "-h", "-o", "%P %T"], capture_output=True, text=True, timeout=20)
        if p.returncode != 0 or "idle" not in p.stdout and "mix" not in p.stdout and "alloc" not in p.stdout:
            why = f"sinfo does not answer: {(p.stderr or p.stdout).strip()[:200]}"
    if why is None:
        return
    if os.environ.get("HOTKERNEL_REQUIRE_SLURM") == "1":
        pytest.fail("no Slurm, and HOTKERNEL_REQUIRE_SLURM=1: " + why)
    pytest.skip("no Slurm: " + why)


@pytest.fixture
def slurm_env(tmp_path):
    slurm_or_skip()
    return env_for(tmp_path, extra={"HOTKERNEL_SLURM_DIR": str(tmp_path / "slurm")})


def squeue_states(job_ids):
    p = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i|%T"], capture_output=True, text=True, timeout=20)
    states = dict(line.split("|") for line in p.stdout.split() if "|" in line)
    return {j: states.get(j) for j in job_ids}


def test_a_platform_matrix_of_jobs_that_pass_fail_and_run_past_their_time_limit(slurm_env, tmp_path):
    base = write_script(tmp_path, "base.py")
    good = write_script(tmp_path, "good.py", mean=0.8)
    bad = write_script(tmp_path, "bad.py", pre="sys.exit(3)")
    hang = write_script(tmp_path, "hang.py", sleep=600)
    # Slurm's limit (20 s: --time takes minutes:seconds; slurmctld enforces it up to ~30 s late)
    # comes before the runs' own (300 s), and after the other jobs' few seconds.
    slurm_env["HOTKERNEL_SLURM_ARGS"] = "--time=0:20"
    t0 = time.time()
    rc, r, err = hk(["verify", base, good, bad, hang, "--n", "3", "--timeout-s", "300", "--executor", "slurm",
                     "--partition", "h100,h200"], slurm_env, tmp_path, timeout=400)
    took = time.time() - t0
    assert rc == 0, err
    assert r["spread"]["executor"] == "slurm" and r["spread"]["partitions"] == ["h100", "h200"]
    items = {(os.path.basename(x["candidate_script"]), x["partition"]): x for x in r["results"]}
    assert sorted(items) == sorted((s, p) for s in ("good.py", "bad.py", "hang.py") for p in ("h100", "h200"))
    arrays = set()
    for p in ("h100", "h200"):
        ok = items[("good.py", p)]
        assert ok["verdict"] == "faster" and ok["state"] == "COMPLETED", ok
        assert ok["placement"]["partition"] == p and ok["placement"]["job_id"] == ok["job_id"]
        assert ok["node"] == p + "n"
        # The node's child asked (the fake) nvidia-smi about the card Slurm gave it (CUDA_VISIBLE_DEVICES=0 or 1).
        assert ok["gpu_uuid"] in (H100_A, H100_B) and ok["placement"]["cuda_visible_devices"] in ("0", "1")
        arrays.add(ok["job_id"].split("_")[0])
        failed = items[("bad.py", p)]
        assert "verdict" not in failed and failed["state"] == "FAILED", failed
        assert "exited with status 3" in failed["error"] or "status 3" in failed["error"], failed["error"]
        late = items[("hang.py", p)]
        assert late["state"] == "TIMEOUT", late
        assert "time limit (TIMEOUT)" in late["error"], late["error"]
    assert len(arrays) == 2, "one job array per partition"
    assert [w["id"] for w in r["warnings"]] == ["spread_jobs_failed"]
    # Every job was collected, none waited on past its end.
    assert took < 240, took
    # What sacct says agrees: slurmdbd has the jobs, by array task.
    ids = [items[("hang.py", p)]["job_id"] for p in ("h100", "h200")]
    p = subprocess.run(["sacct", "-X", "-P", "-n", "-j", ",".join(ids), "-o", "JobID,State"], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 0 and p.stdout.count("TIMEOUT") == 2, p.stdout


def test_a_partition_slurm_refuses_is_a_result_that_says_so(slurm_env, tmp_path):
    base = write_script(tmp_path, "base.py")
    good = write_script(tmp_path, "good.py", mean=0.8)
    rc, r, err = hk(["verify", base, good, "--n", "3", "--executor", "slurm", "--partition", "h200,nosuch"],
                    slurm_env, tmp_path, timeout=120)
    assert rc == 0, err
    by_part = {x["partition"]: x for x in r["results"]}
    assert by_part["h200"]["verdict"] == "faster"
    assert "Invalid partition name" in by_part["nosuch"]["error"] and "sinfo" in by_part["nosuch"]["error"]


def test_ctrl_c_scancels_the_jobs_and_says_they_were_cancelled(slurm_env, tmp_path):
    base = write_script(tmp_path, "base.py")
    slow = write_script(tmp_path, "slow.py", sleep=30)
    p = spawn(["verify", base, slow, "--n", "3", "--timeout-s", "300", "--executor", "slurm", "--partition", "h100"],
              slurm_env, tmp_path)
    # Wait until the job runs: its first run logs nothing until it ends, so ask Slurm.
    deadline = time.time() + 60
    job = None
    while time.time() < deadline and job is None:
        q = subprocess.run(["squeue", "-h", "-t", "RUNNING", "-o", "%i|%j"], capture_output=True, text=True, timeout=20)
        for line in q.stdout.split():
            jid, _, name = line.partition("|")
            # The job's folder exists once hotkernel has submitted (squeue may list others' jobs first).
            ours = os.listdir(tmp_path / "slurm") if (tmp_path / "slurm").is_dir() else []
            if ours and name == "hotkernel-" + ours[0]:
                job = jid
        time.sleep(0.3)
    assert job, "the job never ran"
    t0 = time.time()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=90)
    assert p.returncode == 130, err
    assert time.time() - t0 < 60
    r = json.loads(out)
    item = r["results"][0]
    assert item["state"] == "CANCELLED" and item["job_id"] == job, item
    assert "cancelled" in item["error"]
    assert squeue_states([job])[job] in ("CANCELLED", None)


def test_mcp_cancellation_reaches_scancel_and_progress_comes_per_job(slurm_env, tmp_path):
    base = write_script(tmp_path, "base.py")
    slow = write_script(tmp_path, "slow.py", sleep=30)
    proc = subprocess.Popen([BIN, "mcp", "--python", PY], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=slurm_env, cwd=tmp_path)
    watchdog = threading.Timer(150, proc.kill)
    watchdog.start()
    try:
        def send(msg):
            proc.stdin.write(json.dumps(msg) + "\n")
            proc.stdin.flush()

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
        assert json.loads(proc.stdout.readline())["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "verify", "_meta": {"progressToken": "p"},
                         "arguments": {"baseline": base, "candidate": slow, "n": 3, "timeout_s": 300,
                                       "executor": "slurm", "partition": "h200"}}})
        messages = []
        while not any("RUNNING" in m for m in messages):
            msg = json.loads(proc.stdout.readline())
            assert msg.get("method") == "notifications/progress", msg
            messages.append(msg["params"].get("message", ""))
        job = next(m for m in messages if "RUNNING" in m).split("job ")[1].split()[0]
        assert any("submitted" in m for m in messages), messages
        send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
        deadline = time.time() + 60
        while time.time() < deadline and squeue_states([job])[job] not in ("CANCELLED", None):
            time.sleep(0.5)
        assert squeue_states([job])[job] in ("CANCELLED", None), squeue_states([job])
    finally:
        watchdog.cancel()
        proc.stdin.close()
        proc.wait(timeout=60)


def test_a_batch_file_takes_bench_to_slurm(slurm_env, tmp_path):
    script = write_script(tmp_path, "k.py", mean=2.0)
    batch = tmp_path / "jobs.jsonl"
    batch.write_text(json.dumps({"tool": "bench", "args": {"script": script, "n": 2}}) + "\n")
    rc, r, err = hk(["batch", str(batch), "--executor", "slurm", "--partition", "h100,h200"], slurm_env, tmp_path,
                    timeout=120)
    assert rc == 0, err
    assert sorted(x["partition"] for x in r["results"]) == ["h100", "h200"]
    assert all(abs(x["mean_ms"] - 2.0) < 0.1 and x["state"] == "COMPLETED" for x in r["results"]), r["results"]
