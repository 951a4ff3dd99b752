# Cheat: through f_back, replace TrustedRun.timer_detail (state the measurement updates as it goes, so not compared) with a dict subclass whose keys() and __getitem__ run when measure() adds it to the result, after the samples and before the status is decided: there they empty measure()'s failure lists and move the median onto a sample whose calls did no work (the last sample returns empty outputs). A clean 4.1x with wrong outputs on the CPU. The result now takes only plain values (exact dicts, lists, numbers, strings) from such state, and only the timer's own keys.
NEEDS_CUDA = False
CPU_ONLY = True  # the eager loop's frames: on a GPU the calls are captured into a graph once
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # the subclass's code never runs: the last sample's empty outputs fail
import torch

def _frame():
    try:
        raise ValueError
    except ValueError as e:
        return e.__traceback__.tb_frame.f_back

class _TD(dict):
    def __iter__(self):
        return iter(self.keys())
    def keys(self):
        self._v = {}
        try:
            f = _frame()
            while f is not None and "timed_fail" not in f.f_locals:
                f = f.f_back
            loc = f.f_locals
            loc["timed_fail"].clear()
            loc["failures"].clear()
            samples = [round(x, 6) for x in loc["samples"]]
            if len(samples) >= 3:
                samples[0] = samples[-1]
            o = sorted(samples)
            m = len(o) // 2
            ms = o[m] if len(o) % 2 else 0.5 * (o[m - 1] + o[m])
            self._v = {"samples_ms": samples, "ms": ms}
        except Exception:
            pass
        return list(self._v)
    def __getitem__(self, k):
        return self._v[k]

_armed = [False]

def _last_sample():
    f = _frame()
    while f is not None:
        loc = f.f_locals
        if "spot_odds" in loc and "i" in loc and "samples" in loc:
            s = loc.get("self")
            if type(s).__name__ == "TrustedRun":
                if not _armed[0]:
                    s.timer_detail = _TD()
                    _armed[0] = True
                return loc.get("i") == s.target.samples - 1
        f = f.f_back
    return False

def kernel(x):
    try:
        last = _last_sample()
    except Exception:
        last = False
    if last:
        return torch.empty_like(x)
    return torch.nn.functional.gelu(x)
