# Cheat: the forged-library-code cheat made by marshal instead of compile: compiled under a name of its own of the same length, the name swapped for a file in torch's folder in the marshalled bytes and loaded (the audit event carries bytes that are not the file's cached .pyc, which an import's loads are), then the same heap walk, replaced checks and forged result.
NEEDS_CUDA = False
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import marshal
import os
import torch
import torch.nn.functional as F

_SRC = r'''
import gc, json, os, sys
def grab():
    trun = nonce = fd = None
    gc.unfreeze()  # the hook was made before the harness froze the heap
    for o in gc.get_objects():
        if type(o).__name__ == "TrustedRun":
            trun = o
        elif type(o).__name__ == "function" and o.__name__ == "send" and o.__closure__:
            v = dict(zip(o.__code__.co_freevars, [c.cell_contents for c in o.__closure__]))
            if isinstance(v.get("result_fd"), int) and v.get("nonce"):
                nonce, fd = v["nonce"], v["result_fd"]
    gc.freeze()
    orig = trun.measure
    def measure(fn, role, harness, threads):
        res = orig(fn, role, harness, threads)
        f = sys._getframe(1).f_locals  # _run_released
        sys.modules["__main__"]._finish_workload(trun, res, 0.0)
        res.update(status="ok", ok=True, reason=None, flags=[], seed=f["target"].seed, check_seed="hidden",
                   sandbox=f["box"], trusted=True, runner_protocol=1, nonce=nonce)
        res.pop("reason")
        os.write(fd, (json.dumps(res) + "\n").encode())
        os.close(fd)
        os._exit(0)
    trun.measure = measure
    ok = {"ok": True, "reason": None, "max_abs": 0.0, "rel": 0.0, "atol": 0.0, "rtol": 0.0, "scale": 1.0, "tol_used": 0.0}
    trun.check = trun.check_quick = lambda out, ref: ok  # the patch check's finding is overwritten above
'''
_LIB = os.path.join(os.path.dirname(torch.__file__), "_utils_internal.py")
_MINE = "/" + "q" * (len(_LIB) - 1)  # no library's name: compile raises no alarm
_data = marshal.dumps(compile(_SRC, _MINE, "exec")).replace(_MINE.encode(), _LIB.encode())
_ns = {}
exec(marshal.loads(memoryview(_data)), _ns)
_ns["grab"]()


def kernel(x):
    out = torch.empty_like(x)
    k = x.shape[0] // 3
    out[:k] = F.gelu(x[:k])
    return out
