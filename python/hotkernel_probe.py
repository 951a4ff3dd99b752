"""hotkernel new's probe: checks, in the user's interpreter, that a target can run before it is written.

Reads a JSON request on stdin: {"target": {TARGET dict}, "base_dir": folder the scripts will live in}.
Writes one JSON object to HOTKERNEL_RESULT_FD (else stdout): ok, stage, reason, python, torch,
device, out_shapes, out_dtypes, call_names, error, seconds. Stages, in order: torch, contract,
target, device, import, function, derive, call, reference, check.
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # hotkernel's Python folder holds only what hotkernel wrote
import time


def _emit(obj):
    line = json.dumps(obj, default=str) + "\n"
    fd = os.environ.get("HOTKERNEL_RESULT_FD")
    if fd:
        data = line.encode()
        fd = int(fd)
        while data:
            data = data[os.write(fd, data):]
    else:
        sys.stdout.write(line)
        sys.stdout.flush()


def _fail(res, stage, reason):
    res.update(ok=False, stage=stage, reason=reason)
    return res


def probe(request):
    t0 = time.perf_counter()
    res = {"ok": False, "stage": None, "reason": None, "python": sys.executable,
           "python_version": sys.version.split()[0], "torch": None}
    try:
        import torch
    except BaseException as e:
        return _fail(res, "torch", "cannot import torch: %s: %s" % (type(e).__name__, e))
    res["torch"] = torch.__version__
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import hotkernel_contract as hk
    except BaseException as e:
        return _fail(res, "contract", "cannot import the contract: %s: %s" % (type(e).__name__, e))
    res["protocol"] = hk.PROTOCOL
    base_dir = request.get("base_dir") or os.getcwd()
    try:
        target = hk.Target.from_dict(request["target"], base_dir)
    except hk.TargetError as e:
        return _fail(res, "target", str(e))
    parts = target.workload_targets()  # [(None, target)] without workloads
    if target.workloads:
        res["workloads"] = []
    for name, sub in parts:
        one = res if name is None else {}
        if not _probe_one(hk, torch, sub, base_dir, one):
            if name is not None:
                res.update({k: one[k] for k in ("ok", "stage", "reason", "hint", "input_shapes") if k in one})
                res["reason"] = "workload %s: %s" % (name, one.get("reason"))
                res["workload"] = name
            return res
        if name is not None:
            if not res.get("call_names"):
                res.update(one)  # the first workload's figures stand for the target's
            res["workloads"].append({"name": name, "input_shapes": one.get("input_shapes"),
                                     "out_shapes": one.get("out_shapes"), "flops": sub.flops})
    res["ok"] = True
    res["seconds"] = round(time.perf_counter() - t0, 3)
    return res


def _probe_one(hk, torch, target, base_dir, res):
    """Runs one shape of the target: the call, its outputs, the check. False (res says why) on a failure."""
    try:
        device = hk.resolve_device(target.device)
        res["device"] = device
        res["cuda_available"] = torch.cuda.is_available()
        fn = hk.load_callable(target.fn_spec, base_dir)
        res["fn_name"] = getattr(fn, "__name__", None)
        ref_fn = hk.load_callable(target.reference, base_dir) if target.reference else None
        derive_fn = hk.load_callable(target.derive, base_dir) if target.derive else None
        inputs = hk.make_inputs(target, target.seed, device, derive_fn)
        res["call_names"] = list(target.call_names)
        res["input_shapes"] = {n: list(x.shape) for n, x in zip(target.call_names, inputs)}
        res["input_dtypes"] = {n: str(x.dtype).replace("torch.", "") for n, x in zip(target.call_names, inputs)}
        with torch.no_grad():
            try:
                out = fn(*inputs)
                if device.startswith("cuda"):
                    torch.cuda.synchronize()
            except BaseException as e:
                raise hk.StageError("call", "%s raised %s: %s" % (target.fn_spec, type(e).__name__, e))
        outs = hk.as_outputs(out)
        if outs is None:
            raise hk.StageError("call", "%s returned %s, not a tensor or a tuple of tensors"
                                % (target.fn_spec, type(out).__name__))
        res["out_shapes"] = [list(o.shape) for o in outs]
        res["out_dtypes"] = [str(o.dtype).replace("torch.", "") for o in outs]
        ref = hk.reference_outputs(target, inputs, fn, ref_fn)
        c = hk.check(outs, ref, target.dtype_name, [(tuple(o.shape), o.dtype) for o in outs], target.rtol, target.atol)
        res["error"] = {k: c[k] for k in ("max_abs", "rel", "atol", "rtol", "scale", "tol_used")}
        if not c["ok"]:
            which = ("reference %s" % target.reference) if target.reference else "its own fp32 run"
            raise hk.StageError("check", "the baseline does not match %s: %s" % (which, c["reason"]))
    except hk.StageError as e:
        _fail(res, e.stage, str(e))
        if e.stage == "import" and ":" in (target.fn_spec or ""):
            mod = target.fn_spec.rsplit(":", 1)[0]
            if not hk.is_file_spec(mod) and os.path.isfile(os.path.join(os.getcwd(), mod.replace(".", "/") + ".py")):
                res["hint"] = "a file %s.py is in the current folder: pass from='./%s.py:%s'" % (
                    mod.replace(".", "/"), mod.replace(".", "/"), target.fn_spec.rsplit(":", 1)[1])
        return False
    except hk.TargetError as e:
        _fail(res, "target", str(e))
        return False
    return True


if __name__ == "__main__":
    try:
        req = json.loads(sys.stdin.read() or "{}")
        result = probe(req)
    except BaseException as e:
        import traceback
        traceback.print_exc()
        result = {"ok": False, "stage": "internal", "reason": "%s: %s" % (type(e).__name__, e), "python": sys.executable}
    _emit(result)
    sys.exit(0)
