# Cheat: at its first call, walk f_back from a traceback's frame (no audit event) to the harness's run, loosen its check settings, and take the Harness snapshot again (harness.state, harness._scoped) so every later comparison agrees with them; every call then returns zeros.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import torch

_done = []


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
    if not _done:
        run = _the_run()
        if run is not None:
            a = run._check_args
            run._check_args = (a[0], a[1], 1e30, 1e30)
            h = run._harness
            h.state = h._take_state()
            h._scoped = {}
            h.snap = h._take()
            h.code_digest = h._code_digest()
        _done.append(True)
    return torch.zeros_like(x)
