"""The GPU pool of one host, black box: `verify BASE C1 C2 ...` and `bench A B ...` on the fake
nvidia-smi's 4-GPU box, with UUID and index masks. What the synthetic scripts log (scale_support)
shows which card (CUDA_VISIBLE_DEVICES=GPU-uuid) and cores each run had; leases are checked
between two hotkernel processes and after their holder is SIGKILLed."""
import json
import os
import signal
import time

import pytest

from scale_support import (A2000, H100_A, H100_B, L40S, cpu_list, env_for, hk, overlapping, runs, spawn,
                           write_script)


def by_script(entries):
    out = {}
    for r in entries:
        out.setdefault(r["script"], []).append(r)
    return out


def test_each_pair_runs_on_one_card_pinned_by_uuid_and_cores_inside_the_mask(tmp_path):
    base = write_script(tmp_path, "base.py", mean=1.0)
    cands = [write_script(tmp_path, f"c{i}.py", mean=m) for i, m in enumerate([0.8, 1.0, 1.3])]
    # The mask names a UUID prefix and an index: the pool stays inside it, in its order.
    env = env_for(tmp_path, mask="GPU-11111111,2")
    rc, r, err = hk(["verify", base, *cands, "--n", "3"], env, tmp_path)
    assert rc == 0, err
    assert [x["uuid"] for x in r["spread"]["gpus"]] == [H100_B, L40S]
    items = r["results"]
    assert [x["candidate_script"] for x in items] == cands
    assert [x["verdict"] for x in items] == ["faster", "inconclusive", "slower"]
    logged = by_script(runs(tmp_path))
    for item in items:
        assert item["gpu_uuid"] in (H100_B, L40S)
        assert item["gpu_name"] == ("NVIDIA L40S" if item["gpu_uuid"] == L40S else "NVIDIA H100 80GB HBM3")
        # The child's own record says the same card: it asked nvidia-smi about CUDA_VISIBLE_DEVICES=GPU-uuid.
        assert item["measurement"]["gpu"]["uuid"] == item["gpu_uuid"]
        assert item["placement"]["gpu_uuid"] == item["gpu_uuid"]
        mine = logged[os.path.basename(item["candidate_script"])]
        assert {x["cvd"] for x in mine} == {item["gpu_uuid"]}
        assert {tuple(x["cpus"]) for x in mine} == {tuple(cpu_list(item["cpus"]))}
    # The baseline ran beside each candidate, on that candidate's card: a pair never spans cards.
    assert {x["cvd"] for x in logged["base.py"]} <= {H100_B, L40S}
    assert len(r["spread"]["table"]) == 3 and r["spread"]["table"][0]["verdict"] == "faster"


def test_gpus_picks_visible_cards_by_index_or_count_and_says_what_is_visible(tmp_path):
    base = write_script(tmp_path, "base.py")
    cand = write_script(tmp_path, "cand.py", mean=0.9)
    env = env_for(tmp_path, mask="2,0")
    rc, r, err = hk(["verify", base, cand, "--gpus", "1,", "--n", "2"], env, tmp_path)  # index 1 inside the mask
    assert rc == 0, err
    assert r["results"][0]["gpu_uuid"] == H100_A
    assert {x["cvd"] for x in runs(tmp_path)} == {H100_A}
    rc, r, err = hk(["verify", base, cand, "--gpus", "3"], env, tmp_path)
    assert rc == 1 and r is None
    assert "--gpus: 3 GPUs asked for but 2 visible" in err and L40S in err, err
    rc, _, err = hk(["verify", base, cand, "--gpus", "GPU-33333333"], env, tmp_path)
    assert rc == 1 and "names none of the visible GPUs" in err, err
    rc, _, err = hk(["verify", base, cand, "--gpus", "lots"], env, tmp_path)
    assert rc == 2 and "--gpus" in err, err


def test_one_gpu_runs_the_pairs_one_after_another_with_the_verdicts_of_separate_verifies(tmp_path):
    base = write_script(tmp_path, "base.py", mean=1.0)
    cands = [write_script(tmp_path, f"c{i}.py", mean=m) for i, m in enumerate([0.7, 1.0, 1.4])]
    env = env_for(tmp_path, scenario="h200")
    rc, r, err = hk(["verify", base, *cands, "--n", "4"], env, tmp_path)
    assert rc == 0, err
    assert not overlapping(runs(tmp_path)), "two pairs shared the one card"
    one_by_one = []
    for c in cands:
        rc, single, err = hk(["verify", base, c, "--n", "4"], env, tmp_path)
        assert rc == 0, err
        assert "results" not in single  # without the new arguments, verify is what it was
        one_by_one.append(single["verdict"])
    assert [x["verdict"] for x in r["results"]] == one_by_one == ["faster", "inconclusive", "slower"]


def test_two_hotkernel_processes_never_put_two_runs_on_one_card(tmp_path):
    base = write_script(tmp_path, "base.py", sleep=0.15)
    cands = [write_script(tmp_path, f"c{i}.py", mean=0.9, sleep=0.15) for i in range(3)]
    env = env_for(tmp_path, mask=f"{H100_A},{H100_B}")
    procs = [spawn(["verify", base, *cands, "--n", "2"], env, tmp_path) for _ in range(2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    entries = runs(tmp_path)
    assert len(entries) >= 2 * 3 * 2 * 2
    for uuid in (H100_A, H100_B):
        clash = overlapping([e for e in entries if e["cvd"] == uuid])
        assert not clash, f"two runs on {uuid} at once: {clash[:1]}"
    assert {e["cvd"] for e in entries} == {H100_A, H100_B}
    # Six jobs of ~1.5 s on two cards: someone waited for a card the other process held.
    waited = [w for r in results for w in r["warnings"] if w["id"] == "gpu_leases_waited"]
    assert waited, [r["warnings"] for r in results]


def test_a_crashed_holders_lease_frees_itself_and_its_runs_die_with_it(tmp_path):
    base = write_script(tmp_path, "base.py")
    slow = write_script(tmp_path, "slow.py", sleep=4)
    fast = write_script(tmp_path, "fast.py", mean=0.9)
    env = env_for(tmp_path, mask=H100_A)
    holder = spawn(["verify", base, slow, "--gpus", "all", "--n", "5"], env, tmp_path)
    lease = tmp_path / "leases" / (H100_A + ".lock")
    deadline = time.time() + 30
    while time.time() < deadline and not (lease.exists() and f"pid {holder.pid} " in lease.read_text()):
        time.sleep(0.1)
    assert f"pid {holder.pid} " in lease.read_text()
    time.sleep(1.5)  # a slow run is under way
    holder.send_signal(signal.SIGKILL)
    holder.communicate(timeout=30)
    t0 = time.time()
    rc, r, err = hk(["verify", base, fast, "--gpus", "all", "--n", "2"], env, tmp_path)
    took = time.time() - t0
    assert rc == 0, err
    assert r["results"][0]["gpu_uuid"] == H100_A
    assert took < 20, f"waited {took:.0f} s: the dead holder's ~60 s job kept the card"
    assert "gpu_leases_waited" not in [w["id"] for w in r["warnings"]]
    # The holder's child learnt of its death (PR_SET_PDEATHSIG) and ended its runs.
    slow_pids = {e["pid"] for e in runs(tmp_path) if e["script"] == "slow.py"}
    deadline = time.time() + 15
    alive = slow_pids
    while alive and time.time() < deadline:
        alive = {p for p in slow_pids if os.path.exists(f"/proc/{p}")}
        time.sleep(0.2)
    assert not alive, f"runs of the killed holder still alive: {alive}"


def test_without_a_gpu_the_jobs_run_one_after_another_and_gpus_is_an_error(tmp_path):
    base = write_script(tmp_path, "base.py", sleep=0.05)
    cands = [write_script(tmp_path, f"c{i}.py", sleep=0.05) for i in range(2)]
    env = env_for(tmp_path, fake=False)
    rc, r, err = hk(["verify", base, *cands, "--n", "2"], env, tmp_path)
    assert rc == 0, err
    assert [w["id"] for w in r["warnings"]] == ["no_gpu_to_spread"]
    assert r["spread"]["gpus"] == []
    assert not overlapping(runs(tmp_path))
    assert all(e["cvd"] is None for e in runs(tmp_path))
    rc, _, err = hk(["verify", base, *cands, "--gpus", "all"], env, tmp_path)
    assert rc == 1 and "no GPU to spread over" in err, err


def test_bench_spreads_its_scripts(tmp_path):
    a = write_script(tmp_path, "a.py", mean=1.0)
    b = write_script(tmp_path, "b.py", mean=2.0)
    env = env_for(tmp_path)
    rc, r, err = hk(["bench", a, b, "--gpus", "2", "--n", "3"], env, tmp_path)
    assert rc == 0, err
    items = r["results"]
    assert [x["script"] for x in items] == [a, b]
    assert {x["gpu_uuid"] for x in items} <= {H100_A, H100_B}
    assert items[0]["mean_ms"] == pytest.approx(1.0, rel=0.05) and items[1]["mean_ms"] == pytest.approx(2.0, rel=0.05)


def test_record_keeps_cards_apart_and_takes_one_pair_at_a_time(tmp_path):
    base = write_script(tmp_path, "base.py")
    cands = [write_script(tmp_path, f"c{i}.py", mean=0.8) for i in range(3)]
    env = env_for(tmp_path, mask=f"{H100_A},{L40S}")
    rc, r, err = hk(["verify", base, *cands, "--n", "3"], env, tmp_path)
    assert rc == 0, err
    spread_file = tmp_path / "spread.json"
    spread_file.write_text(json.dumps(r))
    rc, _, err = hk(["record", "--result", str(spread_file), "--note", "n", "--who", "t"], env, tmp_path)
    assert rc == 1 and "holds 3 verify results" in err and r["results"][0]["full_record"] in err, err
    for item in r["results"]:
        rc, rec, err = hk(["record", "--result", item["full_record"], "--note", "n", "--who", "t"], env, tmp_path)
        assert rc == 0, err
        stored = json.loads((tmp_path / rec["file"]).read_text())
        assert stored["result"]["measurement"]["gpu"]["uuid"] == item["gpu_uuid"]
        assert stored["result"]["placement"]["gpu_uuid"] == item["gpu_uuid"]
    board = (tmp_path / "LEADERBOARD.md").read_text()
    sections = [line for line in board.splitlines() if line.startswith("## ")]
    assert any("NVIDIA H100 80GB HBM3" in s for s in sections) and any("NVIDIA L40S" in s for s in sections), sections


def test_a_batch_file_mixes_targets_and_tools(tmp_path):
    base = write_script(tmp_path, "base.py")
    cand = write_script(tmp_path, "cand.py", mean=0.8)
    other = write_script(tmp_path, "other.py", mean=3.0)
    batch = tmp_path / "jobs.jsonl"
    batch.write_text("# one call a line\n" + "\n".join(json.dumps(x) for x in [
        {"tool": "verify", "args": {"baseline": base, "candidate": cand, "n": 3}},
        {"tool": "bench", "args": {"script": other, "n": 2}},
    ]) + "\n")
    env = env_for(tmp_path)
    rc, r, err = hk(["batch", str(batch), "--gpus", "2"], env, tmp_path)
    assert rc == 0, err
    assert [x["tool"] for x in r["results"]] == ["verify", "bench"]
    assert r["results"][0]["verdict"] == "faster"
    assert r["results"][1]["mean_ms"] == pytest.approx(3.0, rel=0.05)
    batch.write_text('{"tool": "profile", "args": {}}\n')
    rc, _, err = hk(["batch", str(batch)], env, tmp_path)
    assert rc == 2 and "line 1" in err, err


def test_plain_verify_is_unchanged_and_mask_errors_are_clear(tmp_path):
    base = write_script(tmp_path, "base.py")
    cand = write_script(tmp_path, "cand.py", mean=0.8)
    env = env_for(tmp_path, mask="MIG-1234")
    rc, _, err = hk(["verify", base, cand, "--gpus", "all"], env, tmp_path)
    assert rc == 1 and "MIG" in err, err
    rc, r, err = hk(["verify", base, cand, "--executor", "ssh"], env, tmp_path)
    assert rc == 2 and "{cmd}" in err, err
    rc, r, err = hk(["verify", base, cand, "--partition", "h100"], env, tmp_path)
    assert rc == 2 and "--executor slurm" in err, err


def test_a_command_template_executor_runs_each_job_through_the_users_command(tmp_path):
    base = write_script(tmp_path, "base.py")
    cand = write_script(tmp_path, "cand.py", mean=0.8)
    env = env_for(tmp_path, fake=False)
    seen = tmp_path / "commands.log"
    rc, r, err = hk(["verify", base, cand, "--n", "3", "--executor", f"echo {{cmd}} >> {seen}; {{cmd}}"], env, tmp_path)
    assert rc == 0, err
    assert r["spread"]["executor"] == "command"
    assert r["results"][0]["verdict"] == "faster"
    assert "run-job -" in seen.read_text()


@pytest.mark.parametrize("tool", ["verify", "bench"])
def test_a_plain_run_and_a_pool_job_take_turns_on_a_card(tmp_path, tool):
    # A plain verify or bench (no gpus) leases the card it measures on for its whole run, so a
    # pool's job on that card waits for it, and the other way round; inside a pool's own job it
    # takes none.
    base = write_script(tmp_path, "base.py", sleep=0.15)
    plain = write_script(tmp_path, "plain.py", mean=0.9, sleep=0.15)
    pooled = write_script(tmp_path, "pooled.py", mean=0.9, sleep=0.15)
    env = env_for(tmp_path, mask=H100_A)
    argv = ["verify", base, plain, "--n", "3", "--no-stop-early"] if tool == "verify" else ["bench", plain, "--n", "6"]
    first = spawn(argv, env, tmp_path)
    lease = tmp_path / "leases" / (H100_A + ".lock")
    deadline = time.time() + 30
    while time.time() < deadline and not (lease.exists() and f"pid {first.pid} " in lease.read_text()):
        time.sleep(0.05)
    assert f"pid {first.pid} " in lease.read_text(), f"the plain {tool} took no lease of its card"
    assert f"{tool} " in lease.read_text()
    rc, r, err = hk(["verify", base, pooled, "--gpus", "all", "--n", "2"], env, tmp_path)
    assert rc == 0, err
    out, err1 = first.communicate(timeout=120)
    assert first.returncode == 0, err1
    if tool == "verify":
        assert json.loads(out)["verdict"] == "faster"
    else:
        assert len(json.loads(out)["samples_ms"]) == 6
    entries = runs(tmp_path)
    assert {e["script"] for e in entries} >= {"plain.py", "pooled.py"}
    clash = overlapping([e for e in entries if e["cvd"] == H100_A])
    assert not clash, f"a pool job ran beside the plain {tool}: {clash[:1]}"
    assert "gpu_leases_waited" in [w["id"] for w in r["warnings"]]  # the pool waited for the plain run


@pytest.mark.parametrize("tool", ["torch_profile", "calibrate"])
def test_the_other_tools_that_run_on_a_card_lease_it_too(tmp_path, tool):
    # The lease file keeps a note of its last holder: after the run, it names the tool, whether
    # the run then succeeded (torch_profile on the CPU) or not (calibrate needs CUDA).
    plain = write_script(tmp_path, "plain.py")
    env = env_for(tmp_path, mask=H100_A)
    hk(["torch-profile", plain] if tool == "torch_profile" else ["calibrate", "--gpu", "1"], env, tmp_path)
    notes = {p.name: p.read_text() for p in (tmp_path / "leases").glob("*.lock")}
    held = [name for name, text in notes.items() if f": {tool} " in text]
    assert held, notes
    if tool == "torch_profile":
        assert held == [H100_A + ".lock"]  # the card CUDA_VISIBLE_DEVICES leaves visible
