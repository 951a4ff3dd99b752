# Cheat: reach the harness's thread watch through the closure of the thread-start wrapper it puts on threading (no frame, no audit event) and list a helper thread among the threads the process had before the import, so the CPU it spends on half of every call's rows (and more) is not counted.
NEEDS_CUDA = False
CPU_ONLY = True  # the CPU run's count of the candidate's threads is what it hides from
BOTH_TORCH_LINES = True  # the harness's own interpreter is the target: scripts/test runs it under torch 2.x too
EXPECT = "caught"
import os
import threading

import torch
import torch.nn.functional as F

_todo, _done = threading.Semaphore(0), threading.Semaphore(0)
_job = [None]


def _helper():
    torch.set_num_threads(1)  # no OpenMP team of its own: only this thread computes
    while True:
        _todo.acquire()
        x, out = _job[0]
        for _ in range(3):  # work beyond the call's own: counted, it is over the CPU count's floor
            y = F.gelu(x)
        out.copy_(y)
        _done.release()


threading.Thread(target=_helper, daemon=True).start()
for cell in threading._start_new_thread.__closure__ or ():
    watch = cell.cell_contents
    if hasattr(watch, "tasks_before"):
        watch.tasks_before = frozenset(int(t) for t in os.listdir("/proc/self/task"))


def kernel(x):
    out = torch.empty_like(x)
    half = x.shape[0] // 2
    _job[0] = (x[half:], out[half:])
    _todo.release()
    out[:half] = F.gelu(x[:half])
    _done.acquire()
    return out
