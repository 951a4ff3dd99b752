# Measures this card under the repo's own timer (hotkernel_contract's warm-up + CUDA-graph
# replay / CUDA events, median of samples): the bandwidth of a large streaming device-to-device
# copy (bytes read + written) and the rate of a large bf16 matrix product. Prints one JSON line.
#
# Run by `hotkernel calibrate` (src/tools/calibrate.cpp) with CUDA_VISIBLE_DEVICES naming one
# GPU; the binary writes the cache file. Why a measured number: a kernel reaches ~90% of the
# datasheet bandwidth at best, and how much differs per card; the measured copy is the floor a
# real kernel can get within 10% of (roofline's attainable_ms_measured).
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True  # hotkernel's Python folder holds only what hotkernel wrote
import time


def _fail(msg, code=2):
    print(json.dumps({"ok": False, "error": msg}))
    sys.exit(code)


try:
    import torch
except Exception as ex:  # noqa: BLE001
    _fail("torch cannot be imported in %s: %s; install torch with CUDA there or pass --python" % (sys.executable, ex))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import hotkernel_contract as hc  # the repo's own timer, used as a library

    _warm_up, _time_graph, _time_events = hc.warm_up, hc.time_cuda_graph, hc.time_cuda_events
    TIMER_SOURCE = "hotkernel_contract"
except Exception:  # an older or broken contract: the same method, inline
    hc = None
    TIMER_SOURCE = "inline"

    def _warm_up(fn, sets, seconds, sync):
        fn(*sets[0])
        sync()
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            for s in sets:
                fn(*s)
            sync()
        return time.perf_counter() - t0

    def _time_graph(fn, sets, calls, samples):
        order = [sets[j % len(sets)] for j in range(calls)]
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for s in order[: len(sets)]:
                fn(*s)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for s in order:
                fn(*s)
        g.replay()
        torch.cuda.synchronize()
        out = []
        for _ in range(samples):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            out.append(a.elapsed_time(b) / calls)
        return out, None, g

    def _time_events(fn, sets, calls, samples):
        order = [sets[j % len(sets)] for j in range(calls)]
        out = []
        for _ in range(samples):
            evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in order]
            for (a, b), s in zip(evs, order):
                a.record()
                fn(*s)
                b.record()
            torch.cuda.synchronize()
            out.append(sum(a.elapsed_time(b) for a, b in evs) / calls)
        return out, None


WARMUP_S = float(os.environ.get("HOTKERNEL_CALIBRATE_WARMUP_S", "1.0"))  # >= 0.5 s: clocks settle
SAMPLES = int(os.environ.get("HOTKERNEL_CALIBRATE_SAMPLES", "20"))


def _median_ms(timer, fn, sets, calls):
    _warm_up(fn, sets, WARMUP_S, torch.cuda.synchronize)
    samples = timer(fn, sets, calls, SAMPLES)[0]
    return statistics.median(samples), samples


def _rotated_sets(l2, input_bytes):
    """How many input sets a call of `input_bytes` rotates through so that each set is read again
    only after ~3x L2 of other traffic (the contract's rotation): 2 to 256."""
    return max(2, min(256, -(-3 * l2 // (2 * input_bytes))))


def _kernel_durations_us(graph, clock):
    """The kernels' own durations (us) in three replays of `graph`: from CUPTI's records through
    the contract's KernelClock, or torch.profiler's (the same records, seconds to start)."""
    if clock is not None:
        clock.start()
        for _ in range(3):
            graph.replay()
        torch.cuda.synchronize()
        return [(e - s) / 1e3 for s, e in clock.stop()]
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            graph.replay()
        torch.cuda.synchronize()
    return [e.time_range.end - e.time_range.start for e in prof.events()
            if str(getattr(e, "device_type", "")).endswith("CUDA")]


def _graph_node_gap(l2, clock):
    """The time a CUDA graph spends between two dependent kernel nodes, beyond the kernels
    themselves: the replay period per node (events) minus the median duration of the same kernels
    (CUPTI), for three tiny elementwise kernels of many blocks (bf16 gelu over 256Ki and 1Mi
    elements, an fp32 add over 1Mi) with inputs rotated through 3x L2 like the contract's. The
    median gap is reported: what the events-timed graph timer (timer: cuda_graph) reads above the
    kernel time for a call of a few microseconds; the CUPTI timer leaves it out. On an H200 it
    measured 0.14-0.8 us from one calibration to the next and kernel to kernel."""
    dev = torch.device("cuda", 0)

    def rotated(n, dtype):
        k = _rotated_sets(l2, n * torch.empty(0, dtype=dtype).element_size())
        return [(torch.randn(n, device=dev).to(dtype),) for _ in range(k)]

    kernels = {
        "gelu_bf16_256Ki": (rotated(1 << 18, torch.bfloat16), torch.nn.functional.gelu),
        "gelu_bf16_1Mi": (rotated(1 << 20, torch.bfloat16), torch.nn.functional.gelu),
        "add_fp32_1Mi": (rotated(1 << 20, torch.float32), lambda t: torch.add(t, 1.0)),
    }
    rows = {}
    for name, (sets, fn) in kernels.items():
        calls = -(-100 // len(sets)) * len(sets)
        _warm_up(fn, sets, 0.25, torch.cuda.synchronize)
        samples, _, graph = _time_graph(fn, sets, calls, SAMPLES)  # events: the gap stays in
        period_us = statistics.median(samples) * 1e3
        durs = _kernel_durations_us(graph, clock)
        if len(durs) < calls:
            raise RuntimeError("CUPTI recorded %d kernels in 3 replays of %d nodes" % (len(durs), calls))
        kernel_us = statistics.median(durs)
        rows[name] = {"period_us": round(period_us, 4), "kernel_us": round(kernel_us, 4),
                      "gap_us": round(period_us - kernel_us, 4), "nodes": calls}
        del graph
    gaps = sorted(r["gap_us"] for r in rows.values())
    return round(max(0.0, gaps[len(gaps) // 2]), 4), rows


# A copy smaller than the card's memory does not reach its bandwidth: its kernel's ramp and tail
# are a larger share of it. The measured floor of a workload takes the copy's bandwidth at the
# workload's bytes (interpolated between these sizes), not the large copy's at every size.
CURVE_BUFFER_BYTES = (4 << 20, 16 << 20, 64 << 20, 256 << 20)
CURVE_WARMUP_S = 0.2  # the large copy before it has kept the GPU busy: its clocks are up


def _copy_curve(dev, l2, timed_graph, free):
    """The streaming copy (torch.mul by 1.0, the repo's graph timer) at each CURVE_BUFFER_BYTES:
    [{bytes (read + written a call), gbs, median_ms, sets}], its inputs rotated through 3x L2
    like a target's (so no call reads from L2)."""
    rows = []
    fn = lambda s, d: torch.mul(s, 1.0, out=d)  # noqa: E731
    for b in CURVE_BUFFER_BYTES:
        k = _rotated_sets(l2, b)
        if 2 * b * k > free * 0.35:
            continue
        n = b // 4
        sets = [(torch.empty(n, dtype=torch.float32, device=dev).uniform_(), torch.empty(n, dtype=torch.float32, device=dev))
                for _ in range(k)]
        calls = -(-max(20, k) // k) * k
        _warm_up(fn, sets, CURVE_WARMUP_S, torch.cuda.synchronize)
        ms = statistics.median(timed_graph(fn, sets, calls, SAMPLES)[0])
        rows.append({"bytes": 2 * b, "gbs": 2 * b / (ms * 1e-3) / 1e9, "median_ms": ms, "sets": k})
        del sets
        torch.cuda.empty_cache()
    return rows


def _l2_bytes(props):
    for name in ("L2_cache_size", "l2_cache_size"):
        v = getattr(props, name, None)
        if v:
            return int(v)
    return 50 << 20


def _copy_ms_in_child(write_fd):
    """One process's time of the streaming copy (the elementwise kernel under the repo's timer),
    written to write_fd as a JSON line; run in a forked child, which initialises CUDA itself."""
    try:
        dev = torch.device("cuda", 0)
        l2 = _l2_bytes(torch.cuda.get_device_properties(dev))
        free, _ = torch.cuda.mem_get_info(dev)
        nbytes = min(max(8 * l2, 1 << 30), int(free * 0.35))
        nbytes -= nbytes % (1 << 20)
        src = torch.empty(nbytes // 4, dtype=torch.float32, device=dev).uniform_()
        dst = torch.empty_like(src)
        clock = None
        if hc is not None:
            try:
                clock = hc.KernelClock.get()
            except hc.ClockError:
                clock = None
        timer = (lambda fn, sets, calls, samples: _time_graph(fn, sets, calls, samples, clock)) if clock else _time_graph
        _warm_up(lambda a, b: torch.mul(a, 1.0, out=b), [(src, dst)], 0.25, torch.cuda.synchronize)
        samples = timer(lambda a, b: torch.mul(a, 1.0, out=b), [(src, dst)], 10, 10)[0]
        msg = {"ms": statistics.median(samples)}
    except Exception as ex:  # noqa: BLE001
        msg = {"error": repr(ex)[:300]}
    os.write(write_fd, (json.dumps(msg) + "\n").encode())


def process_spread(runs, timeout_s=60.0):
    """The spread between processes of the same code: the streaming copy timed in `runs` processes
    one after another, each forked from this one before it touched CUDA (as verify's runs are
    forked from a server that imported torch) and initialising its own context. Returns
    {runs, ms, median_ms, cv_pct} or {error}. Must run before this process initialises CUDA."""
    times, errors = [], []
    for _ in range(runs):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                _copy_ms_in_child(w)
            finally:
                os._exit(0)
        os.close(w)
        deadline = time.monotonic() + timeout_s
        data = b""
        while time.monotonic() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.01)
        else:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            errors.append("a timing process ran past %g s" % timeout_s)
        while True:
            chunk = os.read(r, 4096)
            if not chunk:
                break
            data += chunk
        os.close(r)
        try:
            msg = json.loads(data.decode().strip() or "{}")
        except ValueError:
            msg = {}
        if "ms" in msg:
            times.append(msg["ms"])
        else:
            errors.append(msg.get("error", "a timing process gave no time"))
    if len(times) < 3:
        return {"error": "; ".join(errors[:3]) or "fewer than 3 processes timed the copy"}
    mean = statistics.mean(times)
    return {"runs": len(times), "ms": [round(t, 6) for t in times], "median_ms": statistics.median(times),
            "cv_pct": 100 * statistics.stdev(times) / mean}


def main():
    spread = None
    if "--spread" in sys.argv:  # before anything here touches CUDA: the children initialise it
        spread = process_spread(int(sys.argv[sys.argv.index("--spread") + 1]))
    if not torch.cuda.is_available():
        _fail("no CUDA GPU is visible to torch %s in %s (torch.cuda.is_available() is False); calibrate measures a "
              "GPU: run it on a machine with an NVIDIA GPU and a CUDA build of torch" % (torch.__version__, sys.executable))
    dev = torch.device("cuda", 0)
    props = torch.cuda.get_device_properties(dev)
    uuid = getattr(props, "uuid", None)
    l2 = _l2_bytes(props)
    free, total = torch.cuda.mem_get_info(dev)
    warnings = []
    # The repo's default timer: each call's kernel time from CUPTI where it can be read, else
    # events around graph replays (the node gap stays in, ~1% of a 0.5 ms call).
    clock = None
    if hc is not None:
        try:
            clock = hc.KernelClock.get()
        except hc.ClockError as ex:
            warnings.append("CUPTI cannot be read (%s): timed by events around graph replays" % ex)
    timed_graph = (lambda fn, sets, calls, samples: _time_graph(fn, sets, calls, samples, clock)) if clock else _time_graph
    graph_label = "CUDA-graph replay, CUPTI kernel time" if clock else "CUDA-graph replay, events"
    result = {"ok": True, "gpu": props.name, "uuid": ("GPU-%s" % uuid) if uuid is not None else None,
              "l2_bytes": l2, "torch": torch.__version__, "timer_source": TIMER_SOURCE,
              "timer": "cupti" if clock else "cuda_graph", "warmup_s": WARMUP_S, "samples": SAMPLES}

    # Streaming copy: each buffer >= 8x L2 (and >= 1 GiB) so every call streams from DRAM.
    want = max(8 * l2, 1 << 30)
    nbytes = min(want, int(free * 0.35))  # two buffers plus headroom
    nbytes -= nbytes % (1 << 20)
    if nbytes < want:
        warnings.append("only %.0f MiB per buffer fit in free memory (wanted %.0f MiB = max(8x L2, 1 GiB)); other "
                        "processes hold GPU memory" % (nbytes / 2**20, want / 2**20))
    if nbytes < 2 * l2:
        _fail("not enough free GPU memory for a streaming copy larger than L2 (%.0f MiB free)" % (free / 2**20))
    n = nbytes // 4
    src = torch.empty(n, dtype=torch.float32, device=dev).uniform_()
    dst = torch.empty_like(src)
    moved = 2 * nbytes  # read + written
    copies = {}
    # The elementwise kernel runs on the SMs under graph replay (the repo's default timer). A
    # captured `copy_` becomes a copy-engine memcpy node (2/3 of eager bandwidth on an H200),
    # so the memcpy is timed eagerly with events, the contract's other timer.
    variants = [
        ("elementwise_graph", timed_graph, lambda s, d: torch.mul(s, 1.0, out=d),
         "torch.mul(src, 1.0, out=dst), " + graph_label),
        ("copy_events", _time_events, lambda s, d: d.copy_(s), "dst.copy_(src), CUDA events"),
    ]
    for key, timer, fn, label in variants:
        try:
            ms, samples = _median_ms(timer, fn, [(src, dst)], 10)
            copies[key] = {"method": label, "median_ms": ms, "gbs": moved / (ms * 1e-3) / 1e9,
                           "spread_pct": 100 * (max(samples) - min(samples)) / ms}
        except Exception as ex:  # noqa: BLE001
            copies[key] = {"method": label, "error": repr(ex)}
    del src, dst
    torch.cuda.empty_cache()
    good = {k: v for k, v in copies.items() if "gbs" in v}
    if not good:
        _fail("every streaming-copy measurement failed: %s" % json.dumps(copies))
    best = max(good, key=lambda k: good[k]["gbs"])
    result["mem_gbs"] = good[best]["gbs"]
    result["copy_bytes_per_buffer"] = nbytes
    result["copies"] = copies
    try:
        curve = _copy_curve(dev, l2, timed_graph, free)
    except Exception as ex:  # noqa: BLE001 - the floor then takes the large copy's bandwidth at every size
        curve = []
        warnings.append("the copy's bandwidth by size could not be measured (%r): the measured floor takes the large "
                        "copy's at every size" % (ex,))
    result["copy_curve"] = curve + [{"bytes": moved, "gbs": result["mem_gbs"], "sets": 1, "method": best}]

    # bf16 matmul 8192^3 (dense tensor-core rate); smaller when memory is short.
    m = 8192
    while m > 1024 and 3 * m * m * 2 > free * 0.5:
        m //= 2
    a = torch.randn(m, m, dtype=torch.bfloat16, device=dev)
    b = torch.randn(m, m, dtype=torch.bfloat16, device=dev)
    c = torch.empty(m, m, dtype=torch.bfloat16, device=dev)
    try:
        ms, samples = _median_ms(timed_graph, lambda x, y, o: torch.matmul(x, y, out=o), [(a, b, c)], 5)
        result["bf16_tflops"] = 2.0 * m ** 3 / (ms * 1e-3) / 1e12
        result["matmul"] = {"m": m, "n": m, "k": m, "median_ms": ms, "spread_pct": 100 * (max(samples) - min(samples)) / ms,
                            "method": "torch.matmul bf16 %dx%dx%d, %s" % (m, m, m, graph_label)}
    except Exception as ex:  # noqa: BLE001
        result["bf16_tflops"] = None
        warnings.append("the bf16 matmul could not be timed: %r" % (ex,))
    try:
        result["graph_node_gap_us"], result["graph_gap"] = _graph_node_gap(l2, clock)
    except Exception as ex:  # noqa: BLE001 - no profiler (or no CUPTI): no gap, said so
        result["graph_node_gap_us"] = None
        warnings.append("the CUDA-graph node gap could not be measured (%r); graph-timed runs keep it in their ms" % (ex,))
    result["method"] = ("streaming copy of %.0f MiB fp32 per buffer (bytes read + written; best of: %s); bf16 matmul "
                        "%d^3, %s; warm-up %.1f s, median of %d samples (%s timer)"
                        % (nbytes / 2**20, "; ".join("%s %.0f GB/s" % (v["method"], v["gbs"]) for v in good.values()),
                           m, graph_label, WARMUP_S, SAMPLES, TIMER_SOURCE))
    if spread is not None:
        if "error" in spread:
            warnings.append("the spread between processes could not be measured: %s" % spread["error"])
        else:
            result["process_spread"] = spread
    result["warnings"] = warnings
    print(json.dumps(result))


if __name__ == "__main__":
    main()
