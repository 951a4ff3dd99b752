"""Protocol 3 as a script and as a library: the JSON line, the check, seeds, rotation depth, the file runner."""
import json
import math
import os
import shutil
import statistics
import subprocess

import pytest

from conftest import ROOT, hk_new, py_snippet, run_script

SCHEMA = ["protocol", "target", "role", "ms", "ok", "samples_ms", "timer", "iters", "seed", "rotate_k", "shapes",
          "dtype", "device", "error", "roofline_inputs", "versions"]


def variant(gelu, name, body):
    """A candidate file whose kernel body is replaced; TARGET stays the baseline's."""
    text = (gelu / "gelu_candidate.py").read_text()
    assert "    return _baseline(x)\n" in text
    path = gelu / ("gelu_%s.py" % name)
    path.write_text(text.replace("    return _baseline(x)\n", body))
    return path


def contract_constant(name):
    """A number the contract's source sets at its top level (this process has no torch to import it)."""
    import re
    text = (ROOT / "python" / "hotkernel_contract.py").read_text()
    return float(re.search(r"^%s = ([0-9.]+)" % name, text, re.M).group(1))


def test_blank_candidate_passes_and_prints_the_whole_line(py, gelu):
    rc, line, err = run_script(py, gelu / "gelu_candidate.py")
    assert rc == 0, err
    for key in SCHEMA:
        assert key in line, key
    assert line["protocol"] == 3 and line["target"] == "gelu" and line["role"] == "candidate"
    assert line["ok"] is True and line["status"] == "ok" and line["reason"] is None
    assert line["timer"] == "cpu" and line["device"] == "cpu" and line["dtype"] == "bf16"
    assert line["iters"] == 5 and line["seed"] == 0 and len(line["samples_ms"]) == 10
    assert line["ms"] > 0 and line["ms"] == pytest.approx(statistics.median(line["samples_ms"]), rel=1e-3)
    # every call of a sample has a set of its own, and there are enough sets to keep caches cold
    assert line["calls_per_sample"] == line["rotate_k"] >= max(5, line["cache_k"])
    assert line["shapes"] == {"x": [64, 128], "out": [64, 128]}
    e = line["error"]
    assert set(["max_abs", "rel", "atol", "rtol"]) <= set(e) and e["rtol"] == 0.016 and 0 < e["tol_used"] <= 1
    assert line["roofline_inputs"] == {"flops": None, "bytes": 2 * 2 * 64 * 128, "dtype": "bf16"}
    assert set(line["versions"]) == {"python", "torch", "triton"}
    assert line["checked"] == ["check_set", "last_timed_call"]
    # "auto": at least the floor; it stops by WARMUP_MAX_S plus the pass under way, which a loaded
    # machine can stretch (a pass seen at 1 s on 2 busy cores), so the ceiling has room. The rule
    # itself is tested exactly on synthetic passes (warmup_settled, below).
    assert contract_constant("WARMUP_MIN_S") <= line["warmup_s"] <= contract_constant("WARMUP_MAX_S") + 5


def test_baseline_runs_and_same_seed_gives_same_numbers(py, gelu):
    # A grown sample (toward 20 ms on a CPU) has as many calls as the run's own timing gives it,
    # and the last timed call's set is checked: a sets budget of one set keeps the plan, so both
    # runs check the same sets.
    env = {"HOTKERNEL_SETS_BYTES": str(2 * 64 * 128)}
    rc1, a, err = run_script(py, gelu / "gelu_baseline.py", env=env)
    rc2, b, err2 = run_script(py, gelu / "gelu_baseline.py", env=env)
    assert rc1 == 0 and rc2 == 0, err + err2
    assert a["role"] == "baseline" and a["ok"] is True
    assert a["error"] == b["error"]  # the same inputs, so the same errors to the last bit


WRONG = {
    "zeros": ("    return _baseline(x) * 0\n", "the output is all zeros"),
    "empty": ("    import torch\n    return torch.zeros_like(x)\n", "the output is all zeros"),
    "nan": ("    y = _baseline(x).clone()\n    y.view(-1)[7] = float('nan')\n    return y\n", "1 NaN/Inf element"),
    "inf": ("    y = _baseline(x).clone()\n    y.view(-1)[0] = float('inf')\n    return y\n", "NaN/Inf"),
    "shape": ("    return _baseline(x)[:, :-1]\n", "has shape [64, 127], expected [64, 128]"),
    "dtype": ("    return _baseline(x).float()\n", "has dtype torch.float32, expected torch.bfloat16"),
    "perturbed": ("    return _baseline(x) * 1.1\n", "elements outside tolerance"),
    "offset": ("    return _baseline(x) + 0.05\n", "elements outside tolerance"),
    "tuple": ("    return (_baseline(x), _baseline(x))\n", "returned 2 tensor(s), expected 1"),
    "notensor": ("    return 1.0\n", "returned float"),
    # right on the first call, wrong afterwards: caught on the last timed call's output
    "later": ("    _calls.append(1)\n    return _baseline(x) if len(_calls) == 1 else _baseline(x) * 0\n_calls = []\n",
              "last timed call"),
}


@pytest.mark.parametrize("name", ["zeros", "nan"])
def test_wrong_candidate_script_prints_ok_false(py, gelu, name):
    body, needle = WRONG[name]
    rc, line, err = run_script(py, variant(gelu, name, body))
    assert line is not None, err
    assert line["ok"] is False and line["status"] == "incorrect"
    assert needle in line["reason"]
    assert rc == 0  # measured, just wrong: verify reads ok=false as 'incorrect'
    assert line["ms"] > 0


def test_every_wrong_candidate_fails_its_check(py, gelu):
    # one process for all of them, through the library's file runner (each file imported after setup)
    for name, (body, _) in WRONG.items():
        variant(gelu, name, body)
    out = py_snippet(py, """
import json, hotkernel_contract as hk
for name in %r:
    r = hk.run_file('gelu_%%s.py' %% name, 'candidate', target_from='gelu_baseline.py')
    print(json.dumps({'name': name, 'ok': r['ok'], 'status': r['status'], 'reason': r['reason'], 'ms': r['ms']}))
""" % (list(WRONG),), gelu)
    got = {d["name"]: d for d in map(json.loads, out.strip().splitlines()[-len(WRONG):])}
    for name, (_, needle) in WRONG.items():
        d = got[name]
        assert d["ok"] is False and d["status"] == "incorrect", d
        assert needle in d["reason"], d
        assert d["ms"] > 0


def test_small_perturbation_within_tolerance_passes(py, gelu):
    rc, line, err = run_script(py, variant(gelu, "close", "    return _baseline(x) * 1.004\n"))
    assert rc == 0 and line["ok"] is True, line and line["reason"]


def test_error_in_user_code_is_a_line_with_reason_and_nonzero_exit(py, gelu):
    rc, line, err = run_script(py, variant(gelu, "raises", "    raise RuntimeError('boom in kernel')\n"))
    assert rc == 1
    assert line["ok"] is False and line["status"] == "error" and line["ms"] is None
    assert "boom in kernel" in line["reason"] and "boom in kernel" in err


def test_same_seed_same_inputs_and_fresh_draws_for_check_and_timing(py, gelu):
    out = py_snippet(py, """
import torch, hotkernel_contract as hk
t = hk.Target.from_dict(hk.read_target_file('gelu_baseline.py'), '.')
a, b, c = hk.make_inputs(t, 0), hk.make_inputs(t, 0), hk.make_inputs(t, 1)
assert torch.equal(a[0], b[0]) and not torch.equal(a[0], c[0])
chk, timed = hk.make_input_sets(t, 0, 'cpu', 3)
assert torch.equal(chk[0], a[0])
assert not torch.equal(timed[0][0], chk[0]) and not torch.equal(timed[0][0], timed[1][0])
chk2, timed2 = hk.make_input_sets(t, 0, 'cpu', 3)
assert all(torch.equal(p[0], q[0]) for p, q in zip(timed, timed2))
print('OK', a[0].dtype, tuple(a[0].shape))
""", gelu)
    assert "OK torch.bfloat16 (64, 128)" in out


def test_a_sample_that_cannot_grow_keeps_its_plan(py, gelu):
    """A grown sample is an option: where its sets do not fit in memory (the candidate may hold
    most of it), the session keeps the planned calls and says so, instead of failing the run as
    the candidate's warm-up error. A CPU session may grow too; each workload knows how many share
    the run's budget."""
    out = py_snippet(py, """
import hotkernel_contract as hk
t = hk.Target.from_dict(hk.read_target_file('gelu_baseline.py'), '.')
assert t.workload_count == 1
s = hk.prepare(t)
assert s.calls == s.planned_calls and s.grow_note is None
assert s.calls < s.most_calls <= hk.CPU_GROW_MAX_CALLS   # a CPU's short sample may grow too
real = hk.draw_sets
def no_memory(*a, **k):
    raise RuntimeError("CUDA out of memory. Tried to allocate 256.00 MiB")
hk.draw_sets = no_memory
try:
    assert s.use_calls(s.planned_calls + 50) == s.planned_calls
finally:
    hk.draw_sets = real
assert len(s.timed_sets) == s.calls == s.k and "did not fit in the device's memory" in s.grow_note, s.grow_note
def other_error(*a, **k):
    raise RuntimeError("a bug, not memory")
hk.draw_sets = other_error
try:
    s.use_calls(s.planned_calls + 50)
except RuntimeError as e:
    assert "a bug" in str(e)
else:
    raise AssertionError("an error that is not memory was swallowed")
finally:
    hk.draw_sets = real
w = hk.Target.from_dict(dict(hk.read_target_file('gelu_baseline.py'), shape='MxK',
                             workloads=[{'M': 8, 'K': 16}, {'M': 16, 'K': 16}, {'M': 32, 'K': 16}]), '.')
assert w.workload_count == 3 and [sub.workload_count for _, sub in w.workload_targets()] == [3, 3, 3]
print('OK')
""", gelu)
    assert "OK" in out


def test_rotation_k_function_follows_cache_and_bytes(py, gelu):
    py_snippet(py, """
import hotkernel_contract as hk
L2 = 60 << 20
assert hk.rotation_k(1 << 20, L2) == 180                     # 3 x 60 MiB / 1 MiB
assert hk.rotation_k(134217728, L2) == 2                     # bigger than L2: still 2, never the same set twice
assert hk.rotation_k(45 << 20, L2) == 4
assert hk.rotation_k(1 << 20, 2 * L2) == 256                 # twice the L2: capped at MAX_ROTATE_K
assert hk.MAX_ROTATE_K == 256 and hk.ROTATE_FACTOR == 3
assert hk.rotation_k(1, L2) == hk.MAX_ROTATE_K
assert hk.rotation_k(1 << 20, L2, rotate=False) == 1
assert hk.rotation_k(1 << 20, 40 << 20) == 120               # K follows the cache size
# a CPU's last-level cache gets CPU_ROTATE_FACTOR, a GPU's L2 ROTATE_FACTOR
assert hk.CPU_ROTATE_FACTOR == 1.5
assert hk.rotate_factor('cuda') == hk.rotate_factor('cuda:1') == 3 and hk.rotate_factor('cpu') == 1.5
assert hk.rotation_k(8 << 20, 32 << 20, factor=hk.rotate_factor('cpu')) == 6   # the bundled example on 32 MiB
b, src = hk.cache_bytes('cpu')
assert b > 0 and src
""", gelu)


def test_warmup_auto_stops_when_steady_and_not_while_ramping(py, gelu):
    py_snippet(py, """
import math
import hotkernel_contract as hk
def marks(times):  # pass durations laid end to end
    out, t = [], 0.0
    for p in times:
        t += p
        out.append((t, p))
    return out
steady = marks([0.002] * 300)                                # 0.6 s of identical 2 ms passes
assert hk.warmup_settled(steady, "auto")
assert not hk.warmup_settled(steady[:40], "auto")            # 0.08 s: under WARMUP_MIN_S
ramp = marks([0.002 * (1 - 0.3 * min(1.0, i / 350.0)) for i in range(320)])  # clocks still rising at 0.55 s
assert ramp[-1][0] > hk.WARMUP_MIN_S and not hk.warmup_settled(ramp, "auto")
assert hk.warmup_settled(marks([0.002 * (1 - 0.3 * min(1.0, i / 350.0)) for i in range(700)]), "auto")  # past 1 s
assert hk.warmup_settled(marks([0.1] * 10), "auto")         # 1 s of slow passes: the cap
assert not hk.warmup_settled(marks([0.1] * 6), "auto")      # slow passes: not three a window yet
assert hk.warmup_settled(steady, 0.1) and not hk.warmup_settled(steady, 0.7)
assert hk.warmup_settled(ramp, "auto", max_s=hk.WARMUP_MAX_S_CPU) == (ramp[-1][0] >= hk.WARMUP_MAX_S_CPU)  # the CPU's cap
# Long calls get fewer calls a sample (~REPLAY_BUDGET_S a sample), never fewer than the k sets
# that keep caches cold (the passes in `marks` go over those k sets).
budget = hk.REPLAY_BUDGET_S
assert hk.calls_for(100, 2, marks([2 * budget / 100] * 5)) == 100          # 1x the budget: as is
assert hk.calls_for(100, 2, marks([2 * budget / 10] * 5)) == 10            # 10x: a tenth
assert hk.calls_for(99, 3, marks([3 * budget / 10] * 5)) == 10             # not rounded to passes any more
assert hk.calls_for(100, 2, marks([10 * budget] * 5)) == 2                 # at least the k sets
assert hk.calls_for(100, 40, marks([40 * budget / 10] * 5)) == 40          # ... even when the budget wants 10
assert hk.calls_for(100, 2, []) == 100 and hk.calls_for(100, 2, marks([0.0] * 3)) == 100
# A GPU's short sample grows toward the budget, as far as `most` (its sets' memory) lets it: the
# 0.19 ms gelu of 256 MiB sets planned at 4 calls (1 GiB) grows to 20 of the 5 GiB an H100 allows.
assert hk.calls_for(4, 2, marks([2 * 0.00019] * 5), most=20) == 20
assert hk.calls_for(4, 2, marks([2 * 0.00019] * 5), most=100) == 53      # 10 ms of calls
assert hk.calls_for(4, 2, marks([2 * 0.00019] * 5)) == 4                 # no `most`: the plan
assert hk.calls_for(100, 2, marks([2 * budget / 10] * 5), most=400) == 10  # long calls are still cut
# A CPU's budget is CPU_REPLAY_BUDGET_S (20 ms): its short samples grow twice as far, its long ones
# are cut there.
cpu = hk.CPU_REPLAY_BUDGET_S
assert cpu == 2 * budget
assert hk.calls_for(100, 2, marks([2 * 22e-6] * 5), most=1024, budget_s=cpu) == 910  # a 22 us gelu: 20 ms
assert hk.calls_for(100, 2, marks([2 * cpu / 10] * 5), most=1024, budget_s=cpu) == 10  # 2 ms calls: 10
assert hk.most_calls(4, 100, 256 << 20, 5 << 30) == 20                   # 5 GiB of 256 MiB sets
assert hk.most_calls(100, 100, 8 << 20, 8 << 30) == hk.GROW_MAX_CALLS    # tiny sets: the count's cap
assert hk.most_calls(100, 100, 1 << 20, 8 << 30, rotate=False) == 100    # one set: no growth
assert hk.most_calls(40, 100, 256 << 20, 1 << 30) == 40                  # never under the plan
# A CPU's cap: its calls are rarely a few microseconds, and its allowance has a fixed 0.4 ms.
assert hk.most_calls(100, 100, 64 << 10, 1 << 30, cap=hk.CPU_GROW_MAX_CALLS) == hk.CPU_GROW_MAX_CALLS == 1024
assert hk.most_calls(100, 100, 4 << 20, 1 << 30, cap=hk.CPU_GROW_MAX_CALLS) == 256  # 1 GiB of 4 MiB sets
# Calls a sample and sets: one set per call, iters of them unless they do not fit the budget.
assert hk.plan_calls(100, 2, 64 << 20, 4 << 30) == 64                # 4 GiB / 64 MiB sets
assert hk.plan_calls(100, 24, 1 << 20, 4 << 30) == 100              # fits: iters
assert hk.plan_calls(10, 24, 1 << 20, 4 << 30) == 24                 # the cache rule asks more
assert hk.plan_calls(100, 2, 8 << 30, 4 << 30) == 2                   # huge sets: the cache rule's 2
assert hk.plan_calls(100, 1, 1 << 20, 4 << 30, rotate=False) == 100   # no rotation: one set
# The ramp before samples: replays back to back, each waited for, for RAMP_S and at least two.
t, log = [0.0], []
def replay():
    log.append("replay")
def sync():
    log.append("sync")
    t[0] += 0.004                                                      # a 4 ms replay
n = hk.ramp(replay, sync, clock=lambda: t[0])
assert n == math.ceil(hk.RAMP_S / 0.004) and log == ["replay", "sync"] * n, (n, log[:6])
t[0], log[:] = 0.0, []
def slow_sync():
    t[0] += 1.0                                                        # one replay over RAMP_S
assert hk.ramp(replay, slow_sync, clock=lambda: t[0]) == 2
assert 0 < hk.sets_budget('cpu') <= hk.SETS_BUDGET_BYTES
assert hk.grow_budget('cpu', 1) == hk.sets_budget('cpu')                # a CPU's grows within its plan's budget
import os
said = os.environ.pop("HOTKERNEL_SETS_BYTES", None)
os.environ["HOTKERNEL_SETS_BYTES"] = str(3 << 30)
assert hk.sets_budget('cuda') == hk.grow_budget('cuda', 4) == 3 << 30  # said: both, whatever the workloads
del os.environ["HOTKERNEL_SETS_BYTES"]
# A GPU's growth budget, its memory read through _device_bytes: 8 GiB a run or a sixteenth of the
# card, shared by the run's workloads, never under the 1 GiB plan.
real = hk._device_bytes
try:
    hk._device_bytes = lambda device: 141 << 30                          # an H200
    assert hk.grow_budget('cuda', 1) == hk.GPU_SETS_BUDGET_BYTES == 8 << 30
    assert hk.grow_budget('cuda', 4) == 2 << 30
    assert hk.grow_budget('cuda', 16) == hk.sets_budget('cuda') == 1 << 30  # the plan's floor
    hk._device_bytes = lambda device: 80 << 30                           # an 80 GB card: 5 GiB
    assert hk.grow_budget('cuda', 1) == 5 << 30 and hk.grow_budget('cuda', 4) == (5 << 30) // 4
    hk._device_bytes = lambda device: 16 << 30                           # 16 GB: no room to grow
    assert hk.grow_budget('cuda', 1) == hk.sets_budget('cuda') == 1 << 30
    hk._device_bytes = lambda device: None                               # unreadable: the defaults
    assert hk.grow_budget('cuda', 2) == 4 << 30
finally:
    hk._device_bytes = real
    if said is not None:
        os.environ["HOTKERNEL_SETS_BYTES"] = said
for bad in ("soon", -1, 1e9):
    try:
        hk.Target({"name": "t", "from": "torch.nn.functional:gelu", "shape": "8", "warmup_s": bad})
    except hk.TargetError as e:
        assert "warmup_s" in str(e)
    else:
        raise AssertionError("warmup_s %r accepted" % (bad,))
""", gelu)


@pytest.mark.parametrize("cache", [262144, 4194304])
def test_script_rotate_k_follows_the_cache_size(py, gelu, cache):
    rc, line, err = run_script(py, gelu / "gelu_baseline.py", env={"HOTKERNEL_CACHE_BYTES": str(cache)})
    assert rc == 0, err
    per_call = 2 * 2 * 64 * 128  # bf16 x read + out written
    assert line["cache_bytes"] == cache and line["cache_source"] == "HOTKERNEL_CACHE_BYTES"
    assert line["cache_k"] == min(256, max(2, math.ceil(contract_constant("CPU_ROTATE_FACTOR") * cache / per_call)))
    # iters 5: the cache rule's sets at least, then grown toward 10 ms of calls
    assert line["rotate_k"] == line["calls_per_sample"]
    assert max(line["cache_k"], 5) <= line["calls_per_sample"] <= contract_constant("CPU_GROW_MAX_CALLS")


def test_check_function_directly(py, gelu):
    py_snippet(py, """
import torch, hotkernel_contract as hk
ref = torch.randn(256, 64)
out = ref.to(torch.bfloat16)
exp = [((256, 64), torch.bfloat16)]
assert hk.check(out, ref, 'bf16', exp)['ok']
assert not hk.check(torch.zeros_like(out), ref, 'bf16', exp)['ok']
assert not hk.check(out, ref, 'fp16', [((256, 64), torch.float16)])['ok']   # dtype
r = hk.check(out.float(), ref, 'fp32', [((256, 64), torch.float32)])
assert not r['ok'] and 'outside tolerance' in r['reason']                  # bf16 math for an fp32 target
tiny = ref * 1e-6                                                           # tolerance scales with magnitude
assert not hk.check(torch.zeros(256, 64), tiny, 'fp32')['ok']
assert hk.check(tiny.clone(), tiny, 'fp32')['ok']
class Sub(torch.Tensor): pass
assert 'plain torch.Tensor' in hk.check(out.as_subclass(Sub), ref, 'bf16', exp)['reason']
# A container subclass fails without its own code running: unpacking it would run the candidate's
# code in the harness's thread (cheats/lazy_container.py).
ran = []
class Lazy(list):
    def __iter__(self): ran.append('iter'); return iter([out])
    def __len__(self): ran.append('len'); return 1
    def __getitem__(self, i): ran.append('getitem'); return out
class LazyTuple(tuple):
    def __iter__(self): ran.append('iter'); return iter((out,))
for lazy in (Lazy([out]), LazyTuple((out,))):
    r = hk.check(lazy, ref, 'bf16', exp)
    assert not r['ok'] and 'subclass; return a plain tuple or list' in r['reason'], r
    assert hk.as_outputs(lazy) is None
class Meta(type):
    def __eq__(cls, other): ran.append('eq'); return True
    __hash__ = type.__hash__
class Odd(metaclass=Meta):
    @property
    def __class__(self): ran.append('class'); return torch.Tensor
assert hk.as_outputs(Odd()) is None and hk.as_outputs([Odd()]) is None and not hk.check(Odd(), ref, 'bf16', exp)['ok']
assert ran == [], ran
assert hk.as_outputs([out, out]) == [out, out] and hk.as_outputs((out,)) == [out] and hk.as_outputs(out) == [out]
print('OK')
""", gelu)


def test_check_fast_pass_never_passes_what_the_rule_fails(py, gelu):
    # check() passes the common case in a few kernels (_clearly_within) and leaves the rest to
    # its exact path: its verdict must be the rule's, element by element, at the line too.
    py_snippet(py, """
import torch, hotkernel_contract as hk
g = torch.Generator().manual_seed(2)
ref = torch.randn(300, 70, generator=g)
ref.view(-1)[:50] = 0.0                            # zeros: allowance atol*rms only
def rule(c, ref, rtol, atol_f):                    # the documented rule, written out
    o, r = c.double(), ref.double()
    scale = float(r.pow(2).mean().sqrt())
    return bool(torch.isfinite(o).all()) and bool(((o - r).abs() <= atol_f * scale + rtol * r.abs()).all())
def nudge(by, at=777):
    t = ref.clone()
    scale = float(ref.double().pow(2).mean().sqrt())
    t.view(-1)[at] = ref.view(-1)[at] + by * (1.6e-2 * scale + 1.6e-2 * abs(float(ref.view(-1)[at])))
    return t
cases = {"same": ref.clone(), "bf16": ref.to(torch.bfloat16).float(), "zeros": torch.zeros_like(ref)}
for by in (0.5, 0.999999, 1.0 - 1e-12, 1.0, 1.0 + 1e-12, 1.000001, 3.0, -1.0, -1.5):
    cases["by %r" % by] = nudge(by)
    cases["by %r at a zero" % by] = nudge(by, at=7)
for bad in ("nan", "inf", "-inf"):
    t = ref.clone(); t.view(-1)[9] = float(bad); cases[bad] = t
fast = 0
for name, c in cases.items():
    for rtol, atol_f in ((1.6e-2, 1.6e-2), (1e-4, 1e-4), (1.6e-2, 0.0)):
        want = rule(c, ref, rtol, atol_f)
        got = hk.check(c, ref, 'fp32', rtol=rtol, atol=atol_f)
        assert got['ok'] == want, (name, rtol, atol_f, got)
        clear = hk._clearly_within(c.double(), ref.double(), rtol, atol_f)
        if clear is not None:
            fast += 1
            assert want and clear['tol_used'] < 1, (name, clear)
            assert abs(clear['scale'] / float(ref.double().pow(2).mean().sqrt()) - 1) < 1e-12
# the fast pass takes the clear cases (atol 0 with zeros in the reference never is one)
assert fast >= 8, fast
zero = torch.zeros_like(ref)                      # no allowance anywhere: the exact path decides
assert hk._clearly_within(zero.double(), zero.double(), 1.6e-2, 1.6e-2) is None
assert hk.check(zero.clone(), zero, 'fp32')['ok'] and not hk.check(ref, zero, 'fp32')['ok']
bad_ref = ref.clone(); bad_ref.view(-1)[3] = float('nan')
assert hk._clearly_within(ref.double(), bad_ref.double(), 1.6e-2, 1.6e-2) is None
assert 'reference' in hk.check(ref, bad_ref, 'fp32')['reason']
print('OK')
""", gelu)


def test_check_quick_agrees_with_check(py, gelu):
    # The screen for the outputs of timed calls: never a pass where check() fails, and the
    # failure it hands over is check()'s own (same reason).
    py_snippet(py, """
import torch, hotkernel_contract as hk
g = torch.Generator().manual_seed(1)
ref = torch.randn(512, 96, generator=g)
exp = [((512, 96), torch.bfloat16)]
good = ref.to(torch.bfloat16)
q = hk.check_quick(good, ref, 'bf16', exp)
assert q['ok'] and q.get('screened'), q
def nudge(t, at, by):  # one element moved by `by` times its allowance
    t = t.clone().float()
    scale = float(ref.double().pow(2).mean().sqrt())
    allow = 1.6e-2 * scale + 1.6e-2 * abs(float(ref.view(-1)[at]))
    t.view(-1)[at] = ref.view(-1)[at] + by * allow
    return t
cases = [good, torch.zeros_like(good), good.float(), good.to(torch.float16)]
for by in (0.5, 0.99, 0.9995, 1.0, 1.0005, 1.01, 2.0):
    cases.append(nudge(good, 777, by))
nan = good.clone(); nan.view(-1)[5] = float('nan'); cases.append(nan)
inf = good.clone(); inf.view(-1)[6] = float('inf'); cases.append(inf)
cases += [good[:10], [good], (good, good), 3.0, good.as_subclass(type('Sub', (torch.Tensor,), {}))]
for c in cases:
    for dt, e in (('bf16', exp), ('fp32', None)):
        a, b = hk.check(c, ref, dt, e), hk.check_quick(c, ref, dt, e)
        assert a['ok'] == b['ok'], (dt, a, b)
        if not a['ok']:
            assert a['reason'] == b['reason'], (a, b)
# a near miss inside the margin is not screened: check() decides it
near = nudge(good, 3, 0.9995)
assert hk.check_quick(near, ref, 'fp32').get('screened') is None
print('OK')
""", gelu)


# A snippet's start: the harness's run (runner.TrustedRun) of a small CPU target, torch:mul of an
# 8x16 x and a w of 16.
MUL_RUN = """
import sys
sys.path.insert(0, %r)
import torch, hotkernel_contract as hk, hotkernel_harness as runner
t = hk.Target({"name": "t", "from": "torch:mul", "shape": "8x16", "extra": {"w": "16"}, "device": "cpu",
               "dtype": "fp32"})
run = runner.TrustedRun(hk, torch, t, 1234)
""" % str(ROOT / "python")


def test_timed_replays_get_fresh_values_in_place(py, gelu):
    # The harness's fresh_values (before every timed graph replay; CPU tensors here): the
    # rotated inputs change in place, shared ones stay; with no rotation every input changes.
    py_snippet(py, """
import sys
sys.path.insert(0, %r)
import torch, hotkernel_contract as hk, hotkernel_harness as runner
for rotate, changed in ((["x"], {"x"}), ([], {"x", "w"})):
    t = hk.Target({"name": "t", "from": "torch:mul", "shape": "8x16", "extra": {"w": "16"},
                   "rotate": rotate, "device": "cpu", "dtype": "fp32"})
    run = runner.TrustedRun(hk, torch, t, 1234)
    sets = run.session.timed_sets
    before = [[x.clone() for x in one] for one in sets]
    ptrs = [[x.data_ptr() for x in one] for one in sets]
    assert run.fresh_values() is None
    for one, old, p in zip(sets, before, ptrs):
        assert [x.data_ptr() for x in one] == p  # in place: the graph reads the same memory
        for name, x, y in zip(t.call_names, one, old):
            assert torch.equal(x, y) != (name in changed), (rotate, name)
print("OK")
""" % str(ROOT / "python"), gelu)


def test_a_deferred_checks_copies_show_when_they_are_rewritten(py, gelu):
    # A checked graph replay's copies wait for their check while the candidate's later samples
    # run (runner: DEFERRED_CHECK_BYTES): their digest, taken when they are made, shows a copy of
    # an output or of an input rewritten meanwhile; a non-tensor output is left to the check.
    py_snippet(py, MUL_RUN + """
sets, seeds = run.fresh_round()
# A reference is computed from its set drawn again from the round's seed: copies written into by
# the candidate's calls (they can reach them through the harness's frames) choose nothing.
drawn = [[x.clone() for x in one] for one in sets]
for one in sets:
    for x in one:
        x.zero_()
for si in range(len(sets)):
    again = run._drawn_again(seeds, si, {})
    assert all(torch.equal(a, b) for a, b in zip(again, drawn[si])), si
    assert not all(torch.equal(a, b) for a, b in zip(again, sets[si])), si
sets, seeds = run.fresh_round()
held = [run.snapshot(torch.ones(8, 16)), run.snapshot([torch.ones(8, 16), torch.zeros(4)]), 1.0]
d = run._copies_digest(held, sets)
assert run._copies_digest(held, sets) == d
held[1][0][3, 5] = 2.0
assert run._copies_digest(held, sets) != d
held[1][0][3, 5] = 1.0
sets[0][1][2] += 1.0
assert run._copies_digest(held, sets) != d
# an output with a NaN (the check's to report) digests as itself
held[0][0, 0] = float("nan")
d = run._copies_digest(held, sets)
assert runner._same_digest(run._copies_digest(held, sets), d) and not runner._same_digest(d[:-1], d)
print("OK")
""", gelu)


def test_a_gpu_samples_held_outputs_are_screened_with_one_read(py, gelu):
    # A checked graph replay's held outputs (runner._screened_outputs: a GPU's path, run here on
    # CPU tensors): every screen, and every output's equality to the first of its set, queued and
    # read back at once; what does not pass is checked in full. It decides as the check of one
    # output at a time does, naming the same call and reason.
    py_snippet(py, """
import sys
sys.path.insert(0, %r)
import torch, hotkernel_contract as hk, hotkernel_harness as runner
for rotate in (["x"], []):  # a set a call (the screens), one set for all (equalities to the first)
    t = hk.Target({"name": "t", "from": "torch:mul", "shape": "8x16", "extra": {"w": "16"},
                   "rotate": rotate, "device": "cpu", "dtype": "fp32"})
    run = runner.TrustedRun(hk, torch, t, 1234)
    k = run.session.k
    assert (k > 1) == bool(rotate), k
    reads = []
    read = run._read_back
    run._read_back = lambda v: reads.append(len(v)) or read(v)
    n = 6
    idx = list(range(n))
    sets, seeds = run.fresh_round()
    good = [torch.mul(*sets[j %% k]) for j in idx]
    def both(outs):
        one_by_one = run._check_outputs(outs, idx, (seeds, None), "replay", picked=set(idx))
        del reads[:]
        batched = run._screened_outputs(outs, idx, (seeds, None), "replay")
        assert reads == [reads[0]] and reads[0] > 0, reads  # one read back for every output
        assert batched == one_by_one, (batched, one_by_one)
        return batched
    assert both(good) is None
    for j, bad in ((3, lambda o: o.add(1.0)), (0, lambda o: o.mul(0.0)), (5, lambda o: o.to(torch.float16)),
                   (2, lambda o: torch.full_like(o, float("nan")))):
        outs = list(good)
        outs[j] = bad(outs[j])
        got = both(outs)
        assert got is not None and got.startswith("replay, call %%d:" %% (j + 1)), (rotate, j, got)
    # the first output of a set wrong, the later ones right: each is still judged on its own
    outs = list(good)
    outs[0] = outs[0].add(1.0)
    assert both(outs).startswith("replay, call 1:")
print("OK")
""" % str(ROOT / "python"), gelu)


# A snippet's start: a CPU gelu target's TrustedRun and the Harness snapshot that watches it.
_HARNESS_ON_GELU = """
import sys
sys.path.insert(0, %r)
import torch, hotkernel_contract as hk, hotkernel_harness as runner
D = sys.modules["hotkernel_defences"]
t = hk.Target({"name": "t", "from": "torch.nn.functional:gelu", "shape": "64x64", "device": "cpu",
               "dtype": "fp32", "iters": 6, "samples": 3, "warmup_s": 0.01})
run = runner.TrustedRun(hk, torch, t, 1234)
harness = runner.Harness(torch, hk, runner, [run.session.baseline_fn], {"run": run})
""" % str(ROOT / "python")


def test_a_non_str_name_in_a_watched_dict_runs_no_code_and_reads_as_added(py, gelu):
    # A key of the candidate's own class put into the run's __dict__ or a harness module's: the
    # state comparison keyed it, and hashing or comparing it ran the candidate's code in the
    # harness's thread between samples. Keyed by its identity now, it is a name added.
    py_snippet(py, _HARNESS_ON_GELU + """assert harness.state_changes() == [], harness.state_changes()
ran = []
class Key:
    def __hash__(self):
        ran.append("hash"); return 1
    def __eq__(self, other):
        ran.append("eq"); return False
    def __str__(self):
        ran.append("str"); return "k"
for where in (run.__dict__, vars(hk)):
    key = Key()
    where[key] = 1
    del ran[:]
    changed = harness.state_changes()
    harness.changes()
    assert any("another type than str" in c for c in changed), changed
    assert ran == [], ran  # the harness ran none of the key's code
    del where[key]
assert harness.state_changes() == [], harness.state_changes()
print("OK")
""", gelu)


def test_the_harness_modules_containers_are_compared_by_content_and_its_helpers_watched(py, gelu):
    # A module dict edited in place kept its identity: the audit hook's rules (SEEN) emptied so,
    # a profile hook raised no alarm (seen_rules_cleared.py). And the sandbox's module, whose
    # function installs the filter against new processes as the samples begin, was not watched.
    py_snippet(py, _HARNESS_ON_GELU + """assert harness.state_changes() == [], harness.state_changes()
hk.TOLERANCES["float32"] = dict(hk.TOLERANCES.get("float32") or {}, rtol=1.0)
assert any("TOLERANCES" in c for c in harness.state_changes()), harness.state_changes()
del hk.TOLERANCES["float32"]
sb = sys.modules["hotkernel_sandbox"]
spawn = dict(sb._SPAWN_CALLS)
sb._SPAWN_CALLS["x86_64"] = (None, None, 9999, 435)
assert any("_SPAWN_CALLS" in c for c in harness.state_changes()), harness.state_changes()
sb._SPAWN_CALLS.update(spawn)
was = sb.deny_new_processes
sb.deny_new_processes = lambda: "denied from the timed samples on"
critical, _ = harness.changes()
assert "hotkernel_sandbox.deny_new_processes" in critical, critical
sb.deny_new_processes = was
assert harness.state_changes() == [] and harness.changes()[0] == [], (harness.state_changes(), harness.changes())
# A function's defaults replaced: the same function and code, another call.
was = hk.warm_up.__defaults__
hk.warm_up.__defaults__ = tuple(was)[:-1] + (0.0,)
assert any("warm_up" in c for c in harness.state_changes()), harness.state_changes()
assert "hotkernel_contract.warm_up" in harness.changes()[0], harness.changes()
hk.warm_up.__defaults__ = was
try:
    D.SEEN.clear()
    raise SystemExit("SEEN was cleared")
except AttributeError:
    pass
# ... but the dict behind a read-only view is handed to the other side of ==: emptied so, it is seen.
class Emptier:
    def __eq__(self, other):
        if type(other) is dict:
            other.clear()
        return False
D.SEEN == Emptier()
assert len(D.SEEN) == 0
assert any("SEEN" in c for c in harness.state_changes()), harness.state_changes()
print("OK")
""", gelu)


def test_the_check_after_each_sample_raises_no_audit_event_the_hook_would_judge(py, gelu):
    # Each audit event runs the harness's own audit hook, in Python: the state compared after every
    # sample once raised ~3,000 builtins.id, ~700 ctypes.string_at and ~500 function-attribute
    # events, most of a check's 14 ms on an H200's host. It reads identities through object's hash
    # and libtorch's pointers through views made once; what it still raises (marshal's one dumps,
    # a function's __code__ read) the hook lets go of before its lock. And a change is still seen.
    py_snippet(py, _HARNESS_ON_GELU + """run._harness = harness
events = {}
on = [False]
def count(event, args):
    if on[0]:
        events[event] = events.get(event, 0) + 1
sys.addaudithook(count)
on[0] = True
run._dispatch_intact()
changed = harness.state_changes()
on[0] = False
assert run.tampered is None and changed == [], (run.tampered, changed)
costly = {e: n for e, n in events.items() if e in ("builtins.id", "ctypes.string_at", "ctypes.cdata")}
assert not costly, costly
assert sum(events.values()) < 1200, events
# identities by object's hash: a rebound global and a replaced attribute are still seen
was = hk.warm_up
hk.warm_up = lambda *a, **k: None
assert any("warm_up" in c for c in harness.state_changes()), harness.state_changes()
hk.warm_up = was
was = run._check_fn
run._check_fn = lambda *a, **k: None
assert any("_check_fn" in c for c in harness.state_changes()), harness.state_changes()
run._check_fn = was
assert harness.state_changes() == [], harness.state_changes()
print("OK")
""", gelu)


def test_a_profile_hook_left_after_a_sample_voids_the_run(py, gelu):
    # The audit hook alarms when one is set; this is the sample's own look, for a hook set where
    # the audit hook's events were kept from it (its rules emptied in place: seen_rules_cleared.py).
    # No audit hook here: only the per-sample check can see it.
    py_snippet(py, """
import sys
sys.path.insert(0, %r)
import torch, torch.nn.functional as F, hotkernel_contract as hk, hotkernel_harness as runner
t = hk.Target({"name": "t", "from": "torch.nn.functional:gelu", "shape": "64x64", "device": "cpu",
               "dtype": "fp32", "iters": 6, "samples": 3, "warmup_s": 0.01})
calls = [0]
def kernel(x):
    calls[0] += 1
    if calls[0] == 30:  # in the timed samples
        sys.setprofile(lambda frame, event, arg: None)
    return F.gelu(x)
run = runner.TrustedRun(hk, torch, t, 1234)
harness = runner.Harness(torch, hk, runner, [run.session.baseline_fn], {"run": run})
try:
    res = run.measure(kernel, "candidate", harness, runner.ThreadWatch())
finally:
    sys.setprofile(None)
assert calls[0] >= 30, calls
assert res["status"] == "invalid" and "profile hook" in res["reason"], res
print("OK")
""" % str(ROOT / "python"), gelu)


def test_cpu_checks_a_share_of_each_sample_picked_after_it(py, gelu):
    # The harness on the CPU: every output of a sample held, CPU_CHECKED_CALLS of them (at
    # least a quarter) checked, picked after the sample, plus the spot checks. An honest kernel
    # gets exactly that many checks a sample; one faking one call of every six is caught within
    # 40 samples (it passes a sample with probability <= 1/2: 1e-12 for the run).
    py_snippet(py, """
import os, sys
sys.path.insert(0, %r)
os.environ["HOTKERNEL_CACHE_BYTES"] = str(256 << 10)  # K = 6 (64 KiB a call): 6 calls a sample, however slow
os.environ["HOTKERNEL_SETS_BYTES"] = str(6 * (32 << 10))  # ... and no room to grow past them
import torch, torch.nn.functional as F, hotkernel_contract as hk, hotkernel_harness as runner
assert [runner.cpu_checked_calls(n) for n in (1, 2, 3, 6, 12, 13, 48)] == [1, 2, 3, 3, 3, 4, 12]
t = hk.Target({"name": "t", "from": "torch.nn.functional:gelu", "shape": "64x128", "device": "cpu",
               "dtype": "fp32", "iters": 6, "samples": 40, "warmup_s": 0.01})

def measure(fn):
    run = runner.TrustedRun(hk, torch, t, 1234)
    counted = []
    quick = run._quick_fn
    run._quick_fn = lambda *a: counted.append(1) or quick(*a)
    s = run.session
    harness = runner.Harness(torch, hk, runner, [s.baseline_fn], {"run": run})
    res = run.measure(fn, "candidate", harness, runner.ThreadWatch())
    return res, len(counted), run.spot_copies

res, checks, spots = measure(lambda x: F.gelu(x))
assert res["status"] == "ok" and res["calls_per_sample"] == 6, res
# Not every call: 3 of 6 held, and the calls copied as they returned, drawn call by call after
# each returned (SPOT_CHECKS_PER_SAMPLE a sample on average: 80 of 240, sd 7).
assert checks == 40 * 3 + spots, (checks, spots)
assert 40 <= spots <= 120, spots

# the picks move from sample to sample and cover every call, whatever the candidate does to
# os.urandom or the random module once the run is set up
import random
seen = set()
run = runner.TrustedRun(hk, torch, t, 1234)
urandom, sample = os.urandom, random.Random.sample
os.urandom, random.Random.sample = (lambda n: bytes(n)), (lambda self, pop, k: list(pop)[:k])
try:
    for _ in range(200):
        picked = run._picked_after_window(list(range(6)))
        assert len(picked) == 3 and picked <= set(range(6))
        seen |= picked
finally:
    os.urandom, random.Random.sample = urandom, sample
assert seen == set(range(6)), seen

n = [0]
def one_in_six(x):
    n[0] += 1
    return torch.zeros_like(x) if n[0] %% 6 == 0 else F.gelu(x)
res, _, _ = measure(one_in_six)
assert res["status"] == "incorrect" and "sample" in res["reason"], res
print("OK")
""" % str(ROOT / "python"), gelu)


def test_run_file_imports_candidate_after_setup_and_writes_to_result_fd(py, gelu):
    marker = variant(gelu, "marker",
                     "    return _baseline(x)\nimport sys\nprint('IMPORTED', 'hotkernel_contract' in sys.modules, flush=True)\n")
    r_fd, w_fd = os.pipe()
    env = dict(os.environ, HOTKERNEL_RESULT_FD=str(w_fd), HOTKERNEL_NONCE="n0nce")
    p = subprocess.run([py, str(ROOT / "python" / "hotkernel_contract.py"), "--run", str(marker), "--role", "candidate",
                        "--target-from", str(gelu / "gelu_baseline.py")], env=env, pass_fds=(w_fd,),
                       capture_output=True, text=True, timeout=240)
    os.close(w_fd)
    data = os.read(r_fd, 1 << 20).decode()
    os.close(r_fd)
    assert p.returncode == 0, p.stderr
    line = json.loads(data)
    assert line["nonce"] == "n0nce" and line["ok"] is True and line["role"] == "candidate"
    assert "{" not in p.stdout  # the result went to the fd, not stdout
    assert "IMPORTED True" in p.stdout
    # the binary's copy ran, not the vendored one next to the target
    own = (ROOT / "python" / "hotkernel_contract.py").read_bytes()
    import hashlib
    assert line["contract_sha256"] == hashlib.sha256(own).hexdigest()


def test_run_file_takes_target_from_the_baseline(py, gelu):
    # a candidate that loosens its own tolerance is judged by the baseline's TARGET
    text = variant(gelu, "loose", "    return _baseline(x) * 1.1\n").read_text()
    loose = gelu / "gelu_loose2.py"
    loose.write_text(text.replace('"timer": "auto",', '"timer": "auto",\n    "rtol": 0.5,'))
    rc, line, err = run_script(py, loose)
    assert line["ok"] is True  # self-judged with its own loose TARGET...
    out = py_snippet(py, """
import json, hotkernel_contract as hk
print(json.dumps(hk.run_file('gelu_loose2.py', 'candidate', target_from='gelu_baseline.py')))
""", gelu)
    res = json.loads(out.strip().splitlines()[-1])
    assert res["ok"] is False and "outside tolerance" in res["reason"]  # ...but not by the baseline's


def test_import_touches_no_cuda(py, gelu):
    out = py_snippet(py, "import torch, hotkernel_contract\nprint(torch.cuda.is_initialized())", gelu)
    assert out.strip() == "False"


def test_bad_target_definitions_are_errors(py, gelu):
    py_snippet(py, """
import hotkernel_contract as hk
base = {'name': 't', 'from': 'torch.nn.functional:gelu', 'shape': [4, 4]}
for bad, needle in [
    (dict(base, shape='4y4'), "joined by 'x'"),
    (dict(base, rotate=['w']), 'not an input'),
    (dict(base, derive='m:f', inputs=['x']), 'derive needs a reference'),
    (dict(base, dtype='int4'), 'dtype'),
    (dict(base, timer='wallclock'), 'timer'),
    (dict(base, bogus=1), 'unknown TARGET field'),
]:
    try:
        hk.Target.from_dict(bad)
    except hk.TargetError as e:
        assert needle in str(e), (needle, str(e))
    else:
        raise AssertionError(bad)
r = hk.measure(dict(base, **{'from': 'nosuchmod_q:f'}), lambda x: x)
assert r['status'] == 'error' and 'nosuchmod_q' in r['reason'], r
print('OK')
""", gelu)


def test_bundled_example_is_what_new_writes_and_runs_here(py, tmp_path):
    ex = ROOT / "examples" / "rmsnorm"
    assert (ex / "hotkernel_contract.py").read_bytes() == (ROOT / "python" / "hotkernel_contract.py").read_bytes(), \
        "examples/rmsnorm/hotkernel_contract.py is stale: regenerate it (see examples/rmsnorm/README.md)"
    # new, run the same way into a scratch folder, writes the same baseline
    shutil.copy(ex / "rmsnorm.py", tmp_path / "rmsnorm.py")
    rc, res, err = hk_new(py, "./rmsnorm.py:rmsnorm", "--shape", "512x4096", "--extra", "w:4096", "--iters", "20",
                          "--flops", "8388608", cwd=tmp_path)
    assert rc == 0, err
    assert (tmp_path / "rmsnorm_baseline.py").read_text() == (ex / "rmsnorm_baseline.py").read_text()
    base_target = (ex / "rmsnorm_baseline.py").read_text().split("TARGET = ")[1].split("\n}\n")[0]
    assert base_target == (ex / "rmsnorm_candidate.py").read_text().split("TARGET = ")[1].split("\n}\n")[0]
    # on the CPU the candidate falls back to the baseline's code and passes its check
    rc, line, err = run_script(py, ex / "rmsnorm_candidate.py", env={"HOTKERNEL_CACHE_BYTES": "1048576",
                                                                       "OMP_NUM_THREADS": "1"})
    assert rc == 0, err
    assert line["ok"] is True and line["timer"] == "cpu" and line["shapes"]["out"] == [512, 4096]


def test_a_cpu_spot_copy_is_the_output_as_it_was_whatever_its_layout(py, gelu):
    # A CPU spot copy is the output's bytes, copied between two clock reads with no bytecode
    # between them (runner: _copy_timed) into an immutable bytes object: made a tensor again
    # (_spot_tensor) it must equal the output, value for value and layout for layout, for every
    # strided tensor a kernel may return, and stay as it was when the output is written
    # afterwards; what is not plain strided memory is cloned and digested, none of its time said.
    py_snippet(py, MUL_RUN + """
base = torch.randn(6, 10)
outs = [base, base.t(), base[:, 2:7], base[::2, ::2], base.to(torch.bfloat16), torch.randn(5).expand(4, 5),
        torch.arange(12, dtype=torch.int64).reshape(3, 4), torch.randn(3, 3) > 0, base.reshape(2, 3, 10)[1]]
for o in outs:
    rec, d, took = run._copy_timed(o)
    assert type(rec) is tuple and type(rec[0]) is bytes and d is None and took is not None and took >= 0, o.shape
    snap = run._spot_tensor(rec)
    assert snap.dtype == o.dtype and snap.shape == o.shape and snap.stride() == o.stride(), (o.shape, o.stride())
    assert torch.equal(snap, o) and snap.data_ptr() != o.data_ptr(), (o.shape, o.stride())
kept = base.clone()
rec, _, _ = run._copy_timed(base)
base.zero_()
assert torch.equal(run._spot_tensor(rec), kept)  # a copy, not a view
recs, d, took = run._copy_timed([torch.ones(2, 3), torch.arange(4.0)])
assert [p.tolist() for p in run._spot_tensor(recs)] == [[[1.0] * 3] * 2, [0.0, 1.0, 2.0, 3.0]] and took is not None
sparse = torch.randn(64, 64)[::16, ::16]  # elements 16 apart: cloned, not a span 16x its bytes
for o in (torch.randn(3, 2).neg()._neg_view() if hasattr(torch.Tensor, "_neg_view") else torch.empty(0, 3),
          torch.empty(0, 4), sparse):
    snap, d, took = run._copy_timed(o)  # a negative view, an empty output, a sparse view: cloned
    assert type(snap) is torch.Tensor and torch.equal(snap, o) and took is None
    assert d == run._content_digest(snap)
same, d, took = run._copy_timed("not a tensor")  # left to the check, which rejects it
assert same == "not a tensor" and d is None and took is None
assert not run.tampered
from torch.overrides import TorchFunctionMode
class Passing(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
one = torch.ones(3)
with Passing():  # a mode active where the harness copies: tampering, no time said
    snap, d, took = run._copy_timed(one)
assert took is None and "mode" in run.tampered, run.tampered
print("OK")
""", gelu)


def test_libtorchs_kernel_pointers_are_pinned(py, gelu):
    # Below torch's dispatcher, each op's kernel pointers sit in DispatchStub objects libtorch_cpu
    # exports (hotkernel_defences.native_stubs): one set when the harness is set up is pinned, and
    # a raw rewrite of it (min_all's pointers copied over max_all's made every check's worst
    # element its best: cheats/native_stub_swap.py) is named; one first set by a later call is not.
    py_snippet(py, """
import ctypes, sys
sys.path.insert(0, %r)
import torch, hotkernel_defences as d
stubs = d.native_stubs()
by = {name: (addr, size) for name, addr, size in stubs}
assert "at::native::max_all_stub" in by and "at::native::min_all_stub" in by, sorted(by)[:5]
torch.ones(3).max(); torch.ones(3).min()  # each caches its CPU kernel
pin = d.native_pin(stubs)
assert d.native_changes(stubs, pin) == []
x = torch.randn(32, 32)
torch.fft.fft(x); torch.cumsum(x, 0); torch.topk(x, 3); torch.lerp(x, x, 0.5)  # first calls: stubs set now
assert d.native_changes(stubs, pin) == []
(mx, size), (mn, _) = by["at::native::max_all_stub"], by["at::native::min_all_stub"]
was = ctypes.string_at(mx, size)
ctypes.memmove(mx, mn, size)
try:
    assert float(torch.tensor([1.0, 5.0, 3.0]).max()) == 1.0  # the swap works: max is now min
    got = d.native_changes(stubs, pin)
finally:
    ctypes.memmove(mx, was, size)
assert [c.split(" ")[0] for c in got] == ["at::native::max_all_stub"], got
assert d.native_changes(stubs, pin) == []
# a jump written over the entry of the kernel a pinned pointer leads to (its page made writable):
# the pointer is as it was, the code is not
kernel = int.from_bytes(ctypes.string_at(mx, 8), "little")
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
page = kernel & ~4095
assert libc.mprotect(page, 8192, 7) == 0, ctypes.get_errno()
entry = ctypes.string_at(kernel, 16)
try:
    ctypes.memmove(kernel, b"\\xcc" * 16, 16)
    got = d.native_changes(stubs, pin)
finally:
    ctypes.memmove(kernel, entry, 16)
    libc.mprotect(page, 8192, 5)
assert any(c.startswith("at::native::max_all_stub (the code") for c in got), got
assert d.native_changes(stubs, pin) == []
print("OK")
""" % str(ROOT / "python"), gelu)
