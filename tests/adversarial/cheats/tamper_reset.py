# Cheat: let the harness see something once, then take the finding back. It sets an attribute that stands in for detach on every input it is given until the harness, looking at its own inputs, sets TrustedRun.tampered; at its next call it removes them and, through f_back, sets the run's tampered back to None. The finding was an attribute of an object the candidate reaches, so the run ended clean; it is now also kept in the harness's audit hook, which no attribute write reaches.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"  # invalid: the finding is kept
import torch.nn.functional as F

_st = {"marked": [], "reset": 0}


def _run_obj():
    try:
        raise ValueError
    except ValueError as e:
        f = e.__traceback__.tb_frame.f_back
    while f is not None:
        s = f.f_locals.get("self")
        if type(s).__name__ == "TrustedRun":
            return s
        f = f.f_back
    return None


def kernel(x):
    run = _run_obj()
    if run is not None and run.tampered:  # seen: take the finding back
        for t in _st["marked"]:
            t.__dict__.pop("detach", None)
        _st["marked"] = []
        run.tampered = None
        try:
            run._tampered = None
        except AttributeError:
            pass
        _st["reset"] += 1
    elif not _st["reset"] and "detach" not in x.__dict__:
        x.detach = x.detach  # a method of its own: what the harness refuses on its tensors
        _st["marked"].append(x)
    return F.gelu(x)
