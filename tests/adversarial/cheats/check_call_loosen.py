# Cheat: inside the check call (the first), walk f_back to the harness's run and loosen its check settings, return a wrong output for that check, and put the settings back at the next call, before any sample's state comparison.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import torch
import torch.nn.functional as F

_kept = []


def _the_run():
    try:
        raise ZeroDivisionError
    except ZeroDivisionError as e:
        f = e.__traceback__.tb_frame
    while f is not None:
        s = f.f_locals.get("self")
        if type(s).__name__ == "TrustedRun":
            return s
        f = f.f_back
    return None


def kernel(x):
    if not _kept:
        run = _the_run()
        _kept.append(run)
        if run is not None:
            a = run._check_args
            _kept.append(a)
            run._check_args = (a[0], a[1], 1e30, 1e30)
            return torch.zeros_like(x)  # wrong, judged with the loosened settings
    elif len(_kept) == 2:
        _kept[0]._check_args = _kept[1]
        _kept.append(None)
    return F.gelu(x)
