"""What the pool and Slurm tests share: synthetic scripts that log where each run ran, the binary
run with the fake nvidia-smi (tests/fixtures/fake-bin) and a private lease folder, and readers of
the log.

Each synthetic script prints {"ms": ...} drawn from a seeded normal distribution, like the scripts
of tests/cli/test_loop.py, and appends one line to $HK_RUN_LOG per run: the script, its
CUDA_VISIBLE_DEVICES, its CPU affinity, its pid and when it started and ended, so a test can say
which card and cores every run had and that no two runs shared a card."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = os.path.abspath(os.environ.get("HOTKERNEL_BIN", str(ROOT / "build" / "hotkernel")))
FAKE_BIN = ROOT / "tests" / "fixtures" / "fake-bin"
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

# The made-up 4-GPU box of tests/fixtures/fake-bin/scenarios/multi.csv.
H100_A = "GPU-00000000-1111-2222-3333-444444444444"
H100_B = "GPU-11111111-1111-2222-3333-444444444444"
L40S = "GPU-22222222-1111-2222-3333-444444444444"
A2000 = "GPU-33333333-1111-2222-3333-444444444444"

SCRIPT = """\
import json, os, random, sys, time
t0 = time.time()
if os.environ.get("HK_PID_DIR"):  # who is running now, for tests that kill or cancel
    open(os.path.join(os.environ["HK_PID_DIR"], "%d-%s" % (os.getpid(), os.path.basename(__file__))), "w").close()
rng = random.Random("{{}}:{{}}:{{}}".format(os.environ.get("HOTKERNEL_ROLE"), os.environ.get("HOTKERNEL_RUN_INDEX"),
                    os.environ.get("HOTKERNEL_WARMUP")))
time.sleep({sleep})
{pre}
line = {{"ms": max(rng.gauss({mean}, {sd}), 1e-6), "ok": {ok}, "seed": 0, "shapes": [[16]], "dtype": "fp32", "iters": 1}}
with open(os.environ["HK_RUN_LOG"], "a") as f:
    f.write(json.dumps({{"script": os.path.basename(__file__), "cvd": os.environ.get("CUDA_VISIBLE_DEVICES"),
                        "cpus": sorted(os.sched_getaffinity(0)), "pid": os.getpid(), "start": t0,
                        "end": time.time()}}) + "\\n")
print(json.dumps(line))
"""


def write_script(dirpath, name, mean=1.0, sd=0.01, ok=True, sleep=0.0, pre=""):
    p = Path(dirpath) / name
    p.write_text(SCRIPT.format(mean=mean, sd=sd, ok=ok, sleep=sleep, pre=pre))
    return str(p)


def env_for(tmp_path, scenario="multi", mask=None, fake=True, extra=None):
    env = dict(os.environ)
    env["PATH"] = (str(FAKE_BIN) + os.pathsep if fake else "") + os.pathsep.join(
        [str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    env["FAKE_NVIDIA_SMI_SCENARIO"] = scenario
    env["HOTKERNEL_GPU_LEASE_DIR"] = str(tmp_path / "leases")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["HOTKERNEL_KEEP_WARM_S"] = "0"  # no fork server outlives a test
    env["HK_RUN_LOG"] = str(tmp_path / "runs.jsonl")
    env.pop("CUDA_VISIBLE_DEVICES", None)
    for k in [k for k in env if k.startswith("SLURM_")]:
        if k != "SLURM_CONF":
            del env[k]
    if mask is not None:
        env["CUDA_VISIBLE_DEVICES"] = mask
    env.update(extra or {})
    return env


def hk(args, env, cwd, timeout=120):
    """The binary's exit code, its JSON result (when it printed one) and stderr."""
    p = subprocess.run([BIN, "--python", PY, "--json", *args], capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=timeout)
    try:
        result = json.loads(p.stdout)
    except ValueError:
        result = None
    return p.returncode, result, p.stderr


def spawn(args, env, cwd):
    return subprocess.Popen([BIN, "--python", PY, "--json", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=cwd)


def runs(tmp_path):
    log = tmp_path / "runs.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def overlapping(entries):
    """Pairs of runs whose [start, end] intervals overlap."""
    s = sorted(entries, key=lambda r: r["start"])
    return [(a, b) for i, a in enumerate(s) for b in s[i + 1:] if b["start"] < a["end"]]


def cpu_list(text):
    out = []
    for part in filter(None, (text or "").split(",")):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out
