# The adversarial suite: one candidate per known way to fake a speedup, each verified
# against the scaffolded baseline (F.gelu, fp32, a CPU-friendly shape). A cheat must end
# `incorrect`, `invalid` or flagged -- never a clean `faster`; a cheat whose trick the harness
# makes powerless ("defeated", e.g. printing fake lines to stdout) must not reach the result.
# Honest candidates must pass with no flag. Cheats that need CUDA skip here and run on the
# H200 in tests/gpu/check_cheats.py.
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

CHEATS, HONEST = harness.all_bodies()
# A small cache makes the rotation depth K small, so a CPU run takes seconds, and calls > K so
# every rotated set is called twice per sample (what caches and replays feed on).
ENV = {"HOTKERNEL_CACHE_BYTES": str(1 << 20)}
# A defeated trick fails its test only if every one of this many verifies reads it faster.
DEFEATED_ATTEMPTS = 3
BLANK = harness.HONEST / "blank.py"


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    py = harness.torch_python()
    if py is None:
        pytest.skip("no interpreter with torch: set HOTKERNEL_TORCH_PYTHON")
    if not os.path.exists(harness.binary()):
        pytest.skip("no hotkernel binary at %s (set HOTKERNEL_BIN)" % harness.binary())
    out = tmp_path_factory.mktemp("gelu")
    # Some cheats write start-up files, caches and hotkernel's cache: every verify gets a home of its own.
    home = tmp_path_factory.mktemp("home")
    ENV.update({"HOME": str(home), "PYTHONUSERBASE": str(home / ".local"), "XDG_CACHE_HOME": str(home / ".cache")})
    base = harness.scaffold(out, py, device="cpu", shape="128x128", iters=48, samples=3, warmup_s=0.1)
    return py, out, base


_SHAPED = {}


def _shaped(target, shape, tmp_path_factory, iters=None):
    """The suite's target at another shape (a cheat's SHAPE) or calls a sample (its ITERS),
    scaffolded once."""
    shape, iters = shape or "128x128", iters or 48
    key = (target[0], shape, iters)
    if key not in _SHAPED:
        py = target[0]
        out = tmp_path_factory.mktemp("gelu-%s-%d" % (shape, iters))
        _SHAPED[key] = (py, out, harness.scaffold(out, py, device="cpu", shape=shape, iters=iters, samples=3,
                                                   warmup_s=0.1))
    return _SHAPED[key]


def _run(target, body):
    py, out, base = target
    cand = harness.make_candidate(out, body, base)
    rc, res, err = harness.verify(py, base, cand, n=2, warmup=0, timeout_s=300, env=ENV)
    return rc, res, err


@pytest.mark.parametrize("body", CHEATS, ids=[p.stem for p in CHEATS])
def test_cheat_is_caught(target, body, tmp_path_factory):
    flags = harness.module_flags(body)
    if flags["shape"] or flags["iters"]:
        target = _shaped(target, flags["shape"], tmp_path_factory, flags["iters"])
    if flags["needs_cuda"]:
        pytest.skip("%s needs CUDA: run tests/gpu/check_cheats.py on the GPU" % body.stem)
    if flags["dear"]:
        pytest.skip("%s is judged against a dear baseline: test_copying_repeated_inputs_gains_nothing" % body.stem)
    if flags["persists"]:
        pytest.skip("%s changes what later verifies see: test_persistence.py runs it in a home of its own" % body.stem)
    rc, res, err = _run(target, body)
    ok, why = harness.judge(flags["expect"], rc, res, err, harness.fake_ms_of(body))
    attempts = 1
    while (not ok and flags["expect"] == "caught" and attempts < DEFEATED_ATTEMPTS and res is not None
           and res.get("verdict") != "faster"):
        # Neither caught nor faster: the trick did not work this time (a helper process starved
        # on 2 busy cores did little, its calls waited on it: `slower`, and its CPU under the
        # count's floor). A working one is caught; again, as for a defeated trick. A clean
        # `faster` fails at once.
        attempts += 1
        rc, res, err = _run(target, body)
        ok, again = harness.judge(flags["expect"], rc, res, err, harness.fake_ms_of(body))
        why = "%s; attempt %d: %s" % (why, attempts, again)
    while not ok and flags["expect"] == "defeated" and attempts < DEFEATED_ATTEMPTS:
        # A trick that works gains every time, beyond what the machine gives an untouched
        # candidate; a defeated one's verify is an A/A one, which other work on a 2-core machine
        # can tip for many seconds (two busy processes beside the suite were seen to slow both
        # baseline runs of three verifies in a row). Again, with the untouched candidate beside it:
        attempts += 1
        rc, res, err = _run(target, body)
        _, control, _ = _run(target, BLANK)
        ok, again = harness.judge(flags["expect"], rc, res, err, harness.fake_ms_of(body),
                                  control=control or {})
        why = "%s; attempt %d: %s" % (why, attempts, again)
    assert ok, "%s (%s) was not %s: %s" % (body.stem, flags["what"], flags["expect"], why)
    if flags["expect"] == "caught" and res is not None and res.get("verdict") not in ("incorrect", "invalid"):
        # Caught by a flag only: the speedup must not be presented as clean.
        assert res.get("flags"), res


@pytest.mark.parametrize("body", HONEST, ids=[p.stem for p in HONEST])
def test_honest_candidate_passes_clean(target, body):
    flags = harness.module_flags(body)
    if flags["needs_cuda"]:
        pytest.skip("%s needs CUDA: run tests/gpu/check_cheats.py on the GPU" % body.stem)
    if flags["needs_torch2"] and harness.torch_major(target[0]) < 2:
        pytest.skip("%s needs torch 2.x: scripts/test runs it under the torch 2.x venv" % body.stem)
    rc, res, err = _run(target, body)
    ok, why = harness.judge("clean", rc, res, err)
    assert ok, "honest candidate %s raised a false alarm: %s" % (body.stem, why)
    cand_runs = [r for r in res["runs"] if r["role"] == "candidate"]
    assert cand_runs and all(r["line"].get("trusted") for r in cand_runs), "runs did not go through the harness"


def test_copying_repeated_inputs_gains_nothing(tmp_path):
    # copy_repeats against a baseline that costs ~40 copies: if a sample repeated an input set,
    # every repeat would be a cheap copy and the cheat a clean `faster` (it was, before each call
    # got a set of its own: 48 calls over 24 sets). Now it computes every call.
    py = harness.torch_python()
    if py is None:
        pytest.skip("no interpreter with torch: set HOTKERNEL_TORCH_PYTHON")
    base = harness.scaffold_dear(tmp_path, py, device="cpu", shape="128x128", iters=48, samples=5, warmup_s=0.1)
    cand = harness.make_candidate(base.parent, harness.CHEATS / "copy_repeats.py", base)
    rc, res, err = harness.verify(py, base, cand, n=3, warmup=0, timeout_s=300, env=ENV)
    assert rc == 0 and res is not None, err
    ok, why = harness.judge_gains_nothing(res)
    attempts = 1
    while not ok and attempts < DEFEATED_ATTEMPTS:
        # A working copy trick reads ~0.5x every time and is decisive; the same work on both
        # sides was read at 0.78x on the 2-core CI machine, once inconclusive and once `faster`
        # (its verifies run no warm-up, and a burst of other load on the VM can land on one side).
        # On an idle 2-core machine, 0.98x in 2 of 2. Again, as for every defeated trick:
        attempts += 1
        rc, res, err = harness.verify(py, base, cand, n=3, warmup=0, timeout_s=300, env=ENV)
        assert rc == 0 and res is not None, err
        ok, why = harness.judge_gains_nothing(res)
    assert ok, why


def test_every_cheat_in_issue_6_has_a_candidate():
    # The brief's list of cheats, by the file that encodes it.
    wanted = {"side_stream", "background_thread", "lazy_subclass", "patch_timer", "fake_stdout", "fake_fd",
              "cache_by_pointer", "replay_warmup", "batch_and_skip", "unwritten_output", "mutate_input", "zeros",
              "nan_output", "bf16_compute", "persisting_l2", "detect_warmup_env", "detect_warmup_count",
              "predict_seed", "partial_write"}
    have = {p.stem for p in CHEATS}
    assert wanted <= have, sorted(wanted - have)
    assert {"blank", "fused", "compiled", "triton_kernel", "cuda_extension"} <= {p.stem for p in HONEST}
